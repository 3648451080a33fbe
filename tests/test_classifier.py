"""SnowClassifier: raw text in, labels out, with scikit-learn's conventions."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import numpy as np
import pytest

import snowpy
from snowpy import SnowClassifier
from snowpy.text.keys import document_keys
from snowpy.exceptions import ConfigurationError, NotFittedError, UnknownNameError
from snowpy.presets import SNOW

TEXTS = ["cheap pills now", "meeting at noon", "win cash now", "lunch meeting today",
         "cash prize winner", "project meeting notes"]
LABELS = ["spam", "ham", "spam", "ham", "spam", "ham"]


def test_fit_predict_decision_function_score():
    clf = snowpy.SnowClassifier().fit(TEXTS, LABELS)
    assert clf.predict(["win cheap cash", "notes from the meeting"]).tolist() == ["spam", "ham"]
    scores = clf.decision_function(["win cheap cash"])
    # two labels: scikit-learn's shape (n,), the score of classes_[1] over classes_[0]
    both = clf.target_scores(["win cheap cash"])
    assert scores.shape == (1,) and both.shape == (1, 2)
    assert clf.classes_.tolist() == ["ham", "spam"]
    assert scores[0] == both[0, 1] - both[0, 0] > 0
    assert clf.score(TEXTS, LABELS) == 1.0
    assert clf.network_.rule_params_["thickness"] == 1.0


def test_params_round_trip_and_clone():
    clf = snowpy.SnowClassifier("winnow", alpha=1.5, ngrams=1, bits=16)
    params = clf.get_params()
    assert params["alpha"] == 1.5 and params["ngrams"] == 1 and params["rule"] == "winnow"
    twin = snowpy.SnowClassifier(**params)
    assert twin.get_params() == params
    clf.set_params(bits=18, beta=0.7)
    assert clf.bits == 18 and clf.rule_params["beta"] == 0.7
    assert clf.fit(TEXTS, LABELS).featurizer_.bits == 18


def test_partial_fit_streams_and_grows_labels():
    clf = snowpy.SnowClassifier("perceptron")
    clf.partial_fit(TEXTS[:4], LABELS[:4])
    clf.partial_fit(["the weather is sunny", "rain and wind"], ["weather", "weather"])
    assert clf.classes_.tolist()[-1] == "weather"
    assert clf.decision_function(["sunny"]).shape == (1, 3)


def test_multilabel_and_fields():
    records = [{"subject": "cash", "body": "meeting"}, {"subject": "hello", "body": "cash"}]
    clf = snowpy.SnowClassifier(fields=("subject", "body"), epochs=20)
    clf.fit(records, [["promo"], ["promo", "personal"]])
    assert set(clf.predict(records)[1]) == {"promo", "personal"}


def test_bad_rule_fails_before_featurising():
    with pytest.raises(UnknownNameError, match="unknown update rule 'winow'"):
        snowpy.SnowClassifier("winow").fit(iter(["never read"]), ["x"])
    with pytest.raises(ConfigurationError, match="alpha must be > 1.0"):
        snowpy.SnowClassifier("balanced-winnow", alpha=0.5).fit(TEXTS, LABELS)
    with pytest.raises(NotFittedError):
        snowpy.SnowClassifier().predict(["x"])


def test_scikit_learn_pipeline_and_clone():
    import sklearn
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    clf = snowpy.SnowClassifier(ngrams=1, epochs=5)
    copy = clone(clf)
    assert copy.get_params() == clf.get_params() and copy is not clf
    scores = cross_val_score(clf, np.array(TEXTS * 3), np.array(LABELS * 3), cv=3)
    assert scores.tolist() == [1.0, 1.0, 1.0]  # (each fold holds copies of every text)
    assert sklearn.__version__


def _demo(tsv_name: str = "train.tsv") -> tuple[list[str], list[str]]:
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "corpora" / "demo" / tsv_name
    rows = [line.split("\t", 1) for line in path.read_text(encoding="utf-8").splitlines()]
    return [text for _, text in rows], [label for label, _ in rows]


@pytest.mark.parametrize("kind", ["str", "int", "mixed", "array", "multilabel"])
def test_one_epoch_fit_streams_blocks_yet_equals_the_matrix_fit(kind):
    # one epoch of a list of texts is pipelined (featurised in ~2 kB chunks while the
    # network learns); it must learn exactly what a fit on the whole matrix learns
    texts, labels = _demo()
    codes = {name: i for i, name in enumerate(sorted(set(labels)))}
    y: object = {
        "str": labels,
        "int": [codes[label] for label in labels],
        "mixed": [codes[label] if codes[label] % 2 else label for label in labels],
        "array": np.array(labels),
        "multilabel": [[label, "any"] if i % 3 else [label] for i, label in enumerate(labels)],
    }[kind]
    options = dict(rule="balanced-winnow", **SNOW, epochs=1, calibrate=None, ngrams=1,
                   bits=18, chunk_bytes=2048, initial_weight=0.5,
                   negative_initial_weight=0.25, seed=3)
    streamed = snowpy.SnowClassifier(**options).fit(texts, y)
    clf = snowpy.SnowClassifier(**options)
    X = clf.make_featurizer().transform(texts)
    whole = clf.make_network()
    whole.fit(X, y, shuffle_keys=document_keys(texts, y))  # what SnowClassifier.fit shuffles by
    assert streamed.network_.classes_.tolist() == whole.classes_.tolist()
    assert streamed.network_.mistakes_ == whole.mistakes_ and whole.mistakes_[0] > 10
    np.testing.assert_array_equal(streamed.network_.decision_function(X),
                                  whole.decision_function(X))


def test_one_epoch_fit_names_bad_labels():
    with pytest.raises(ConfigurationError, match="mixes single labels and collections"):
        snowpy.SnowClassifier(epochs=1, calibrate=None).fit(TEXTS, [["spam"]] + LABELS[1:])
    with pytest.raises(ConfigurationError, match="labels must be hashable"):
        snowpy.SnowClassifier(epochs=1, calibrate=None).fit(TEXTS, [{"spam": 1}] * len(TEXTS))
    with pytest.raises(ConfigurationError, match="6 texts but 5 labels"):
        snowpy.SnowClassifier(epochs=1, calibrate=None).fit(TEXTS, LABELS[1:])


def test_a_default_classifier_gives_calibrated_probabilities(demo_rows):
    # item 8: SnowClassifier().fit(...).predict_proba(...) raised; the CLI calibrated
    rows = demo_rows
    texts, labels = [t for _, t in rows], [lab for lab, _ in rows]
    clf = SnowClassifier().fit(texts, labels)
    assert clf.calibrate == "cv" and clf.network_.calibration_ is not None
    proba = clf.predict_proba(texts[:50])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert clf.keep_names is False  # as the command line's default (--no-keep-names)
    # started one example at a time, the same default calibrates progressively
    online = SnowClassifier()
    for text, label in zip(texts, labels):
        online.learn_one(text, label)
    assert online.network_.engine_.progressive is not None
    assert abs(sum(online.predict_proba_one(texts[0]).values()) - 1.0) < 1e-9


def test_pickle_and_deepcopy_after_every_public_method():
    """joblib, clone after warm starts and River's habits pickle estimators mid-stream
    (numba's objects once made that a TypeError)."""
    texts = ["win a free prize", "see you at lunch", "free cash now", "lunch at noon"] * 3
    labels = ["spam", "ham", "spam", "ham"] * 3
    clf = snowpy.SnowClassifier(calibrate="progressive", epochs=2)
    steps = [lambda: clf.predict_one("free"), lambda: clf.learn_one(texts[0], labels[0]),
             lambda: clf.learn_one(texts[1], labels[1]), lambda: clf.predict_one("free"),
             lambda: clf.predict_proba_one("free"), lambda: clf.partial_fit(texts, labels),
             lambda: clf.predict(texts), lambda: clf.predict_proba(texts),
             lambda: clf.decision_function(texts), lambda: clf.fit(texts, labels)]
    for step in steps:
        step()
        for other in (pickle.loads(pickle.dumps(clf)), copy.deepcopy(clf)):
            if clf.predict_one("free") is not None:
                assert other.predict_one("free") == clf.predict_one("free")
                assert other.predict_proba_one("free") == clf.predict_proba_one("free")


def test_a_fit_checks_its_options_once_before_reading_and_once_to_train(monkeypatch):
    """The default fit trains four networks (three folds of cross-fitted calibration,
    then the final one) of the same options: they are checked before the texts are
    featurised and once by the network's fit, not once more per fold and per network."""
    checks = []
    original = snowpy.Network.check_options
    monkeypatch.setattr(snowpy.Network, "check_options",
                        lambda self: checks.append(1) or original(self))
    rows = [line.split("\t", 1) for line in
            (Path(__file__).resolve().parent.parent / "corpora" / "demo" / "train.tsv")
            .read_text().splitlines()]
    clf = snowpy.SnowClassifier().fit([t for _, t in rows], [y for y, _ in rows])
    assert clf.network_.calibration_ is not None and len(checks) == 2


# ---------------------------------------------------------------- document frequencies
IDF = dict(rule="passive-aggressive", values="log", idf=True, norm="l2", calibrate=None)
IDF_TEXTS = ["free prize now", "lunch at noon", "win a free prize", "meeting at noon today",
             "prize draw tonight", "noon lunch with the team"] * 3
IDF_LABELS = ["spam", "ham", "spam", "ham", "spam", "ham"] * 3


@pytest.mark.parametrize("bits", [18, 24])  # (the counts' map: direct, then hashed)
def test_idf_counts_what_is_learned_one_document_at_a_time_as_partial_fit_does(bits):
    """learn_one counts each document before learning it, as partial_fit of one document
    does (predict_one before it counts nothing): the same network and frequencies."""
    # (and enough words that the counts and their map grow on the way)
    texts = IDF_TEXTS + [f"word{i} word{i + 1} other{i % 7}" for i in range(700)]
    labels = IDF_LABELS + ["spam", "ham"] * 350
    one, batch = SnowClassifier(**IDF, bits=bits), SnowClassifier(**IDF, bits=bits)
    for text, label in zip(texts, labels):
        one.predict_one(text)
        one.learn_one(text, label)
        batch.partial_fit([text], [label])
    np.testing.assert_array_equal(one.decision_function(texts), batch.decision_function(texts))
    assert one.featurizer_.frequencies_.documents == len(texts)
    assert len(one.featurizer_.frequencies_) > 1500  # (grown past its first room)
    # each document is weighed by the documents up to it, however the stream is cut (the
    # targets made first: a target made later does not see the documents before it)
    singles, blocks = SnowClassifier(**IDF), SnowClassifier(**IDF)
    for start in range(len(IDF_TEXTS)):
        singles.partial_fit(IDF_TEXTS[start:start + 1], IDF_LABELS[start:start + 1],
                            classes=["ham", "spam"])
    for start in range(0, len(IDF_TEXTS), 5):
        blocks.partial_fit(IDF_TEXTS[start:start + 5], IDF_LABELS[start:start + 5],
                           classes=["ham", "spam"])
    np.testing.assert_allclose(blocks.decision_function(IDF_TEXTS),
                               singles.decision_function(IDF_TEXTS), rtol=1e-9)
    fitted = SnowClassifier(**IDF).fit(IDF_TEXTS, IDF_LABELS)
    assert fitted.featurizer_.frequencies_.documents == len(IDF_TEXTS)
    # a fit counts every document before learning any: its rows differ from the stream's
    assert fitted.predict(["free prize", "lunch at noon"]).tolist() == ["spam", "ham"]
    refit = SnowClassifier(**IDF).fit(IDF_TEXTS[:6], IDF_LABELS[:6])
    assert refit.featurizer_.frequencies_.documents == 6  # (a new fit counts afresh)


@pytest.mark.parametrize("front", [{}, {"values": "count", "norm": None}])
def test_the_one_call_paths_learn_what_the_two_calls_learn(front):
    """A text is featurised, weighed and scored in one compiled call, its row kept for a
    learn_one of the same text, which counts, weighs and learns it in one more (waiting
    for room where the pool grows: counted once): the predictions, probabilities,
    model and counts of the two-call path (forced by normalising Unicode, which leaves
    these ASCII texts as they are), bit for bit; a text predicted in between, a row the
    front end made in between, or a text learned without a prediction, is featurised
    again."""
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choice(words, size=rng.integers(1, 30))) for _ in range(600)]
    labels = [("a", "b", "c")[len(text) % 3] for text in texts]
    models = [SnowClassifier(calibrate="progressive", **front),
              SnowClassifier(calibrate="progressive", unicode_form="NFC", **front)]
    seen: list[list] = [[], []]
    for i, (text, label) in enumerate(zip(texts, labels)):
        for model, said in zip(models, seen):
            if i % 5:  # (every fifth learned without a prediction)
                said.append(model.predict_one(text))
                if i > 20:
                    said.append(model.predict_proba_one(text))
            if i % 7 == 3:  # (another text predicted between)
                said.append(model.predict_one(texts[i - 1]))
            if i % 11 == 4:  # (a row made by the front end itself between)
                said.append(model.featurizer_.features_one(texts[i - 1])[0].tolist())
            model.learn_one(text, label)
    fused, two = models
    assert type(fused._last_features[2]) is int  # (a row kept in the compiled buffers)
    assert two._last_features[2][0].dtype == np.int64  # (arrays: the two calls)
    assert seen[0] == seen[1]
    mine, theirs = fused.to_state()[1], two.to_state()[1]
    assert mine.keys() == theirs.keys()
    for name in mine:
        np.testing.assert_array_equal(mine[name], theirs[name], err_msg=name)
    assert fused.featurizer_.frequencies_.documents == len(texts)
    fused.predict_one(texts[1])
    copied = copy.deepcopy(fused)  # (the kept row is this process's: a copy,
    while copied.featurizer_.one_document()[0].serial < \
            fused.featurizer_.one_document()[0].serial:  # its rows counted anew, featurises
        copied.featurizer_.features_one(texts[0])       # the text again)
    copied.learn_one(texts[1], labels[1])
    fused.learn_one(texts[1], labels[1])
    mine, theirs = fused.to_state()[1], copied.to_state()[1]
    for name in mine:
        np.testing.assert_array_equal(mine[name], theirs[name], err_msg=name)
    fused.featurizer_.frequencies_ = type(fused.featurizer_.frequencies_)(1 << 22)
    with pytest.raises(NotFittedError, match="document frequencies .* not counted yet"):
        fused.predict_one(texts[0])  # (none counted: both paths refuse to weigh)


