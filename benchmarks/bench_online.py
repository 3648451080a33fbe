"""One example at a time: snowpy against River in the same process.

Each system reads raw messages one by one, as a River user's stream gives
them, with word unigrams on both sides:

* River: ``feature_extraction.BagOfWords() | multiclass.OneVsRestClassifier(
  linear_model.Perceptron())`` (the model of issue 18);
* snowpy, ``SnowClassifier(ngrams=1, calibrate=None)``: its defaults (Balanced
  Winnow, averaged, thick separator), word unigrams hashed into 2**22 features,
  without calibration, as River's model has none (its default progressive
  calibration online costs about 2.7x on SMS Spam);
* snowpy at its defaults, calibration on: ``SnowClassifier(ngrams=1)`` started
  online calibrates progressively (issue 29's target: 2x River);
* snowpy, like for like with River: ``SnowClassifier(rule="perceptron",
  average=False, thickness=0, ngrams=1)``;
* snowpy through its River adapter, ``SnowRiver()``, in River's own loop
  (``evaluate.progressive_val_score``), against River's model in the same loop.

Measured: learning alone (``learn_one``), predict-then-learn (``predict_one``
then ``learn_one``: progressive validation, whose accuracy is reported), on
SMS Spam (the first 2,000 of its 5,574 messages, the best of ``--repeat``
fresh runs, and all of them once for accuracy) and on the 20 Newsgroups training set
shuffled with a fixed seed (once: throughput per block of 1,000 documents, to
show that the cost of an example does not grow with the model). Also scikit-learn's
incremental protocol in mini-batches: ``SnowClassifier(ngrams=1).partial_fit`` of all
5,574 SMS messages in batches of 1, 8, 32 and 256 (the best of ``--repeat`` runs).

    python benchmarks/bench_online.py [--corpora DIR] [--repeat 3]

Writes ``benchmarks/results/online.json`` and prints the table of
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, corpora_dir, load_20newsgroups, machine

sys.path.insert(0, str(ROOT))

import snowpy  # noqa: E402
from snowpy import corpora  # noqa: E402

BLOCK = 1_000


def river_model() -> Any:
    from river import feature_extraction, linear_model, multiclass

    return feature_extraction.BagOfWords() | multiclass.OneVsRestClassifier(
        linear_model.Perceptron())


class SnowStream:
    """A SnowClassifier behind the two calls the loops make."""

    def __init__(self, **options: Any) -> None:
        # no calibration, as River's Perceptron gives none: like for like; the
        # "calibrated" system keeps the default (progressive calibration, when started
        # online: probabilities refitted as the stream goes)
        options = {"calibrate": None, **options}
        self.clf = snowpy.SnowClassifier(ngrams=1, keep_names=False, **options)

    def learn_one(self, x: str, y: Any) -> None:
        self.clf.learn_one(x, y)

    def predict_one(self, x: str) -> Any:
        if not hasattr(self.clf, "network_"):
            return None
        return self.clf.predict_one(x)


SYSTEMS: dict[str, Callable[[], Any]] = {
    "river": river_model,
    "snowpy": SnowStream,
    "snowpy-calibrated": lambda: SnowStream(calibrate="progressive"),
    "snowpy-perceptron": lambda: SnowStream(rule="perceptron", average=False, thickness=0.0),
}


def learn(make: Callable[[], Any], texts: list[str], labels: list[Any]) -> float:
    model = make()
    start = time.perf_counter()
    for x, y in zip(texts, labels):
        model.learn_one(x, y)
    return time.perf_counter() - start


def predict_then_learn(make: Callable[[], Any], texts: list[str], labels: list[Any],
                       block: int = 0) -> tuple[float, float, list[float]]:
    """Seconds, progressive accuracy, and seconds per block of ``block`` examples."""
    model = make()
    right = 0
    blocks = []
    start = began = time.perf_counter()
    for i, (x, y) in enumerate(zip(texts, labels)):
        right += model.predict_one(x) == y
        model.learn_one(x, y)
        if block and (i + 1) % block == 0:
            now = time.perf_counter()
            blocks.append(now - began)
            began = now
    return time.perf_counter() - start, right / len(texts), blocks


def river_loop(texts: list[str], labels: list[Any]) -> dict[str, float]:
    """Both models in River's own evaluation loop, the snowpy one through SnowRiver."""
    from river import evaluate, metrics

    from snowpy.integrations.river import SnowRiver

    stream = list(zip(texts, labels))
    out = {}
    for name, model in (("river", river_model()), ("snowpy", SnowRiver())):
        start = time.perf_counter()
        metric = evaluate.progressive_val_score(stream, model, metrics.Accuracy())
        out[name] = {"docs_per_s": len(stream) / (time.perf_counter() - start),
                     "accuracy": metric.get()}
    return out


