"""``snowpy predict MODEL [INPUT]``: a label (or the top k) per document or line."""

from __future__ import annotations

import os
import sys
import threading
from collections import deque
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer

from snowpy.cli.common import handles_errors, model_key, quiet_on_closed_pipe
from snowpy.cli.distributed import (
    Scheduler,
    Shards,
    Workers,
    cluster_of,
    predict_distributed,
    wanted,
)
from snowpy.cli.reading import read_lines
from snowpy.exceptions import ConfigurationError


@handles_errors
def predict(
    model: Annotated[Path, typer.Argument(help="model file")],
    input: Annotated[str | None, typer.Argument(help="text file, one document per line; "
                                                      "standard input when absent or -")] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="labels per document")] = 1,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="JSON Lines output")] = False,
    abstain: Annotated[float | None, typer.Option(
        help="answer (abstain) where the two most probable labels are less than this "
             "apart, from 0 to 1 (SNoW -p)")] = None,
    batch: Annotated[int | None, typer.Option(
        help="documents per batch; 1 answers each line as soon as it is read (the "
             "default when the output is a terminal, else 10000)")] = None,
    encoding: Annotated[str | None, typer.Option(
        help="text encoding of INPUT (utf-8)")] = None,
    decode: Annotated[str, typer.Option(
        help="bytes not valid in the encoding: strict (an error naming the line) or "
             "replace (U+FFFD)")] = "strict",
    workers: Workers = None,
    scheduler: Scheduler = None,
    shards: Shards = None,
    output_dir: Annotated[Path | None, typer.Option(
        help="with --workers/--scheduler: the folder of the predictions, a file per shard "
             "(part-NNNNN.tsv: label and probability)")] = None,
) -> None:
    """Predict a label for each line of INPUT (or standard input), to standard output.

    With --top-k K, the K most likely labels and their probabilities (scores
    when the model is not calibrated). As a filter (--batch 1, or any time the
    output is a terminal) each answer is written as soon as its line is read;
    a reader that stops reading (| head) ends it quietly.
    """
    from snowpy import load
    from snowpy.model_kinds import kind_of

    if wanted(workers, scheduler):
        if input in (None, "-") or output_dir is None:
            raise ConfigurationError("with --workers/--scheduler, give INPUT as a path the "
                                     "workers read and --output-dir for the predictions")
        predict_distributed(model, input, output_dir, cluster=cluster_of(workers, scheduler),
                            shards=shards, json_output=jsonl)
        return
    if top_k < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--top-k")
    if batch is not None and batch < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--batch")
    classifier = load(model, mmap=True, key=model_key())  # (the pages of the weights it reads, no more)
    if kind_of(classifier) != "classifier":
        raise typer.BadParameter("this model has no text front end", param_hint="MODEL")
    lines = read_lines(input, encoding, decode)
    if abstain is not None and not 0.0 <= abstain <= 1.0:
        raise typer.BadParameter("must be a probability margin from 0 to 1",
                                 param_hint="--abstain")
    answer = _Answers(classifier, top_k, jsonl, abstain)
    out = sys.stdout
    with quiet_on_closed_pipe():
        if batch == 1 or (batch is None and out.isatty()):
            for line in lines:
                out.write(answer.one(line))
                out.flush()
        else:
            with _Counter() as counter:
                for chunk in _chunks(lines, batch or 10000, regular=_regular(input)):
                    out.write("".join(answer.many(chunk)))
                    counter.add(len(chunk))
            out.flush()


def _regular(source: str | None) -> bool:
    """Whether the input is a regular file (standard input redirected from one, too)."""
    import stat

    try:
        mode = os.fstat(0).st_mode if source in (None, "-") else os.stat(source).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode)


class _Counter:
    """Lines answered so far, on standard error when it is a terminal (answers go to a
    file or a pipe meanwhile): a long prediction is never silent."""

    def __init__(self) -> None:
        self.done = 0
        self.status: Any = None

    def __enter__(self) -> _Counter:
        if sys.stderr.isatty():
            from rich.console import Console

            self.status = Console(stderr=True).status("predicting...")
            self.status.start()
        return self

    def add(self, n: int) -> None:
        self.done += n
        if self.status is not None:
            self.status.update(f"predicted {self.done:,} lines")

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.stop()


