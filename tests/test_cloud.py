"""SNoW's clouds: several rules per label, voting by confidence."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from snowpy import Cloud, Network, SnowClassifier, load
from snowpy.corpora import demo_path, read
from snowpy.exceptions import ConfigurationError
from snowpy.network.cloud import confidence


def test_confidence_is_snow_weighted_majority_step_by_step():
    value = 1.0
    for m in range(1, 50):
        value /= 1 + 2 / (100 + m)
        assert confidence(m) == pytest.approx(value, rel=1e-12)
    assert confidence(0) == 1.0


def _demo():
    train = list(read(str(demo_path("train"))))
    test = list(read(str(demo_path("test"))))
    front = SnowClassifier(ngrams=1)._make_featurizer()
    return (front.transform([d.text for d in train]), [d.label for d in train],
            front.transform([d.text for d in test]), [d.label for d in test])


def test_a_cloud_combines_its_members_by_confidence():
    X, y, X_test, y_test = _demo()
    cloud = Cloud(("winnow", "perceptron"), epochs=5).fit(X, y)
    winnow, perceptron = cloud.networks_
    # the members are the networks their rules train alone
    alone = Network("winnow", epochs=5).fit(X, y)
    np.testing.assert_array_equal(winnow.target_scores(X_test), alone.target_scores(X_test))
    # confidence from each target node's updates, normalised label by label
    raw = np.stack([confidence(n.promotions_ + n.demotions_) for n in cloud.networks_])
    np.testing.assert_allclose(cloud.confidence_, raw / raw.sum(axis=0))
    expected = sum(c * 1 / (1 + np.exp(-n.target_scores(X_test)))
                   for c, n in zip(cloud.confidence_, cloud.networks_))
    np.testing.assert_allclose(cloud.decision_function(X_test), expected, rtol=1e-12)
    assert cloud.score(X_test, y_test) >= 0.9


def test_a_cloud_saves_and_loads_as_data(tmp_path):
    X, y, X_test, _ = _demo()
    cloud = Cloud(("balanced-winnow", ("perceptron", {"theta": 0.5})), epochs=3).fit(X, y)
    cloud.save(tmp_path / "c.snowpy")
    again = load(tmp_path / "c.snowpy")
    assert isinstance(again, Cloud)
    np.testing.assert_array_equal(again.decision_function(X_test),
                                  cloud.decision_function(X_test))
    assert again.networks_[1].rule_params_["theta"] == 0.5
    again.partial_fit(X[:10], y[:10])  # and goes on learning


def test_a_cloud_refuses_what_it_cannot_be():
    X = sp.csr_matrix(np.eye(3))
    with pytest.raises(ConfigurationError, match="at least two members"):
        Cloud(("winnow",)).fit(X, ["a", "b", "a"])
    with pytest.raises(ConfigurationError, match="rule name or"):
        Cloud(("winnow", 3)).fit(X, ["a", "b", "a"])


def test_the_clouds_experiment_reports_members_and_cloud():
    from snowpy import experiments

    result = experiments.run("clouds", corpus="demo", epochs=(1, 3))
    assert [row["epochs"] for row in result.rows] == [1, 3]
    for row in result.rows:
        assert 0.8 <= row["cloud"] <= 1.0
        assert row["cloud_beats_both"] == (row["cloud"] > max(row["winnow"],
                                                               row["perceptron"]))