@pytest.mark.parametrize("rule", ["passive-aggressive", "winnow+perceptron"])
def test_a_loaded_classifier_runs_its_network_on_its_own_threads(tmp_path, rule):
    # how many threads is the loading process's choice (model files hold no n_jobs): the
    # loaded classifier's, every core by default, for its network's learning and scores
    # (a cloud's members too)
    def threads(model):
        return [n.n_jobs for n in getattr(model.network_, "networks_", [model.network_])]

    clf = snowpy.SnowClassifier(rule, n_jobs=1, calibrate=None).fit(TEXTS * 3, LABELS * 3)
    assert threads(clf) in ([1], [1, 1])
    loaded = snowpy.load(clf.save(tmp_path / "m.snowpy"))
    assert loaded.n_jobs == -1 and set(threads(loaded)) == {-1}
    np.testing.assert_array_equal(loaded.predict(TEXTS), clf.predict(TEXTS))
    loaded.set_params(n_jobs=2)  # (and the holder's later choice reaches them too)
    assert loaded.featurizer_.n_jobs == 2 and set(threads(loaded)) == {2}


@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_label_is_refused_everywhere_in_the_readers_words(empty, tmp_path):
    # it was learned by fit, partial_fit and learn_one (the class "" then won predictions)
    # while the command line's reader refused it: refused everywhere, in the same words
    from typer.testing import CliRunner

    from snowpy.cli import app

    words = "empty label: a label needs a character other than white space"
    texts, labels = _demo()
    with pytest.raises(ConfigurationError, match=words):
        SnowClassifier(epochs=1).fit(texts[:20] + ["an odd one"], labels[:20] + [empty])
    with pytest.raises(ConfigurationError, match=words):
        SnowClassifier(epochs=1).fit(texts[:20], [[y, empty] for y in labels[:20]])
    model = SnowClassifier(epochs=1).fit(texts, labels)
    with pytest.raises(ConfigurationError, match=words):
        model.partial_fit(["please cancel my renewal"], [empty])
    with pytest.raises(ConfigurationError, match=words):
        model.learn_one("please cancel my renewal", empty)
    assert "" not in model.classes_ and "  " not in model.classes_
    for name, content in (("c.tsv", f"billing\tmy invoice\n{empty}\tcancel it\n"),
                          ("c.jsonl", '{"label": "billing", "text": "my invoice"}\n'
                                      f'{{"label": "{empty}", "text": "cancel it"}}\n')):
        (tmp_path / name).write_text(content)
        result = CliRunner().invoke(app, ["train", str(tmp_path / name), "-o",
                                          str(tmp_path / "m.snowpy")])
        assert result.exit_code == 1 and f"{name}:2: {words}" in result.stderr


