"""The systems compared by the benchmark suite, each from raw text to predictions.

Every system gets the same texts in the same order (already shuffled with a
fixed seed, as Vowpal Wabbit needs) and returns a dict of figures: seconds to
featurise, to learn, end to end, to predict, the model's size on disk, and the
predictions (and probabilities when it has them). ``benchmarks/job.py`` runs
one system on one corpus in its own process so that peak memory is its own.
"""

from __future__ import annotations

import os
import pickle  # only to measure scikit-learn's model size; never loaded back
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from snowpy.presets import MULTILABEL

BITS = 20


def _clock() -> float:
    return time.perf_counter()


# ------------------------------------------------------------------ snowpy
SNOWPY_SETTINGS = {
    # one pass, the configuration to compare with Vowpal Wabbit's one pass (no
    # calibration: VW's pass gives none, and SnowClassifier's default "cv" trains three
    # more networks)
    "one-epoch": dict(rule="balanced-winnow", ngrams=1, epochs=1, thickness=1.0,
                      calibrate=None),
    # one pass of plain Winnow without averaging: one weight table, as in Vowpal Wabbit
    "one-epoch-winnow": dict(rule="winnow", ngrams=1, epochs=1, thickness=0.0, average=False,
                             calibrate=None),
    # the documented defaults: word 1-2 grams, ten averaged epochs, calibrated
    "default": dict(rule="balanced-winnow", calibrate="cv"),
    # multi-label text categorisation (Reuters): the multi-label defaults of the command
    # line, snowpy.presets.MULTILABEL (asymmetric thick separator, touched links)
    "multilabel": dict(MULTILABEL),
}


def snowpy_system(setting: str, train, y, test, multilabel: bool, workdir: Path) -> dict:
    import snowpy

    options = dict(SNOWPY_SETTINGS[setting])
    rule = options.pop("rule")
    # a first small fit (imports, the feature map's first use), reported apart
    warm = _clock()
    snowpy.SnowClassifier(rule, **{**options, "calibrate": None, "epochs": 1}).fit(
        list(train[:4]), list(y[:4]))
    compile_s = _clock() - warm
    start = _clock()
    clf = snowpy.SnowClassifier(rule, **options).fit(train, y)  # the user's path, end to end
    trained = _clock()
    network = clf.network_
    if options.get("epochs") == 1:  # one pass: measure the two stages apart as well
        t0 = _clock()
        X = clf.make_featurizer().transform(train)
        featurise_s = _clock() - t0
        t0 = _clock()
        clf.make_network().fit(X, y)
        learn_s = _clock() - t0
    else:
        t0 = _clock()
        clf.make_featurizer().transform(train)
        featurise_s = _clock() - t0
        learn_s = (trained - start) - featurise_s
    path = clf.save(workdir / "model.snowpy")
    t0 = _clock()
    predicted = clf.predict(test)
    probabilities = clf.predict_proba(test) if network.calibration_ is not None else None
    return {"featurise_s": featurise_s, "learn_s": learn_s,
            "train_s": trained - start, "predict_s": _clock() - t0, "compile_s": compile_s,
            "model_bytes": path.stat().st_size, "classes": network.classes_.tolist(),
            "predicted": predicted, "probabilities": probabilities}


# ------------------------------------------------------------ scikit-learn
SKLEARN_SETTINGS = {
    "perceptron-1epoch": ("perceptron", (1, 1), 1),
    "perceptron": ("perceptron", (1, 2), 10),
    "averaged-perceptron": ("averaged", (1, 2), 10),
    "pa-i": ("pa", (1, 2), 10),
    "sgd-hinge": ("hinge", (1, 2), 10),
    "pa-i-calibrated": ("pa-calibrated", (1, 2), 10),
}


def sklearn_system(setting: str, train, y, test, multilabel: bool, workdir: Path) -> dict:
    import warnings

    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.linear_model import PassiveAggressiveClassifier, Perceptron, SGDClassifier
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import MultiLabelBinarizer

    kind, ngrams, epochs = SKLEARN_SETTINGS[setting]
    common = dict(max_iter=epochs, tol=None, random_state=0)
    models = {
        "perceptron": lambda: Perceptron(**common),
        "averaged": lambda: SGDClassifier(loss="perceptron", average=True, **common),
        "pa": lambda: PassiveAggressiveClassifier(**common),
        "hinge": lambda: SGDClassifier(loss="hinge", **common),
        "pa-calibrated": lambda: CalibratedClassifierCV(PassiveAggressiveClassifier(**common),
                                                        method="sigmoid", cv=3),
    }
    warnings.simplefilter("ignore")
    start = _clock()
    vectorizer = HashingVectorizer(n_features=2**BITS, ngram_range=ngrams, alternate_sign=False)
    X = vectorizer.transform(train)
    featurised = _clock()
    model = models[kind]()
    binarizer = None
    if multilabel:
        binarizer = MultiLabelBinarizer()
        target = binarizer.fit_transform(y)
        model = OneVsRestClassifier(model)
    else:
        target = y
    model.fit(X, target)
    learned = _clock()
    size = len(pickle.dumps((vectorizer, model)))
    t0 = _clock()
    X_test = vectorizer.transform(test)
    if multilabel:
        predicted = [tuple(row) for row in binarizer.inverse_transform(model.predict(X_test))]
        classes = binarizer.classes_.tolist()
        probabilities = None
    else:
        predicted = model.predict(X_test)
        classes = model.classes_.tolist()
        probabilities = model.predict_proba(X_test) if kind == "pa-calibrated" else None
    return {"featurise_s": featurised - start, "learn_s": learned - featurised,
            "train_s": learned - start, "predict_s": _clock() - t0, "model_bytes": size,
            "classes": classes, "predicted": predicted, "probabilities": probabilities}


