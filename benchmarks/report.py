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


def _row(suite, corpus, system, setting):
    for r in suite["rows"]:
        if (r["corpus"], r["system"], r["setting"]) == (corpus, system, setting) \
                and "error" not in r:
            return r
    return None


def targets_table(suite: dict) -> str:
    """The issue's targets, met or not, computed from the suite's rows."""
    lines = ["| target | measured | met |", "|---|---|---|"]

    def verdict(ok):
        return "yes" if ok else "**no**"

    best = max((r.get("accuracy", 0), r["setting"]) for r in suite["rows"]
               if r["corpus"] == "20newsgroups" and r["system"] == "snowpy" and "error" not in r)
    lines.append(f"| 20 Newsgroups test accuracy >= 0.85 | {best[0]:.4f} ({best[1]}) | "
                 f"{verdict(best[0] >= 0.85)} |")
    reuters = _row(suite, "reuters21578-modapte", "snowpy", "multilabel")
    if reuters:
        lines.append(f"| Reuters ModApte micro-F1 >= 0.85 | {reuters['micro_f1']:.4f} | "
                     f"{verdict(reuters['micro_f1'] >= 0.85)} |")
    for corpus in ("synthetic", "20newsgroups"):
        vw = _row(suite, corpus, "vowpal-wabbit", "one-pass")
        for setting in ("one-epoch", "one-epoch-winnow"):
            ours = _row(suite, corpus, "snowpy", setting)
            if vw and ours:
                ratio = ours["train_docs_per_s"] / vw["train_docs_per_s"]
                lines.append(
                    f"| one-pass throughput >= Vowpal Wabbit's, {corpus} ({setting}) | "
                    f"{ours['train_docs_per_s']:,.0f} against {vw['train_docs_per_s']:,.0f} "
                    f"docs/s ({ratio:.2f}x; accuracy {ours['accuracy']:.4f} against "
                    f"{vw['accuracy']:.4f}) | {verdict(ratio >= 1.0)} |")
    for corpus in ("20newsgroups", "reuters21578-modapte", "imdb", "synthetic"):
        for ours_setting, theirs_setting in (("one-epoch", "perceptron-1epoch"),
                                             ("default", "pa-i-calibrated"),
                                             ("multilabel", "pa-i")):
            ours = _row(suite, corpus, "snowpy", ours_setting)
            theirs = _row(suite, corpus, "scikit-learn", theirs_setting)
            if ours and theirs:
                ok = ours["peak_rss_mb"] <= theirs["peak_rss_mb"]
                lines.append(
                    f"| peak memory <= scikit-learn's, {corpus}: snowpy {ours_setting} against "
                    f"{theirs_setting} | {ours['peak_rss_mb']:,.0f} against "
                    f"{theirs['peak_rss_mb']:,.0f} MB | {verdict(ok)} |")
    return "\n".join(lines)


def _replace(text: str, marker: str, content: str) -> str:
    head, _, rest = text.partition(f"<!-- {marker} -->")
    _, _, tail = rest.partition(f"<!-- /{marker} -->")
    return f"{head}<!-- {marker} -->\n{content}\n<!-- /{marker} -->{tail}"


def main() -> None:
    suite = json.loads((RESULTS / "suite.json").read_text())
    text = DOC.read_text()
    text = _replace(text, "targets", targets_table(suite))
    text = _replace(text, "tables", suite_tables(suite))
    DOC.write_text(text)
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
