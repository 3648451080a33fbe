"""What a command shows while it works: the phase under way, a training bar with a
recent rate."""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from snowpy.progress import Progress

__all__ = ["Phases", "TrainingReporter", "run_interruptibly"]

#: Seconds over which a rate is measured.
RATE_WINDOW = 3.0


class Phases:
    """A spinner naming the phase under way (``reading``, ``predicting 7,532
    documents``...), on standard error, gone when done; silent when ``quiet``."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet

    @contextmanager
    def __call__(self, what: str) -> Iterator[None]:
        if self.quiet:
            yield
            return
        from rich.console import Console

        console = Console(stderr=True)
        started = time.perf_counter()
        with console.status(f"{what}..."):
            yield
        if console.is_terminal:
            console.print(f"[dim]{what}: {time.perf_counter() - started:.1f} s[/dim]")


class TrainingReporter(Progress):
    """Progress bar and a progressive-validation table for ``snowpy train``.

    The bar names the phase under way (featurising, calibration folds, training,
    calibrating, saving: :meth:`phase`), and its rate is over the last few seconds,
    not since the start. Rows come at 1, 2, 4, 8... examples of the first epoch, as
    Vowpal Wabbit prints them, then one per epoch: mistakes made before learning each
    example, and the online accuracy since the previous row.
    """

    def __init__(self, n: int, epochs: int) -> None:
        from rich.console import Console
        from rich.progress import Progress as Bar
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=True)
        self.progress = Bar(TextColumn("[bold]{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                                 TimeElapsedColumn(), console=self.console, transient=True)
        self.task = self.progress.add_task("starting", total=None, rate="")
        self.progress.start()
        self.n = n
        self.recent: deque[tuple[float, int]] = deque()
        self.epoch = -1
        self.previous = 0
        self.epoch_mistakes = 0
        self.since_examples = 0
        self.since_mistakes = 0
        self.header_shown = False

    def phase(self, name: str, total: int | None = None) -> None:
        """A new phase: the bar shows its name, and its progress when ``total`` is known
        (a phase of unknown length pulses)."""
        self.progress.remove_task(self.task)  # a fresh task: a phase may have no total
        self.task = self.progress.add_task(name, total=total, rate="")
        self.progress.refresh()
        self.recent.clear()

    def __call__(self, epoch: int, done: int, total: int, mistakes: int) -> None:
        if not self.header_shown:
            self.header_shown = True
            self.progress.console.print(f"{'epoch':>5}  {'examples':>10}  {'mistakes':>9}  "
                                        f"{'acc. since last':>15}  {'acc. this epoch':>15}")
        if epoch != self.epoch:
            self.epoch, self.previous, self.epoch_mistakes = epoch, 0, 0
        self.since_examples += done - self.previous
        self.previous = done
        self.since_mistakes += mistakes
        self.epoch_mistakes += mistakes
        completed = epoch * self.n + done
        self.progress.update(self.task, completed=completed, rate=self._rate(completed))
        if (epoch == 0 and done & (done - 1) == 0) or done == total:
            accuracy = 1 - self.since_mistakes / max(self.since_examples, 1)
            self.progress.console.print(
                f"{epoch + 1:>5}  {done:>10,}  {self.since_mistakes:>9,}  {accuracy:>15.4f}  "
                f"{1 - self.epoch_mistakes / max(done, 1):>15.4f}")
            self.since_examples = self.since_mistakes = 0

    def _rate(self, completed: int) -> str:
        """Documents per second over the last :data:`RATE_WINDOW` seconds."""
        now = time.perf_counter()
        self.recent.append((now, completed))
        while len(self.recent) > 2 and now - self.recent[0][0] > RATE_WINDOW:
            self.recent.popleft()
        then, before = self.recent[0]
        if now - then < 1e-3 or completed < before:
            return ""
        return f"{(completed - before) / (now - then):,.0f} docs/s"

    def close(self) -> None:
        self.progress.stop()


class _Stoppable(Progress):
    """A progress reporter (or none) that also stops the training, at the next run
    boundary of the engine, once ``stop`` is set (Ctrl-C in the main thread)."""

    def __init__(self, reporter: Progress | None, stop: Any) -> None:
        self.reporter, self.stop = reporter, stop
        self.every = None if reporter is None else reporter.every

    def check_stop(self) -> None:
        if self.stop.is_set():
            raise KeyboardInterrupt

    def __call__(self, *args: Any) -> None:
        self.check_stop()
        if self.reporter is not None:
            self.reporter(*args)

    def phase(self, name: str, total: int | None = None) -> None:
        self.check_stop()
        if self.reporter is not None:
            self.reporter.phase(name, total)


def run_interruptibly(train: Any, reporter: Any, *, grace: float = 10.0,
                      on_stuck: Any = None) -> None:
    """Run ``train(progress)`` in a worker thread, so that Ctrl-C always reaches this
    one: the training is asked to stop at its next run boundary (and raises
    KeyboardInterrupt here, as before); a training that does not stop within ``grace``
    seconds (a rule's kernel stuck in a loop, which no signal interrupts), or a second
    Ctrl-C, ends the process with status 130 after ``on_stuck()`` (the model file is
    untouched). ``SNOWPY_STOP_GRACE`` sets the seconds to wait."""
    import threading

    stop = threading.Event()
    done = threading.Event()  # (not Thread.join: a join interrupted by Ctrl-C can leave
    outcome: dict[str, BaseException] = {}  # is_alive() False while the thread runs)

    def work() -> None:
        try:
            train(_Stoppable(reporter, stop))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            outcome["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=work, name="snowpy-train", daemon=True)
    worker.start()
    try:
        while not done.wait(0.2):
            pass
    except KeyboardInterrupt:
        stop.set()
        grace = float(os.environ.get("SNOWPY_STOP_GRACE", grace))
        deadline = time.monotonic() + grace
        try:
            while not done.is_set() and time.monotonic() < deadline:
                done.wait(0.2)
        except KeyboardInterrupt:
            pass  # a second Ctrl-C: no more waiting
        if not done.is_set():
            if on_stuck is not None:
                on_stuck()
            sys.stderr.flush()
            os._exit(130)
        raise
    if "error" in outcome:
        raise outcome["error"]
