"""Accuracy at the defaults: snowpy against the baselines a text-classification user tries
first, on every shared corpus, on the same splits, in one run.

Each corpus is split once: its official split where it has one (20 Newsgroups bydate,
IMDB, Reuters ModApte, TREC, SST-2), else a stratified 80/20 split with
``random_state=0`` (AG News: of its test split, the one this archive holds). Every
system learns from the same training texts and is scored on the same test texts:

* ``snowpy``: ``SnowClassifier()`` at its defaults, PA-I on TF-IDF strengths (calibrated,
  as a user gets it; on a multi-label corpus with the multi-label settings the command
  line takes there, :func:`snowpy.presets.multilabel_settings`);
* ``snowpy-snow``: ``SnowClassifier(rule="balanced-winnow", **SNOW)``, Balanced Winnow
  on SNoW's front end (binary features, a bias of 1): snowpy's defaults until
  2026-11-26 (``snowpy train --rule balanced-winnow``);
* ``linearsvc``: ``TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)`` then
  ``LinearSVC()``; its log loss from ``CalibratedClassifierCV(LinearSVC(), cv=3)``
  (sigmoid) on the same features;
* ``mnb``: ``CountVectorizer(ngram_range=(1, 2))`` then ``MultinomialNB()``;
* ``pa``: ``HashingVectorizer(ngram_range=(1, 2), n_features=2**20)`` (l2-normalised
  term frequencies) then ``PassiveAggressiveClassifier(C=1, max_iter=10)`` (PA-I, hinge);
* ``fasttext``: ``fasttext.train_supervised(wordNgrams=2, epoch=25, lr=1.0)`` (the
  settings of fastText's own text-classification tutorial), its training lines
  shuffled (seed 0), when the
  ``fasttext`` module is installed (``pip install fasttext-wheel``), else left out.

Reuters is multi-label: micro-F1 (one-vs-rest for the baselines; MNB and fastText left
out). Fit times include the vectorising. Log loss is printed for snowpy's calibrated
probabilities and for LinearSVC's calibrated ones.

With ``--seeds N``, snowpy and fastText (the systems whose order of examples is drawn
from a seed) run with seeds 0 to N - 1 and are compared by their mean: on a test set
of a few hundred sentences, one seed against another moves either by half a point.

    python benchmarks/bench_accuracy.py [--corpora DIR] [--only NAME ...] [--seeds N]
                                        [--systems NAME ...]

With ``--params JSON``, snowpy runs with those parameters changed from its defaults
(``'{"evidence": true}'``), alone: the baselines are carried over from the results file,
and the run writes ``benchmarks/results/accuracy_params.json``.

With ``--systems``, only the systems named run (a change of snowpy's defaults does not
move the baselines); the others' results are carried over from the results file, and
the file records which were run and when the others were measured.

Writes ``benchmarks/results/accuracy.json`` and prints the table of
``docs/benchmarks.md``.

With ``--protocol nbsvm``, the protocol of Wang and Manning (2012, "Baselines and
Bigrams: Simple, Good Sentiment and Topic Classification"), whose NBSVM-bi is a
strong published linear baseline for sentiment and subjectivity: 10-fold
cross-validation on RT-s (sentence polarity), RT-2k (movie review polarity 2.0) and
Subj (subjectivity), the folds stratified and drawn once (``random_state=0``), the same
for every method; IMDB's official train/test split. Beside snowpy at its defaults
(seed 0, calibrated), three peers on the same folds and the paper's published figures:

* ``nbsvm``: NBSVM-bi as the paper describes it, implemented here: binary 1-2 gram
  features, each scaled by its log-count ratio ``r = ln((p / |p|_1) / (q / |q|_1))``
  (``p``, ``q`` one plus each feature's counts in the positive and the negative
  documents), an L2-regularised L2-loss linear SVM (``LinearSVC(C=1)``), its weights
  then interpolated toward their mean magnitude, ``w' = (1 - beta) mean|w| + beta w``,
  ``beta = 0.25``;
* ``mnb``: ``MultinomialNB()`` on the same binary 1-2 gram features (the paper's MNB-bi);
* ``linearsvc``: TF-IDF 1-2 grams (sublinear tf) then ``LinearSVC()``, as above.

    python benchmarks/bench_accuracy.py --protocol nbsvm [--only rt-s ...]

Writes ``benchmarks/results/accuracy_nbsvm.json`` and prints the table of
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import tarfile
import tempfile
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from common import ROOT, corpora_dir, machine



# ------------------------------------------------------------------ corpora
def _registered(name: str, split: str) -> tuple[list[str], list[Any]]:
    from snowpy import corpora

    documents = list(corpora.load(name, split))
    return [d.text for d in documents], [d.label for d in documents]


def _members(data: Path, archive: str) -> dict[str, bytes]:
    with tarfile.open(data / archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def _subjectivity(data: Path) -> tuple[list[str], list[str]]:
    files = _members(data, "subjectivity_v1.tar.gz")
    texts, labels = [], []
    for name, label in (("quote.tok.gt9.5000", "subjective"), ("plot.tok.gt9.5000",
                                                                 "objective")):
        content = next(v for k, v in files.items() if k.endswith("/" + name))
        for line in content.decode("latin-1").splitlines():
            texts.append(line)
            labels.append(label)
    return texts, labels


def _sst2(data: Path, split: str) -> tuple[list[str], list[str]]:
    files = _members(data, "sst_trees.tar.gz")
    content = next(v for k, v in files.items() if k.endswith(f"derived/sst2_{split}.tsv"))
    texts, labels = [], []
    for line in content.decode("utf-8").splitlines():
        label, _, text = line.partition("\t")
        if text:
            texts.append(text)
            labels.append(label)
    return texts, labels


def _lingspam(data: Path) -> tuple[list[str], list[str]]:
    files = _members(data, "lingspam.tar.gz")
    texts, labels = [], []
    for name in sorted(files):
        if "/bare/" in name and name.endswith(".txt"):
            texts.append(files[name].decode("latin-1"))
            labels.append("spam" if Path(name).name.startswith("spmsg") else "ham")
    return texts, labels


def _uci(data: Path) -> tuple[list[str], list[str]]:
    files = _members(data, "uci_sentiment_labelled_sentences.tar.gz")
    texts, labels = [], []
    for name in sorted(files):
        if name.endswith("_labelled.txt"):
            for line in files[name].decode("utf-8").splitlines():
                text, _, label = line.rpartition("\t")
                if text:
                    texts.append(text)
                    labels.append(label.strip())
    return texts, labels


def _stratified(texts: list[str], labels: list[Any]) -> tuple:
    from sklearn.model_selection import train_test_split

    return train_test_split(texts, labels, test_size=0.2, random_state=0, stratify=labels)


def load(name: str, data: Path) -> tuple[list[str], list[Any], list[str], list[Any]]:
    """``(train texts, train labels, test texts, test labels)`` of a corpus."""
    if name in ("20newsgroups", "imdb", "reuters21578-modapte", "trec"):
        return (*_registered(name, "train"), *_registered(name, "test"))
    if name == "sst2":
        return (*_sst2(data, "train"), *_sst2(data, "test"))
    if name == "ag-news":
        texts, labels = _registered(name, "test")
    elif name == "subjectivity":
        texts, labels = _subjectivity(data)
    elif name == "lingspam":
        texts, labels = _lingspam(data)
    elif name == "uci-sentiment":
        texts, labels = _uci(data)
    else:
        texts, labels = _registered(name, "all")
    train, test, ytrain, ytest = _stratified(texts, labels)
    return train, ytrain, test, ytest


CORPORA = ("20newsgroups", "imdb", "movie-reviews", "bbc-news", "ag-news", "subjectivity",
           "sentence-polarity", "sms-spam", "trec", "enron-spam", "lingspam", "sst2",
           "uci-sentiment", "reuters21578-modapte")


# ------------------------------------------------------------------ systems
def _score(truth: list[Any], predicted: Any, multilabel: bool) -> float:
    if multilabel:
        from snowpy import metrics

        labels = sorted({label for labels in truth for label in labels})
        return float(metrics.multilabel_report(truth, [tuple(p) for p in predicted],
                                               labels)["micro"]["f1"])
    return float(np.mean([str(p) == str(t) for p, t in zip(predicted, truth)]))


def _log_loss(classes: Any, proba: np.ndarray, truth: list[Any]) -> float:
    index = {str(c): i for i, c in enumerate(classes)}
    picked = proba[np.arange(len(truth)), [index[str(t)] for t in truth]]
    return float(-np.mean(np.log(np.clip(picked, 1e-15, 1.0))))


#: snowpy's parameters changed from its defaults for every run of it (``--params``).
CHANGED: dict[str, Any] = {}


def snowpy_run(split: tuple, multilabel: bool, **options: Any) -> dict[str, float]:
    from snowpy import SnowClassifier

    from snowpy.presets import multilabel_settings

    train, ytrain, test, ytest = split
    clf = SnowClassifier(**{**CHANGED, **options})
    if multilabel:  # (as the command line trains a multi-label corpus)
        clf.set_params(**multilabel_settings(clf.rule))
    start = time.perf_counter()
    clf.fit(train, ytrain)
    seconds = time.perf_counter() - start
    out = {"score": _score(ytest, clf.predict(test), multilabel), "fit_s": seconds}
    if not multilabel:
        out["log_loss"] = _log_loss(clf.classes_, clf.predict_proba(test), ytest)
    return out


def linearsvc(split: tuple, multilabel: bool) -> dict[str, float]:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import MultiLabelBinarizer
    from sklearn.svm import LinearSVC

    train, ytrain, test, ytest = split
    start = time.perf_counter()
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    A = vectorizer.fit_transform(train)
    if multilabel:
        binarizer = MultiLabelBinarizer().fit(ytrain)
        model = OneVsRestClassifier(LinearSVC()).fit(A, binarizer.transform(ytrain))
        seconds = time.perf_counter() - start
        predicted = binarizer.inverse_transform(model.predict(vectorizer.transform(test)))
        return {"score": _score(ytest, predicted, True), "fit_s": seconds}
    model = LinearSVC().fit(A, ytrain)
    seconds = time.perf_counter() - start
    B = vectorizer.transform(test)
    calibrated = CalibratedClassifierCV(LinearSVC(), cv=3).fit(A, ytrain)
    return {"score": _score(ytest, model.predict(B), False), "fit_s": seconds,
            "log_loss": _log_loss(calibrated.classes_, calibrated.predict_proba(B), ytest)}


def mnb(split: tuple, multilabel: bool) -> dict[str, float] | None:
    if multilabel:
        return None
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB

    train, ytrain, test, ytest = split
    start = time.perf_counter()
    vectorizer = CountVectorizer(ngram_range=(1, 2))
    model = MultinomialNB().fit(vectorizer.fit_transform(train), ytrain)
    seconds = time.perf_counter() - start
    return {"score": _score(ytest, model.predict(vectorizer.transform(test)), False),
            "fit_s": seconds}


def pa(split: tuple, multilabel: bool) -> dict[str, float]:
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.linear_model import PassiveAggressiveClassifier
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import MultiLabelBinarizer

    train, ytrain, test, ytest = split
    start = time.perf_counter()
    vectorizer = HashingVectorizer(ngram_range=(1, 2), n_features=2**20)
    A = vectorizer.transform(train)
    with warnings.catch_warnings():  # (scikit-learn 1.8 announced the class's end)
        warnings.simplefilter("ignore")
        learner = PassiveAggressiveClassifier(C=1.0, max_iter=10, tol=None, random_state=0)
        if multilabel:
            binarizer = MultiLabelBinarizer().fit(ytrain)
            model = OneVsRestClassifier(learner).fit(A, binarizer.transform(ytrain))
            seconds = time.perf_counter() - start
            predicted = binarizer.inverse_transform(model.predict(vectorizer.transform(test)))
            return {"score": _score(ytest, predicted, True), "fit_s": seconds}
        model = learner.fit(A, ytrain)
    seconds = time.perf_counter() - start
    return {"score": _score(ytest, model.predict(vectorizer.transform(test)), False),
            "fit_s": seconds}


def fasttext_run(split: tuple, multilabel: bool, seed: int = 0) -> dict[str, float] | None:
    try:
        import fasttext
    except ImportError:
        return None
    if multilabel:
        return None
    train, ytrain, test, ytest = split

    def line(text: str) -> str:
        return " ".join(text.lower().split())

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "train.txt"
        order = np.random.default_rng(seed).permutation(len(train))  # (it learns in file
        #                                                          order: a sorted corpus
        #                                                          would end on one class)
        path.write_text("".join(f"__label__{str(ytrain[i]).replace(' ', '_')} "
                                f"{line(train[i])}\n" for i in order), encoding="utf-8")
        start = time.perf_counter()
        model = fasttext.train_supervised(str(path), wordNgrams=2, epoch=25, lr=1.0,
                                          verbose=0, seed=seed, thread=1)
        seconds = time.perf_counter() - start
    labels, _ = model.predict([line(t) for t in test])
    names = {str(y).replace(" ", "_"): y for y in set(map(str, ytrain))}
    predicted = [names[found[0][len("__label__"):]] for found in labels]
    return {"score": _score(ytest, predicted, False), "fit_s": seconds}


BASELINES = {"linearsvc": linearsvc, "mnb": mnb, "pa": pa, "fasttext": fasttext_run}


#: The systems whose result depends on a seed (the order of the examples): with
#: ``--seeds N`` each is run with seeds 0 to N - 1, and its score is their mean.
SEEDED = {"snowpy": lambda split, multilabel, seed: snowpy_run(split, multilabel, seed=seed),
          "fasttext": fasttext_run}


def _seeded(results: dict[str, Any], system: str, split: tuple, multilabel: bool,
            seeds: int) -> None:
    if system not in results or seeds < 2:
        return
    scores = [results[system]["score"]] + [SEEDED[system](split, multilabel, seed)["score"]
                                           for seed in range(1, seeds)]
    results[system].update(seed_0=scores[0], seeds=scores, score=float(np.mean(scores)),
                           sd=float(np.std(scores, ddof=1)))


def run_corpus(name: str, data: Path, seeds: int = 1,
               kept: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every system on corpus ``name``; with ``kept`` (:meth:`Carried.kept`), the systems
    it carries are not run: their results of the earlier run, where it had any, are
    carried over."""
    split = load(name, data)
    multilabel = isinstance(split[1][0], (list, tuple))
    results: dict[str, Any] = {"train": len(split[0]), "test": len(split[2]),
                               "multilabel": multilabel}
    from snowpy.presets import SNOW

    systems = {"snowpy": lambda split, multilabel: snowpy_run(split, multilabel),
               "snowpy-snow": lambda split, multilabel: snowpy_run(
                   split, multilabel, rule="balanced-winnow", **SNOW), **BASELINES}
    run = set(systems) if kept is None else set(systems) - set(kept["carried"])
    for system, function in systems.items():
        found = function(split, multilabel) if system in run else kept["results"].get(system)
        if found is not None:
            results[system] = found
    for system in SEEDED:
        if system in run:
            _seeded(results, system, split, multilabel, seeds)
    baselines = {s: results[s]["score"] for s in BASELINES if s in results}
    best = max(baselines, key=baselines.get)
    results["best_baseline"] = best
    print(_row(name, results), flush=True)
    return results


