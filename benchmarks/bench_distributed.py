"""Training on a Dask LocalCluster by iterative parameter mixing: accuracy against
shards, speed-up against workers, bytes moved per round.

    python benchmarks/bench_distributed.py accuracy [--corpora DIR]
    python benchmarks/bench_distributed.py speed [--docs 1000000]

``accuracy``: 20 Newsgroups and IMDB with the classifier's defaults (Balanced
Winnow, word 1-2 grams, 2**22 ids, ten averaged epochs, thickness 1; no
calibration, which changes no prediction) trained in one process and on 2, 4
and 8 shards (arithmetic mixing, each link's change averaged over the shards
that changed it), then 16, 32 and 64 shards on 20 Newsgroups (the accuracy
cost of many shards), and there IPM as published (changes averaged over all
shards) and geometric mixing beside them, for Balanced Winnow and Winnow. The shards are logical: a LocalCluster of 2 worker processes trains
them all.

``speed``: a synthetic corpus of ``--docs`` documents (``label<TAB>text``,
:mod:`synthetic`), read, featurised and trained (3 rounds, 4 shards) on 1 and
then 2 worker processes, end to end from the file; the bytes the workers sent
one another per round, against the size of the mixed network.

Results go to ``benchmarks/results/distributed.json`` (each section replaced
by its last run).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, corpora_dir, machine

RESULTS = ROOT / "benchmarks" / "results" / "distributed.json"


def _write_tsv(path: Path, texts: list[str], labels: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for text, label in zip(texts, labels):
            out.write(f"{label}\t{' '.join(text.split())}\n")


def _load(name: str, split: str) -> tuple[list[str], list[str]]:
    from snowpy import corpora

    loaded = corpora.load(name, split)
    return loaded.texts, loaded.labels


def _save(section: str, value: object) -> None:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results[section] = value
    results["machine"] = machine()
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


def accuracy(corpora: Path, only: str | None) -> None:
    import distributed

    from snowpy import SnowClassifier
    from snowpy import distributed as snow_distributed

    os.environ.setdefault("SNOWPY_DATA", str(corpora))
    loaders = {name: (lambda s, name=name: _load(name, s)) for name in ("20newsgroups", "imdb")}
    rows = []
    with tempfile.TemporaryDirectory() as folder, \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                     dashboard_address=":0", silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        for name, load in loaders.items():
            if only and name != only:
                continue
            train_texts, train_labels = load("train")
            test_texts, test_labels = load("test")
            path = Path(folder) / f"{name}.tsv"
            _write_tsv(path, train_texts, train_labels)
            many = (16, 32, 64) if name == "20newsgroups" else ()
            settings = [("balanced-winnow", "arithmetic", "changed", s)
                        for s in (2, 4, 8) + many]
            if name == "20newsgroups":
                settings += [("balanced-winnow", "arithmetic", "all", s) for s in (8, 16)]
                settings += [("balanced-winnow", "geometric", "changed", s) for s in (8, 16)]
                settings += [("winnow", m, "changed", 8) for m in ("arithmetic", "geometric")]
            baselines = {}
            for rule in sorted({rule for rule, _, _, _ in settings}):
                start = time.perf_counter()
                one = SnowClassifier(rule, calibrate=None).fit(train_texts, train_labels)
                baselines[rule] = one.score(test_texts, test_labels)
                rows.append({"corpus": name, "rule": rule, "mixing": None, "shards": 1,
                             "accuracy": round(baselines[rule], 4), "rounds": len(
                                 one.network_.mistakes_), "links": one.network_.n_links_,
                             "seconds": round(time.perf_counter() - start, 1)})
                print(rows[-1], flush=True)
            for rule, mixing, average_over, shards in settings:
                start = time.perf_counter()
                model = snow_distributed.fit(SnowClassifier(rule, calibrate=None), str(path),
                                             cluster=client, mixing=mixing,
                                             reading=snow_distributed.Reading(shards=shards),
                                             average_over=average_over)
                score = model.score(test_texts, test_labels)
                rounds = model.distributed_["rounds"]
                rows.append({"corpus": name, "rule": rule, "mixing": mixing,
                             "average_over": average_over, "shards": shards,
                             "accuracy": round(score, 4),
                             "difference": round(score - baselines[rule], 4),
                             "rounds": len(rounds), "links": model.network_.n_links_,
                             "seconds": round(time.perf_counter() - start, 1)})
                print(rows[-1], flush=True)
    _save("accuracy" if not only else f"accuracy-{only}", rows)


def speed(docs: int, shards: int, rounds: int) -> None:
    import distributed

    from synthetic import cached_corpus

    from snowpy import SnowClassifier
    from snowpy import distributed as snow_distributed

    path = Path(__file__).parent / "data" / f"synthetic-{docs}-0.tsv"
    if not path.exists():
        cached_corpus(docs)  # (written there)
    print(f"corpus {path}: {os.path.getsize(path) / 1e6:.0f} MB", flush=True)
    rows = []
    for workers in (1, 2, 1, 2):  # alternating, each twice
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                      dashboard_address=":0", silence_logs=50) as cluster, \
                distributed.Client(cluster) as client:
            start = time.perf_counter()
            model = snow_distributed.fit(
                SnowClassifier(epochs=rounds, calibrate=None, early_stop=False), str(path),
                cluster=client, reading=snow_distributed.Reading(shards=shards))
            seconds = time.perf_counter() - start
        reports = model.distributed_["rounds"]
        moved = [r["bytes_between_workers"] / r["workers"] for r in reports[1:]]
        sizes = [r["model_bytes"] for r in reports[1:]]
        rows.append({"workers": workers, "docs": docs, "shards": shards, "rounds": rounds,
                     "seconds": round(seconds, 1),
                     "round_seconds": [round(r["seconds"], 2) for r in reports],
                     "bytes_per_worker_per_round": [int(b) for b in moved],
                     "mixed_model_bytes": sizes,
                     "ratio_moved_to_model": [round(b / s, 3) for b, s in zip(moved, sizes)],
                     "links": model.network_.n_links_})
        print(rows[-1], flush=True)
    one = min(r["seconds"] for r in rows if r["workers"] == 1)
    two = min(r["seconds"] for r in rows if r["workers"] == 2)
    summary = {"runs": rows, "speedup_2_over_1": round(one / two, 2),
               "settings": "SnowClassifier defaults (Balanced Winnow, word 1-2 grams, 2**22 "
                           f"ids, averaged), {rounds} rounds without early stop, "
                           f"{shards} shards, no calibration; best of two runs each"}
    print(f"speed-up of 2 workers over 1: {summary['speedup_2_over_1']}x")
    _save("speed", summary)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["accuracy", "speed"])
    parser.add_argument("--corpora")
    parser.add_argument("--only", choices=["20newsgroups", "imdb"])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.what == "accuracy":
        accuracy(corpora_dir(args.corpora), args.only)
    else:
        speed(args.docs, args.shards, args.rounds)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
