"""scikit-learn's estimator conventions, without depending on scikit-learn.

``get_params``/``set_params`` and ``clone``-compatible construction for
estimators whose ``__init__`` takes named options plus ``**rule_params``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from snowpy.exceptions import ConfigurationError

__all__ = ["RuleParamsEstimator"]


class RuleParamsEstimator:
    """Mixin: named options in ``_option_names`` plus free ``rule_params``.

    The rule's parameters are validated at ``fit`` (scikit-learn's
    convention: ``__init__`` only stores), against what the rule declares.
    """

    _option_names: ClassVar[tuple[str, ...]] = ()
    _takes_text: ClassVar[bool] = False
    _estimator_type = "classifier"
    rule_params: dict[str, Any]

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's estimator tags (imported only when scikit-learn asks)."""
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        text = self._takes_text
        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(multi_class=True, multi_label=True),
            input_tags=InputTags(one_d_array=text, two_d_array=not text, sparse=not text,
                                 string=text),
        )

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The estimator's options and rule parameters, as given to ``__init__``."""
        params = {name: getattr(self, name) for name in self._option_names}
        params.update(self.rule_params)
        return params

    def set_params(self, **params: Any) -> RuleParamsEstimator:
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

    def __repr__(self) -> str:
        defaults = type(self).__init__.__kwdefaults__ or {}
        shown = []
        for name, value in self.get_params().items():
            if name in defaults and defaults[name] == value and name != "rule":
                continue
            shown.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"