def _row(name: str, r: dict[str, Any]) -> str:
    best = r[r["best_baseline"]]["score"]

    def cell(system: str) -> str:
        if system not in r:
            return "-"
        found = r[system]
        return f"{found['score']:.4f}" + (f" ± {found['sd']:.4f}" if "sd" in found else "")

    loss = " / ".join(f"{r[s]['log_loss']:.3f}" if "log_loss" in r.get(s, {}) else "-"
                      for s in ("snowpy", "snowpy-snow", "linearsvc"))
    times = " / ".join(f"{r[s]['fit_s']:.1f}" for s in ("snowpy", "snowpy-snow", "linearsvc"))
    return (f"| {name} | {r['train']:,} / {r['test']:,} | {cell('snowpy')} | "
            f"{cell('snowpy-snow')} | {cell('linearsvc')} | {cell('mnb')} | {cell('pa')} | "
            f"{cell('fasttext')} | {(r['snowpy']['score'] - best) * 100:+.2f} | "
            f"{(r['snowpy-snow']['score'] - best) * 100:+.2f} | {loss} | {times} |")


HEADER = ("| corpus | train / test | snowpy | Balanced Winnow, SNoW's front end | LinearSVC | "
          "MNB | hashed PA-I | fastText | snowpy - best | BW - best | log loss (snowpy / BW "
          "/ LinearSVC) | fit s (snowpy / BW / LinearSVC) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")


