"""Many labels: one pass over synthetic corpora with 2 to 1,000 classes, process to process.

Each system runs as the command a user types, on the same files (200,000
synthetic documents, 160,000 to train and 40,000 to test,
``benchmarks/synthetic.py`` with K classes), one process per run, alternating
systems, the fastest of ``--repeat`` runs kept; peak memory is the process's
maximum RSS. Accuracy is on the test file.

* snowpy: ``snowpy train FILE -o MODEL --epochs 1 --calibrate none
  --no-keep-names`` with word 1-2 grams (the default) and with unigrams, then
  ``snowpy evaluate``;
* Vowpal Wabbit: ``vw --oaa K -b 24`` (one pass; ``-b 24`` as in the issue
  that measured it), its input converted beforehand (not timed);
* fastText, when installed: ``fasttext supervised`` one epoch with the
  hierarchical softmax (``-loss hs``) and with the softmax, 2 threads (its
  command, or its Python API in a process of its own when only pip's package
  is installed).

    python benchmarks/bench_many_labels.py [--classes 2 20 100 1000] [--repeat 3]

Writes ``benchmarks/results/many_labels.json`` and prints the table of
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, machine
from synthetic import cached_corpus

N_DOCS = 200_000
N_TRAIN = 160_000
_UNSAFE = re.compile(r"[|:\n\r]")


def _timed(command: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MB (GNU time) and standard output of a command."""
    timing = cwd / "time.txt"
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(timing), *command], cwd=cwd,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{command[0]} failed: {done.stderr.strip()[-300:]}")
    return wall, int(timing.read_text().split()[-1]) / 1024, done.stdout


def _files(classes: int, folder: Path) -> dict[str, Path]:
    docs, labels, _ = cached_corpus(N_DOCS, n_classes=classes)
    labels = labels.tolist()
    files = {}
    for name, part in (("train", slice(0, N_TRAIN)), ("test", slice(N_TRAIN, N_DOCS))):
        tsv = folder / f"{name}.tsv"
        tsv.write_text("".join(f"{y}\t{d}\n" for y, d in zip(labels[part], docs[part])))
        files[name] = tsv
        index = {f"class{c}": c + 1 for c in range(classes)}
        vw = folder / f"{name}.vw"
        vw.write_text("".join(f"{index[y]} | {_UNSAFE.sub(' ', d)}\n"
                              for y, d in zip(labels[part], docs[part])))
        files[f"{name}_vw"] = vw
        ft = folder / f"{name}.ft"
        ft.write_text("".join(f"__label__{y} {d}\n" for y, d in zip(labels[part], docs[part])))
        files[f"{name}_ft"] = ft
    files["truth"] = [index[y] for y in labels[N_TRAIN:N_DOCS]]
    return files


def run_snowpy(files: dict, folder: Path, ngrams: str) -> dict:
    snowpy = shutil.which("snowpy") or sys.exit("the snowpy command is not installed")
    model = folder / f"model-{ngrams}.snowpy"
    wall, peak, _ = _timed([snowpy, "train", str(files["train"]), "-o", str(model), "--epochs",
                            "1", "--ngrams", ngrams, "--calibrate", "none", "--no-keep-names",
                            "--quiet"], folder)
    _, _, out = _timed([snowpy, "evaluate", str(model), str(files["test"]), "--json"], folder)
    return {"wall_s": wall, "peak_mb": peak, "model_mb": model.stat().st_size / 1e6,
            "accuracy": json.loads(out)["accuracy"]}


def run_vw(files: dict, folder: Path, classes: int) -> dict:
    vw = [sys.executable, "-m", "vowpalwabbit"]
    model = folder / "model.vw"
    wall, peak, _ = _timed([*vw, "-d", str(files["train_vw"]), "--oaa", str(classes), "-b",
                            "24", "-f", str(model), "--quiet"], folder)
    predictions = folder / "vw.pred"
    _timed([*vw, "-t", "-i", str(model), "-d", str(files["test_vw"]), "-p", str(predictions),
            "--quiet"], folder)
    guessed = [int(float(line.split()[0])) for line in predictions.read_text().splitlines()]
    right = sum(g == t for g, t in zip(guessed, files["truth"]))
    return {"wall_s": wall, "peak_mb": peak, "model_mb": model.stat().st_size / 1e6,
            "accuracy": right / len(guessed)}


_FASTTEXT = """
import sys, fasttext
model = fasttext.train_supervised(input=sys.argv[1], epoch=1, loss=sys.argv[3], thread=2,
                                  verbose=0)
model.save_model(sys.argv[2])
"""
_FASTTEXT_TEST = """
import sys, fasttext
n, precision, recall = fasttext.load_model(sys.argv[1]).test(sys.argv[2])
print(precision)
"""


def run_fasttext(files: dict, folder: Path, loss: str) -> dict | None:
    """fastText supervised, one epoch, as its command or (pip's package) its Python API."""
    model = folder / f"ft-{loss}.bin"
    binary = shutil.which("fasttext")
    if binary is not None:
        train = [binary, "supervised", "-input", str(files["train_ft"]), "-output",
                 str(model.with_suffix("")), "-epoch", "1", "-loss", loss, "-thread", "2",
                 "-verbose", "0"]
    else:
        try:
            import fasttext  # noqa: F401
        except ImportError:
            return None
        train = [sys.executable, "-c", _FASTTEXT, str(files["train_ft"]), str(model), loss]
    wall, peak, _ = _timed(train, folder)
    _, _, out = _timed([sys.executable, "-c", _FASTTEXT_TEST, str(model),
                        str(files["test_ft"])], folder)
    return {"wall_s": wall, "peak_mb": peak, "model_mb": model.stat().st_size / 1e6,
            "accuracy": float(out.strip().splitlines()[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, nargs="+", default=[2, 20, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    results = []
    for classes in args.classes:
        folder = Path(tempfile.mkdtemp(prefix="snowpy-many-"))
        try:
            files = _files(classes, folder)
            runs = {"snowpy 1-2 grams": lambda: run_snowpy(files, folder, "1-2"),
                    "snowpy unigrams": lambda: run_snowpy(files, folder, "1"),
                    "vw --oaa K -b 24": lambda: run_vw(files, folder, classes),
                    "fastText -loss hs": lambda: run_fasttext(files, folder, "hs"),
                    "fastText softmax": lambda: run_fasttext(files, folder, "softmax")}
            best: dict[str, dict] = {}
            for _ in range(args.repeat):  # alternate the systems
                for system, run in runs.items():
                    try:
                        figures = run()
                    except RuntimeError as exc:
                        figures = {"error": str(exc)}
                    if figures is None:
                        continue
                    if system not in best or figures.get("wall_s", 1e9) < \
                            best[system].get("wall_s", 1e9):
                        best[system] = figures
            for system, figures in best.items():
                row = {"classes": classes, "system": system, **figures}
                results.append(row)
                print(json.dumps(row), flush=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    out = ROOT / "benchmarks" / "results" / "many_labels.json"
    out.write_text(json.dumps({"machine": machine(), "date": time.strftime("%Y-%m-%d"),
                               "documents": N_DOCS, "train": N_TRAIN, "results": results},
                              indent=1))
    print("\n| classes | system | wall s | peak MB | model MB | accuracy |\n|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['classes']} | {r['system']} | failed: {r['error'][:60]} ||||")
        else:
            print(f"| {r['classes']:,} | {r['system']} | {r['wall_s']:.2f} | {r['peak_mb']:,.0f} | "
                  f"{r['model_mb']:.1f} | {r['accuracy']:.3f} |")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
