"""Run one system on one corpus; print its figures as JSON (see run_benchmarks.py).

Usage: python benchmarks/job.py CORPUS SYSTEM SETTING [--corpora DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import time

import numpy as np
from common import corpora_dir
from synthetic import cached_corpus
from systems import SYSTEMS, temporary_directory

from snowpy import corpora, metrics

MULTILABEL = {"reuters21578-modapte"}


def load(name: str):
    """Shuffled training texts and labels, test texts and labels."""
    if name == "synthetic":
        docs, labels, _ = cached_corpus(200_000)
        labels = labels.tolist()  # Python strings, as a corpus reader gives them
        train, y, test, y_test = docs[:160_000], labels[:160_000], docs[160_000:], \
            labels[160_000:]
    else:
        train_split = "train"
        test_split = "test"
        train_corpus, test_corpus = corpora.load(name, train_split), corpora.load(name, test_split)
        train, y = train_corpus.texts, train_corpus.labels
        test, y_test = test_corpus.texts, test_corpus.labels
    order = np.random.default_rng(0).permutation(len(train))
    return [train[i] for i in order], [y[i] for i in order], test, y_test


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus")
    parser.add_argument("system")
    parser.add_argument("setting")
    parser.add_argument("--corpora")
    args = parser.parse_args()
    os.environ["SNOWPY_DATA"] = str(corpora_dir(args.corpora))
    started = time.perf_counter()
    train, y, test, y_test = load(args.corpus)
    loaded = time.perf_counter() - started
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    multilabel = args.corpus in MULTILABEL
    workdir = temporary_directory()
    try:
        system = SYSTEMS[args.system][0]
        result = system(args.setting, train, y, test, multilabel, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    classes = result["classes"]
    predicted = result.pop("predicted")
    probabilities = result.pop("probabilities")
    n_train = result.get("train_documents", len(train))
    figures = {"corpus": args.corpus, "system": args.system, "setting": args.setting,
               "train_documents": n_train, "test_documents": len(test), "load_s": loaded,
               "peak_rss_mb": peak, "rss_after_loading_mb": baseline,
               "train_docs_per_s": n_train / result["train_s"], **result}
    figures.pop("classes")
    if multilabel:
        truth = [tuple(labels) for labels in y_test]
        report = metrics.multilabel_report(truth, [tuple(p) for p in predicted], classes)
        figures.update(micro_f1=report["micro"]["f1"], macro_f1=report["macro"]["f1"],
                       subset_accuracy=report["subset_accuracy"])
    else:
        predicted = [str(p) for p in predicted]
        figures["accuracy"] = float(np.mean([p == str(t) for p, t in zip(predicted, y_test)]))
        if probabilities is not None:
            index = {str(c): i for i, c in enumerate(classes)}
            known = np.array([str(t) in index for t in y_test])
            true_index = np.array([index.get(str(t), 0) for t in y_test])[known]
            p = np.asarray(probabilities)[known]
            figures["log_loss"] = metrics.log_loss(p, true_index)
            figures["ece"] = metrics.expected_calibration_error(p, true_index)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
