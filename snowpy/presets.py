"""Settings that suit a kind of problem, written once: the command line applies them as its
defaults where the problem is recognised, and Python users pass them by name.

>>> from snowpy.presets import MULTILABEL, SNOW, multilabel_settings
>>> MULTILABEL["negative_thickness"], MULTILABEL["links"], SNOW["values"]
(0.2, 'touched', 'binary')
>>> multilabel_settings("perceptron")  # the margins were found for some rules only
{'epochs': 20, 'links': 'touched'}
"""

from __future__ import annotations

from typing import Any

from snowpy.declared import CLASSIFIER

__all__ = ["MULTILABEL", "SNOW", "SNOW_RULES", "front_end_settings",
           "multilabel_settings"]

#: SNoW's front end: the presence of each feature, no idf, no norm, a bias of strength 1.
#: The multiplicative rules (Winnow, Balanced Winnow) learn on it: their threshold and
#: their promotion and demotion factors are in the units of counts of active features
#: (movie reviews: Winnow 0.878 on it, 0.760 on the default TF-IDF strengths; Balanced
#: Winnow 0.873 and 0.820).
SNOW: dict[str, Any] = {"values": "binary", "idf": False, "norm": None, "bias": True}
#: The rules that learn on SNoW's front end (the command line trains them on it, said in a
#: note, when no front-end strength option is given).
SNOW_RULES = ("winnow", "balanced-winnow", "normalised-winnow")


def front_end_settings(rule: str) -> dict[str, Any]:
    """SNoW's front end when a member of ``rule`` (a cloud: ``a+b``) is one of
    :data:`SNOW_RULES`; else nothing (the defaults' TF-IDF strengths)."""
    return dict(SNOW) if any(member in SNOW_RULES for member in rule.split("+")) else {}

#: Each target decides alone whether its label applies, as Vowpal Wabbit's
#: ``--multilabel_oaa`` and fastText's ``-loss ova`` are switches: twice the epochs and
#: touched links for every rule; for the rules they were measured with, margins (a label
#: is predicted only with a clear margin; most labels are absent from most documents).
_MULTILABEL_NETWORK = {"epochs": 20, "links": "touched"}
_MULTILABEL_MARGINS = {
    # Reuters-21578 ModApte, 90 topics, on SNoW's front end (SNOW): micro-F1 0.863 (0.822
    # with the single-label margins)
    "balanced-winnow": {"thickness": 6.0, "negative_thickness": 3.0, "alpha": 1.2,
                        "beta": 0.8},
    # at the default front end (TF-IDF strengths): micro-F1 0.878 (0.841 with a negative
    # thickness of 1); negative thickness 0, 0.15, 0.25, 0.35, 0.5: 0.861, 0.879,
    # 0.873, 0.866, 0.860. On SNoW's front end: 0.838 (0.815 without)
    "passive-aggressive": {"negative_thickness": 0.2},
}


def multilabel_settings(rule: str) -> dict[str, Any]:
    """The multi-label settings that apply to ``rule``: the network's own (epochs, links)
    for any rule or a cloud, and the margins measured for that rule (a thickness is in
    the units of its rule's activations)."""
    return {**_MULTILABEL_MARGINS.get(rule, {}), **_MULTILABEL_NETWORK}


#: The multi-label settings of the default rule, as a classifier's parameters.
MULTILABEL: dict[str, Any] = {"rule": CLASSIFIER["rule"].default,
                              **multilabel_settings(CLASSIFIER["rule"].default)}
