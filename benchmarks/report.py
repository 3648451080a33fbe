"""Write the tables of docs/benchmarks.md from the results in benchmarks/results/.

Usage: python benchmarks/report.py   (after run_benchmarks.py and the other benchmarks)

Each table of docs/benchmarks.md that a results file holds is written here, between
the markers ``<!-- NAME -->`` and ``<!-- /NAME -->`` (NAME a key of :data:`SECTIONS`),
with the machine, the date and the command that measured it; the prose around them is
kept by hand. ``tests/test_docs.py`` checks that the page holds what this writes.
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


def _measured(results: dict, command: str) -> str:
    """Where, when and by what a results file was measured; for a run of some systems
    only (``--systems``), when the others it carried over were."""
    date = results.get("date", "date not recorded")
    if "systems" not in results:
        return f"Measured on {results['machine']}, {date}, by `{command}`.\n"
    others = results["others"]
    earlier = command if "seeds" not in others else \
        command.replace(f"--seeds {results.get('seeds')}", f"--seeds {others['seeds']}")
    return (f"Measured on {results['machine']}, {date}, by `{command} --systems "
            f"{' '.join(results['systems'])}`; the other systems on {others['machine']}, "
            f"{others['date']}, by `{earlier}`.\n")


def _signed(points: float) -> str:
    return f"{points:+.2f}"


def accuracy_table(results: dict) -> str:
    """snowpy at its defaults against the baselines a user tries first, every corpus: the
    accuracies, then the sizes, the log losses and the fit times."""
    out = [_measured(results, "python benchmarks/bench_accuracy.py --seeds "
                              f"{results.get('seeds', 5)}"),
           "| corpus | snowpy | Balanced Winnow, SNoW's front end | LinearSVC | MNB | hashed "
           "PA-I | fastText | snowpy - best | BW - best |", "|" + "---|" * 9]
    second = ["| corpus | train / test | log loss: snowpy | BW | LinearSVC | fit s: snowpy | "
              "BW | LinearSVC |", "|" + "---|" * 8]
    for corpus, r in results["results"].items():
        def score(system, spread=False):
            if system not in r:
                return "-"
            text = f"{r[system]['score']:.4f}"
            return f"{text} ± {r[system]['sd']:.4f}" if spread and "sd" in r[system] else text

        def loss(system):
            value = r.get(system, {}).get("log_loss")
            return "-" if value is None else f"{value:.3f}"

        best = r[r["best_baseline"]]["score"]
        out.append(
            f"| {corpus} | {score('snowpy', True)} | {score('snowpy-snow')} | "
            f"{score('linearsvc')} | {score('mnb')} | {score('pa')} | {score('fasttext', True)} | "
            f"{_signed(100 * (r['snowpy']['score'] - best))} | "
            f"{_signed(100 * (r['snowpy-snow']['score'] - best))} |")
        second.append(
            f"| {corpus} | {r['train']:,} / {r['test']:,} | {loss('snowpy')} | "
            f"{loss('snowpy-snow')} | {loss('linearsvc')} | {r['snowpy']['fit_s']:.1f} | "
            f"{r['snowpy-snow']['fit_s']:.1f} | {r['linearsvc']['fit_s']:.1f} |")
    return "\n".join([*out, "", *second])


def cli_table(results: dict) -> str:
    """Each system as the command a user types, against Vowpal Wabbit."""
    out = [_measured(results, "python benchmarks/bench_cli.py"),
           "| corpus | system | wall s | VW / snowpy | peak MB | model MB | accuracy |",
           "|---|---|---|---|---|---|---|"]
    like = {"snowpy unigrams, 1 pass": "vw --oaa K -b 18",
            "snowpy 1-2 grams, 1 pass": "vw --oaa K -b 18 --ngram 2"}
    for corpus, runs in results["results"]["runs"].items():
        for system, run in runs.items():
            wall = f"{run['wall_s']:.2f}"
            if "with_conversion_s" in run:
                wall += f" ({run['with_conversion_s']:.2f} with conversion)"
            ratio = (f"{runs[like[system]]['wall_s'] / run['wall_s']:.2f}x"
                     if system in like else "")
            out.append(f"| {corpus} | {system} | {wall} | {ratio} | {run['peak_mb']:,.0f} | "
                       f"{run['model_mb']:.1f} | {run['accuracy']:.4f} |")
    fixed = results["results"]["fixed"]
    out += ["", "| command | fastest | median | peak MB |", "|---|---|---|---|",
            f"| `snowpy train` of the demo corpus, the first time | "
            f"{fixed['first_train_s']:.2f} s | | {fixed['first_train_mb']:.0f} |",
            f"| the same, the second time | {fixed['second_train_s']:.2f} s | | "
            f"{fixed['second_train_mb']:.0f} |",
            f"| `snowpy train` of 10 documents | {fixed['train_ten_s']:.2f} s | "
            f"{fixed['train_ten_median_s']:.2f} s | {fixed['train_ten_mb']:.0f} |",
            f"| `snowpy predict` of one line (demo model) | {fixed['predict_one_line_s']:.2f} s "
            f"| {fixed['predict_one_line_median_s']:.2f} s | "
            f"{fixed['predict_one_line_mb']:.0f} |",
            f"| `snowpy predict` of one line (20 Newsgroups model of the defaults, "
            f"{results['results']['newsgroups_predict']['model_mb']:.0f} MB) | "
            f"{results['results']['newsgroups_predict']['s']:.2f} s | | "
            f"{results['results']['newsgroups_predict']['mb']:.0f} |",
            f"| `snowpy --help` | {fixed['help_s']:.2f} s | {fixed['help_median_s']:.2f} s | |"]
    return "\n".join(out)


def online_table(results: dict) -> str:
    """One example at a time, against River in the same process."""
    sms, news = results["results"]["sms"], results["results"]["newsgroups"]
    out = [_measured(results, "python benchmarks/bench_online.py --repeat 5")
           + f"River {results['river']}.\n",
           "| system | SMS learn docs/s | SMS predict-then-learn docs/s | SMS progressive "
           "accuracy (2,000 / all) | 20NG docs/s (first 1,000 / last 1,000) | 20NG progressive "
           "accuracy |", "|---|---|---|---|---|---|"]
    for system in ("river", "snowpy", "snowpy-calibrated", "snowpy-perceptron"):
        r, n = sms[system], news[system]
        ratio = "" if system == "river" else \
            f" ({r['learn'] / sms['river']['learn']:.1f}x / {r['ptl'] / sms['river']['ptl']:.1f}x)"
        out.append(f"| {system} | {r['learn']:,.0f} | {r['ptl']:,.0f}{ratio} | "
                   f"{r['ptl_accuracy']:.4f} / {r['ptl_accuracy_all']:.4f} | "
                   f"{n['first_block']:,.0f} / {n['last_block']:,.0f} "
                   f"({n['last_block'] / n['first_block']:.0%}) | {n['ptl_accuracy']:.4f} |")
    loop = sms["river_loop"]
    batches = results["results"]["mini_batches"]
    out += ["", f"In River's `progressive_val_score` (SMS, 2,000): River "
            f"{loop['river']['docs_per_s']:,.0f} docs/s, accuracy {loop['river']['accuracy']:.4f}; "
            f"snowpy's `SnowRiver` {loop['snowpy']['docs_per_s']:,.0f} docs/s, accuracy "
            f"{loop['snowpy']['accuracy']:.4f}. `partial_fit` in mini-batches (SMS, all 5,574 "
            "messages, `SnowClassifier(ngrams=1)`): "
            + ", ".join(f"batches of {size}: {speed:,.0f} docs/s"
                        for size, speed in batches.items()) + "."]
    return "\n".join(out)


def _path_rows(runs: dict) -> list[str]:
    return [f"| `{name}` | {run['wall_s']:.2f} | {run['peak_mb']:,.0f} | {run['accuracy']:.4f} |"
            for name, run in runs.items()]


def paths_tables(results: dict) -> str:
    """Every way data arrives, every core: threads, a stream, shards, a local cluster."""
    paths = results["results"]
    out = [_measured(results, "python benchmarks/bench_paths.py --repeat 3"),
           "**Every core**: `snowpy train FILE -o M --epochs 1 --calibrate none`, 1-2 grams, "
           "`--threads 1` against `--threads 2`, and `Network.fit` of the featurised rows "
           "alone (\"learning alone\"):", "",
           "| corpus | `--threads 1` | `--threads 2` | speed-up | learning alone | peak MB "
           "(1 / 2) | same model file | accuracy |", "|---|---|---|---|---|---|---|---|"]
    for corpus, r in paths["threads"].items():
        one, two, learning = r["runs"]["1"], r["runs"]["2"], r["learning"]
        out.append(f"| {corpus} | {one['wall_s']:.2f} s | {two['wall_s']:.2f} s | "
                   f"{r['speed_up']:.2f}x | {learning['one_thread_s']:.2f} / "
                   f"{learning['two_threads_s']:.2f} s = {learning['speed_up']:.2f}x | "
                   f"{one['peak_mb']:,.0f} / {two['peak_mb']:,.0f} | "
                   f"{'yes' if r['same_file'] else 'no'} | {one['accuracy']:.4f} |")
    stream = paths["stream"]
    out += ["", "**A stream**: `snowpy train - < FILE` against the same file's one epoch and "
            "against Vowpal Wabbit reading its standard input, 360,000 synthetic documents, 1-2 "
            f"grams: the stream {stream['stream_over_file']:.2f}x the file's epoch, "
            f"{stream['stream_over_vw']:.2f}x Vowpal Wabbit.", "",
            "| command | wall s | peak MB | accuracy (40,000 test documents) |",
            "|---|---|---|---|"]
    names = {"file": "snowpy train FILE --epochs 1 --calibrate none", "stream": "snowpy train -",
             "vw": "vw --oaa 5 -b 18 --ngram 2 -d /dev/stdin"}
    out += _path_rows({names[k]: v for k, v in stream["runs"].items()})
    shards = paths["shards"]
    out += ["", "**Shards**: `snowpy train FILE --ngrams 1 --epochs 3 --calibrate none "
            f"--multiclass constraint --threads N`, {shards['speed_up']:.2f}x:", "",
            "| command | wall s | peak MB | accuracy |", "|---|---|---|---|"]
    out += _path_rows({f"--threads {k}": v for k, v in shards["runs"].items()})
    cluster = paths["cluster"]
    rounds = cluster["runs"]["--workers 2"]["rounds"]
    out += ["", "**A local cluster**: `snowpy train FILE --epochs 3 --calibrate none`, one "
            "process on one thread against `--workers 2` (a LocalCluster of 2 processes), "
            f"{cluster['speed_up']:.2f}x; the rounds took "
            + ", ".join(f"{r['seconds']:.1f} s" for r in rounds) + " (overheads beyond the "
            "slowest shard's epoch " + ", ".join(f"{r['overhead']:.0%}" for r in rounds) + "):",
            "", "| command | wall s | peak MB | accuracy |", "|---|---|---|---|"]
    out += _path_rows(cluster["runs"])
    return "\n".join(out)


def links_table(results: dict) -> str:
    """Every link setting, one process each."""
    out = [_measured(results, "python benchmarks/bench_links.py"),
           "| corpus | links setting | accuracy | links | file MB | inference MB | fit s | "
           "peak MB |", "|---|---|---|---|---|---|---|---|"]
    for r in results["results"]:
        score = (f"{r['micro_f1']:.4f} (micro-F1)" if "micro_f1" in r else f"{r['accuracy']:.4f}")
        out.append(f"| {r['corpus']} | {r['setting']} | {score} | {r['links']:,} | "
                   f"{r['file_mb']:.1f} | {r['inference_file_mb']:.1f} | {r['fit_s']:.1f} | "
                   f"{r['peak_rss_mb']:,.0f} |")
    return "\n".join(out)


def sparse_problems_table(results: dict) -> str:
    """Every built-in rule under every link policy, on noisy sparse problems."""
    policies = ("signed", "positive", "touched", "all")
    out = [_measured(results, "python benchmarks/bench_sparse_problems.py")
           + f"{results['seconds']:.0f} s in all.\n",
           "| problem | rule | " + " | ".join(policies) + " |", "|---|---|---|---|---|---|"]
    cells: dict = {}
    for r in results["results"]:
        cells.setdefault(r["shape"], {}).setdefault(r["rule"], {})[r["links"]] = r
    for shape, rules in cells.items():
        reference = next(iter(next(iter(rules.values())).values()))["sklearn_perceptron"]
        out.append(f"| **{shape}** | scikit-learn Perceptron | {reference:.3f} | | | |")
        for rule, runs in rules.items():
            out.append(f"| | {rule} | " + " | ".join(
                f"{runs[p]['accuracy']:.3f} · {runs[p]['n_links'] / runs[p]['full_links']:.1%} · "
                f"{runs[p]['model_kb']:,.0f} kB" for p in policies) + " |")
    return "\n".join(out)


def many_labels_table(results: dict) -> str:
    """One pass over synthetic corpora of 2 to 1,000 classes."""
    out = [_measured(results, "python benchmarks/bench_many_labels.py"),
           "| classes | system | wall s | peak MB | model MB | accuracy |",
           "|---|---|---|---|---|---|"]
    for r in results["results"]:
        out.append(f"| {r['classes']:,} | {r['system']} | {r['wall_s']:.2f} | "
                   f"{r['peak_mb']:,.0f} | {r['model_mb']:.1f} | {r['accuracy']:.3f} |")
    return "\n".join(out)


def cloud_table(results: dict) -> str:
    """Winnow, Perceptron and their cloud."""
    names = {"20newsgroups": "20 Newsgroups", "sms-spam": "SMS Spam", "trec": "TREC"}
    out = [_measured(results, "python benchmarks/bench_cloud.py"),
           "| corpus | Winnow | Perceptron | cloud |", "|---|---|---|---|"]
    for r in results["results"]:
        best = max(r["winnow"], r["perceptron"], r["cloud"])
        cell = [f"**{r[k]:.4f}**" if r[k] == best else f"{r[k]:.4f}"
                for k in ("winnow", "perceptron", "cloud")]
        out.append(f"| {names.get(r['corpus'], r['corpus'])} | " + " | ".join(cell) + " |")
    return "\n".join(out)


def latency_table(results: dict) -> str:
    """One text at a time, warm."""
    out = [_measured(results, "python benchmarks/bench_latency.py"),
           "| system | p50 µs | p99 µs | one document: p50 | p99 | accuracy |",
           "|---|---|---|---|---|---|"]
    for system, r in results["results"].items():
        out.append(f"| {system} | {r['p50_us']:.1f} | {r['p99_us']:.0f} | "
                   f"{r['same_p50_us']:.1f} | {r['same_p99_us']:.1f} | {r['accuracy']:.3f} |")
    return "\n".join(out)


def spacy_table(results: dict) -> str:
    """The spaCy component against spaCy's own textcat."""
    names = {"snowpy": "snowpy_textcat", "spacy": "spaCy textcat (BOW v3)"}
    out = [_measured(results, "python benchmarks/bench_spacy.py --json "
                        "benchmarks/results/spacy.json"),
           "| corpus | component | train s | component docs/s | pipeline docs/s | accuracy | "
           "macro-F1 |", "|---|---|---|---|---|---|---|"]
    for corpus, systems in results["corpora"].items():
        for number, (system, r) in enumerate(systems.items()):
            out.append(f"| {corpus if number == 0 else ''} | {names.get(system, system)} | "
                       f"{r['train_seconds']:.1f} | {r['component_docs_per_second']:,} | "
                       f"{r['pipeline_docs_per_second']:,} | {r['accuracy']:.3f} | "
                       f"{r['macro_f1']:.3f} |")
    return "\n".join(out)


