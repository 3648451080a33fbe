"""scikit-learn's estimator checks in their text form, for SnowClassifier and the
Featurizer (scikit-learn's own checks skip estimators that take strings)."""

from __future__ import annotations

import copy
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

import snowpy
from snowpy.exceptions import ConfigurationError, NotFittedError

import sklearn
from sklearn.base import clone  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def demo(split: str = "train") -> tuple[list[str], list[str]]:
    rows = [line.split("\t", 1) for line in
            (ROOT / "corpora" / "demo" / f"{split}.tsv").read_text().splitlines() if line]
    return [text for _, text in rows], [label for label, _ in rows]


TEXTS, LABELS = demo()
TEST_TEXTS, TEST_LABELS = demo("test")


@pytest.fixture(scope="module")
def fitted() -> snowpy.SnowClassifier:
    return snowpy.SnowClassifier(calibrate="cv").fit(TEXTS, LABELS)


def test_clone_gives_the_same_parameters_unfitted(fitted):
    twin = clone(fitted)
    assert twin.get_params() == fitted.get_params() and not hasattr(twin, "network_")
    assert repr(snowpy.SnowClassifier("winnow", ngrams=1)) == \
        "SnowClassifier(rule='winnow', ngrams=1)"


def test_pickle_and_deepcopy_keep_the_model(fitted):
    for twin in (pickle.loads(pickle.dumps(fitted)), copy.deepcopy(fitted)):
        np.testing.assert_array_equal(twin.predict(TEST_TEXTS), fitted.predict(TEST_TEXTS))
        np.testing.assert_array_equal(twin.predict_proba(TEST_TEXTS),
                                      fitted.predict_proba(TEST_TEXTS))
    twin = copy.deepcopy(fitted)
    twin.partial_fit(["a new kind of ticket entirely"], ["account"])  # the copy is its own
    assert fitted.network_.n_examples_seen_ != twin.network_.n_examples_seen_


def test_the_order_of_the_training_documents_does_not_matter():
    order = np.random.default_rng(5).permutation(len(TEXTS))
    a = snowpy.SnowClassifier().fit(TEXTS, LABELS)
    b = snowpy.SnowClassifier().fit([TEXTS[i] for i in order], [LABELS[i] for i in order])
    np.testing.assert_array_equal(a.target_scores(TEST_TEXTS), b.target_scores(TEST_TEXTS))
    # and predictions follow their documents
    back = np.argsort(order)
    np.testing.assert_array_equal(a.predict([TEXTS[i] for i in order])[back], a.predict(TEXTS))


def test_sample_weight_is_repetition():
    weights = np.where(np.arange(len(TEXTS)) % 4 == 0, 2, 1)
    weighted = snowpy.SnowClassifier(calibrate=None).fit(TEXTS, LABELS, sample_weight=weights)
    repeated = snowpy.SnowClassifier(calibrate=None).fit(
        [t for t, w in zip(TEXTS, weights) for _ in range(w)],
        [lab for lab, w in zip(LABELS, weights) for _ in range(w)])
    np.testing.assert_array_equal(weighted.target_scores(TEST_TEXTS),
                                  repeated.target_scores(TEST_TEXTS))
    with pytest.raises(ConfigurationError, match="whole numbers"):
        snowpy.SnowClassifier().fit(TEXTS, LABELS, sample_weight=np.full(len(TEXTS), 0.5))


def test_binary_shapes_and_scorers():
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import cross_val_score

    binary = [lab == "billing" for lab in LABELS]
    clf = snowpy.SnowClassifier(calibrate="cv").fit(TEXTS, binary)
    truth = np.array([lab == "billing" for lab in TEST_LABELS])
    scores = clf.decision_function(TEST_TEXTS)
    assert scores.shape == (len(TEST_TEXTS),)
    assert clf.predict_proba(TEST_TEXTS).shape == (len(TEST_TEXTS), 2)
    assert roc_auc_score(truth, scores) > 0.95
    np.testing.assert_array_equal(clf.predict(TEST_TEXTS), clf.classes_[(scores > 0) * 1])
    aucs = cross_val_score(snowpy.SnowClassifier(calibrate="cv"), np.array(TEXTS, dtype=object),
                           binary, cv=3, scoring="roc_auc")
    assert np.all(np.isfinite(aucs)) and aucs.min() > 0.9


def test_predict_is_the_argmax_of_the_probabilities(fitted):
    probabilities = fitted.predict_proba(TEST_TEXTS)
    np.testing.assert_array_equal(fitted.predict(TEST_TEXTS),
                                  fitted.classes_[probabilities.argmax(axis=1)])


def test_predict_proba_exists_only_with_calibration():
    plain = snowpy.SnowClassifier(calibrate=None).fit(TEXTS, LABELS)
    assert not hasattr(plain, "predict_proba")
    assert hasattr(snowpy.SnowClassifier(calibrate="progressive"), "predict_proba")
    with pytest.raises(NotFittedError, match="calibrate='cv'"):
        plain.predict_proba(TEXTS[:1])