# ------------------------------------------------------------------ NBSVM's protocol
#: NBSVM-bi's accuracy in percent as published (Wang and Manning 2012).
PUBLISHED = {"rt-s": 79.4, "rt-2k": 89.45, "subj": 93.2, "imdb": 91.22}

#: The paper's short names, and the corpus each reads.
NBSVM_CORPORA = {"rt-s": "sentence-polarity", "rt-2k": "movie-reviews",
                 "subj": "subjectivity", "imdb": "imdb"}

#: Words and marks of punctuation, each a token (the corpora come tokenised so).
_TOKENS = r"(?u)\b\w+\b|[^\w\s]"


def nbsvm_splits(name: str, data: Path) -> tuple[list[str], list[Any], list[tuple]]:
    """A corpus of the protocol: its texts, labels and ``(train, test)`` index pairs (10
    stratified folds drawn once; IMDB: its official split)."""
    from sklearn.model_selection import StratifiedKFold

    corpus = NBSVM_CORPORA[name]
    if corpus == "imdb":
        train, ytrain = _registered(corpus, "train")
        test, ytest = _registered(corpus, "test")
        return (train + test, ytrain + ytest,
                [(np.arange(len(train)), np.arange(len(train), len(train) + len(test)))])
    texts, labels = _subjectivity(data) if corpus == "subjectivity" \
        else _registered(corpus, "all")
    folds = StratifiedKFold(n_splits=10, shuffle=True, random_state=0)
    return texts, labels, list(folds.split(texts, labels))


