"""A snowpy classifier as a River estimator, for River's pipelines and evaluation.

:class:`SnowRiver` wraps a :class:`~snowpy.SnowClassifier` in River's
classifier protocol: ``learn_one``, ``predict_one``, ``predict_proba_one``
(and ``learn_many``/``predict_many`` on pandas frames). It takes what River
gives: a text, a dict with a text field, or a dict of feature name ->
strength (the output of ``river.feature_extraction.BagOfWords``). Importing
this module imports River.

Examples
--------
>>> from river import evaluate, feature_extraction, metrics  # doctest: +SKIP
>>> model = feature_extraction.BagOfWords() | SnowRiver()  # doctest: +SKIP
>>> evaluate.progressive_val_score(stream, model, metrics.Accuracy())  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from river import base

from snowpy.classifier import SnowClassifier
from snowpy.exceptions import ConfigurationError

__all__ = ["SnowRiver"]


class SnowRiver(base.Classifier):
    """A :class:`~snowpy.SnowClassifier` learning one example at a time, River's way.

    Parameters
    ----------
    model : SnowClassifier, optional
        The classifier's settings (it is copied unfitted, as River clones
        estimators). By default ``SnowClassifier(calibrate="progressive",
        ngrams=1)``: word unigrams, progressive probabilities.
    text_field : str, optional
        The key of the text when examples are dicts holding one (River's
        datasets give ``{"body": "..."}``); without it a dict is read as
        feature name -> strength, and a string as the text.

    Attributes
    ----------
    classifier_ : SnowClassifier
        The classifier learning, created at the first example.

    Examples
    --------
    >>> clf = SnowRiver()
    >>> for text, label in [("cheap pills now", "spam"), ("lunch at noon?", "ham"),
    ...                     ("cheap cheap offer", "spam"), ("see you at lunch", "ham")]:
    ...     clf.learn_one(text, label)
    >>> clf.predict_one("cheap offer"), clf.predict_one("lunch?")
    ('spam', 'ham')
    """

    def __init__(self, model: SnowClassifier | None = None,
                 text_field: str | None = None) -> None:
        self.model = model
        self.text_field = text_field

    @property
    def _multiclass(self) -> bool:  # River's flag: any number of labels
        return True

    def _document(self, x: Any) -> Any:
        if self.text_field is None or isinstance(x, str):
            return x
        try:
            return x[self.text_field]
        except (KeyError, TypeError):
            raise ConfigurationError(f"the example has no field {self.text_field!r}: "
                                     f"{sorted(x)[:5] if isinstance(x, dict) else x!r}") from None

    def _classifier(self) -> SnowClassifier:
        classifier = getattr(self, "classifier_", None)
        if classifier is None:
            classifier = SnowClassifier(calibrate="progressive", ngrams=1) \
                if self.model is None else SnowClassifier(**self.model.get_params())
            self.classifier_ = classifier
        return classifier

    def _fitted(self) -> bool:
        return hasattr(getattr(self, "classifier_", None), "network_")

    def learn_one(self, x: Any, y: Any) -> None:
        """Learn one example."""
        self._classifier().learn_one(self._document(x), y)

    def predict_one(self, x: Any, **kwargs: Any) -> Any:
        """The winning label (the highest activation); None before any learning."""
        if not self._fitted():
            return None
        return self.classifier_.predict_one(self._document(x))

    def predict_proba_one(self, x: Any, **kwargs: Any) -> dict[Any, float]:
        """The probability of each label; empty before any learning."""
        if not self._fitted():
            return {}
        return self.classifier_.predict_proba_one(self._document(x))

    def _documents(self, X: Any) -> list[Any]:
        if self.text_field is not None:
            return list(X[self.text_field])
        return X.to_dict(orient="records")

    def learn_many(self, X: Any, y: Any) -> None:
        """Learn a pandas frame of examples in order."""
        self._classifier().partial_fit(self._documents(X), list(y))

    def predict_many(self, X: Any) -> Any:
        """The labels of a pandas frame of examples, a pandas series."""
        import pandas as pd  # type: ignore[import-untyped]

        if not self._fitted():
            return pd.Series([None] * len(X), index=X.index)
        return pd.Series(self.classifier_.predict(self._documents(X)).tolist(), index=X.index)