def tune_table(results: dict) -> str:
    """snowpy tune and fastText's autotune, a budget each, against snowpy's defaults."""
    out = [_measured(results, "python benchmarks/bench_tune.py"),
           f"| corpus | snowpy defaults | snowpy tune, {results['budget'] / 60:.0f} min | "
           f"fastText autotune, {results['budget'] / 60:.0f} min |", "|---|---|---|---|"]
    for corpus, r in results["corpora"].items():
        tuned = r["snowpy tune"]
        out.append(f"| {corpus} | {r['snowpy defaults']['score']:.3f} | {tuned['score']:.3f} "
                   f"({tuned['trials']:,} trials) | {r['fastText autotune']['score']:.3f} |")
    return "\n".join(out)


def pareto(points: list[dict]) -> list[dict]:
    """The points no other point beats (as fast or faster and as accurate or more, better
    in one), fastest first: a system's frontier."""
    def beaten(p):
        return any(q["wall_s"] <= p["wall_s"] and q["accuracy"] >= p["accuracy"]
                   and (q["wall_s"] < p["wall_s"] or q["accuracy"] > p["accuracy"])
                   for q in points)
    return sorted((p for p in points if not beaten(p)), key=lambda p: p["wall_s"])


def covering(point: dict, points: list[dict]) -> dict | None:
    """The fastest of ``points`` at least as accurate as ``point`` and at least as fast."""
    found = [q for q in points
             if q["accuracy"] >= point["accuracy"] and q["wall_s"] <= point["wall_s"]]
    return min(found, key=lambda q: q["wall_s"]) if found else None


