"""``snowpy train --stream``'s table. Each document is predicted, then learned (SNoW's
incremental mode, ``-i +``): the predictions are a fair test on data the model has not
seen, so their accuracy is said as the stream goes, at 1, 2, 4, 8... examples (Vowpal
Wabbit's habit) and every ``--report-every`` examples (SNoW's ``-c k``)."""

from __future__ import annotations

import time

from snowpy.cli.common import err

__all__ = ["StreamReport"]


class StreamReport:
    """The progressive-validation table on standard error, and its totals: a row at 1,
    2, 4... documents, its mistakes those since the row before (as in ``snowpy train``'s
    table of epochs)."""

    def __init__(self, report_every: int | None, show: bool) -> None:
        self.report_every = report_every
        self.show = show
        self.examples = self.mistakes = 0
        self.since_examples = self.since_mistakes = 0
        self.next_power = 1
        self.started = time.perf_counter()
        self.headed = False  # (the header comes with the first row: none before an error)

    def at(self, examples: int, mistakes: int) -> None:
        """The stream's figures after ``examples`` documents: a row at 1, 2, 4... and
        every ``report_every`` documents."""
        self.since_examples += examples - self.examples
        self.since_mistakes += mistakes - self.mistakes
        self.examples, self.mistakes = examples, mistakes
        n = examples
        if n >= self.next_power or (self.report_every and n % self.report_every == 0):
            while self.next_power <= n:
                self.next_power *= 2
            self.row()

    def row(self) -> None:
        if self.show and self.since_examples:
            if not self.headed:
                self.headed = True
                err(f"{'examples':>12} {'mistakes':>10} {'acc. since last':>16} "
                    f"{'acc. so far':>12} {'docs/s':>10}")
            rate = self.examples / max(time.perf_counter() - self.started, 1e-9)
            err(f"{self.examples:>12,} {self.since_mistakes:>10,} "
                f"{1 - self.since_mistakes / self.since_examples:>16.4f} "
                f"{self.accuracy:>12.4f} {rate:>10,.0f}")
        self.since_examples = self.since_mistakes = 0

    def close(self) -> None:
        """The last row, for the documents since the previous one."""
        if self.since_examples:
            self.row()

    @property
    def accuracy(self) -> float:
        return 1 - self.mistakes / max(self.examples, 1)
