"""Learning curves: online mistakes of each built-in rule on a real corpus.

One pass over the (shuffled) training documents of a corpus, each rule
predicting every document before learning from it (progressive validation):
the online error rate at 1, 2, 4, 8... documents. 20 Newsgroups when
``$SNOWPY_DATA`` holds it, otherwise snowpy's demo corpus.
"""

from __future__ import annotations

import numpy as np

from snowpy.experiments.common import Result, Series, corpus_split
from snowpy.network import Network
from snowpy.text import Featurizer

RULES = ("perceptron", "winnow", "balanced-winnow", "thick-separator", "aggressive",
         "passive-aggressive")


def run(corpus: str | None = None, seed: int = 0) -> Result:
    name, texts, labels = corpus_split(corpus, None)
    order = np.random.default_rng(seed).permutation(len(texts))
    X = Featurizer(ngrams=1, bits=20).transform([texts[i] for i in order])
    y = [labels[i] for i in order]
    rows = []
    series = []
    for rule in RULES:
        seen: list[tuple[int, int]] = []
        mistakes = [0]

        def progress(epoch, done, total, wrong, seen=seen, mistakes=mistakes):
            mistakes[0] += wrong
            seen.append((done, mistakes[0]))

        Network(rule, epochs=1).fit(X, y, progress=progress)
        for done, wrong in seen:
            rows.append({"rule": rule, "documents": done, "online_error": wrong / done})
        series.append(Series(rule, [d for d, _ in seen], [w / d for d, w in seen], "-"))
    return Result(
        name="learning-curve",
        title=f"Online error rate on {name} (one pass, predict then learn)",
        rows=rows, xlabel="documents seen (log scale)", ylabel="online error rate",
        series=series, logx=True,
        note="progressive validation: each document is predicted before the rule learns it",
    )
