"""One pass over a stream, in blocks, with progressive validation.

Each document is predicted, then learned (SNoW's incremental mode, ``-i +``):
the predictions made before learning are a fair test on data the model has not
seen. The documents are gathered in blocks, featurised together in compiled code,
and learned by the network's one learning pass (:meth:`snowpy.network.engine.Engine.
learn`), which predicts each document before it learns it, in order: Python is entered
once per block, not once per document. Nothing of the stream is kept beyond a block:
memory is the model's and a block's, however long the stream runs.

A block ends after document ``n`` when ``n`` is a power of two (1, 2, 4... the rows of
the progressive report), a multiple of :data:`BLOCK` or of ``every`` (a checkpoint,
SNoW's ``-c k``); and before a document whose label the network has not met: a target
is created when its label first comes, as one document at a time creates it, so that it
does not learn from the documents before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from queue import Empty, Queue
from typing import Any

import numpy as np

from snowpy.corpora.corpus import Read

__all__ = ["BLOCK", "Progressive", "learn_stream"]

#: The most documents a block holds.
BLOCK = 16_384


@dataclass
class Progressive:
    """The progressive figures of a stream: documents learned, and mistakes made
    predicting them before learning each (the first one counts as a mistake: there
    is no model yet, as in SNoW's and Vowpal Wabbit's figures)."""

    examples: int = 0
    mistakes: int = 0

    @property
    def accuracy(self) -> float:
        """The share of documents predicted right before they were learned."""
        return 1 - self.mistakes / max(self.examples, 1)


def learn_stream(classifier: Any, documents: Iterable[Any], *, every: Iterable[int] = (),
                 after: Callable[[Progressive], None] | None = None) -> Progressive:
    """Predict then learn each document of ``documents`` (``.text`` and ``.label``), in
    order, in blocks (see the module); ``after(figures)`` is called at the end of each
    block (a report, a checkpoint: at 1, 2, 4... documents and at every multiple of each
    of ``every``). ``documents`` may also yield blocks read and featurised in compiled
    code already (a :class:`~snowpy.corpora.corpus.Read` of rows, from
    :func:`snowpy.files.read_blocks`): they are cut at the same documents.

    >>> import snowpy
    >>> from snowpy.corpora import Document
    >>> stream = [Document(t, y, "") for t, y in [("free prize", "spam"), ("lunch at noon",
    ...           "ham"), ("free prize now", "spam"), ("lunch today", "ham")]]
    >>> clf = snowpy.SnowClassifier()
    >>> figures = learn_stream(clf, stream)
    >>> figures.examples, figures.mistakes, clf.predict_one("a free prize")
    (4, 2, 'spam')
    """
    figures = Progressive()
    periods = tuple(k for k in every if k)
    known = set(classifier.classes_) if hasattr(classifier, "network_") else set()
    texts: list[Any] = []
    labels: list[Any] = []

    def learn(documents: Any, labels: Any, rows: bool) -> None:
        """``documents`` (texts, or ``rows`` read in compiled code) learned in the blocks
        :func:`_cuts` cuts them in."""
        for start, stop in _cuts(labels, figures.examples, periods, known):
            fresh = not hasattr(classifier, "network_")
            if rows:
                classifier.partial_fit_rows(documents[start:stop], labels[start:stop])
            else:
                classifier.partial_fit(documents[start:stop], labels[start:stop])
            figures.examples += stop - start
            figures.mistakes += classifier.network_.mistakes_[-1] + fresh  # (no model yet)
            if after is not None:
                after(figures)

    for item in read_ahead(documents):
        if isinstance(item, Read):  # a block read in compiled code
            if texts:
                learn(texts, labels, False)
                texts, labels = [], []
            learn(item.rows, item.labels, True)
            continue
        texts.append(item.text)
        labels.append(item.label)
        if _ends_block(figures.examples + len(texts), periods):
            learn(texts, labels, False)
            texts, labels = [], []
    if texts:
        learn(texts, labels, False)
    return figures


def read_ahead(items: Iterable[Any], batch: int = 256) -> Iterator[Any]:
    """``items``, the next read on a thread of its own while this one is learned (a block
    read in compiled code, a cache's block from disk, release the GIL: reading and
    learning overlap). Items travel ``batch`` at a time (documents: a queue's hand-over
    costs more than a document's reading), a block read in compiled code at once. An
    error in reading is raised where the items are read; stopping early (an error in
    learning, Ctrl-C) stops the thread and closes ``items`` (a cache's shuffle buckets
    are deleted by that close)."""
    queue: Queue = Queue(maxsize=2)
    done = object()
    stop = threading.Event()

    def read() -> None:
        taken: list[Any] = []
        try:
            for item in items:
                if stop.is_set():
                    return
                taken.append(item)
                if len(taken) >= batch or isinstance(item, Read):
                    queue.put(taken)
                    taken = []
            if taken:
                queue.put(taken)
        except BaseException as exc:  # noqa: BLE001 - raised again where it is read
            if taken:
                queue.put(taken)
            queue.put(exc)  # (raised again where the items are read)
            return
        finally:
            getattr(items, "close", lambda: None)()
        queue.put(done)

    reader = threading.Thread(target=read, name="snowpy-read-ahead", daemon=True)
    reader.start()
    try:
        while True:
            item = queue.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield from item
    finally:
        stop.set()
        while reader.is_alive():  # (let it finish its put, then stop)
            try:
                queue.get_nowait()
            except Empty:
                reader.join(0.01)


def _cuts(labels: Any, done: int, periods: tuple[int, ...], known: set
          ) -> list[tuple[int, int]]:
    """The blocks a block of ``len(labels)`` documents read after ``done`` others is cut
    in: after each document that ends a block, before each label not met yet (``known``
    is updated).

    >>> _cuts(["a", "a", "b", "a", "b"], 0, (), set())
    [(0, 1), (1, 2), (2, 4), (4, 5)]
    """
    n = len(labels)
    cuts = {n}
    if isinstance(labels, np.ndarray):  # one label a document: the first of each new one
        names, first = np.unique(labels, return_index=True)
        for name, at in sorted(zip(names.tolist(), first.tolist()), key=lambda pair: pair[1]):
            if name not in known:
                cuts.add(at)
                known.add(name)
    else:
        for at, label in enumerate(labels):
            met = label if isinstance(label, (list, tuple)) else (label,)
            if any(name not in known for name in met):
                cuts.add(at)
                known.update(met)
    power = 1
    while power <= done + n:
        if power > done:
            cuts.add(power - done)
        power *= 2
    for period in (BLOCK, *periods):
        cuts.update(range(period - done % period, n + 1, period))
    bounds = sorted(cut for cut in cuts if 0 < cut <= n)
    return list(zip([0] + bounds[:-1], bounds))


def _ends_block(n: int, periods: tuple[int, ...]) -> bool:
    """Whether a block ends after the ``n``-th document.

    >>> [n for n in range(1, 40) if _ends_block(n, (10, 15))]
    [1, 2, 4, 8, 10, 15, 16, 20, 30, 32]
    """
    return (n & (n - 1)) == 0 or n % BLOCK == 0 or any(n % k == 0 for k in periods)
