"""The benchmark suite: snowpy against scikit-learn, Vowpal Wabbit and River.

One command runs everything and writes ``benchmarks/results/suite.json`` and
the table of ``docs/benchmarks.md``::

    pip install -e ".[bench]"
    python benchmarks/run_benchmarks.py [--corpora ../shared/corpora] [--only 20newsgroups]

Each (corpus, system, setting) runs in its own process (``job.py``) so that
peak memory (RSS) is that system's; all jobs read the corpus the same way.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

from common import ROOT, machine

ALL_SKLEARN = ["perceptron-1epoch", "perceptron", "averaged-perceptron", "pa-i", "sgd-hinge",
               "pa-i-calibrated"]
PLAN = {
    "20newsgroups": {"snowpy": ["one-epoch", "one-epoch-winnow", "default"],
                     "scikit-learn": ALL_SKLEARN,
                     "vowpal-wabbit": ["one-pass", "ten-passes"], "river": ["pa-subset"]},
    "reuters21578-modapte": {"snowpy": ["one-epoch", "multilabel"],
                             "scikit-learn": ["perceptron-1epoch", "pa-i", "averaged-perceptron"],
                             "vowpal-wabbit": ["one-pass", "ten-passes"]},
    "sms-spam": {"snowpy": ["one-epoch", "default"],
                 "scikit-learn": ["perceptron-1epoch", "pa-i", "pa-i-calibrated"],
                 "vowpal-wabbit": ["one-pass", "ten-passes"], "river": ["pa-subset"]},
    "imdb": {"snowpy": ["one-epoch", "one-epoch-winnow", "default"],
             "scikit-learn": ["perceptron-1epoch", "pa-i", "pa-i-calibrated"],
             "vowpal-wabbit": ["one-pass", "ten-passes"]},
    "trec": {"snowpy": ["one-epoch", "default"],
             "scikit-learn": ["perceptron-1epoch", "pa-i", "pa-i-calibrated"],
             "vowpal-wabbit": ["one-pass", "ten-passes"]},
    "synthetic": {"snowpy": ["one-epoch", "one-epoch-winnow", "default"],
                  "scikit-learn": ["perceptron-1epoch", "pa-i"],
                  "vowpal-wabbit": ["one-pass", "ten-passes"]},
}


#: One-pass jobs last well under a second: on a shared machine each runs five times and
#: the fastest run is kept, for every system alike.
REPEATED = {"one-epoch", "one-epoch-winnow", "one-pass", "perceptron-1epoch"}


def run_job(corpus: str, system: str, setting: str, corpora: str | None) -> dict:
    command = [sys.executable, str(Path(__file__).with_name("job.py")), corpus, system, setting]
    if corpora:
        command += ["--corpora", corpora]
    result = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    if result.returncode != 0:
        return {"corpus": corpus, "system": system, "setting": setting,
                "error": result.stderr.strip().splitlines()[-1] if result.stderr else "failed"}
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora")
    parser.add_argument("--only", nargs="*", help="run only these corpora")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "suite.json"))
    args = parser.parse_args()
    rows = []
    for corpus, systems in PLAN.items():
        if args.only and corpus not in args.only:
            continue
        for system, settings in systems.items():
            for setting in settings:
                runs = [run_job(corpus, system, setting, args.corpora)
                        for _ in range(5 if setting in REPEATED else 1)]
                ok = [r for r in runs if "error" not in r]
                row = min(ok, key=lambda r: r["train_s"]) if ok else runs[0]
                if ok:
                    row["runs"] = len(ok)
                rows.append(row)
                shown = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()
                         if k in ("accuracy", "micro_f1", "log_loss", "train_s", "peak_rss_mb",
                                  "train_docs_per_s", "error")}
                print(f"{corpus:22s} {system:14s} {setting:20s} {shown}", flush=True)
    out = Path(args.out)
    if args.only and out.exists():  # keep the other corpora's rows, in plan order
        previous = json.loads(out.read_text())["rows"]
        kept = [r for r in previous if r["corpus"] not in args.only]
        order = list(PLAN)
        rows = sorted(kept + rows, key=lambda r: order.index(r["corpus"]))
    report = {"machine": machine(), "date": datetime.date.today().isoformat(), "rows": rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
