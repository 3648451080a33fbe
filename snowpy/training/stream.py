"""One pass over a stream, one document at a time, with progressive validation.

Each document is predicted, then learned (SNoW's incremental mode, ``-i +``):
the predictions made before learning are a fair test on data the model has not
seen. Nothing of the stream is kept: memory is the model's, however long the
stream runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Progressive", "learn_stream"]


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


def learn_stream(classifier: Any, documents: Iterable[Any], *,
                 after: Callable[[Progressive, bool], None] | None = None) -> Progressive:
    """Predict then learn each document of ``documents`` (``.text`` and ``.label``), in
    order; ``after(figures, wrong)`` is called after each (a report, a checkpoint).

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
    for document in documents:
        text, label = document.text, document.label
        if hasattr(classifier, "network_"):
            predicted = classifier.predict_one(text)
            wrong = set(predicted) != set(label) if isinstance(label, (list, tuple)) \
                else predicted != label
        else:
            wrong = True
        classifier.learn_one(text, label)
        figures.examples += 1
        figures.mistakes += bool(wrong)
        if after is not None:
            after(figures, bool(wrong))
    return figures
