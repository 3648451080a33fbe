"""scikit-learn's own estimator checks, run on snowpy's estimators.

``parametrize_with_checks`` runs every check scikit-learn applies to its own
classifiers. What is left failing is a design choice, listed with its reason (two for
every network, a third for Winnow):

* ``check_estimators_unfitted``: snowpy raises :class:`snowpy.NotFittedError`, a
  ValueError and an AttributeError as scikit-learn's own class is, but not that class:
  deriving from it would make scikit-learn a run-time dependency of snowpy.
* ``check_classifiers_multilabel_representation_invariance``: a list of lists is
  snowpy's form for label collections (``[["earn", "acq"], []]``), so a 0/1 indicator
  given as nested lists is read as collections of the labels 0 and 1; indicator
  matrices are taken as numpy arrays, sparse matrices or lists of 1-D arrays.
* for Winnow only, ``check_classifiers_train``: three blobs in two dense features,
  shifted to be non-negative (Winnow's positive weights need that), are learned to
  0.80 training accuracy (0.33 with SNoW's default discard, which drops every link of
  so dense a network), where the check asks 0.83. Winnow is built for many sparse
  features; Balanced Winnow and the Perceptron pass.

The same checks' text analogues run against SnowClassifier and the Featurizer in
``test_text_estimators.py`` (scikit-learn skips estimators that take strings).
"""

from __future__ import annotations

import pytest

import sklearn
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import snowpy  # noqa: E402

EXPECTED = {
    "check_estimators_unfitted":
        "snowpy.NotFittedError is a ValueError and an AttributeError, not scikit-learn's "
        "class (scikit-learn is no run-time dependency)",
    "check_classifiers_multilabel_representation_invariance":
        "a list of lists holds label collections in snowpy; indicators come as arrays",
}

ESTIMATORS = [
    snowpy.Network("perceptron"),
    snowpy.Network("winnow"),
    snowpy.Network("balanced-winnow", calibrate="cv"),
    snowpy.Network("passive-aggressive", calibrate="progressive"),
    snowpy.Featurizer(),  # text input: scikit-learn runs its clone check only
]


WINNOW = {"check_classifiers_train":
          "Winnow's positive weights on two dense features: 0.80 where 0.83 is asked"}


def _expected(estimator):
    if not isinstance(estimator, snowpy.Network):
        return {}
    return {**EXPECTED, **WINNOW} if estimator.rule == "winnow" else EXPECTED


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected)
def test_scikit_learn_checks(estimator, check):
    check(estimator)
