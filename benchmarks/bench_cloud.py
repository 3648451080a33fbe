"""Clouds (SNoW's several rules per label): does a Winnow+Perceptron cloud beat both
of its members?

    python benchmarks/bench_cloud.py [--corpora DIR]

On 20 Newsgroups, SMS Spam and TREC, the classifier's front end at its defaults
(word 1-2 grams, 2**22 ids): Winnow and Perceptron networks (ten averaged
epochs, each rule's defaults, thickness 1 as the classifier's default), and the
cloud of the two (the same networks, voting by SNoW's confidence). Test
accuracy of each. Writes ``benchmarks/results/cloud.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from common import ROOT, corpora_dir, machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora")
    args = parser.parse_args()
    os.environ.setdefault("SNOWPY_DATA", str(corpora_dir(args.corpora)))
    from snowpy import Cloud, SnowClassifier, corpora

    rows = []
    for name in ("20newsgroups", "sms-spam", "trec"):
        splits = corpora.load(name, "train"), corpora.load(name, "test")
        front = SnowClassifier().make_featurizer()
        X_train, X_test = (front.transform(split.texts) for split in splits)
        y_train, y_test = splits[0].labels, splits[1].labels
        cloud = Cloud(("winnow", "perceptron"), thickness=1.0).fit(X_train, y_train)
        row = {"corpus": name, "cloud": round(cloud.score(X_test, y_test), 4)}
        for member in cloud.networks_:
            row[member.rule] = round(member.score(X_test, y_test), 4)
        row["cloud_beats_both"] = row["cloud"] > max(row["winnow"], row["perceptron"])
        rows.append(row)
        print(row, flush=True)
    (ROOT / "benchmarks" / "results" / "cloud.json").write_text(
        json.dumps({"machine": machine(), "results": rows}, indent=2) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