def test_a_rule_trains_with_the_thickness_snowpy_plugins_lists(tmp_path):
    # every rule trained with thickness 1.0 while `snowpy plugins` listed its own (0.0 for
    # the Perceptron): --rule perceptron and --rule thick-separator gave the same model
    import json as json_module

    from typer.testing import CliRunner

    from snowpy.cli import app

    runner = CliRunner()
    listed = {rule["name"]: {p["name"]: p["default"] for p in rule["parameters"]}
              for rule in json_module.loads(runner.invoke(app, ["plugins", "--json"]).stdout)
              ["rules"]}
    assert (listed["perceptron"]["thickness"], listed["thick-separator"]["thickness"],
            listed["passive-aggressive"]["thickness"]) == (0.0, 1.0, 1.0)
    demo = Path(__file__).resolve().parent.parent / "corpora" / "demo" / "train.tsv"
    weights = {}
    for rule in ("perceptron", "thick-separator", "naive-bayes", "aggressive"):
        path = tmp_path / f"{rule}.snowpy"
        result = runner.invoke(app, ["train", str(demo), "-o", str(path), "--rule", rule,
                                     "--epochs", "2", "--calibrate", "none"])
        assert result.exit_code == 0, result.output
        model = snowpy.load(path)
        assert model.network_.rule_params_["thickness"] == listed[rule]["thickness"]
        assert model.thickness is None  # (the rule's own, as it was given)
        weights[rule] = model.target_scores(["my invoice was charged twice"])
    assert not np.allclose(weights["perceptron"], weights["thick-separator"])
    texts, labels = _demo()
    assert SnowClassifier("perceptron", epochs=1).fit(texts, labels).network_.rule_params_[
        "thickness"] == 0.0
    given = SnowClassifier("perceptron", thickness=2.0, epochs=1).fit(texts, labels)
    assert given.network_.rule_params_["thickness"] == 2.0
    assert snowpy.load(given.save(tmp_path / "given.snowpy")).thickness == 2.0
    cloud = SnowClassifier("winnow+perceptron", epochs=1).fit(texts, labels).network_
    assert [member.rule_params_["thickness"] for member in cloud.networks_] == [1.0, 0.0]