def _binary_bigrams(train: list[str], test: list[str]) -> tuple[Any, Any]:
    from sklearn.feature_extraction.text import CountVectorizer

    vectorizer = CountVectorizer(ngram_range=(1, 2), binary=True, token_pattern=_TOKENS)
    return vectorizer.fit_transform(train), vectorizer.transform(test)


def nbsvm(train: list[str], ytrain: list[Any], test: list[str], beta: float = 0.25,
          ) -> list[Any]:
    """NBSVM-bi (Wang and Manning 2012) on two labels: the predicted labels of ``test``."""
    from sklearn.svm import LinearSVC

    A, B = _binary_bigrams(train, test)
    classes = sorted(set(ytrain), key=str)
    positive = np.array([y == classes[1] for y in ytrain])
    p = 1.0 + np.asarray(A[positive].sum(axis=0)).ravel()
    q = 1.0 + np.asarray(A[~positive].sum(axis=0)).ravel()
    r = np.log(p / p.sum()) - np.log(q / q.sum())
    svm = LinearSVC(C=1.0).fit(A.multiply(r).tocsr(), positive)
    w = svm.coef_.ravel()
    w = (1.0 - beta) * np.abs(w).mean() + beta * w
    scores = B.multiply(r).tocsr() @ w + svm.intercept_[0]
    return [classes[1] if s > 0 else classes[0] for s in scores]


