"""One epoch over the same CSR matrix: snowpy's rules against scikit-learn's Perceptron.

Both sides learn from the same matrix, hashed by scikit-learn's
HashingVectorizer (2**20 features, no alternating sign, l2-normalised), so
only learning is compared. Prints documents per second, the ratio to
``sklearn.linear_model.Perceptron(max_iter=1, n_jobs=1)``, and the
compilation time of snowpy's first epoch in this process.

Usage: python benchmarks/bench_learning.py [--corpora DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from common import best_of, corpora_dir, load_20newsgroups, machine
from synthetic import cached_corpus

import snowpy

RULES = ["perceptron", "winnow", "balanced-winnow", "passive-aggressive"]


def datasets(corpora):
    from sklearn.feature_extraction.text import HashingVectorizer

    hasher = HashingVectorizer(n_features=2**20, alternate_sign=False)
    texts, labels = load_20newsgroups(corpora, "train")
    yield "20 Newsgroups train", hasher.transform(texts), np.array(labels)
    docs, labels, _ = cached_corpus(200_000)
    yield "synthetic 200k", hasher.transform(docs), labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from sklearn.linear_model import Perceptron

    print(f"machine: {machine()}")
    compiled: set[str] = set()
    for name, X, y in datasets(corpora_dir(args.corpora)):
        n = X.shape[0]
        print(f"\n{name}: {n} documents, {X.nnz / n:.0f} active features each, "
              f"{len(set(y))} classes")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sk_time, _ = best_of(args.repeat, lambda: Perceptron(max_iter=1, n_jobs=1, tol=None)
                                 .fit(X, y))
        print(f"  {'scikit-learn Perceptron':32s} {n / sk_time:>10,.0f} docs/s")
        for rule in RULES:
            for average in (False, True):
                def train():
                    return snowpy.Network(rule, epochs=1, average=average).fit(X, y)
                if rule not in compiled:
                    start = time.perf_counter()
                    train()
                    first = time.perf_counter() - start
                    compiled.add(rule)
                else:
                    first = None
                seconds, _ = best_of(args.repeat, train)
                note = f"  (first epoch compiled in {first - seconds:.2f} s)" if first else ""
                label = f"snowpy {rule}{' averaged' if average else ''}"
                print(f"  {label:32s} {n / seconds:>10,.0f} docs/s  "
                      f"ratio {sk_time / seconds:5.2f}{note}")


if __name__ == "__main__":
    main()
