"""Clouds: does a cloud of Winnow and Perceptron beat both of its members?

Each rule's network and the :class:`~snowpy.Cloud` of the two (SNoW's clouds,
voting label by label with weighted-majority confidence) are trained for an
increasing number of epochs on a corpus's training split (20 Newsgroups when
``$SNOWPY_DATA`` holds it, otherwise snowpy's demo corpus) and tested on its
test split. ``benchmarks/bench_cloud.py`` measures the same on three corpora.
"""

from __future__ import annotations

from snowpy.experiments.common import Result, Series, corpus_split
from snowpy.network.cloud import Cloud
from snowpy.text import Featurizer

MEMBERS = ("winnow", "perceptron")


def run(corpus: str | None = None, epochs=(1, 2, 5, 10), seed: int = 0) -> Result:
    name, train_texts, train_labels = corpus_split(corpus, "train")
    _, test_texts, test_labels = corpus_split(corpus, "test")
    front = Featurizer(ngrams=(1, 2))
    X_train, X_test = front.transform(train_texts), front.transform(test_texts)
    rows = []
    points: dict[str, list[float]] = {system: [] for system in (*MEMBERS, "cloud")}
    for count in epochs:
        cloud = Cloud(MEMBERS, epochs=count, seed=seed).fit(X_train, train_labels)
        row = {"epochs": count, "cloud": cloud.score(X_test, test_labels)}
        for network in cloud.networks_:
            row[network.rule] = network.score(X_test, test_labels)
        row["cloud_beats_both"] = row["cloud"] > max(row[m] for m in MEMBERS)
        rows.append(row)
        for system in points:
            points[system].append(row[system])
    return Result(
        name="clouds",
        title=f"A Winnow+Perceptron cloud against its members on {name}",
        rows=rows, xlabel="epochs", ylabel="test accuracy",
        series=[Series(system, list(epochs), values, "-o") for system, values in
                points.items()],
        note="the cloud votes label by label with SNoW's confidence (1 / (1 + 2/(100 + m)) "
             "per mistake m, normalised)",
    )