# ---------------------------------------------------------- Vowpal Wabbit
VW_SETTINGS = {
    "one-pass": [],
    "ten-passes": ["--passes", "10", "-c", "--holdout_off", "--ngram", "2",
                   "--loss_function", "logistic", "--probabilities"],
}

_UNSAFE = re.compile(r"[|:\n\r]")


def _vw_lines(texts, labels, index, multilabel):
    for text, label in zip(texts, labels):
        clean = _UNSAFE.sub(" ", text)
        if multilabel:
            tag = ",".join(str(index[x]) for x in label)
        else:
            tag = str(index[label] + 1)
        yield f"{tag} | {clean}\n"


def vw_system(setting: str, train, y, test, multilabel: bool, workdir: Path) -> dict:
    classes = sorted({x for item in y for x in item}) if multilabel else sorted(set(y))
    index = {label: i for i, label in enumerate(classes)}
    train_file, test_file = workdir / "train.vw", workdir / "test.vw"
    with open(train_file, "w") as out:
        out.writelines(_vw_lines(train, y, index, multilabel))
    with open(test_file, "w") as out:
        dummy = [()] * len(test) if multilabel else [classes[0]] * len(test)
        out.writelines(_vw_lines(test, dummy, index, multilabel))
    reduction = ["--multilabel_oaa", str(len(classes))] if multilabel \
        else ["--oaa", str(len(classes))]
    extra = [a for a in VW_SETTINGS[setting] if not (multilabel and a == "--probabilities")]
    model = workdir / "model.vw"
    command = [sys.executable, "-m", "vowpalwabbit", "-d", str(train_file), "-b", str(BITS),
               "-f", str(model), "--quiet", *reduction, *extra]
    start = _clock()
    subprocess.run(command, check=True, cwd=workdir)
    learned = _clock()
    predictions = workdir / "predictions.txt"
    t0 = _clock()
    wants_probabilities = "--probabilities" in extra
    subprocess.run([sys.executable, "-m", "vowpalwabbit", "-t", "-i", str(model), "-d",
                    str(test_file), "-p", str(predictions), "--quiet",
                    *(["--probabilities"] if wants_probabilities else [])],
                   check=True, cwd=workdir)
    predict_s = _clock() - t0
    lines = predictions.read_text().splitlines()
    probabilities = None
    if multilabel:
        predicted = [tuple(classes[int(i)] for i in line.split(",") if i.strip().isdigit())
                     for line in lines]
    elif wants_probabilities:  # lines of "label:probability" pairs, labels 1..K
        probabilities = np.zeros((len(lines), len(classes)))
        for row, line in enumerate(lines):
            for pair in line.split():
                label, _, value = pair.partition(":")
                probabilities[row, int(label) - 1] = float(value)
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        predicted = np.array(classes, dtype=object)[probabilities.argmax(axis=1)]
    else:
        predicted = [classes[int(float(line.split()[0])) - 1] for line in lines]
    return {"featurise_s": None, "learn_s": None, "train_s": learned - start,
            "predict_s": predict_s, "model_bytes": model.stat().st_size, "classes": classes,
            "predicted": predicted, "probabilities": probabilities}


# ------------------------------------------------------------------- River
def river_system(setting: str, train, y, test, multilabel: bool, workdir: Path) -> dict:
    from river import compose, feature_extraction, linear_model, multiclass

    limit = 2000  # River learns from Python dicts one by one: a subset keeps it short
    train, y = train[:limit], y[:limit]
    model = compose.Pipeline(feature_extraction.BagOfWords(lowercase=True),
                             multiclass.OneVsRestClassifier(linear_model.PAClassifier()))
    start = _clock()
    for text, label in zip(train, y):
        model.learn_one(text, label)
    learned = _clock()
    t0 = _clock()
    predicted = [model.predict_one(text) for text in test]
    return {"featurise_s": None, "learn_s": None, "train_s": learned - start,
            "predict_s": _clock() - t0, "model_bytes": len(pickle.dumps(model)),
            "classes": sorted(set(y)), "predicted": predicted, "probabilities": None,
            "train_documents": len(train)}


SYSTEMS = {"snowpy": (snowpy_system, SNOWPY_SETTINGS),
           "scikit-learn": (sklearn_system, SKLEARN_SETTINGS),
           "vowpal-wabbit": (vw_system, VW_SETTINGS),
           "river": (river_system, {"pa-subset": None})}


def temporary_directory() -> Path:
    return Path(tempfile.mkdtemp(prefix="snowpy-bench-", dir=os.environ.get("TMPDIR")))