def mnb_bigrams(train: list[str], ytrain: list[Any], test: list[str]) -> list[Any]:
    from sklearn.naive_bayes import MultinomialNB

    A, B = _binary_bigrams(train, test)
    return list(MultinomialNB().fit(A, ytrain).predict(B))


def tfidf_linearsvc(train: list[str], ytrain: list[Any], test: list[str]) -> list[Any]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    model = LinearSVC().fit(vectorizer.fit_transform(train), ytrain)
    return list(model.predict(vectorizer.transform(test)))


def snowpy_defaults(train: list[str], ytrain: list[Any], test: list[str]) -> list[Any]:
    from snowpy import SnowClassifier

    return list(SnowClassifier().fit(train, ytrain).predict(test))


def _evidence(train: Any, positive: np.ndarray, test: Any, features: str) -> np.ndarray:
    """Each test document's Naive Bayes evidence: the sum of the log-count ratios (add-one,
    NBSVM's) of its binary 1-2 grams over the square root of their number; the 1-2 grams
    of scikit-learn's ``CountVectorizer`` with the protocol's tokens (``features="sklearn"``)
    or of snowpy's front end, hashed into 2^22 ids (``"snowpy"``: the features a build
    into snowpy would count, the ratios over the features seen)."""
    if features == "sklearn":
        A, B = _binary_bigrams(list(train), list(test))
    else:
        from snowpy import Featurizer

        front = Featurizer(ngrams=(1, 2), bits=22)
        A, B = front.transform(list(train)), front.transform(list(test))
    seen = np.asarray(A.sum(axis=0)).ravel() > 0 if features == "snowpy" else slice(None)
    p = 1.0 + np.asarray(A[positive].sum(axis=0)).ravel()[seen]
    q = 1.0 + np.asarray(A[~positive].sum(axis=0)).ravel()[seen]
    r = np.zeros(A.shape[1])
    r[seen] = np.log(p / p.sum()) - np.log(q / q.sum())
    return (B @ r) / np.sqrt(np.maximum(np.diff(B.indptr), 1))


