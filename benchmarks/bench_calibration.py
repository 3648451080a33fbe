"""Calibrated probabilities: snowpy against scikit-learn's CalibratedClassifierCV.

On 20 Newsgroups and SMS Spam (seeded split), same features for every model
(snowpy's front end: word 1-2 grams, 2**22 hashed, binary), same run:

* scikit-learn ``CalibratedClassifierCV(SGDClassifier(loss="perceptron",
  average=True), method="sigmoid", cv=3)``: an averaged perceptron, the
  equivalent of snowpy's ``perceptron`` rule with averaging; by default it
  averages the probabilities of its three fold models (``ensemble=True``),
  and with ``ensemble=False`` it does what snowpy does (sigmoids fitted on
  out-of-fold scores, one final model trained on everything);
* snowpy ``Network("perceptron", calibrate="cv")`` (3 folds), the same model;
* snowpy's default classifier, Balanced Winnow, ``calibrate="cv"``;
* Winnow with the README's settings (alpha 1.35, beta 0.8, theta 4);
* for the snowpy models, the ways of normalising across classes: division
  by the sum (``T = 1``), division with the temperature fitted on the
  held-out scores (snowpy's default), softmax over calibrated logits;
* Balanced Winnow with ``calibrate="progressive"`` (first-epoch
  predict-then-learn scores: no extra training).

Prints accuracy with and without calibration, log loss, Brier score, ECE
(15 equal-width bins) and the training time with and without calibration.

Usage: python benchmarks/bench_calibration.py [--corpora DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np
from common import corpora_dir, machine

import snowpy
from snowpy import corpora, metrics
from snowpy.calibration import Calibration


def datasets(root):
    os.environ["SNOWPY_DATA"] = str(root)
    for name, train_split, test_split in (("20newsgroups", "train", "test"),
                                          ("sms-spam", "train", "test")):
        train, test = corpora.load(name, train_split), corpora.load(name, test_split)
        yield name, train.texts, np.array(train.labels), test.texts, np.array(test.labels)


def evaluate(probabilities, classes, truth):
    index = np.searchsorted(classes, truth)
    return {"accuracy": float(np.mean(classes[probabilities.argmax(1)] == truth)),
            "log_loss": metrics.log_loss(probabilities, index),
            "brier": metrics.brier_score(probabilities, index),
            "ece": metrics.expected_calibration_error(probabilities, index)}


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora")
    parser.add_argument("--json")
    args = parser.parse_args()
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.linear_model import SGDClassifier

    print(f"machine: {machine()}")
    report = {"machine": machine(), "corpora": {}}
    for name, train, y_train, test, y_test in datasets(corpora_dir(args.corpora)):
        featurizer = snowpy.Featurizer(ngrams=(1, 2), bits=22)
        X, X_test = featurizer.transform(train), featurizer.transform(test)
        rows = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base = SGDClassifier(loss="perceptron", average=True, max_iter=10, tol=None,
                                 random_state=0)
            plain, t_plain = timed(lambda: base.fit(X, y_train))
            accuracy = float(np.mean(plain.predict(X_test) == y_test))
            for ensemble, label in ((True, ""), (False, ", ensemble=False")):
                model, t_cal = timed(lambda: CalibratedClassifierCV(
                    base, method="sigmoid", cv=3, ensemble=ensemble).fit(X, y_train))
                row = evaluate(model.predict_proba(X_test), model.classes_, y_test)
                rows[f"scikit-learn averaged perceptron + CalibratedClassifierCV{label}"] = dict(
                    row, uncalibrated_accuracy=accuracy, seconds=t_cal,
                    seconds_uncalibrated=t_plain)
        for label, rule, params in (("snowpy perceptron (averaged)", "perceptron", {}),
                                    ("snowpy balanced-winnow", "balanced-winnow",
                                     {"thickness": 1.0}),
                                    ("snowpy winnow", "winnow",
                                     {"alpha": 1.35, "beta": 0.8, "theta": 4.0})):
            plain, t_plain = timed(lambda: snowpy.Network(rule, **params).fit(X, y_train))
            model, t_cal = timed(lambda: snowpy.Network(rule, calibrate="cv", **params)
                                 .fit(X, y_train))
            scores = model.target_scores(X_test)
            calibration = model.calibration_
            for normalize, temperature in (("sum", 1.0), ("sum", calibration.temperature),
                                           ("softmax", 1.0)):
                other = Calibration(calibration.a, calibration.b, normalize=normalize,
                                    method="cv", temperature=temperature)
                row = evaluate(other.probabilities(scores), model.classes_, y_test)
                name_t = f", T={temperature:.2f}" if normalize == "sum" else ""
                rows[f"{label}, {normalize}{name_t}"] = dict(
                    row, uncalibrated_accuracy=plain.score(X_test, y_test), seconds=t_cal,
                    seconds_uncalibrated=t_plain)
        model, t_prog = timed(lambda: snowpy.Network("balanced-winnow", thickness=1.0,
                                                     calibrate="progressive").fit(X, y_train))
        row = evaluate(model.predict_proba(X_test), model.classes_, y_test)
        rows["snowpy balanced-winnow, progressive (first-epoch scores)"] = dict(
            row, uncalibrated_accuracy=model.score(X_test, y_test), seconds=t_prog,
            seconds_uncalibrated=t_prog)
        print(f"\n{name}: {X.shape[0]} train, {X_test.shape[0]} test documents")
        print(f"  {'model':62s} {'acc':>6} {'acc*':>6} {'logloss':>8} {'Brier':>6} {'ECE':>6} "
              f"{'train s':>8} {'+calib s':>8}")
        for label, row in rows.items():
            print(f"  {label:62s} {row['uncalibrated_accuracy']:6.4f} {row['accuracy']:6.4f} "
                  f"{row['log_loss']:8.4f} {row['brier']:6.4f} {row['ece']:6.4f} "
                  f"{row['seconds_uncalibrated']:8.2f} {row['seconds']:8.2f}")
        report["corpora"][name] = rows
    print("\nacc: accuracy without calibration; acc*: argmax of the calibrated probabilities")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    main()
