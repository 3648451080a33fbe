"""Featurisation speed: snowpy's front end against scikit-learn's HashingVectorizer.

Same n-gram range and 2**20 columns on both sides, same run, best of
``--repeat``. Prints MB/s, docs/s and the ratio, then checks that the speed
did not come from dropping information: each side's 20 Newsgroups features
(counts, l2-normalised) train scikit-learn's Perceptron, whose mean test
accuracies over five seeds should agree within half a point when both sides
use the same tokens (snowpy with scikit-learn's token pattern). snowpy's own
tokeniser keeps one-character tokens, which scikit-learn's pattern drops.

Usage: python benchmarks/bench_features.py [--corpora DIR] [--repeat 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import timeit

import numpy as np
from common import corpora_dir, load_20newsgroups, machine
from synthetic import cached_corpus

from snowpy.text import Featurizer


def speed(corpora, repeat):
    from sklearn.feature_extraction.text import HashingVectorizer

    train, _ = load_20newsgroups(corpora, "train")
    synthetic, _, _ = cached_corpus(200_000)
    rows = []
    for name, docs in (("20 Newsgroups train", train), ("synthetic 200k", synthetic)):
        megabytes = sum(len(d.encode()) for d in docs) / 1e6
        for ngrams in ((1, 1), (1, 2)):
            ours = Featurizer(ngrams=ngrams, bits=20)
            theirs = HashingVectorizer(n_features=2**20, ngram_range=ngrams, alternate_sign=False)
            ours.transform(docs[:100])  # compile outside the timing
            t_ours = min(timeit.repeat(lambda: ours.transform(docs), number=1, repeat=repeat))
            t_theirs = min(timeit.repeat(lambda: theirs.transform(docs), number=1, repeat=repeat))
            rows.append({
                "corpus": name, "ngrams": f"{ngrams[0]}-{ngrams[1]}", "megabytes": megabytes,
                "snowpy_mb_s": megabytes / t_ours, "snowpy_docs_s": len(docs) / t_ours,
                "sklearn_mb_s": megabytes / t_theirs, "sklearn_docs_s": len(docs) / t_theirs,
                "ratio": t_theirs / t_ours,
            })
            r = rows[-1]
            print(f"{name:22s} {r['ngrams']} grams  snowpy {r['snowpy_mb_s']:6.1f} MB/s "
                  f"{r['snowpy_docs_s']:9,.0f} docs/s | HashingVectorizer {r['sklearn_mb_s']:5.1f} "
                  f"MB/s {r['sklearn_docs_s']:8,.0f} docs/s | ratio {r['ratio']:5.1f}", flush=True)
    return rows


def accuracy(corpora, seeds=5):
    """Mean Perceptron accuracy over seeds (one seed varies by up to a point)."""
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.linear_model import Perceptron

    train, y_train = load_20newsgroups(corpora, "train")
    test, y_test = load_20newsgroups(corpora, "test")
    variants = (
        ("snowpy, scikit-learn's tokens", Featurizer(ngrams=(1, 2), bits=20, values="count",
                                                     norm="l2", token_pattern=r"(?u)\b\w\w+\b")),
        ("snowpy, its own tokens", Featurizer(ngrams=(1, 2), bits=20, values="count", norm="l2")),
        ("HashingVectorizer", HashingVectorizer(n_features=2**20, ngram_range=(1, 2),
                                                alternate_sign=False)),
    )
    result = {}
    for name, vectorizer in variants:
        X_train, X_test = vectorizer.transform(train), vectorizer.transform(test)
        scores = [float(np.mean(Perceptron(max_iter=10, tol=None, random_state=seed)
                                .fit(X_train, y_train).predict(X_test) == y_test))
                  for seed in range(seeds)]
        result[name] = {"mean": float(np.mean(scores)), "sd": float(np.std(scores))}
        print(f"Perceptron on {name:30s} accuracy {np.mean(scores):.4f} "
              f"(sd {np.std(scores):.4f} over {seeds} seeds)")
    gap = abs(result[variants[0][0]]["mean"] - result["HashingVectorizer"]["mean"])
    print(f"same tokens, difference {100 * gap:.2f} points "
          f"({'within' if gap <= 0.005 else 'outside'} 0.5)")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args()
    corpora = corpora_dir(args.corpora)
    print(f"machine: {machine()}")
    report = {"machine": machine(), "speed": speed(corpora, args.repeat),
              "accuracy": accuracy(corpora)}
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    main()
