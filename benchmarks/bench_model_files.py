"""Model files: size on disk, save time and load time (copied, memory-mapped, verified or not).

Three models: snowpy's default classifier on 20 Newsgroups, saved whole and
saved for inference only (``inference_only=True``: the effective weights
alone), and a network over 2**22 dense features (20 targets, one plane), the
size where memory-mapping matters. Prints each figure, and checks that every way of loading predicts
identically.

Usage: python benchmarks/bench_model_files.py [--corpora DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from common import corpora_dir, machine

import snowpy


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def measure(name, model, X_check, folder: Path, inference_only: bool = False) -> dict:
    path = folder / f"{name}.snowpy"
    _, save_s = timed(lambda: snowpy.save(model, path, inference_only=inference_only))
    row = {"model": name, "bytes": path.stat().st_size, "save_s": save_s}
    reference = (model.network_ if hasattr(model, "network_") else model).decision_function(
        X_check)
    for label, options in (("load_s", {}), ("load_mmap_s", {"mmap": True}),
                           ("load_mmap_unverified_s", {"mmap": True, "verify": False})):
        loaded, seconds = timed(lambda: snowpy.load(path, **options))
        network = loaded.network_ if hasattr(loaded, "network_") else loaded
        assert np.array_equal(network.decision_function(X_check), reference)
        row[label] = seconds
    print(f"{name:38s} {row['bytes'] / 1e6:8.1f} MB  save {save_s:6.2f} s  "
          f"load {row['load_s']:6.3f}"
          f" s  mmap {row['load_mmap_s']:6.3f} s  mmap unverified "
          f"{row['load_mmap_unverified_s']:6.4f} s", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora")
    parser.add_argument("--json")
    args = parser.parse_args()
    os.environ["SNOWPY_DATA"] = str(corpora_dir(args.corpora))
    from snowpy import corpora

    print(f"machine: {machine()}")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        train = corpora.load("20newsgroups", "train")
        clf = snowpy.SnowClassifier(calibrate="cv", keep_names=True).fit(train.texts,
                                                                         train.labels)
        X = clf.featurizer_.transform(train.texts[:500])
        rows.append(measure("20 Newsgroups, default classifier", clf, X, Path(folder)))
        rows.append(measure("the same, inference only", clf, X, Path(folder),
                            inference_only=True))
        rng = np.random.default_rng(0)
        n, width = 2000, 2**22
        wide = sp.csr_matrix((np.ones(n * 50), (np.repeat(np.arange(n), 50),
                                                rng.integers(0, width, n * 50))), shape=(n, width))
        wide.sum_duplicates()
        wide.data[:] = 1.0
        net = snowpy.Network("perceptron", storage="dense", average=False, epochs=2).fit(
            wide, rng.integers(0, 20, n))
        rows.append(measure("2**22 dense features x 20 targets", net, wide[:200], Path(folder)))
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine(), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