def _margins_and_evidence(train: Any, ytrain: Any, test: Any, params: dict[str, Any],
                          features: str = "sklearn") -> tuple[np.ndarray, np.ndarray, Any]:
    """snowpy's margin (its positive label's score less the other's) on ``test``, and
    each test document's Naive Bayes evidence (:func:`_evidence`)."""
    from snowpy import SnowClassifier

    model = SnowClassifier(calibrate=None, **params).fit(list(train), list(ytrain))
    scores = model.decision_function(list(test))
    positive_label = model.classes_[1]
    margins = scores[:, 1] - scores[:, 0] if scores.ndim == 2 else scores
    positive = np.asarray(ytrain) == positive_label
    return margins, _evidence(train, positive, test, features), positive_label


def snowpy_stacked(train: list[str], ytrain: list[Any], test: list[str],
                   features: str = "sklearn", **params: Any) -> list[Any]:
    """A simulation of what snowpy does not do: its margin and the Naive Bayes evidence
    of :func:`_margins_and_evidence`, combined by a logistic regression fitted on the
    held-out margins and evidence of 3 folds of the training documents (stacking, as
    calibration fits its sigmoids on held-out scores)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    train_texts, labels = np.array(train, dtype=object), np.array(ytrain)
    held, truth = [], []
    for inner, out in StratifiedKFold(3, shuffle=True, random_state=0).split(train, ytrain):
        margins, evidence, positive = _margins_and_evidence(
            train_texts[inner], labels[inner], train_texts[out], params, features)
        held.append(np.c_[margins, evidence])
        truth.append(labels[out] == positive)
    stack = LogisticRegression(C=1e4).fit(np.vstack(held), np.concatenate(truth))
    margins, evidence, positive = _margins_and_evidence(train_texts, labels, test, params,
                                                        features)
    other = next(label for label in dict.fromkeys(ytrain) if label != positive)
    return [positive if p else other for p in stack.predict(np.c_[margins, evidence])]


#: The methods of the protocol, each ``(train texts, labels, test texts) -> predictions``.
NBSVM_METHODS = {"snowpy": snowpy_defaults, "nbsvm": nbsvm, "mnb": mnb_bigrams,
                 "linearsvc": tfidf_linearsvc}
def snowpy_with(**params: Any) -> Any:
    """snowpy calibrated as at its defaults, with ``params`` changed, as a method of the
    protocol."""
    def method(train: list[str], ytrain: list[Any], test: list[str]) -> list[Any]:
        from snowpy import SnowClassifier

        return list(SnowClassifier(**params).fit(train, ytrain).predict(test))
    return method


#: What was tried beside them (``--tried``), in the same form: the stacking built into
#: snowpy (``evidence=True``), then its simulations of before.
NBSVM_TRIED = {
    "snowpy, evidence=True": snowpy_with(evidence=True),
    "snowpy, evidence=True, values=binary, C=0.5, punctuation":
        snowpy_with(evidence=True, values="binary", C=0.5, token_pattern=r"\w+|[^\w\s]"),
    "snowpy + NB evidence (stacked)": snowpy_stacked,
    "snowpy binary, C=0.5 + NB evidence (stacked)":
        lambda train, ytrain, test: snowpy_stacked(train, ytrain, test, values="binary",
                                                   C=0.5),
    "snowpy + NB evidence of its own features (stacked)":
        lambda train, ytrain, test: snowpy_stacked(train, ytrain, test, "snowpy"),
    "snowpy binary, C=0.5, punctuation + NB evidence of its own features (stacked)":
        lambda train, ytrain, test: snowpy_stacked(train, ytrain, test, "snowpy",
                                                   values="binary", C=0.5,
                                                   token_pattern=r"\w+|[^\w\s]"),
}


def run_nbsvm_corpus(name: str, data: Path, methods: dict[str, Any] = NBSVM_METHODS,
                     kept: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every method of the protocol on one corpus, fold by fold: its mean accuracy in
    percent over the folds, each fold's, and the mean fit-and-predict seconds (``kept``:
    methods' results of an earlier run, carried over instead)."""
    texts, labels, splits = nbsvm_splits(name, data)
    results: dict[str, Any] = {"documents": len(texts), "folds": len(splits)}
    for method, function in methods.items():
        if kept is not None and method in kept["carried"]:
            if method in kept["results"]:
                results[method] = kept["results"][method]
            continue
        scores, seconds = [], []
        for train, test in splits:
            start = time.perf_counter()
            predicted = function([texts[i] for i in train], [labels[i] for i in train],
                                 [texts[i] for i in test])
            seconds.append(time.perf_counter() - start)
            scores.append(100 * _score([labels[i] for i in test], predicted, False))
        results[method] = {"score": float(np.mean(scores)), "fold_scores": scores,
                           "seconds": float(np.mean(seconds))}
    print(f"| {name} | " + " | ".join(f"{results[m]['score']:.2f}" for m in methods)
          + f" | {PUBLISHED[name]} |", flush=True)
    return results