def test_errors_a_scikit_learn_user_expects():
    clf = snowpy.SnowClassifier()
    with pytest.raises(NotFittedError) as caught:
        clf.predict(TEXTS[:2])
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, AttributeError)
    fitted = snowpy.SnowClassifier(calibrate=None).fit(TEXTS, LABELS)
    with pytest.raises(ConfigurationError, match="one string, not a collection"):
        fitted.predict("cheap pills now")  # was 15 predictions, one per character
    import pandas
    table = pandas.DataFrame({"text": TEST_TEXTS[:3], "id": [1, 2, 3]})
    with pytest.raises(ConfigurationError, match="table of 2 columns"):
        fitted.predict(table)  # was iterated by its column names
    np.testing.assert_array_equal(fitted.predict(table[["text"]]), fitted.predict(TEST_TEXTS[:3]))
    np.testing.assert_array_equal(fitted.predict(table["text"]), fitted.predict(TEST_TEXTS[:3]))
    with pytest.raises(ValueError, match="continuous"):
        snowpy.SnowClassifier().fit(TEXTS[:4], [0.5, 1.5, 2.25, 3.0])


def test_partial_fit_takes_the_classes_up_front():
    clf = snowpy.SnowClassifier(calibrate=None)
    clf.partial_fit(TEXTS[:10], LABELS[:10], classes=sorted(set(LABELS)))
    assert clf.classes_.tolist() == sorted(set(LABELS))


def test_the_featurizer_as_a_transformer():
    from sklearn.linear_model import SGDClassifier
    from sklearn.pipeline import make_pipeline

    featurizer = snowpy.Featurizer(ngrams=(1, 2), bits=18)
    assert repr(featurizer) == "Featurizer(ngrams=(1, 2), bits=18)"
    assert clone(featurizer).get_params() == featurizer.get_params()
    names = featurizer.get_feature_names_out()
    assert names.shape == (2**18,) and names[7] == "hash7"
    assert featurizer.set_output(transform="default") is featurizer
    with pytest.raises(ConfigurationError, match="sparse matrix"):
        featurizer.set_output(transform="pandas")
    assert pickle.loads(pickle.dumps(featurizer.fit(TEXTS))).transform(TEXTS[:5]).nnz == \
        featurizer.transform(TEXTS[:5]).nnz
    pipe = make_pipeline(snowpy.Featurizer(), SGDClassifier(random_state=0)).fit(TEXTS, LABELS)
    assert pipe.score(TEST_TEXTS, TEST_LABELS) > 0.85
    named = snowpy.Featurizer(keep_names=True)
    X = named.transform(["cheap pills"])
    assert set(named.get_feature_names_out()[X.indices]) == {"cheap", "pills"}


def test_token_lists_are_joined_as_given_and_never_mixed_with_texts():
    """A token is a string or has .text (spaCy's tokens); whitespace inside a token becomes
    "_", empty and blank tokens are left out, case is kept unless lowercase."""
    class Token:
        def __init__(self, text):
            self.text = text

    def names(featurizer, documents):
        X = featurizer.transform(documents)
        return {name for found in featurizer.names_of(X.indices).values() for name in found}

    tokens = ["New York", Token("Big\tApple"), " ", "", "x"]
    assert names(snowpy.Featurizer(lowercase=False, keep_names=True), [tokens]) == {
        "New_York", "Big_Apple", "x"}
    assert names(snowpy.Featurizer(keep_names=True), [tuple(tokens)]) == {
        "new_york", "big_apple", "x"}
    featurizer = snowpy.Featurizer()
    for documents, line in (
            ([["a"], "b c"], "document 0 is a list of tokens among texts"),
            (["b c", ["a"]], "document 1 is a list of tokens among texts"),
            (["b c", 3], "document 1 is not text (got int)")):
        with pytest.raises(ConfigurationError,
                           match=f"^{re.escape(line)}(; give texts only, or token lists "
                                 "only, in one call)?$"):
            featurizer.transform(documents)
    with pytest.raises(ConfigurationError, match="^document 1 field 't' is a list of tokens"):
        snowpy.Featurizer(fields=("t",)).transform([{"t": "a b"}, {"t": ["c"]}])
    with pytest.raises(ConfigurationError, match="^document 1 has no field 'b'$"):
        snowpy.Featurizer(fields=("a", "b")).transform([{"a": "x", "b": "y"}, {"a": "x"}])

    class Sentence:  # (a Doc's vocab, iteration and text, without spaCy's to_array)
        vocab = None
        text = "Big Apple"

        def __iter__(self):
            return iter([Token("Big"), Token("Apple")])

    assert names(snowpy.Featurizer(keep_names=True), [Sentence()]) == {"big", "apple"}

    class Note:  # (a .text alone, or a .vocab alone, is not a spaCy Doc)
        text = "x"

    class Vocabulary:
        vocab = None

    for document in (Note(), Vocabulary()):
        with pytest.raises(ConfigurationError, match=f"^document 0 is not text \\(got "
                                                     f"{type(document).__name__}\\)$"):
            featurizer.transform([document])


def test_pre_tokenised_documents_are_not_tokenised_again():
    featurizer = snowpy.Featurizer(ngrams=(1, 2), keep_names=True)
    as_tokens = featurizer.transform([["Cheap", "pills", "now"]])
    as_text = featurizer.transform(["cheap pills now"])
    assert (as_tokens != as_text).nnz == 0
    X = featurizer.transform([["do", "n't", "stop"]])
    assert {"n't", "do n't"} <= {name for names in featurizer.names_of(X.indices).values()
                                 for name in names}  # the tokenizer would split n't
    tokens = [text.lower().split() for text in TEXTS]
    by_tokens = snowpy.SnowClassifier(calibrate=None).fit(tokens, LABELS)
    assert by_tokens.score([t.lower().split() for t in TEST_TEXTS], TEST_LABELS) > 0.85
