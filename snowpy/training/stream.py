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

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

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
    of ``every``).

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

    def learn() -> None:
        fresh = not hasattr(classifier, "network_")
        classifier.partial_fit(texts, labels)
        figures.examples += len(texts)
        figures.mistakes += classifier.network_.mistakes_[-1] + fresh  # (no model yet)
        texts.clear()
        labels.clear()
        if after is not None:
            after(figures)

    for document in documents:
        label = document.label
        met = label if isinstance(label, (list, tuple)) else (label,)
        if any(name not in known for name in met):
            if texts:
                learn()  # (the documents before: the new target does not see them)
            known.update(met)
        texts.append(document.text)
        labels.append(label)
        if _ends_block(figures.examples + len(texts), periods):
            learn()
    if texts:
        learn()
    return figures


def _ends_block(n: int, periods: tuple[int, ...]) -> bool:
    """Whether a block ends after the ``n``-th document.

    >>> [n for n in range(1, 40) if _ends_block(n, (10, 15))]
    [1, 2, 4, 8, 10, 15, 16, 20, 30, 32]
    """
    return (n & (n - 1)) == 0 or n % BLOCK == 0 or any(n % k == 0 for k in periods)