def sms(repeat: int) -> dict[str, Any]:
    data = corpora.load("sms-spam", "all")
    texts, labels = data.texts[:2000], data.labels[:2000]
    results: dict[str, Any] = {name: {} for name in SYSTEMS}
    learn(SnowStream, texts[:50], labels[:50])  # load snowpy's compiled code once
    for _ in range(repeat):  # alternate the systems, keep the fastest run of each
        for name, make in SYSTEMS.items():
            seconds = learn(make, texts, labels)
            entry = results[name]
            entry["learn"] = max(entry.get("learn", 0.0), len(texts) / seconds)
            seconds, accuracy, _ = predict_then_learn(make, texts, labels)
            entry["ptl"] = max(entry.get("ptl", 0.0), len(texts) / seconds)
            entry["ptl_accuracy"] = accuracy
    for name, make in SYSTEMS.items():  # the whole corpus, for accuracy
        _, accuracy, _ = predict_then_learn(make, data.texts, data.labels)
        results[name]["ptl_accuracy_all"] = accuracy
    results["river_loop"] = river_loop(texts, labels)
    return results


def mini_batches(repeat: int) -> dict[str, float]:
    """Documents a second through ``partial_fit`` in batches of 1, 8, 32 and 256."""
    data = corpora.load("sms-spam", "all")
    texts, labels = data.texts, data.labels
    out = {}
    for size in (1, 8, 32, 256):
        best = float("inf")
        for _ in range(repeat):
            clf = snowpy.SnowClassifier(ngrams=1)
            start = time.perf_counter()
            for i in range(0, len(texts), size):
                clf.partial_fit(texts[i:i + size], labels[i:i + size])
            best = min(best, time.perf_counter() - start)
        out[str(size)] = len(texts) / best
    return out


def newsgroups(folder: Path) -> dict[str, Any]:
    texts, labels = load_20newsgroups(folder, "train")
    order = np.random.default_rng(0).permutation(len(texts))
    texts = [texts[i] for i in order]
    labels = [labels[i] for i in order]
    results = {}
    for name, make in SYSTEMS.items():
        seconds, accuracy, blocks = predict_then_learn(make, texts, labels, block=BLOCK)
        results[name] = {"ptl": len(texts) / seconds, "ptl_accuracy": accuracy,
                         "first_block": BLOCK / blocks[0], "last_block": BLOCK / blocks[-1],
                         "blocks": [BLOCK / b for b in blocks]}
    return results


def table(results: dict[str, Any]) -> str:
    s, n = results["sms"], results["newsgroups"]
    river = s["river"]
    lines = ["| system | SMS learn docs/s | SMS predict-then-learn docs/s | SMS progressive "
             "accuracy (2,000 / all) | 20NG docs/s (first 1,000 / last 1,000) | 20NG "
             "progressive accuracy |", "|---|---|---|---|---|---|"]
    for name in SYSTEMS:
        e, g = s[name], n[name]
        ratio = "" if name == "river" else \
            f" ({e['learn'] / river['learn']:.1f}x / {e['ptl'] / river['ptl']:.1f}x)"
        lines.append(
            f"| {name} | {e['learn']:,.0f} | {e['ptl']:,.0f}{ratio} | "
            f"{e['ptl_accuracy']:.4f} / {e['ptl_accuracy_all']:.4f} | "
            f"{g['first_block']:,.0f} / {g['last_block']:,.0f} "
            f"({g['last_block'] / g['first_block']:.0%}) | {g['ptl_accuracy']:.4f} |")
    loop = s["river_loop"]
    lines.append("")
    lines.append(f"In River's `progressive_val_score` (SMS, 2,000): River "
                 f"{loop['river']['docs_per_s']:,.0f} docs/s, accuracy "
                 f"{loop['river']['accuracy']:.4f}; snowpy's `SnowRiver` "
                 f"{loop['snowpy']['docs_per_s']:,.0f} docs/s, accuracy "
                 f"{loop['snowpy']['accuracy']:.4f}.")
    batches = results.get("mini_batches")
    if batches:
        lines.append("")
        lines.append("`partial_fit` in mini-batches (SMS, all 5,574 messages, "
                     "`SnowClassifier(ngrams=1)`): " + ", ".join(
                         f"batches of {size}: {rate:,.0f} docs/s"
                         for size, rate in batches.items()) + ".")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", help="folder of the shared corpora")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = corpora_dir(args.corpora)
    import os

    os.environ.setdefault("SNOWPY_DATA", str(folder))
    import river

    results = {"sms": sms(args.repeat), "newsgroups": newsgroups(folder),
               "mini_batches": mini_batches(args.repeat)}
    out = ROOT / "benchmarks" / "results" / "online.json"
    out.write_text(json.dumps({"machine": machine(), "date": time.strftime("%Y-%m-%d"),
                               "river": river.__version__, "snowpy": snowpy.__version__,
                               "results": results}, indent=1))
    print(table(results))


if __name__ == "__main__":
    main()
