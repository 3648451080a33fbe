"""Links: accuracy against size for each link policy, on the benchmark corpora.

SNoW's sparse network links a feature to a target only when the data calls
for it; ``links="all"`` is the full table (SNoW ``-s f``), what snowpy stored
before format 2. For each corpus and setting this measures, in a process of
its own: accuracy (micro-F1 for Reuters), links, rows, the full and the
inference-only model file, training time and peak memory. The classifier's
other options are its defaults (Balanced Winnow, word 1-2 grams, 2**22 ids,
ten averaged epochs, thickness 1; Reuters: the suite's multi-label setting),
without calibration, which changes no prediction.

    python benchmarks/bench_links.py [--corpora DIR] [--only 20newsgroups]

Writes ``benchmarks/results/links.json`` and prints the table of
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, corpora_dir, machine

SETTINGS = {
    "all (format 1)": dict(links="all", precision="float64"),
    "touched": dict(links="touched", precision="float32"),
    "positive": dict(links="positive", precision="float32"),
    "positive, discard 0.5": dict(links="positive", precision="float32", discard=0.5),
    "signed": dict(links="signed", precision="float32"),
    "signed, discard 0.5": dict(links="signed", precision="float32", discard=0.5),
    "signed, discard 0.5, float64": dict(links="signed", precision="float64", discard=0.5),
    "signed, discard 2": dict(links="signed", precision="float32", discard=2.0),
    "signed, eligibility 2, discard 0.5": dict(links="signed", precision="float32",
                                               discard=0.5, eligibility=2),
    "touched, discard 0.5": dict(links="touched", precision="float32", discard=0.5),
    "touched, eligibility 2": dict(links="touched", precision="float32", eligibility=2),
    "touched, discard 0.25": dict(links="touched", precision="float32", discard=0.25),
    "touched, discard 1": dict(links="touched", precision="float32", discard=1.0),
}
CORPORA = ["20newsgroups", "reuters21578-modapte", "imdb", "sms-spam", "trec"]
MULTILABEL = {"reuters21578-modapte": dict(thickness=6.0, negative_thickness=3.0, alpha=1.2,
                                           beta=0.8, epochs=20)}


def one(corpus: str, setting: str) -> dict:
    """Train and measure one setting on one corpus (in this process)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from job import load

    import snowpy
    from snowpy import metrics

    train, y, test, y_test = load(corpus)
    options = {**SETTINGS[setting], **MULTILABEL.get(corpus, {}), "calibrate": None}
    start = time.perf_counter()
    clf = snowpy.SnowClassifier(**options).fit(train, y)
    fit_s = time.perf_counter() - start
    predicted = clf.predict(test)
    net = clf.network_
    with tempfile.TemporaryDirectory() as folder:
        full = clf.save(Path(folder) / "full.snowpy").stat().st_size
        slim = clf.save(Path(folder) / "slim.snowpy", inference_only=True).stat().st_size
    figures = {"corpus": corpus, "setting": setting, "options": options,
               "links": net.n_links_, "rows": int(net.engine_.store.n_rows), "classes": len(net.classes_),
               "file_mb": full / 1e6, "inference_file_mb": slim / 1e6, "fit_s": fit_s,
               "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if corpus in MULTILABEL:
        report = metrics.multilabel_report([tuple(t) for t in y_test],
                                           [tuple(p) for p in predicted], net.classes_.tolist())
        figures["micro_f1"] = report["micro"]["f1"]
    else:
        figures["accuracy"] = sum(str(p) == str(t) for p, t in zip(predicted, y_test)) / len(test)
    return figures


def table(results: list[dict]) -> str:
    lines = ["| corpus | links setting | accuracy | links | file MB | inference MB | "
             "fit s | peak MB |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['corpus']} | {r['setting']} | failed: {r['error']} |||||")
            continue
        score = r.get("accuracy", r.get("micro_f1"))
        kind = "" if "accuracy" in r else " (micro-F1)"
        lines.append(f"| {r['corpus']} | {r['setting']} | {score:.4f}{kind} | {r['links']:,} | "
                     f"{r['file_mb']:.1f} | {r['inference_file_mb']:.1f} | {r['fit_s']:.1f} | "
                     f"{r['peak_rss_mb']:,.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora")
    parser.add_argument("--only", action="append", help="a corpus (repeatable)")
    parser.add_argument("--setting", action="append", help="a setting (repeatable)")
    parser.add_argument("--one", nargs=2, metavar=("CORPUS", "SETTING"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ["SNOWPY_DATA"] = str(corpora_dir(args.corpora))
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    results = []
    for corpus in args.only or CORPORA:
        for setting in args.setting or SETTINGS:
            command = [sys.executable, __file__, "--one", corpus, setting]
            done = subprocess.run(command, capture_output=True, text=True, timeout=7200)
            if done.returncode:
                last = done.stderr.strip().splitlines()[-1:] or ["failed"]
                results.append({"corpus": corpus, "setting": setting, "error": last[0]})
            else:
                results.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(table(results[-1:]).splitlines()[-1], flush=True)
    out = ROOT / "benchmarks" / "results" / "links.json"
    previous = json.loads(out.read_text())["results"] if out.exists() else []
    keep = [r for r in previous if (r["corpus"], r["setting"]) not in
            {(n["corpus"], n["setting"]) for n in results}]
    out.write_text(json.dumps({"machine": machine(), "date": time.strftime("%Y-%m-%d"),
                               "results": keep + results}, indent=1))
    print()
    print(table(keep + results))


if __name__ == "__main__":
    main()
