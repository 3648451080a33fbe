"""snowpy inside River: the SnowRiver adapter and River's scikit-learn bridge."""

from __future__ import annotations

import numpy as np
import pytest

import river

from river import compat, evaluate, feature_extraction, metrics  # noqa: E402

import snowpy  # noqa: E402
from snowpy import corpora as corpora_module  # noqa: E402
from snowpy.exceptions import ConfigurationError  # noqa: E402
from snowpy.integrations.river import SnowRiver  # noqa: E402


@pytest.fixture(scope="module")
def sms(corpora):
    import os

    old = os.environ.get("SNOWPY_DATA")
    os.environ["SNOWPY_DATA"] = str(corpora)
    try:
        data = corpora_module.load("sms-spam")
    finally:
        if old is None:
            del os.environ["SNOWPY_DATA"]
        else:
            os.environ["SNOWPY_DATA"] = old
    return [({"body": text}, label) for text, label in zip(data.texts[:2000],
                                                            data.labels[:2000])]


@pytest.mark.corpus
def test_snowriver_in_river_progressive_validation(sms):
    """River's own loop (predict, then learn) on SMS Spam: snowpy's defaults through
    the adapter score at least as well as River's BagOfWords | one-vs-rest Perceptron
    (0.9575), directly on the text field and behind River's BagOfWords."""
    from river import linear_model, multiclass

    theirs = evaluate.progressive_val_score(
        sms, feature_extraction.BagOfWords(on="body")
        | multiclass.OneVsRestClassifier(linear_model.Perceptron()), metrics.Accuracy())
    direct = evaluate.progressive_val_score(sms, SnowRiver(text_field="body"),
                                            metrics.Accuracy())
    piped = evaluate.progressive_val_score(
        sms, feature_extraction.BagOfWords(on="body") | SnowRiver(), metrics.Accuracy())
    assert direct.get() >= theirs.get() > 0.95
    assert piped.get() >= theirs.get() - 0.005
    entropy = evaluate.progressive_val_score(sms, SnowRiver(text_field="body"),
                                             metrics.CrossEntropy())
    assert entropy.get() < 0.15  # River's OvR logistic regression: 0.34


def test_snowriver_starts_empty_and_clones_unfitted():
    model = SnowRiver(snowpy.SnowClassifier(rule="perceptron", calibrate="progressive"))
    assert model.predict_one("anything") is None and model.predict_proba_one("x") == {}
    for text, label in [("cheap pills", "spam"), ("lunch at noon", "ham")] * 5:
        model.learn_one(text, label)
    assert model.predict_one("cheap pills") == "spam"
    assert set(model.predict_proba_one("lunch")) == {"spam", "ham"}
    fresh = model.clone()
    assert fresh.predict_one("cheap pills") is None
    assert fresh.model.get_params()["rule"] == "perceptron"
    assert model.model is not None and not hasattr(model.model, "network_")


def test_snowriver_names_a_missing_text_field():
    model = SnowRiver(text_field="body")
    with pytest.raises(ConfigurationError, match="no field 'body'"):
        model.learn_one({"text": "hello"}, "a")


def test_snowriver_learns_and_predicts_mini_batches():
    import pandas as pd
    frame = pd.DataFrame({"body": ["cheap pills", "lunch at noon", "cheap offer", "lunch?"]})
    model = SnowRiver(text_field="body")
    assert model.predict_many(frame).isna().all()
    model.learn_many(frame, pd.Series(["spam", "ham", "spam", "ham"]))
    assert model.predict_many(frame).tolist() == ["spam", "ham", "spam", "ham"]


def test_rivers_scikit_learn_bridge_drives_a_network():
    """River's scikit-learn bridge calls partial_fit(X, y, classes=...): a Network takes
    it, and the probabilities River reads follow ``classes``' order. (Its factory,
    convert_sklearn_to_river, insists on scikit-learn's own base classes, which snowpy
    does not import; the bridge's class itself takes any estimator.)"""
    rng = np.random.default_rng(0)
    X = rng.random((300, 6))
    y = np.where(X[:, 0] + X[:, 1] > X[:, 2] + X[:, 3], "up", "down")
    model = compat.SKL2RiverClassifier(
        snowpy.Network("perceptron", calibrate="progressive"), classes=["up", "down"])
    right = 0
    for i, (row, label) in enumerate(zip(X, y)):
        x = {f"f{k}": float(v) for k, v in enumerate(row)}
        if i:
            right += model.predict_one(x) == label
        model.learn_one(x, label)
    assert right / (len(y) - 1) > 0.85
    net = model.estimator
    assert net.classes_.tolist() == ["up", "down"]
    probabilities = model.predict_proba_one({f"f{k}": 0.5 for k in range(6)})
    assert probabilities == dict(zip(["up", "down"], net.predict_proba([[0.5] * 6])[0]))