def main_nbsvm(data: Path, only: list[str] | None, tried: bool = False,
               earlier: Carried | None = None) -> None:
    methods = NBSVM_TRIED if tried else NBSVM_METHODS
    print(f"# {machine()}\n\n| corpus | " + " | ".join(methods)
          + " | NBSVM-bi published |\n|" + "---|" * (len(methods) + 2), flush=True)
    results = {name: run_nbsvm_corpus(name, data, methods, earlier and earlier.kept(name))
               for name in (only or NBSVM_CORPORA)}
    if only is None:
        _write(_out("nbsvm", tried), {"published": PUBLISHED, "results": results}, earlier)


def _out(protocol: str, tried: bool = False) -> Path:
    """The results file of a protocol."""
    name = {"split": "accuracy", "nbsvm": "accuracy_nbsvm_tried" if tried else "accuracy_nbsvm"}
    return ROOT / "benchmarks" / "results" / f"{name[protocol]}.json"


class Carried:
    """A results file's systems that ``--systems`` does not name, carried over: a change
    of snowpy's defaults does not move the baselines."""

    def __init__(self, path: Path, systems: list[str], everyone: Iterable[str],
                 corpora: Iterable[str]) -> None:
        if not path.exists():
            raise SystemExit(f"{path.name}: no results to carry over; run every system")
        self.record = json.loads(path.read_text(encoding="utf-8"))
        self.systems = systems
        self.carried = set(everyone) - set(systems)
        mixed = set(self.record.get("systems", ())) - set(systems)
        if mixed:
            raise SystemExit(f"{path.name} carries systems of two runs: run --systems "
                             f"{' '.join(self.record['systems'])} too, or every system")
        missing = [name for name in corpora if name not in self.record["results"]]
        if missing:
            raise SystemExit(f"{path.name} holds no results of {', '.join(missing)}: run "
                             f"every system on them")

    def kept(self, corpus: str) -> dict[str, Any]:
        """The systems not run on ``corpus``, and their results of the earlier run."""
        return {"carried": self.carried, "results": self.record["results"][corpus]}

    def noted(self) -> dict[str, Any]:
        """What the new file says of the run: the systems it ran, and when (and with
        how many seeds) the others were measured."""
        return {"systems": self.systems, "others": self.record.get("others") or {
            key: self.record[key] for key in ("machine", "date", "seeds")
            if key in self.record}}


