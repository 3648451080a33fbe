"""scikit-learn's estimator conventions, without depending on scikit-learn.

``get_params``/``set_params`` and ``clone``-compatible construction for
estimators whose ``__init__`` takes named options plus ``**rule_params``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from snowpy.exceptions import ConfigurationError, NotFittedError

__all__ = ["Estimator", "available_if", "is_fitted", "repr_of"]


def is_fitted(model: Any) -> bool:
    """Whether a snowpy model (an estimator, a network of any kind) has learned anything.

    >>> import snowpy
    >>> is_fitted(snowpy.Network()), is_fitted(snowpy.Network().learn_one({0: 1}, "a"))
    (False, True)
    """
    return bool(model.__sklearn_is_fitted__())


def repr_of(model: Any) -> str:
    """``Name(option=value, ...)``: a model's parameters (``get_params``) that are not
    at their defaults (scikit-learn's repr)."""
    defaults = type(model).__init__.__kwdefaults__ or {}
    shown = [f"{name}={value!r}" for name, value in model.get_params().items()
             if name not in defaults or not _same(defaults[name], value)]
    return f"{type(model).__name__}({', '.join(shown)})"


def _same(default: Any, value: Any) -> bool:
    try:
        return bool(default == value)
    except Exception:  # noqa: BLE001 - arrays and odd values compare as different
        return False


class available_if:
    """A method that exists only when ``check(self)`` holds (scikit-learn's
    ``available_if``, without scikit-learn): otherwise reading it raises
    AttributeError, so ``hasattr`` is False and stacking, voting and scorers do not
    call it. ``error`` is the AttributeError raised (a subclass says more).

    >>> class Model:
    ...     calibrated = False
    ...     @available_if(lambda self: self.calibrated)
    ...     def predict_proba(self):
    ...         return 1.0
    >>> hasattr(Model(), "predict_proba")
    False
    """

    def __init__(self, check: Any, error: type[AttributeError] = AttributeError) -> None:
        self.check = check
        self.error = error

    def __call__(self, method: Any) -> available_if:
        self.method = method
        self.__doc__ = method.__doc__
        self.__name__ = method.__name__
        return self

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self.method
        if not self.check(instance):
            raise self.error(
                f"{type(instance).__name__!r} has no attribute {self.name!r} here: "
                f"{' '.join((self.check.__doc__ or 'not available').split())}")
        return self.method.__get__(instance, owner)


class Estimator:
    """What every snowpy model is: named options in ``_option_names`` plus free
    ``rule_params`` (scikit-learn's ``get_params``/``set_params``), whether it has
    learned, its tags, and ``save``.

    The rule's parameters are validated at ``fit`` (scikit-learn's
    convention: ``__init__`` only stores), against what the rule declares. A model
    describes itself as a header and named arrays (``to_state``); :mod:`snowpy.model_file`
    writes the file.
    """

    _option_names: ClassVar[tuple[str, ...]] = ()
    _takes_text: ClassVar[bool] = False
    _estimator_type = "classifier"
    _rule_params: dict[str, Any]
    _check_fitted: Any  # (each estimator's own: raises NotFittedError)

    def __sklearn_is_fitted__(self) -> bool:
        """Whether the estimator has learned (scikit-learn's ``check_is_fitted`` asks;
        :func:`is_fitted` is the same question without scikit-learn)."""
        return self._trained()

    def _trained(self) -> bool:
        """Whether the estimator has learned anything yet: River's one-example calls
        answer ``None`` (``{}`` for probabilities) before it has."""
        try:
            self._check_fitted()
        except NotFittedError:
            return False
        return True

    @property
    def rule_params(self) -> dict[str, Any]:
        """The rule's parameters given to ``__init__`` (kept privately: scikit-learn
        wants ``__init__`` to set nothing but its parameters)."""
        return self._rule_params

    @rule_params.setter
    def rule_params(self, value: dict[str, Any]) -> None:
        self._rule_params = dict(value)

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's estimator tags (imported only when scikit-learn asks)."""
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        text = self._takes_text
        positive_only = self._nonnegative_only()
        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(multi_class=True, multi_label=True),
            input_tags=InputTags(one_d_array=text, two_d_array=not text, sparse=not text,
                                 string=text, positive_only=positive_only),
        )

    def _nonnegative_only(self) -> bool:
        """Whether only feature strengths of 0 or more are taken (a Winnow network)."""
        return False

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The estimator's options and rule parameters, as given to ``__init__``."""
        params = {name: getattr(self, name) for name in self._option_names}
        params.update(self.rule_params)
        return params

    def set_params(self, **params: Any) -> Estimator:
        """Set options or rule parameters; returns the estimator.

        An unknown name is taken as a rule parameter and checked at ``fit``.
        """
        for name, value in params.items():
            if name in self._option_names:
                setattr(self, name, value)
            elif name.startswith("_") or not name.isidentifier():
                raise ConfigurationError(f"invalid parameter name {name!r}")
            else:
                self.rule_params[name] = value
        return self

    __repr__ = repr_of

    def to_state(self, inference_only: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
        """The model as a JSON-able header (its ``kind`` included) and named arrays."""
        raise NotImplementedError

    def save(self, path: Any, *, inference_only: bool = False, key: bytes | None = None
             ) -> Any:
        """Save the trained model atomically (see :func:`snowpy.save`)."""
        from snowpy._validation import threads_of
        from snowpy.model_file import write_model

        return write_model(path, *self.to_state(inference_only), key=key,
                           threads=threads_of(self.get_params().get("n_jobs")))
