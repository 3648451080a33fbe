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
    front = SnowClassifier(ngrams=1).make_featurizer()
    return (front.fit_transform([d.text for d in train]), [d.label for d in train],
            front.transform([d.text for d in test]), [d.label for d in test])


def test_a_cloud_combines_its_members_by_confidence():
    X, y, X_test, y_test = _demo()
    cloud = Cloud(("winnow", "perceptron"), epochs=5).fit(X, y)
    winnow, perceptron = cloud.networks_
    # the members are the networks their rules train alone
    alone = Network("winnow", epochs=5).fit(X, y)
    np.testing.assert_array_equal(winnow.target_scores(X_test), alone.target_scores(X_test))
    # confidence from each target node's updates, normalised label by label
    raw = np.stack([confidence(n.engine_.promotions + n.engine_.demotions) for n in cloud.networks_])
    np.testing.assert_allclose(cloud.confidence_, raw / raw.sum(axis=0))
    expected = sum(c * 1 / (1 + np.exp(-n.target_scores(X_test)))
                   for c, n in zip(cloud.confidence_, cloud.networks_))
    np.testing.assert_allclose(cloud.activations(X_test), expected, rtol=1e-12)
    # the scores are the activations' log-odds: the same winner, a claim above 1/2
    np.testing.assert_allclose(cloud.target_scores(X_test),
                               np.log(expected) - np.log1p(-expected), rtol=1e-9)
    assert cloud.predict(X_test).tolist() == cloud.classes_[expected.argmax(1)].tolist()
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


def _texts():
    train = list(read(str(demo_path("train"))))
    test = list(read(str(demo_path("test"))))
    return ([d.text for d in train], [d.label for d in train],
            [d.text for d in test], [d.label for d in test])


def test_a_classifier_with_a_cloud_rule(tmp_path):
    texts, labels, test_texts, test_labels = _texts()
    clf = SnowClassifier(rule="winnow+perceptron", theta=3.0, alpha=1.5).fit(texts, labels)
    cloud = clf.network_
    assert isinstance(cloud, Cloud) and cloud.rule == "winnow+perceptron"
    winnow, perceptron = cloud.networks_
    # shared parameters go to the members that declare them
    assert winnow.rule_params_["theta"] == perceptron.rule_params_["theta"] == 3.0
    assert winnow.rule_params_["alpha"] == 1.5 and "alpha" not in perceptron.rule_params_
    # each member is the network its rule trains alone with the same options
    alone = SnowClassifier(rule="perceptron", theta=3.0).fit(texts, labels)
    np.testing.assert_array_equal(perceptron.target_scores(clf.transform(test_texts)),
                                  alone.network_.target_scores(clf.transform(test_texts)))
    # probabilities: the confidence-weighted mixture of the calibrated members'
    X_test = clf.transform(test_texts)
    mixed = sum(c * n.predict_proba(X_test) for c, n in zip(cloud.confidence_,
                                                             cloud.networks_))
    np.testing.assert_allclose(clf.predict_proba(test_texts),
                               mixed / mixed.sum(axis=1, keepdims=True), rtol=1e-12)
    assert clf.score(test_texts, test_labels) >= 0.9
    one = clf.predict_proba_one(test_texts[0])
    assert one == pytest.approx(dict(zip(clf.classes_, clf.predict_proba(test_texts[:1])[0])))
    assert clf.predict_one(test_texts[0]) == clf.predict(test_texts[:1])[0]
    abstained = clf.predict(test_texts, abstain=0.99)
    assert any(a is None for a in abstained) and not all(a is None for a in abstained)
    again = load(clf.save(tmp_path / "cloud.snowpy"))
    assert isinstance(again.network_, Cloud)
    np.testing.assert_array_equal(again.predict_proba(test_texts), clf.predict_proba(test_texts))
    again.partial_fit(test_texts[:20], test_labels[:20])
    again.learn_one(test_texts[0], test_labels[0])
    assert again.network_.networks_[0].n_examples_seen_ > winnow.n_examples_seen_


def test_a_cloud_rule_is_a_list_of_rules_with_their_parameters():
    texts, labels, _, _ = _texts()
    clf = SnowClassifier(rule=[("winnow", {"alpha": 2.0}), "perceptron", "naive-bayes"],
                         calibrate=None, epochs=2).fit(texts, labels)
    assert [n.rule for n in clf.network_.networks_] == ["winnow", "perceptron", "naive-bayes"]
    assert clf.network_.networks_[0].rule_params_["alpha"] == 2.0
    assert clf.network_.confidence_.shape == (3, 5)
    with pytest.raises(ConfigurationError, match="no member of the cloud .* 'bogus'"):
        SnowClassifier(rule="winnow+perceptron", bogus=1.0).fit(texts, labels)
    with pytest.raises(ConfigurationError, match="joined by"):
        SnowClassifier(rule="winnow+").fit(texts, labels)


def test_the_command_line_trains_evaluates_and_inspects_a_cloud(tmp_path):
    import json

    from typer.testing import CliRunner

    from snowpy.cli import app

    runner = CliRunner()
    model = tmp_path / "cloud.snowpy"
    result = runner.invoke(app, ["train", str(demo_path("train")), "-o", str(model),
                                 "--rule", "winnow+perceptron", "--alpha", "1.5", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["rule"] == "winnow+perceptron"
    assert [p["rule"] for p in summary["rule_params"]] == ["winnow", "perceptron"]
    result = runner.invoke(app, ["evaluate", str(model), str(demo_path("test")), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["accuracy"] >= 0.9
    result = runner.invoke(app, ["inspect", str(model), "--json"])
    info = json.loads(result.stdout)
    assert info["kind"] == "cloud" and [m["rule"] for m in info["members"]] == \
        ["winnow", "perceptron"]
    bad = runner.invoke(app, ["train", str(demo_path("train")), "-o", str(model),
                              "--rule", "winnow+perceptron", "--bogus", "1"])
    assert bad.exit_code != 0 and "--bogus" in bad.output
    refused = runner.invoke(app, ["train", str(demo_path("train")), "-o", str(model),
                                  "--rule", "winnow+perceptron", "--test",
                                  str(demo_path("test"))])
    assert refused.exit_code != 0 and "one after the other" in refused.output


def test_a_cloud_learns_and_predicts_one_example_at_a_time_on_its_own():
    """River's protocol on a Cloud alone, not only inside SnowClassifier (issue 30)."""
    cloud = Cloud(("winnow", "perceptron"), calibrate="progressive")
    assert cloud.predict_one({0: 1}) is None and cloud.predict_proba_one({0: 1}) == {}
    stream = [({0: 1, 1: 1}, "a"), ({2: 1, 3: 1}, "b"), ({0: 1, 3: 1}, "a"),
              ({2: 1}, "b")] * 5
    for x, y in stream:
        assert cloud.learn_one(x, y) is cloud
    assert cloud.predict_one({0: 1, 1: 1}) == "a" and cloud.predict_one([2, 3]) == "b"
    assert [len(n.mistakes_) for n in cloud.networks_] == [1, 1]  # one run of learn_one
    assert cloud.n_links_ > 0
