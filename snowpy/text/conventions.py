"""The Featurizer as scikit-learn knows a transformer: repr, tags, output names, output
container, pickling; and what counts as a collection of documents."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from snowpy.exceptions import ConfigurationError

__all__ = ["TransformerConventions", "as_documents"]


def as_documents(texts: Any) -> Any:
    """``texts`` as a collection of documents, or a clear refusal.

    A bare string would be iterated character by character (15 predictions for
    ``predict("cheap pills now")``), and a DataFrame by its column names: the first is
    refused, the second taken when it has one column (its values), else refused.

    >>> as_documents(["one", "two"])
    ['one', 'two']
    >>> as_documents("cheap pills now")
    Traceback (most recent call last):
    ...
    snowpy.exceptions.ConfigurationError: texts is one string, not a collection of documents; give a list: [text]
    """
    if isinstance(texts, (str, bytes)):
        raise ConfigurationError("texts is one string, not a collection of documents; "
                                 "give a list: [text]")
    columns = getattr(texts, "columns", None)
    if columns is not None and hasattr(texts, "iloc"):  # a pandas (or alike) DataFrame
        if len(columns) != 1:
            raise ConfigurationError(
                f"texts is a table of {len(columns)} columns ({', '.join(map(str, columns))}); "
                "give the column of documents (df['text']), or name fields with fields=")
        return texts.iloc[:, 0].tolist()
    if isinstance(texts, np.ndarray) and texts.ndim == 2:
        if texts.shape[1] != 1:
            raise ConfigurationError(f"texts is a 2-D array of shape {texts.shape}; give one "
                                     "document per entry")
        return texts.ravel()
    if hasattr(texts, "tolist") and hasattr(texts, "iloc"):  # a pandas Series
        return texts.tolist()
    return texts


class TransformerConventions:
    """scikit-learn's transformer conventions for a stateless hashing front end."""

    _OMIT_FROM_STATE = ("_local", "_compiled", "_single_path", "_pattern")
    bits: int
    get_params: Any

    def __repr__(self) -> str:
        defaults = {name: p.default for name, p in
                    inspect.signature(type(self).__init__).parameters.items() if name != "self"}
        shown = [f"{name}={value!r}" for name, value in self.get_params().items()
                 if name in defaults and not _same(defaults[name], value)]
        return f"{type(self).__name__}({', '.join(shown)})"

    def __sklearn_tags__(self) -> Any:
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type="transformer", target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(preserves_dtype=[]),
                    input_tags=InputTags(one_d_array=True, two_d_array=False, string=True),
                    requires_fit=False)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the ``2**bits`` output columns: ``hash0``, ``hash1``... (a hashed
        column has no single name; with ``keep_names`` the strings seen in it,
        ``word:cheap|word:pills``, are given where known)."""
        width = 1 << int(self.bits)
        names = np.array([f"hash{i}" for i in range(width)], dtype=object)
        if getattr(self, "keep_names", False) and getattr(self, "_names", None) is not None:
            for column, strings in getattr(self, "names_").items():  # noqa: B009
                names[column] = "|".join(strings)
        return names

    def set_output(self, *, transform: str | None = None) -> Any:
        """scikit-learn's output container: the output is a sparse matrix, so only
        ``"default"`` (or None) is possible; a DataFrame of ``2**bits`` columns is
        refused."""
        if transform not in (None, "default"):
            raise ConfigurationError(
                f"set_output(transform={transform!r}): the Featurizer's output is a sparse "
                f"matrix of 2**{self.bits} columns; only 'default' is possible")
        return self

    def __getstate__(self) -> dict[str, Any]:
        """In-memory pickling (joblib, multiprocessing, deepcopy): the configuration and
        the names; thread workspaces and compiled plans are rebuilt on first use. Model
        files never use pickle (:func:`snowpy.save`)."""
        return {k: v for k, v in self.__dict__.items() if k not in self._OMIT_FROM_STATE}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def _same(default: Any, value: Any) -> bool:
    try:
        return bool(default == value)
    except Exception:  # noqa: BLE001 - arrays and odd values compare as different
        return False