def _chunks(lines: Iterator[str], size: int, *, regular: bool) -> Iterator[list[str]]:
    """Batches of up to ``size`` lines. From a regular file, full batches; from a pipe or
    a terminal, a batch also ends where the input pauses, so ``producer | snowpy
    predict`` answers what it has as soon as nothing more is ready, and keeps batching
    while the input flows (a thread reads ahead, at most ``2 * size`` lines)."""
    if regular:
        while full := list(islice(lines, size)):
            yield full
        return
    ready: deque[Any] = deque()
    changed = threading.Condition()
    end = object()

    def read() -> None:
        try:
            for line in lines:
                ready.append(line)
                if len(ready) == 1:  # the reader of the batches may be waiting
                    with changed:
                        changed.notify()
                elif len(ready) >= 2 * size:  # far enough ahead
                    with changed:
                        while len(ready) >= size:
                            changed.wait(0.1)
        except BaseException as exc:  # (said where the lines are used)
            ready.append(exc)
        else:
            ready.append(end)
        with changed:
            changed.notify()

    threading.Thread(target=read, daemon=True, name="snowpy-predict-input").start()
    chunk: list[str] = []
    while True:
        if not ready:
            if chunk:  # the input pauses: answer what came
                yield chunk
                chunk = []
            with changed:
                while not ready:
                    changed.wait()
        item = ready.popleft()
        if len(ready) == size - 1:  # the reading thread may wait for room
            with changed:
                changed.notify()
        if item is end or isinstance(item, BaseException):
            if chunk:
                yield chunk
            if isinstance(item, BaseException):
                raise item
            return
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []


#: The answer of a multi-label model that gives a document no label.
NO_LABEL = "(none)"
#: The answer where the model abstains (--abstain).
ABSTAINED = "(abstain)"


class _Answers:
    """The output line of each document: its label(s), or the top k with their
    probabilities (scores when the model is not calibrated), as text or JSON."""

    def __init__(self, classifier: Any, top_k: int, jsonl: bool,
                 abstain: float | None = None) -> None:
        self.classifier = classifier
        self.network = classifier.network_
        self.classes = self.network.classes_.tolist()
        self.calibration = self.network.calibration_
        self.top_k, self.jsonl = top_k, jsonl
        self.abstain = abstain

    def one(self, line: str) -> str:
        """The answer to one line, through the one-example path."""
        if self.abstain is not None:
            return next(self.many([line]))
        engine = self.network.engine_
        scores, best = engine.score_one(*self.classifier.features_one(line))
        if engine.multilabel:
            labels = engine.label_of(scores, best)
            if self.top_k == 1 and not self.jsonl:
                return self._labels(labels)
            if self.calibration is not None:
                scores = self.calibration.probabilities(scores[None, :])[0]
            return self._ranked(scores, labels)
        if self.top_k == 1 and not self.jsonl and self.calibration is None:
            return f"{self.classes[best]}\n"
        if self.calibration is not None:  # ranked by probability, as a batch is
            scores = self.calibration.probabilities(scores[None, :])[0]
        return self._ranked(scores)

    def many(self, lines: list[str]) -> Iterator[str]:
        """The answers to a batch of lines."""
        classifier = self.classifier
        if self.abstain is not None:
            yield from self._abstaining(lines)
            return
        multilabel = self.network.multilabel_
        labels: Any = classifier.predict(lines) if multilabel else None
        if multilabel and self.top_k == 1 and not self.jsonl:
            yield from map(self._labels, labels)
            return
        scores = classifier.predict_proba(lines) if self.calibration is not None \
            else classifier.target_scores(lines)
        for i, row in enumerate(scores):
            yield self._ranked(row, labels[i] if multilabel else None)

    def _abstaining(self, lines: list[str]) -> Iterator[str]:
        """Answers that may be an abstention: ``(abstain)``, or ``"label": null,
        "abstained": true`` in JSON, where the top two labels are too close."""
        classifier = self.classifier
        X = classifier.rows(lines)
        network = self.network
        labels = network.predict(X, abstain=self.abstain)
        shares = network.normalised_scores(X)
        for label, row in zip(labels, shares):
            best = (-row).argsort(kind="stable")[:self.top_k]
            if self.jsonl:
                yield orjson.dumps({"label": label, "abstained": label is None, "top": [
                    {"label": self.classes[i], "share": round(float(row[i]), 6)}
                    for i in best]}).decode() + "\n"
            elif label is None:
                yield f"{ABSTAINED}\n"
            elif self.top_k == 1:
                yield f"{label}\n"
            else:
                yield "\t".join(f"{self.classes[i]} {row[i]:.4f}" for i in best) + "\n"

    def _labels(self, labels: Any) -> str:
        """A multi-label answer: the labels, comma-separated, or ``(none)`` (never a
        blank line, which reads as a missing answer)."""
        return (",".join(map(str, labels)) or NO_LABEL) + "\n"

    def _ranked(self, row: Any, labels: Any = None) -> str:
        """The top k labels with their probabilities (scores when uncalibrated); for a
        multi-label model each label's own probability, and in JSON its label set."""
        best = (-row).argsort(kind="stable")[:self.top_k]
        pairs = [(self.classes[i], float(row[i])) for i in best]
        if self.jsonl:
            key = "probability" if self.calibration is not None else "score"
            answer: dict[str, Any] = {"labels": list(labels)} if labels is not None \
                else {"label": pairs[0][0]}
            answer["top"] = [{"label": label, key: round(value, 6)} for label, value in pairs]
            return orjson.dumps(answer).decode() + "\n"
        if self.top_k == 1:
            return f"{pairs[0][0]}\n"
        return "\t".join(f"{label} {value:.4f}" for label, value in pairs) + "\n"