def _write(out: Path, fields: dict[str, Any], earlier: Carried | None) -> None:
    record = {"machine": machine(), "date": time.strftime("%Y-%m-%d"), **fields,
              **(earlier.noted() if earlier is not None else {})}
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default=None, help="the shared corpora's folder")
    parser.add_argument("--only", nargs="*", default=None,
                        choices=CORPORA + tuple(name for name in NBSVM_CORPORA
                                                     if name not in CORPORA))
    parser.add_argument("--protocol", choices=("split", "nbsvm"), default="split",
                        help="split: every corpus, one split each; nbsvm: Wang and "
                             "Manning's (2012) 10 folds on RT-s, RT-2k and Subj, IMDB's "
                             "split, NBSVM-bi and its peers beside snowpy")
    parser.add_argument("--tried", action="store_true",
                        help="with --protocol nbsvm: what was tried beside the defaults "
                             "(snowpy with evidence=True, and the simulations of its "
                             "stacking that came before it)")
    parser.add_argument("--systems", nargs="+", default=None,
                        help="run only these systems (split: snowpy, snowpy-snow, "
                             f"{', '.join(BASELINES)}; nbsvm: {', '.join(NBSVM_METHODS)}); "
                             "each corpus's others are carried over from the results "
                             "file, which says so")
    parser.add_argument("--params", default=None,
                        help="split: snowpy's parameters changed from its defaults, as JSON "
                             "('{\"evidence\": true}'); snowpy alone runs, the baselines "
                             "are carried over from the results file, and the run writes "
                             "accuracy_params.json")
    parser.add_argument("--seeds", type=int, default=1,
                        help="run snowpy and fastText with seeds 0 to N - 1 (the order "
                             "of their examples) and compare their mean (± the sample sd)")
    args = parser.parse_args()
    if args.params is not None:
        if args.protocol != "split":
            parser.error("--params is for --protocol split")
        CHANGED.update(json.loads(args.params))
        args.systems = ["snowpy"]
    data = corpora_dir(args.corpora)
    import os

    os.environ.setdefault("SNOWPY_DATA", str(data))
    systems = (NBSVM_TRIED if args.tried else NBSVM_METHODS) if args.protocol == "nbsvm" \
        else ("snowpy", "snowpy-snow", *BASELINES)
    if set(args.systems or ()) - set(systems):
        parser.error(f"--systems names {', '.join(repr(name) for name in systems)}")
    corpora = args.only or (NBSVM_CORPORA if args.protocol == "nbsvm" else CORPORA)
    earlier = None if args.systems is None else \
        Carried(_out(args.protocol, args.tried), args.systems, systems, corpora)
    if args.protocol == "nbsvm":
        if set(args.only or ()) - set(NBSVM_CORPORA):
            parser.error(f"--protocol nbsvm reads {', '.join(NBSVM_CORPORA)}")
        main_nbsvm(data, args.only, args.tried, earlier)
        return
    if set(args.only or ()) - set(CORPORA):
        parser.error(f"--only reads {', '.join(CORPORA)}")
    print(f"# {machine()}\n\n{HEADER}", flush=True)
    results = {name: run_corpus(name, data, args.seeds, earlier and earlier.kept(name))
               for name in (args.only or CORPORA)}
    if args.only is None:
        _write(ROOT / "benchmarks" / "results" / "accuracy_params.json" if CHANGED
               else _out("split"), {"seeds": args.seeds, "results": results,
                                    **({"params": CHANGED} if CHANGED else {})}, earlier)


if __name__ == "__main__":
    main()