def frontier_table(results: dict) -> str:
    """Accuracy against training time, snowpy's settings and Vowpal Wabbit's: every point,
    then which of VW's points a snowpy point covers (at least as accurate, at least as
    fast) and, for each one not covered, the nearest snowpy points."""
    load, repeat, calm = results["load"], results["repeat"], results.get("calm")
    command = f"python benchmarks/bench_frontier.py --repeat {repeat}" + \
        (f" --calm {calm:g}" if calm is not None else "")
    started = (f"Each run started once the other processes had used at most {calm:g} cores "
               "over a second. " if calm is not None else "")
    out = [_measured(results, command)
           + f"Vowpal Wabbit {results['vw']}. {started}Train s: the fastest of {repeat} runs "
           "(the slowest in brackets); beside it the 1-minute load average before that run "
           "and the cores the other processes used while it ran (its training and its "
           f"test). The load average was {load['before'][0]:.2f} before the benchmark and "
           f"{load['after'][0]:.2f} after. Bold: a point on its system's frontier.\n"]
    for corpus, runs in results["corpora"].items():
        points = list(runs["points"].values())
        ours = [p for p in points if p["system"] == "snowpy"]
        theirs = [p for p in points if p["system"] == "vw"]
        fronts = {id(p) for p in pareto(ours) + pareto(theirs)}
        out += [f"**{corpus}** ({runs['train']:,} documents to train, {runs['test']:,} to "
                f"test, {runs['classes']} classes; Vowpal Wabbit's conversion of the training "
                f"file {runs['convert_s']:.2f} s, not counted):", "",
                "| point | setting | train s | load | others' cores | accuracy | peak MB | "
                "model MB | covered by |", "|---|---|---|---|---|---|---|---|---|"]
        for p in sorted(points, key=lambda p: (p["system"] != "snowpy", p["wall_s"])):
            name = f"{'snowpy' if p['system'] == 'snowpy' else 'VW'} {p['label']}"
            if id(p) in fronts:
                name = f"**{name}**"
            cover = ""
            if p["system"] == "vw":
                by = covering(p, ours)
                cover = f"snowpy {by['label']}" if by else "none"
            out.append(f"| {name} | `{p['setting']}` | {p['wall_s']:.2f} "
                       f"({max(p['runs_s']):.2f}) | {p['load']:.2f} | "
                       f"{p['others_cores']:.2f} | {p['accuracy']:.4f} | "
                       f"{p['peak_mb']:,.0f} | {p['model_mb']:.1f} | {cover} |")
        missed = sorted((p for p in theirs if covering(p, ours) is None),
                        key=lambda p: p["wall_s"])
        out += ["", f"{len(theirs) - len(missed)} of {len(theirs)} Vowpal Wabbit points "
                "covered by a snowpy point." + (" Not covered:" if missed else ""), ""]
        fastest = min(ours, key=lambda q: q["wall_s"])
        for p in missed:
            surer = [q for q in ours if q["accuracy"] >= p["accuracy"]]
            surest = min(surer, key=lambda q: q["wall_s"]) if surer else None
            if fastest["wall_s"] > p["wall_s"]:
                said = (f"faster than every snowpy point: the fastest, {fastest['label']}, "
                        f"takes {fastest['wall_s']:.2f} s ({fastest['wall_s'] / p['wall_s']:.1f}x)"
                        f" at {fastest['accuracy']:.4f}")
                if surest is None:
                    said += ", and none is as accurate"
                elif surest is not fastest:
                    said += (f"; the fastest at least as accurate, {surest['label']}, "
                             f"{surest['wall_s']:.2f} s "
                             f"({surest['wall_s'] / p['wall_s']:.1f}x)")
            else:
                near = max((q for q in ours if q["wall_s"] <= p["wall_s"]),
                           key=lambda q: q["accuracy"])
                said = (f"more accurate than every snowpy point as fast (the most accurate "
                        f"of them, {near['label']}: {near['accuracy']:.4f} in "
                        f"{near['wall_s']:.2f} s)")
                said += (f"; the fastest at least as accurate, {surest['label']}, "
                         f"{surest['wall_s']:.2f} s ({surest['wall_s'] / p['wall_s']:.1f}x)"
                         if surest else "; no snowpy point is as accurate")
            out.append(f"- VW {p['label']} ({p['wall_s']:.2f} s, {p['accuracy']:.4f}): "
                       f"{said}.")
        out.append("")
    return "\n".join(out).rstrip()

