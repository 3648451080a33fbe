"""Peak memory of training on a corpus larger than memory should need (issue 15).

    python benchmarks/bench_memory.py [--docs 4000000] [--data DIR]

1. ``snowpy train BIG.tsv --cache DIR --epochs 2`` on a synthetic TSV of
   ``--docs`` documents (4,000,000: 1.05 GB; written once into ``--data``),
   with a fresh cache, run in this process (the command line's own code) with
   a sampler that reads the resident memory every 0.2 s and files the peak
   under the phase the training is in: building the cache, training,
   discarding, saving. It also reports the network's own bytes before
   discarding and the model file's size. Target: peak under 1 GB plus the
   model.
2. ``snowpy train`` on one 50 MB line (a document of about 8 M tokens), in a
   child process, batch and ``--stream``: its peak (``ru_maxrss``).

Writes ``benchmarks/results/memory.json``. Each run is one process, alone on
the machine: memory does not depend on the load, but time does.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import ROOT, machine


def _rss_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


class PhasePeaks:
    """The resident memory's peak per phase, sampled every 0.2 s in a thread."""

    def __init__(self) -> None:
        self.phase = "building the cache"
        self.peaks: dict[str, int] = {}
        self.network_mb = 0.0
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while True:
            rss = _rss_mb()
            self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), rss)
            time.sleep(0.2)


def _big_tsv(docs: int, data: Path) -> Path:
    path = data / f"synthetic-{docs}-0.tsv"
    if not path.exists():  # (in a child: the generator's memory stays out of the figures)
        subprocess.run([sys.executable, str(Path(__file__).parent / "synthetic.py"), "--docs",
                        str(docs), "--out", str(path)], check=True)
    return path


def cached_training(corpus: Path, work: Path) -> dict:
    import snowpy.network.network as network_module
    from snowpy.cli import app

    peaks = PhasePeaks()
    prune, partial_fit = network_module.Network.prune, network_module.Network.partial_fit

    def watched_prune(self):  # the end of training: record the network, then discard
        peaks.network_mb = self.engine_.store.nbytes() / 2**20
        peaks.phase = "discarding"
        dropped = prune(self)
        peaks.phase = "saving"
        return dropped

    def watched_partial_fit(self, *args, **kwargs):
        if peaks.phase == "building the cache":
            peaks.phase = "training"
        return partial_fit(self, *args, **kwargs)

    network_module.Network.prune = watched_prune
    network_module.Network.partial_fit = watched_partial_fit
    model = work / "big.snowpy"
    started = time.perf_counter()
    try:
        app(["train", str(corpus), "-o", str(model), "--cache", str(work / "cache"),
             "--epochs", "2", "--quiet"], standalone_mode=False)
    finally:
        network_module.Network.prune, network_module.Network.partial_fit = prune, partial_fit
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    model_mb = model.stat().st_size / 2**20
    return {"corpus_mb": round(corpus.stat().st_size / 2**20), "peak_mb": peak,
            "peaks_by_phase_mb": peaks.peaks, "network_mb": round(peaks.network_mb),
            "model_file_mb": round(model_mb), "seconds": round(time.perf_counter() - started),
            "target_met": peak < 1024 + min(peaks.network_mb, model_mb)}


def one_long_line(work: Path) -> dict:
    random.seed(0)
    words = [f"w{i}" for i in range(200_000)]
    path = work / "one-line.tsv"
    with open(path, "w") as out:
        out.write("big\t")
        size = 0
        while size < 50_000_000:
            word = random.choice(words)
            out.write(word + " ")
            size += len(word) + 1
        out.write("\nsmall\tjust a few words\n")
    result = {}
    script = shutil.which("snowpy") or "snowpy"
    for name, extra in (("batch", []), ("stream", ["--stream"])):
        code = ("import resource, sys; from snowpy.cli import main; sys.argv = sys.argv[1:]\n"
                "try:\n    main()\nexcept SystemExit:\n    pass\n"
                "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "
                "file=sys.stderr)")
        done = subprocess.run([sys.executable, "-c", code, script, "train", str(path), "-o",
                               str(work / f"one-{name}.snowpy"), "--quiet", *extra],
                              capture_output=True, text=True, check=True)
        result[f"{name}_peak_mb"] = int(done.stderr.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=4_000_000)
    parser.add_argument("--data", default=str(ROOT / "benchmarks" / "data"))
    args = parser.parse_args()
    corpus = _big_tsv(args.docs, Path(args.data))
    with tempfile.TemporaryDirectory() as folder:
        long_line = one_long_line(Path(folder))
    with tempfile.TemporaryDirectory() as folder:
        cached = cached_training(corpus, Path(folder))
    result = {"machine": machine(), "cached_training": cached, "one_50mb_line": long_line}
    print(json.dumps(result, indent=2))
    (ROOT / "benchmarks" / "results" / "memory.json").write_text(json.dumps(result, indent=2)
                                                                + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
