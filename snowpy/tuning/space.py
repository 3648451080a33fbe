"""What ``snowpy tune`` searches: the rule (clouds too), the parameters each rule declares
(:class:`snowpy.params.Param`: its default, bounds and type give the range), the front
end (word and character n-grams, skip-grams, conjunctions, bits, values, idf, relevance,
l2 norm), and the network (thickness, epochs, link policy, averaging); for a multi-label
corpus the negative thickness too. The first trials are the defaults (and
:data:`snowpy.presets.MULTILABEL` for a multi-label corpus), so a search never ends below
them on its validation split."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["FRONT_END", "RULES", "first_trials", "suggest"]

#: The rules searched: snowpy's mistake-driven rules, and one cloud.
RULES = ("balanced-winnow", "winnow", "perceptron", "passive-aggressive", "aggressive",
         "normalised-winnow", "balanced-winnow+perceptron")
#: SNoW's front end (:data:`snowpy.presets.SNOW`) as trial parameters: binary features, no
#: idf, no norm (the rules that learn on it: :func:`snowpy.presets.front_end_settings`).
_SNOW = {"values": "binary", "idf": False, "norm": "none"}
#: The options of the front end: a trial's features are made once per distinct setting.
FRONT_END = ("ngrams", "char_ngrams", "skipgrams", "extractors", "bits", "values", "idf",
             "norm")
_CONJUNCTIONS = {"none": (), "2": (("conjunctions", {"window": 2}),),
                 "4": (("conjunctions", {"window": 4}),)}
_NGRAMS = {"1": (1, 1), "1-2": (1, 2), "1-3": (1, 3)}
_CHARS = {"none": None, "2-4": (2, 4), "3-5": (3, 5)}
#: Rule parameters the network searches itself (thickness), or that set a scale rather
#: than a speed (a threshold, an initial weight): left at the rule's defaults.
_NOT_SEARCHED = {"theta", "initial_weight", "negative_initial_weight", "thickness",
                 "negative_thickness", "floor"}


def _range(param: Any) -> tuple[float, float, bool] | None:
    """``(low, high, log)`` around a numeric parameter's default, inside its bounds."""
    default = param.default
    if param.type is not float or not isinstance(default, (int, float)) or default <= 0:
        return None
    low, high = default / 3, default * 3
    if param.low is not None:
        low = max(low, param.low + (1e-3 if param.low_open else 0.0))
    if param.high is not None:
        high = min(high, param.high - (1e-3 if param.high_open else 0.0))
    return (low, high, low > 0 and high / low > 5) if high > low else None


def suggest(trial: Any, multilabel: bool) -> dict[str, Any]:
    """The :class:`snowpy.SnowClassifier` options of one trial."""
    from snowpy.plugins import get_rule

    rule = trial.suggest_categorical("rule", RULES)
    options: dict[str, Any] = {
        "ngrams": _NGRAMS[trial.suggest_categorical("ngrams", tuple(_NGRAMS))],
        "char_ngrams": _CHARS[trial.suggest_categorical("char_ngrams", tuple(_CHARS))],
        "skipgrams": trial.suggest_categorical("skipgrams", (0, 1, 2)) or None,
        # (SNoW's conjunctions of tokens within a window: Li and Roth's question features)
        "extractors": _CONJUNCTIONS[trial.suggest_categorical("conjunctions",
                                                              tuple(_CONJUNCTIONS))],
        "bits": trial.suggest_categorical("bits", (18, 20, 22)),
        "values": trial.suggest_categorical("values", ("binary", "log")),
        "idf": trial.suggest_categorical("idf", (False, True)),
        "relevance": trial.suggest_float("relevance", 0.0, 1.0),
        "norm": {"none": None, "l2": "l2"}[trial.suggest_categorical("norm", ("none", "l2"))],
        "thickness": trial.suggest_float("thickness", 0.0, 8.0),
        "epochs": trial.suggest_int("epochs", 3, 30, log=True),
        "links": trial.suggest_categorical("links", ("signed", "touched")),
        "average": trial.suggest_categorical("average", (True, False)),
    }
    if multilabel:
        options["negative_thickness"] = trial.suggest_float("negative_thickness", 0.0, 6.0)
    if "+" not in rule:  # (a cloud's members keep their defaults)
        for param in get_rule(rule).params:
            found = None if param.name in _NOT_SEARCHED else _range(param)
            if found is not None:
                low, high, log = found
                options[param.name] = trial.suggest_float(f"{rule}:{param.name}", low, high,
                                                          log=log)
    return {"rule": rule, **options}


