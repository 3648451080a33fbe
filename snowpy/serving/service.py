"""A model that answers and keeps learning: predictions, feedback learned online and labels
forgotten through the journal (:mod:`snowpy.serving.journal`), snapshots every N examples
or T seconds, and recovery after a crash. The web layer is :mod:`snowpy.serving.app`."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from snowpy.exceptions import ConfigurationError
from snowpy.network.labels import normalise_label
from snowpy.network.state import plain
from snowpy.serving.journal import Journal
from snowpy.serving.metrics import Metrics

__all__ = ["Refused", "Service"]


class Refused(Exception):
    """A request answered with HTTP ``status`` and a one-line ``reason``, nothing done."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class Service:
    """One served classifier.

    Parameters
    ----------
    model : path
        The model file to start from (``snowpy train ... -o model.snowpy``).
    state : path
        The folder of the journal and snapshots (default ``MODEL.serve``). When it holds
        a snapshot, the service starts from the newest one and learns again the journal's
        examples after it: what was acknowledged before a crash is all there.
    snapshot_every, snapshot_seconds
        A snapshot after this many examples learned, or this long after the first
        example not yet in one (whichever comes first).
    key : bytes, optional
        The key the model file is signed with (and the snapshots are signed with).
    new_labels : bool
        Whether ``/learn`` takes a label the model does not know yet (a new target,
        learned from then on); False refuses such an example, nothing learned (a
        mistyped label would otherwise stay a class of the model).
    """

    def __init__(self, model: str | os.PathLike, state: str | os.PathLike | None = None, *,
                 snapshot_every: int = 1000, snapshot_seconds: float = 60.0,
                 key: bytes | None = None, new_labels: bool = True) -> None:
        import snowpy
        from snowpy.model_kinds import kind_of

        if snapshot_every < 1 or snapshot_seconds <= 0:
            raise ConfigurationError("snapshot_every must be at least 1 and snapshot_seconds "
                                     "positive")
        self.model_path = Path(model)
        self.journal = Journal(state if state is not None else
                               self.model_path.with_name(self.model_path.name + ".serve"))
        self.snapshot_every, self.snapshot_seconds, self.key = \
            snapshot_every, float(snapshot_seconds), key
        self.new_labels = bool(new_labels)
        latest = self.journal.latest_snapshot()
        self.snapshot_seq, source = latest if latest is not None else (0, self.model_path)
        self.model = snowpy.load(source, key=key)
        if kind_of(self.model) != "classifier":
            raise ConfigurationError(f"{source}: a network without a front end cannot read "
                                     "text; serve a classifier (snowpy train ... -o MODEL)")
        #: why /learn is closed (a model file saved for inference only), or None
        self.closed = _closed(self.model)
        self.lock = threading.RLock()
        self.metrics = Metrics()
        self.seq = self.snapshot_seq
        self.replayed = 0
        self.unreplayable = 0
        for record in self.journal.replay(self.snapshot_seq):
            try:
                if "forget" in record:  # (a label forgotten there, in the examples' order)
                    self.model.forget(record["forget"])
                else:
                    self.model.learn_one(record["text"], record["label"])
            except (KeyError, TypeError, ValueError):  # (never learned before the crash:
                self.unreplayable += 1                 # its request failed; counted)
            self.seq = int(record["seq"])
            self.replayed += 1
        self.started_from = str(source)
        self._dirty_since: float | None = time.monotonic() if self.replayed else None
        self._timer: threading.Thread | None = None
        self._stopping = threading.Event()

    # -------------------------------------------------------------- answering
    def predict(self, texts: list[str], *, top_k: int = 1, explain: bool = False
                ) -> list[dict[str, Any]]:
        """Each text's label (labels, for a multi-label model), its ``top_k`` most
        probable labels with their probabilities where the model is calibrated, and
        optionally its explanation (:meth:`snowpy.SnowClassifier.explain`)."""
        with self.lock:
            model = self.model
            try:
                labels = model.predict(texts)
            except ConfigurationError as exc:  # (a document the front end refuses: one
                raise Refused(400, str(exc)) from None  # that outruns the pattern's budget)
            calibrated = model.network_.calibration_ is not None
            probabilities = model.predict_proba(texts) if calibrated else None
            classes = [plain(c) for c in model.classes_]
            out = []
            for i, text in enumerate(texts):
                answer: dict[str, Any] = {"label": plain(labels[i])}
                if probabilities is not None:
                    row = probabilities[i]
                    best = sorted(range(len(classes)), key=lambda j: -row[j])[:top_k]
                    answer["probabilities"] = {str(classes[j]): float(row[j]) for j in best}
                if explain:
                    answer["explanation"] = model.explain(text, top_k=top_k, features=10)
                out.append(answer)
            return out

    # --------------------------------------------------------------- learning
    def learn(self, examples: list[tuple[str, Any]]) -> dict[str, Any]:
        """Learn labelled examples online, each made durable in the journal first; what
        the service acknowledges (the returned ``seq``) survives a crash. Examples the
        model cannot learn are :class:`Refused` before anything is journaled (409: the
        model learns nothing; 400: this example, named), as is a label the model does
        not know when the service refuses new labels. The answer names the labels that
        were new to the model (``new_labels``), when there were any."""
        if self.closed is not None:
            raise Refused(409, f"/learn is closed: {self.closed}")
        multilabel = bool(self.model.network_.multilabel_)
        known = set(self.model.classes_.tolist())
        new: list[Any] = []
        for i, (_, label) in enumerate(examples):
            if isinstance(label, list) != multilabel:
                raise Refused(400, f"example {i}: the model is " + (
                    'multi-label: "label" is a list of labels' if multilabel else
                    'single-label: "label" is one label, not a list'))
            try:
                given = [normalise_label(each) for each in (label if multilabel else (label,))]
            except ConfigurationError as exc:
                raise Refused(400, f"example {i}: {exc}") from None
            for each in given:
                if each not in known and each not in new:
                    if not self.new_labels:
                        raise Refused(400, f"example {i}: the model knows no label {each!r}, "
                                           "and this service takes no new label (its labels: "
                                           f"{', '.join(map(str, sorted(known, key=str)))})")
                    new.append(each)
        with self.lock:
            records = [{"seq": self.seq + i + 1, "text": text, "label": plain(label)}
                       for i, (text, label) in enumerate(examples)]
            self.journal.append(records)  # (on the disk before anything is learned)
            self.seq += len(records)  # (each journaled example keeps its number)
            correct = 0
            for text, label in examples:
                guessed = self.model.predict_one(text)
                right = guessed is not None and (
                    set(guessed) == set(label) if multilabel else guessed == label)
                correct += right
                self.model.learn_one(text, label)
                self.metrics.learned(right)
            self._changed()
            answer: dict[str, Any] = {"learned": len(records), "seq": self.seq,
                                      "correct_before": correct}
            if new:
                answer["new_labels"] = [plain(label) for label in new]
            return answer

    def forget(self, label: Any) -> dict[str, Any]:
        """Forget ``label`` (:meth:`snowpy.SnowClassifier.forget`), made durable in the
        journal first, as an example is: a restart forgets it again where it came among
        the examples. A label the model does not know, or its only label, is
        :class:`Refused` (400), nothing journaled."""
        if self.closed is not None:
            raise Refused(409, f"/forget is closed: {self.closed}")
        try:
            label = normalise_label(label)
        except ConfigurationError as exc:
            raise Refused(400, str(exc)) from None
        with self.lock:
            known = self.model.classes_.tolist()
            if label not in known:
                raise Refused(400, f"the model knows no label {label!r} (its labels: "
                                   f"{', '.join(map(str, known))})")
            if len(known) < 2:
                raise Refused(400, f"{label!r} is the model's only label")
            self.journal.append([{"seq": self.seq + 1, "forget": plain(label)}])
            self.seq += 1
            self.model.forget(label)
            self._changed()
            return {"forgot": plain(label), "seq": self.seq,
                    "labels": [plain(each) for each in self.model.classes_.tolist()]}

    def _changed(self) -> None:
        """The model changed (under the lock): a snapshot when one is due."""
        if self._dirty_since is None:
            self._dirty_since = time.monotonic()
        if self.seq - self.snapshot_seq >= self.snapshot_every:
            self.snapshot()

    def snapshot(self) -> Path | None:
        """Write the model as it is now (atomically) and trim the journal; None when
        nothing was learned since the last snapshot."""
        with self.lock:
            if self.seq == self.snapshot_seq:
                return None
            path = self.journal.snapshot(self.seq, lambda p: self.model.save(p, key=self.key))
            self.snapshot_seq, self._dirty_since = self.seq, None
            return path

    def due(self) -> bool:
        """Whether the time-based snapshot is due."""
        return self._dirty_since is not None and \
            time.monotonic() - self._dirty_since >= self.snapshot_seconds

    def start(self) -> None:
        """Snapshot on time from a thread of its own (until :meth:`close`)."""
        def tick() -> None:
            said = None  # (a failing save is said once, not at every look)
            while not self._stopping.wait(min(1.0, self.snapshot_seconds / 4)):
                if self.due():
                    try:
                        self.snapshot()
                    except OSError as exc:  # (a full disk: the journal keeps every example,
                        if str(exc) != said:  # and the next look tries again)
                            said = str(exc)
                            print(f"snowpy serve: a snapshot could not be saved ({said}); "
                                  "the journal keeps every example", file=sys.stderr,
                                  flush=True)
                    else:
                        said = None

        self._timer = threading.Thread(target=tick, name="snowpy-snapshots", daemon=True)
        self._timer.start()

    def close(self) -> None:
        """A last snapshot, and the journal closed (a clean stop)."""
        self._stopping.set()
        if self._timer is not None:
            self._timer.join(timeout=5)
        self.snapshot()
        self.journal.close()

    def health(self) -> dict[str, Any]:
        with self.lock:
            return {"status": "ok", "model": str(self.model_path),
                    "started_from": self.started_from, "classes": len(self.model.classes_),
                    "seq": self.seq, "snapshot_seq": self.snapshot_seq,
                    "replayed": self.replayed, "unreplayable": self.unreplayable,
                    "examples_learned": self.metrics.examples + self.replayed
                    - self.unreplayable, "learning": "closed" if self.closed else "open"}


def _closed(model: Any) -> str | None:
    """Why ``model`` cannot learn (the Python API's own reason), or None."""
    from snowpy.classifier import FITTED_ONCE
    from snowpy.network.engine import INFERENCE_ONLY

    if model.network_.engine_.frozen:
        return INFERENCE_ONLY
    return FITTED_ONCE if getattr(model, "evidence", False) else None  # (a network: none)