def _load(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


#: each marked section of docs/benchmarks.md: what writes it, from which results file
def nbsvm_table(results: dict) -> str:
    """NBSVM's protocol (Wang and Manning 2012): snowpy at its defaults, the peers on the
    same folds, and NBSVM-bi's published figures, accuracy in percent."""
    names = {"rt-s": "RT-s", "rt-2k": "RT-2k", "subj": "Subj", "imdb": "IMDB"}
    corpora = list(results["results"])
    rows = {"snowpy": "snowpy, defaults", "nbsvm": "NBSVM-bi, implemented here",
            "mnb": "MNB, binary 1-2 grams", "linearsvc": "TF-IDF 1-2 grams + LinearSVC"}
    out = [_measured(results, "python benchmarks/bench_accuracy.py --protocol nbsvm"),
           "| method | " + " | ".join(names[c] for c in corpora) + " |",
           "|" + "---|" * (len(corpora) + 1)]
    for system, label in rows.items():
        out.append(f"| {label} | " + " | ".join(
            f"{results['results'][c][system]['score']:.2f}" for c in corpora) + " |")
    out.append("| NBSVM-bi as published | " + " | ".join(
        f"{results['published'][c]}" for c in corpora) + " |")
    out.append("| snowpy - published | " + " | ".join(
        _signed(results["results"][c]["snowpy"]["score"] - results["published"][c])
        for c in corpora) + " |")
    return "\n".join(out)


SECTIONS = {
    "accuracy": lambda: accuracy_table(_load("accuracy")),
    "nbsvm": lambda: nbsvm_table(_load("accuracy_nbsvm")),
    "targets": lambda: targets_table(_load("suite")),
    "tables": lambda: suite_tables(_load("suite")),
    "online": lambda: online_table(_load("online")),
    "cli": lambda: cli_table(_load("cli")),
    "frontier": lambda: frontier_table(_load("frontier")),
    "paths": lambda: paths_tables(_load("paths")),
    "links": lambda: links_table(_load("links")),
    "sparse-problems": lambda: sparse_problems_table(_load("sparse_problems")),
    "many-labels": lambda: many_labels_table(_load("many_labels")),
    "cloud": lambda: cloud_table(_load("cloud")),
    "latency": lambda: latency_table(_load("latency")),
    "spacy": lambda: spacy_table(_load("spacy")),
    "tune": lambda: tune_table(_load("tune")),
}


def _replace(text: str, marker: str, content: str) -> str:
    head, _, rest = text.partition(f"<!-- {marker} -->")
    _, _, tail = rest.partition(f"<!-- /{marker} -->")
    return f"{head}<!-- {marker} -->\n{content}\n<!-- /{marker} -->{tail}"


def main() -> None:
    text = DOC.read_text()
    for marker, write in SECTIONS.items():
        text = _replace(text, marker, write())
    DOC.write_text(text)
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
