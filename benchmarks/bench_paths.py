"""One learning pass, every way data arrives, every core: snowpy against itself.

Each figure is a whole process a user runs, alternating between the commands
compared, the fastest of ``--repeat`` runs kept:

* **threads**: ``snowpy train FILE -o M --epochs 1 --calibrate none --threads N``
  for N = 1 and 2 (every core of this machine), on 20 Newsgroups (training
  posts shuffled with seed 0, 1-2 grams) and on 200,000 synthetic documents
  (``benchmarks/synthetic.py``, 5 classes); the two model files must be the same
  bytes (a model file holds no time: the same model is the same bytes). Also the learning phase alone, in one process: ``Network.fit`` of the
  featurised rows, one epoch, ``n_jobs`` 1 against 2.
* **stream**: ``snowpy train - < FILE`` (each document predicted, then learned)
  against ``snowpy train FILE --epochs 1 --calibrate none``, and against Vowpal
  Wabbit reading the same documents from its standard input
  (``vw --oaa 5 -b 18 --ngram 2 -d /dev/stdin``, on its own format: the conversion
  is not timed; ``python -m vowpalwabbit``, as ``bench_cli.py`` runs it), 400,000
  synthetic documents (360,000 learned, 40,000 to test), 1-2 grams.
* **shards**: ``snowpy train FILE --ngrams 1 --epochs 3 --calibrate none --multiclass
  constraint --threads N`` for N = 1 and 2 on the same 360,000 documents: constraint
  classification learns its examples in shards on threads (``docs/rules.md``; with
  1-2 grams these documents hold too few active features per feature of the network
  for shards to pay, and one thread learns); the model files of the runs on 2 threads
  must be the same bytes.

* **cluster**: ``snowpy train FILE --epochs 3 --calibrate none`` on the same 360,000
  documents in one process on one thread (``--threads 1``) against a local Dask
  cluster of 2 worker processes (``--workers 2``), each round's seconds and overhead
  (the share beyond its slowest shard's epoch) as the command prints them.

Accuracy on each test file is printed beside each time.

    python benchmarks/bench_paths.py [--corpora DIR] [--repeat 3] [--only threads|stream|shards|cluster]

Writes ``benchmarks/results/paths.json`` and prints the tables of
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_cli import _write, corpora_files, snowpy_command, timed, user_env
from common import ROOT, corpora_dir, machine
from synthetic import cached_corpus


def train(files: dict, options: list[str], name: str, stdin: bool = False,
          rounds: bool = False) -> dict:
    """``snowpy train`` as a user runs it (from the file, or its lines on standard input),
    then ``snowpy evaluate`` of the model on the test file; with ``rounds``, a cluster's
    round lines are kept (each round's seconds and its overhead)."""
    snowpy = snowpy_command()
    folder = files["folder"]
    model = folder / f"{name}.snowpy"
    source = "-" if stdin else str(files["train"])
    text = files["train"].read_text(encoding="utf-8") if stdin else None
    wall, peak, said = timed([snowpy, "train", source, "-o", str(model), *options,
                              *([] if rounds else ["--quiet"])],
                             folder, env=user_env(), stdin=text, errors=rounds)
    _, _, out = timed([snowpy, "evaluate", str(model), str(files["test"]), "--json"], folder,
                      env=user_env())
    result = {"wall_s": wall, "peak_mb": peak, "accuracy": json.loads(out)["accuracy"],
              "sha256": hashlib.sha256(model.read_bytes()).hexdigest()}
    if rounds:
        result["rounds"] = [{"seconds": float(seconds), "slowest": float(slowest),
                             "overhead": int(share) / 100} for seconds, slowest, share in
                            ROUND.findall(said)]
    return result


#: A cluster's round line: its seconds, its slowest shard's epoch and its overhead.
ROUND = re.compile(r"([\d.]+) s \(the slowest shard's epoch ([\d.]+) s, overhead (\d+)%\)")


def learning_alone(files: dict, repeat: int) -> dict:
    """``Network.fit`` of the training rows as ``snowpy train`` hands them to the network
    (read, featurised and weighed by the front end; the documents' shuffling keys), one
    epoch, on 1 and 2 threads."""
    import snowpy
    from snowpy.files import read_rows

    featurizer = snowpy.SnowClassifier().make_featurizer()
    read = read_rows(files["train"], featurizer, format="tsv")
    X = featurizer.weighed(read.rows, count="all")
    times: dict[int, float] = {1: float("inf"), 2: float("inf")}
    for _ in range(repeat):
        for jobs in (1, 2):
            net = snowpy.SnowClassifier(epochs=1, calibrate=None, n_jobs=jobs).make_network()
            start = time.perf_counter()
            net.fit(X, read.labels, shuffle_keys=read.keys)
            times[jobs] = min(times[jobs], time.perf_counter() - start)
    return {"one_thread_s": times[1], "two_threads_s": times[2],
            "speed_up": times[1] / times[2]}


def threads(files: dict, repeat: int) -> dict:
    runs: dict[str, dict] = {}
    for _ in range(repeat):
        for jobs in ("1", "2"):
            result = train(files, ["--epochs", "1", "--calibrate", "none", "--threads", jobs],
                           f"threads-{jobs}")
            best = runs.get(jobs)
            if best is None or result["wall_s"] < best["wall_s"]:
                runs[jobs] = result
    return {"runs": runs, "speed_up": runs["1"]["wall_s"] / runs["2"]["wall_s"],
            "same_file": runs["1"]["sha256"] == runs["2"]["sha256"],
            "learning": learning_alone(files, repeat)}


def synthetic_400k(folder: Path) -> dict:
    """The 400,000 synthetic documents: 360,000 to learn, 40,000 to test."""
    sub = folder / "synthetic-400k"
    if not sub.exists():
        docs, labels, _ = cached_corpus(400_000)
        labels = [str(y) for y in labels.tolist()]
        sub.mkdir()
        _write(sub, "train", docs[:360_000], labels[:360_000])
        _write(sub, "test", docs[360_000:], labels[360_000:])
    return {"train": sub / "train.tsv", "test": sub / "test.tsv", "folder": sub,
            "classes": 5}


def shards(folder: Path, repeat: int) -> dict:
    files = synthetic_400k(folder)
    runs: dict[str, dict] = {}
    digests = set()
    for _ in range(repeat):
        for jobs in ("1", "2"):
            result = train(files, ["--ngrams", "1", "--epochs", "3", "--calibrate", "none",
                                   "--multiclass", "constraint", "--threads", jobs],
                           f"shards-{jobs}")
            if jobs == "2":
                digests.add(result["sha256"])
            best = runs.get(jobs)
            if best is None or result["wall_s"] < best["wall_s"]:
                runs[jobs] = result
    return {"runs": runs, "speed_up": runs["1"]["wall_s"] / runs["2"]["wall_s"],
            "same_file_on_2": len(digests) == 1}


def cluster(folder: Path, repeat: int) -> dict:
    """3 epochs of the 360,000 documents in one process on one thread, against a local
    cluster of 2 worker processes (``--workers 2``: iterative parameter mixing)."""
    files = synthetic_400k(folder)
    runs: dict[str, dict] = {}
    for _ in range(repeat):
        for name, options in (("--threads 1", ["--threads", "1"]),
                              ("--workers 2", ["--workers", "2"])):
            result = train(files, ["--epochs", "3", "--calibrate", "none", *options],
                           "cluster", rounds=name == "--workers 2")
            best = runs.get(name)
            if best is None or result["wall_s"] < best["wall_s"]:
                runs[name] = result
    return {"runs": runs,
            "speed_up": runs["--threads 1"]["wall_s"] / runs["--workers 2"]["wall_s"]}


def stream(folder: Path, repeat: int) -> dict:
    files = synthetic_400k(folder)
    runs: dict[str, dict] = {}
    vw = shutil.which("vw") or _has_vw()
    for _ in range(repeat):
        for name, options, stdin in (("file", ["--epochs", "1", "--calibrate", "none"], False),
                                     ("stream", [], True)):
            result = train(files, options, name, stdin=stdin)
            best = runs.get(name)
            if best is None or result["wall_s"] < best["wall_s"]:
                runs[name] = result
        if vw:
            result = vw_stdin(files)
            best = runs.get("vw")
            if best is None or result["wall_s"] < best["wall_s"]:
                runs["vw"] = result
    out = {"runs": runs, "stream_over_file": runs["file"]["wall_s"] / runs["stream"]["wall_s"]}
    if "vw" in runs:
        out["stream_over_vw"] = runs["vw"]["wall_s"] / runs["stream"]["wall_s"]
    return out


def _has_vw() -> bool:
    try:
        import vowpalwabbit  # noqa: F401
    except ImportError:
        return False
    return True


def vw_stdin(files: dict) -> dict:
    """Vowpal Wabbit learning the documents from its standard input, one pass, 1-2 grams
    (its input converted beforehand, not timed); its accuracy on the test file."""
    from bench_cli import _CONVERT, _numbering

    folder = files["folder"]
    converted = {}
    for part in ("train", "test"):
        converted[part] = folder / f"{part}.vw"
        if not converted[part].exists():
            subprocess.run([sys.executable, "-c", _CONVERT, str(files[part]),
                            str(converted[part])], check=True)
    vw = [sys.executable, "-m", "vowpalwabbit"]
    model = folder / "stdin.vw"
    wall, peak, _ = timed([*vw, "--oaa", "5", "-b", "18", "--ngram", "2", "-d", "/dev/stdin",
                           "-f", str(model), "--quiet"], folder, env=user_env(),
                          stdin=converted["train"].read_text())
    predictions = folder / "stdin.pred"
    timed([*vw, "-t", "-i", str(model), "-d", str(converted["test"]), "-p", str(predictions),
           "--quiet"], folder)
    guessed = [int(float(line.split()[0])) for line in predictions.read_text().splitlines()]
    truth = [int(line.split(" ", 1)[0]) for line in converted["test"].read_text().splitlines()]
    names_train, names_test = _numbering(files["train"]), _numbering(files["test"])
    right = sum(names_train.get(g) == names_test.get(t) for g, t in zip(guessed, truth))
    return {"wall_s": wall, "peak_mb": peak, "accuracy": right / len(guessed)}


def table(results: dict) -> str:
    lines = ["| corpus | command | wall s | peak MB | accuracy |", "|---|---|---|---|---|"]
    for corpus, measured in results.get("threads", {}).items():
        for jobs, row in measured["runs"].items():
            lines.append(f"| {corpus} | `--threads {jobs}` | {row['wall_s']:.2f} | "
                         f"{row['peak_mb']:,.0f} | {row['accuracy']:.4f} |")
        learning = measured["learning"]
        lines.append(f"| {corpus} | speed-up of 2 threads | {measured['speed_up']:.2f}x "
                     f"(learning alone: {learning['one_thread_s']:.2f} s / "
                     f"{learning['two_threads_s']:.2f} s = {learning['speed_up']:.2f}x) | | "
                     f"same model file: {'yes' if measured['same_file'] else 'NO'} |")
    measured = results.get("stream")
    if measured:
        for name, row in measured["runs"].items():
            lines.append(f"| synthetic-400k | {name} | {row['wall_s']:.2f} | "
                         f"{row['peak_mb']:,.0f} | {row['accuracy']:.4f} |")
        lines.append(f"| synthetic-400k | file / stream | {measured['stream_over_file']:.2f}x "
                     "| | |")
        if "stream_over_vw" in measured:
            lines.append(f"| synthetic-400k | VW on stdin / stream | "
                         f"{measured['stream_over_vw']:.2f}x | | |")
    measured = results.get("shards")
    if measured:
        for jobs, row in measured["runs"].items():
            lines.append(f"| synthetic-400k, unigrams, constraint, 3 epochs | `--threads {jobs}` | "
                         f"{row['wall_s']:.2f} | {row['peak_mb']:,.0f} | "
                         f"{row['accuracy']:.4f} |")
        lines.append(f"| synthetic-400k, constraint | speed-up of 2 threads (shards) | "
                     f"{measured['speed_up']:.2f}x | | the same file on 2 threads: "
                     f"{'yes' if measured['same_file_on_2'] else 'NO'} |")
    measured = results.get("cluster")
    if measured:
        for name, row in measured["runs"].items():
            said = "; rounds " + ", ".join(
                f"{r['seconds']:.1f} s (overhead {r['overhead']:.0%})" for r in row["rounds"]) \
                if row.get("rounds") else ""
            lines.append(f"| synthetic-400k, 3 epochs | `{name}`{said} | {row['wall_s']:.2f} | "
                         f"{row['peak_mb']:,.0f} | {row['accuracy']:.4f} |")
        lines.append(f"| synthetic-400k, 3 epochs | `--workers 2` against one thread | "
                     f"{measured['speed_up']:.2f}x | | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", help="folder of the shared corpora")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=("threads", "stream", "shards", "cluster"))
    args = parser.parse_args()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="snowpy-bench-paths-") as tmp:
        folder = Path(tmp)
        if args.only in (None, "threads"):
            files = corpora_files(folder, corpora_dir(args.corpora))
            results["threads"] = {name: threads(corpus, args.repeat)
                                  for name, corpus in files.items()}
        if args.only in (None, "stream"):
            results["stream"] = stream(folder, args.repeat)
        if args.only in (None, "shards"):
            results["shards"] = shards(folder, args.repeat)
        if args.only in (None, "cluster"):
            results["cluster"] = cluster(folder, args.repeat)
    out = ROOT / "benchmarks" / "results" / "paths.json"
    if args.only and out.exists():  # (the part not measured again is kept)
        results = {**json.loads(out.read_text())["results"], **results}
    out.write_text(json.dumps({"machine": machine(), "date": time.strftime("%Y-%m-%d"),
                               "results": results}, indent=1))
    print(table(results))


if __name__ == "__main__":
    main()
