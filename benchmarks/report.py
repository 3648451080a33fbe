"""Write the tables of docs/benchmarks.md from the results in benchmarks/results/.

Usage: python benchmarks/report.py   (after run_benchmarks.py and the other benchmarks)

The analysis part of docs/benchmarks.md is kept by hand between the markers
``<!-- tables -->`` and ``<!-- /tables -->``; only the part between them is
rewritten.
"""

from __future__ import annotations

import json

from common import ROOT

RESULTS = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "benchmarks.md"


def _fmt(value, digits=3):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def suite_tables(suite: dict) -> str:
    out = [f"Machine: {suite['machine']}; date: {suite['date']}. Times are seconds from texts "
           "in memory to a trained model (snowpy after a warm-up that compiles its kernels, "
           "reported apart); peak memory is the job's maximum RSS (corpus loaded the same way "
           "for every system); model size is on disk.\n"]
    corpora = []
    for row in suite["rows"]:
        if row["corpus"] not in corpora:
            corpora.append(row["corpus"])
    for corpus in corpora:
        rows = [r for r in suite["rows"] if r["corpus"] == corpus]
        multilabel = any("micro_f1" in r for r in rows)
        quality = "micro-F1 | macro-F1" if multilabel else "accuracy | log loss | ECE"
        out.append(f"\n### {corpus}\n")
        out.append(f"| system | setting | {quality} | train s | docs/s | featurise s | "
                   "learn s | predict s | peak MB | model MB |")
        out.append("|" + "---|" * (10 if multilabel else 11))
        for r in rows:
            if "error" in r:
                out.append(f"| {r['system']} | {r['setting']} | failed: {r['error']} |")
                continue
            if multilabel:
                scores = f"{_fmt(r.get('micro_f1'))} | {_fmt(r.get('macro_f1'))}"
            else:
                scores = (f"{_fmt(r.get('accuracy'))} | {_fmt(r.get('log_loss'))} | "
                          f"{_fmt(r.get('ece'))}")
            out.append(
                f"| {r['system']} | {r['setting']} | {scores} | {_fmt(r['train_s'], 2)} | "
                f"{_fmt(r['train_docs_per_s'], 0)} | {_fmt(r.get('featurise_s'), 2)} | "
                f"{_fmt(r.get('learn_s'), 2)} | {_fmt(r['predict_s'], 2)} | "
                f"{_fmt(r['peak_rss_mb'], 0)} | {_fmt(r['model_bytes'] / 1e6, 1)} |")
    return "\n".join(out)


def main() -> None:
    suite = json.loads((RESULTS / "suite.json").read_text())
    tables = suite_tables(suite)
    text = DOC.read_text() if DOC.exists() else "<!-- tables -->\n<!-- /tables -->\n"
    head, _, rest = text.partition("<!-- tables -->")
    _, _, tail = rest.partition("<!-- /tables -->")
    DOC.write_text(f"{head}<!-- tables -->\n{tables}\n<!-- /tables -->{tail}")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
