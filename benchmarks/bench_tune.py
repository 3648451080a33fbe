"""``snowpy tune`` against the defaults and against fastText's autotune, same budget.

For each corpus: the held-out *test* score of (a) snowpy at its defaults (multi-label
defaults for a multi-label corpus), (b) ``snowpy.tuning.tune`` with the budget, and
(c) fastText's ``-autotune-validation`` with the same budget and the same validation
split (the last fifth of each label's training documents, :func:`snowpy.tuning.held_out`;
fastText's test score from its tuned model). Neither tuner sees the test split. Accuracy for single-label
corpora, micro-F1 for multi-label ones (fastText: ``-loss ova``, labels above 0.5).

Usage: python benchmarks/bench_tune.py [--corpora DIR] [--corpus NAME]... [--budget S]
       [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
import warnings

import numpy as np

from common import corpora_dir, machine


def load(name: str, root) -> tuple:
    from snowpy import corpora

    os.environ["SNOWPY_DATA"] = str(root)
    train, test = corpora.load(name, "train"), corpora.load(name, "test")
    return list(train.texts), list(train.labels), list(test.texts), list(test.labels)


def score(truth, predicted, multilabel: bool) -> float:
    from snowpy import metrics

    if multilabel:
        truth = [tuple(t) for t in truth]
        classes = sorted({x for t in truth for x in t} | {x for p in predicted for x in p})
        return float(metrics.multilabel_report(truth, [tuple(p) for p in predicted],
                                               classes)["micro"]["f1"])
    return float(np.mean([str(p) == str(t) for p, t in zip(predicted, truth)]))


def snowpy_defaults(train, y, test, truth, multilabel):
    from snowpy import SnowClassifier
    from snowpy.presets import MULTILABEL

    began = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SnowClassifier(**(MULTILABEL if multilabel else {})).fit(train, y)
    return {"score": score(truth, clf.predict(test), multilabel),
            "seconds": time.perf_counter() - began}


def snowpy_tuned(train, y, test, truth, multilabel, budget):
    from snowpy.tuning import tune

    began = time.perf_counter()
    result = tune(train, y, budget=budget)
    return {"score": score(truth, result.classifier.predict(test), multilabel),
            "seconds": time.perf_counter() - began, "trials": len(result.trials),
            "validation": result.best_score, "best": result.best_params}


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def fasttext_tuned(train, y, test, truth, multilabel, budget):
    import fasttext

    from snowpy.tuning import held_out

    valid = set(held_out([tuple(t) if isinstance(t, list) else t for t in y], 0.2).tolist())
    fit = [i for i in range(len(train)) if i not in valid]

    def line(i):
        labels = y[i] if multilabel else [y[i]]
        return " ".join(f"__label__{str(label).replace(' ', '_')}" for label in labels) + \
            " " + _clean(train[i]) + "\n"

    with tempfile.TemporaryDirectory() as folder:
        fit_path, valid_path = os.path.join(folder, "t.txt"), os.path.join(folder, "v.txt")
        with open(fit_path, "w") as out:
            out.writelines(line(i) for i in fit)
        with open(valid_path, "w") as out:
            out.writelines(line(i) for i in sorted(valid))
        began = time.perf_counter()
        options = dict(autotuneValidationFile=valid_path, autotuneDuration=int(budget),
                       verbose=0, thread=2)
        if multilabel:
            options.update(loss="ova", autotuneMetric="f1")
        model = fasttext.train_supervised(fit_path, **options)
        seconds = time.perf_counter() - began
    predicted = []
    for text in test:  # (the low-level call: the wrapper's predict breaks on numpy 2)
        if multilabel:
            found = model.f.predict(_clean(text), -1, 0.5, "strict")
            predicted.append(tuple(label[len("__label__"):] for _, label in found))
        else:
            found = model.f.predict(_clean(text), 1, 0.0, "strict")
            predicted.append(found[0][1][len("__label__"):])
    if not multilabel:
        truth = [str(t).replace(" ", "_") for t in truth]
    else:
        truth = [tuple(str(x).replace(" ", "_") for x in t) for t in truth]
    return {"score": score(truth, predicted, multilabel), "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora")
    parser.add_argument("--corpus", action="append")
    parser.add_argument("--budget", type=float, default=300.0)
    parser.add_argument("--systems", default="defaults,snowpy,fasttext")
    parser.add_argument("--json")
    args = parser.parse_args()
    root = corpora_dir(args.corpora)
    results = {"machine": machine(), "budget": args.budget, "corpora": {}}
    for name in args.corpus or ["trec", "reuters21578-modapte", "20newsgroups"]:
        train, y, test, truth = load(name, root)
        multilabel = any(isinstance(label, (list, tuple)) for label in y)
        row = {}
        systems = args.systems.split(",")
        if "defaults" in systems:
            row["snowpy defaults"] = snowpy_defaults(train, y, test, truth, multilabel)
        if "snowpy" in systems:
            row["snowpy tune"] = snowpy_tuned(train, y, test, truth, multilabel, args.budget)
        if "fasttext" in systems:
            try:
                row["fastText autotune"] = fasttext_tuned(train, y, test, truth, multilabel,
                                                          args.budget)
            except ImportError:
                row["fastText autotune"] = {"error": "pip install fasttext-wheel"}
        results["corpora"][name] = row
        for system, figures in row.items():
            print(f"{name:22s} {system:18s} " + ("  ".join(
                f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                for k, v in figures.items() if k != "best")), flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2, default=str)


if __name__ == "__main__":
    main()
