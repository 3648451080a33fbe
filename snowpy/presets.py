"""Settings that suit a kind of problem, written once: the command line applies them as its
defaults where the problem is recognised, and Python users pass them by name.

>>> from snowpy.presets import MULTILABEL, multilabel_settings
>>> MULTILABEL["thickness"], MULTILABEL["links"]
(6.0, 'touched')
>>> multilabel_settings("perceptron")  # the thickness and steps were found for one rule
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

#: Multi-label text categorisation (each target decides alone whether its label applies),
#: as Vowpal Wabbit's ``--multilabel_oaa`` and fastText's ``-loss ova`` are switches.
#: Balanced Winnow with an asymmetric thick separator (a label is predicted only with a
#: clear margin; most labels are absent from most documents), twice the epochs, and
#: touched links (alpha and beta never take a missing weight below zero, so signed links
#: would be positive ones). Reuters-21578 ModApte, 90 topics: micro-F1 0.863 against 0.822
#: at the single-label defaults (docs/benchmarks.md).
MULTILABEL: dict[str, Any] = {
    "rule": "balanced-winnow", "thickness": 6.0, "negative_thickness": 3.0,
    "alpha": 1.2, "beta": 0.8, "epochs": 20, "links": "touched",
}

_NETWORK = ("epochs", "links")  # (options of every network, whatever its rule)


def multilabel_settings(rule: str) -> dict[str, Any]:
    """The multi-label settings that apply to ``rule``: every one for the rule they were
    found with, the network's own (epochs, links) for any other rule or a cloud (a
    thickness is in the units of its rule's activations)."""
    return {name: value for name, value in MULTILABEL.items()
            if name != "rule" and (rule == MULTILABEL["rule"] or name in _NETWORK)}