def _defaults() -> dict[str, Any]:
    """The classifier's defaults as a trial's parameters (the command line's defaults)."""
    from snowpy.declared import CLASSIFIER, defaults

    default = defaults(CLASSIFIER)
    ngrams = default["ngrams"]
    return {"rule": default["rule"], "ngrams": f"{ngrams[0]}-{ngrams[1]}",
            "char_ngrams": "none", "skipgrams": 0, "conjunctions": "none",
            "bits": default["bits"], "values": default["values"],
            "idf": default["idf"], "relevance": default["relevance"],
            "norm": default["norm"] or "none",
            "thickness": _thickness_of(default["rule"]), "epochs": default["epochs"],
            "links": default["links"], "average": default["average"]}


def first_trials(multilabel: bool) -> list[dict[str, Any]]:
    """The settings tried first, as trial parameters: the defaults (then each rule with
    the default front end: a costly front end sampled early could take the whole budget
    of a large corpus), and for a multi-label corpus the multi-label preset."""
    from snowpy.presets import front_end_settings, multilabel_settings

    defaults = _defaults()
    if not multilabel:  # (then each rule on the default features, the multiplicative ones
        #                  on SNoW's: cheap trials first)
        rules = [defaults["rule"]] + [rule for rule in RULES if rule != defaults["rule"]]
        return [{**defaults, "rule": rule, **(_SNOW if front_end_settings(rule) else {}),
                 "thickness": _thickness_of(rule), **_rule_defaults(rule)} for rule in rules]
    rule = defaults["rule"]
    preset = {f"{rule}:{name}" if name in ("alpha", "beta") else name: value
              for name, value in multilabel_settings(rule).items()}
    return [{**defaults, **_rule_defaults(rule), **preset},
            {**defaults, "negative_thickness": _thickness_of(rule, "negative_thickness"),
             **_rule_defaults(rule)}]


def _thickness_of(rule: str, name: str = "thickness") -> float:
    """The thickness (or ``name``: the negative thickness) ``rule`` declares, what it
    trains with when none is given; for a cloud, whose members a trial gives one
    thickness, its first member's."""
    from snowpy.network.cloud import cloud_members
    from snowpy.plugins import get_rule

    members = cloud_members(rule)
    return float(get_rule(rule if members is None else members[0][0]).validate({})[name])


def _rule_defaults(rule: str) -> dict[str, Any]:
    """A rule's searched parameters at their defaults, as trial parameters."""
    from snowpy.plugins import get_rule

    if "+" in rule:
        return {}
    return {f"{rule}:{param.name}": float(param.default) for param in get_rule(rule).params
            if param.name not in _NOT_SEARCHED and _range(param) is not None}


def described(params: dict[str, Any], *, exact: bool = False) -> str:
    """A trial's parameters as ``snowpy train`` takes them, the train defaults left out
    (``exact``: numbers in full, so that the command trains the trial's model; else to
    three figures, for reading).

    >>> described({"rule": "winnow", "ngrams": "1-3", "char_ngrams": "none", "skipgrams": 1,
    ...            "conjunctions": "2", "values": "binary", "idf": False, "norm": "none",
    ...            "average": False, "bits": 22, "thickness": 1.23456, "winnow:alpha": 1.5})
    '--rule winnow --ngrams 1-3 --skipgrams 1 --conjunctions 2 --values binary --no-idf --no-l2 --no-average --thickness 1.23 --alpha 1.5'
    """
    from snowpy.presets import front_end_settings

    train = {k: v for k, v in _defaults().items() if k != "rule"}  # (the rule always named)
    if front_end_settings(str(params.get("rule", ""))):  # (else the command line would
        for name in ("values", "idf", "norm"):           #  take SNoW's front end for it)
            train.pop(name)
    parts = []
    for name, value in params.items():
        if train.get(name, object()) == value:
            continue
        option = "--" + name.split(":")[-1].replace("_", "-")
        if name == "norm":
            parts.append("--l2" if value == "l2" else "--no-l2")
        elif name in ("idf", "average"):
            parts.append(option if value else f"--no-{name}")
        elif isinstance(value, float) and not math.isnan(value):
            parts.append(f"{option} {value!r}" if exact else f"{option} {value:.3g}")
        else:
            parts.append(f"{option} {value}")
    return " ".join(parts)
