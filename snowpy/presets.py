"""Settings that suit a kind of problem, written once: the command line applies them as its
defaults where the problem is recognised, and Python users pass them by name.

>>> from snowpy.presets import MULTILABEL, multilabel_settings
>>> MULTILABEL["thickness"], MULTILABEL["links"]
(6.0, 'touched')
>>> multilabel_settings("perceptron")  # the margins were found for some rules only
{'epochs': 20, 'links': 'touched'}
>>> CLASSIFIER["bits"], CLASSIFIER["links"]
(22, 'signed')
"""

from __future__ import annotations

from typing import Any

from snowpy.declared import CLASSIFIER as _DECLARED
from snowpy.declared import defaults

__all__ = ["CLASSIFIER", "MULTILABEL", "multilabel_settings"]

#: The text classifier's defaults, by name (declared once, with what each parameter does,
#: in :data:`snowpy.declared.CLASSIFIER`).
CLASSIFIER: dict[str, Any] = defaults(_DECLARED)

#: Each target decides alone whether its label applies, as Vowpal Wabbit's
#: ``--multilabel_oaa`` and fastText's ``-loss ova`` are switches: twice the epochs and
#: touched links for every rule; for the rules they were measured with, margins (a label
#: is predicted only with a clear margin; most labels are absent from most documents).
_MULTILABEL_NETWORK = {"epochs": 20, "links": "touched"}
_MULTILABEL_MARGINS = {
    # Reuters-21578 ModApte, 90 topics, at the default front end: micro-F1 0.863 (0.822
    # with the single-label margins)
    "balanced-winnow": {"thickness": 6.0, "negative_thickness": 3.0, "alpha": 1.2,
                        "beta": 0.8},
    # on TF-IDF strengths (values="log", idf=True, norm="l2", bias=0.1): micro-F1 0.878
    # (0.841 with the single-label margins); negative thickness 0, 0.15, 0.25, 0.35, 0.5:
    # 0.861, 0.879, 0.873, 0.866, 0.860. At the default front end: 0.838 (0.815 without)
    "passive-aggressive": {"negative_thickness": 0.2},
}


def multilabel_settings(rule: str) -> dict[str, Any]:
    """The multi-label settings that apply to ``rule``: the network's own (epochs, links)
    for any rule or a cloud, and the margins measured for that rule (a thickness is in
    the units of its rule's activations)."""
    return {**_MULTILABEL_MARGINS.get(rule, {}), **_MULTILABEL_NETWORK}


#: The multi-label settings of the default rule, as a classifier's parameters.
MULTILABEL: dict[str, Any] = {"rule": CLASSIFIER["rule"],
                              **multilabel_settings(CLASSIFIER["rule"])}
