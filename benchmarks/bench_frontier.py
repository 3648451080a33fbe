"""Accuracy against training time: snowpy's settings against Vowpal Wabbit's.

Every point is a whole process as a user runs it, on the files of
``bench_cli.py`` (20 Newsgroups bydate, its training posts shuffled with seed 0;
200,000 synthetic documents, 160,000 to train, ``benchmarks/synthetic.py``): the
wall time of the training command, the fastest of ``--repeat`` rounds (the
points of a round in one order that alternates the two systems), its peak
memory (GNU time's maximum RSS), and the accuracy on the test file.

* snowpy (``python -m snowpy``, this source tree): ``snowpy train FILE -o M``
  at the defaults (PA-I, TF-IDF strengths, 1-2 grams, 2^22 ids, 10 epochs,
  probabilities calibrated by 3 folds) and with ``--epochs 1``; the SNoW preset
  (``--rule balanced-winnow``, which trains on SNoW's front end:
  ``snowpy.presets.SNOW``) with its 10 epochs and with ``--epochs 1``; and each
  of the four with ``--calibrate none``: Vowpal Wabbit's ``--oaa`` answers a
  label and no probability, and the calibration's three more trainings buy
  snowpy's probabilities, not its labels. Accuracy by ``snowpy evaluate M
  TEST --json``.
* Vowpal Wabbit (``python -m vowpalwabbit``, the ``vw`` command line of the
  vowpalwabbit package): ``vw -d train.vw --oaa K -b B [--ngram 2] -f M
  --quiet`` for B = 18, 22, 24, one pass, and with ``-c --passes 5`` (the cache
  file ``train.vw.cache`` removed before each run, so that each run writes it
  as a user's first run does; VW's defaults otherwise: with more than one pass
  it holds out every 10th example and stops once 3 passes in a row have not
  lowered their loss). It reads its own format, converted from the same TSV
  file by a Python process, timed apart and not counted. Accuracy by ``vw -t -i
  M -d test.vw -p P``, labels compared by name.

Beside each time: the 1-minute load average before the run, and the cores the
other processes used while it ran (training and test: the machine's CPU time from
/proc/stat less this process's children's). With ``--calm CORES`` each run starts
once the other processes have used at most CORES of the CPUs over a second (a
mutation-testing job kept one of this machine's two cores busy: ``--calm 1.3``).

    python benchmarks/bench_frontier.py [--corpora DIR] [--repeat 3] [--calm 1.3]
    python benchmarks/bench_frontier.py --chart   # redraw the chart from the results

Writes ``benchmarks/results/frontier.json`` and ``docs/figures/frontier.svg``,
and prints the table of ``docs/benchmarks.md`` (``python benchmarks/report.py``
writes it there).
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

from bench_cli import VW, corpora_files, snowpy_run, user_env, vw_convert, vw_run
from common import ROOT, corpora_dir, machine
from report import frontier_table, pareto

RESULTS = ROOT / "benchmarks" / "results" / "frontier.json"
CHART = ROOT / "docs" / "figures" / "frontier.svg"
SNOWPY = [sys.executable, "-m", "snowpy"]
TITLES = {"20newsgroups": "20 Newsgroups (bydate)",
          "synthetic-200k": "synthetic, 160,000 documents"}

#: snowpy's points: (label on the chart, options of ``snowpy train``)
SNOWPY_POINTS = [
    ("defaults", []),
    ("e1", ["--epochs", "1"]),
    ("nc", ["--calibrate", "none"]),
    ("e1 nc", ["--epochs", "1", "--calibrate", "none"]),
    ("SNoW", ["--rule", "balanced-winnow"]),
    ("SNoW e1", ["--rule", "balanced-winnow", "--epochs", "1"]),
    ("SNoW nc", ["--rule", "balanced-winnow", "--calibrate", "none"]),
    ("SNoW e1 nc", ["--rule", "balanced-winnow", "--epochs", "1", "--calibrate", "none"]),
]


def vw_points() -> list[tuple[str, int, list[str]]]:
    """Vowpal Wabbit's points: (label, -b, options besides ``--oaa K -b B``)."""
    points = []
    for bits in (18, 22, 24):
        for ngram in (1, 2):
            for passes in (1, 5):
                options = (["--ngram", "2"] if ngram == 2 else []) + \
                    (["-c", "--passes", str(passes)] if passes > 1 else [])
                label = f"b{bits}" + (" n2" if ngram == 2 else "") + \
                    (f" p{passes}" if passes > 1 else "")
                points.append((label, bits, options))
    return points


def order() -> list[tuple[str, str, int, list[str]]]:
    """A round's runs, the two systems alternating as evenly as their counts allow."""
    ours = [("snowpy", label, 0, options) for label, options in SNOWPY_POINTS]
    theirs = [("vw", label, bits, options) for label, bits, options in vw_points()]
    spread = [((i + 0.5) / len(ours), run) for i, run in enumerate(ours)] + \
        [((i + 0.5) / len(theirs), run) for i, run in enumerate(theirs)]
    return [run for _, run in sorted(spread, key=lambda pair: pair[0])]


def setting(system: str, bits: int, options: list[str]) -> str:
    """The point's command line, as the table shows it."""
    if system == "snowpy":
        return "snowpy train F -o M" + "".join(f" {option}" for option in options)
    return f"vw -d F --oaa K -b {bits}" + "".join(f" {option}" for option in options) + \
        " -f M"


def busy_seconds() -> float:
    """CPU seconds every process of the machine has used since it started (/proc/stat)."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def children_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wait_calm(cores: float, longest: float = 300.0) -> float:
    """Wait until the other processes used at most ``cores`` of the CPUs over a second
    (or ``longest`` seconds have gone by); the seconds waited."""
    start = time.perf_counter()
    while time.perf_counter() - start < longest:
        before = busy_seconds()
        time.sleep(1.0)
        if busy_seconds() - before <= cores:
            break
    return time.perf_counter() - start


def run_point(files: dict, system: str, bits: int, options: list[str],
              calm: float | None = None) -> dict:
    """One point's training and test, with the 1-minute load average before it and the
    cores the other processes used while it ran (training and test)."""
    waited = wait_calm(calm) if calm is not None else 0.0
    load = os.getloadavg()[0]
    busy, ours, start = busy_seconds(), children_seconds(), time.perf_counter()
    if system == "snowpy":
        result = snowpy_run(files, options, command=SNOWPY)
    else:
        (files["folder"] / "train.vw.cache").unlink(missing_ok=True)  # a first run's cache
        result = vw_run(files, options, bits=bits, convert=False)
        result.pop("with_conversion_s")
    others = (busy_seconds() - busy) - (children_seconds() - ours)
    return {**result, "load": load, "others_cores": max(others, 0.0) /
            (time.perf_counter() - start), "waited_s": waited}


#: each run's figures kept beside the fastest: their lists' names, and each run's name
KEPT = {"runs_s": "wall_s", "loads": "load", "others": "others_cores"}


def measure(data: Path, repeat: int, calm: float | None = None) -> dict:
    corpora: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="snowpy-bench-frontier-") as tmp:
        files = corpora_files(Path(tmp), data)
        for corpus in ("20newsgroups", "synthetic-200k"):
            these = files[corpus]
            points: dict[str, dict] = {}
            conversions = []
            for round_ in range(repeat):
                conversions.append(vw_convert(these))
                for system, label, bits, options in order():
                    result = run_point(these, system, bits, options, calm)
                    key = f"{system}: {label}"
                    best = points.get(key)
                    every = {kept: (best[kept] if best else []) + [result[name]]
                             for kept, name in KEPT.items()}
                    if best is None or result["wall_s"] < best["wall_s"]:
                        best = {"system": system, "label": label,
                                "setting": setting(system, bits, options), **result}
                    best.update(every)
                    points[key] = best
                    print(f"{corpus} round {round_ + 1}: {key} {result['wall_s']:.2f} s "
                          f"{result['accuracy']:.4f} (load {result['load']:.2f}, others "
                          f"{result['others_cores']:.2f} cores, waited "
                          f"{result['waited_s']:.0f} s)", flush=True)
            lines = {part: sum(1 for _ in these[part].open(encoding="utf-8"))
                     for part in ("train", "test")}
            corpora[corpus] = {"train": lines["train"], "test": lines["test"],
                               "classes": these["classes"], "convert_s": min(conversions),
                               "points": points}
    return corpora


def chart(results: dict, path: Path = CHART) -> None:
    """Two panels, accuracy against training seconds (log scale), every point labelled,
    each system's Pareto frontier drawn as a staircase."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "frontier", "svg.fonttype": "none",
                         "font.size": 9})
    corpora = results["corpora"]
    figure, axes = plt.subplots(1, len(corpora), figsize=(11, 5.2))
    styles = {"snowpy": {"color": "#1f77b4", "marker": "o", "name": "snowpy"},
              "vw": {"color": "#d62728", "marker": "s", "name": "Vowpal Wabbit"}}
    for ax, (corpus, runs) in zip(axes, corpora.items()):
        points = list(runs["points"].values())
        right = max(p["wall_s"] for p in points) * 1.6
        for system, style in styles.items():
            mine = [p for p in points if p["system"] == system]
            ax.scatter([p["wall_s"] for p in mine], [p["accuracy"] for p in mine],
                       color=style["color"], marker=style["marker"], s=22, zorder=3,
                       label=style["name"])
            front = pareto(mine)
            xs = [p["wall_s"] for p in front] + [right]
            ys = [p["accuracy"] for p in front] + [front[-1]["accuracy"]]
            ax.plot(xs, ys, drawstyle="steps-post", color=style["color"], alpha=0.6,
                    linewidth=1.2, label=f"{style['name']}'s frontier")
            for p in mine:  # snowpy's labels upright above their points (they crowd)
                upright = system == "snowpy"
                ax.annotate(p["label"], (p["wall_s"], p["accuracy"]), fontsize=7,
                            color=style["color"], textcoords="offset points",
                            xytext=(0, 5) if upright else (4, 3),
                            rotation=90 if upright else 0,
                            ha="center" if upright else "left",
                            va="bottom" if upright else "baseline",
                            arrowprops={"arrowstyle": "-", "color": style["color"],
                                        "linewidth": 0.4, "shrinkA": 0, "shrinkB": 2})
        ax.set_xscale("log")
        ax.set_xlim(min(p["wall_s"] for p in points) / 1.3, right)
        low, high = (f(p["accuracy"] for p in points) for f in (min, max))
        ax.set_ylim(low - 0.04 * (high - low), high + 0.25 * (high - low))  # room for labels
        ax.set_xlabel("training, wall seconds (log scale)")
        ax.set_ylabel("test accuracy")
        ax.set_title(TITLES.get(corpus, corpus))
        ax.grid(True, which="both", alpha=0.25)
    axes[0].legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    for ax in axes:
        _spread_labels(figure, ax)
    figure.suptitle(f"Accuracy against training time, {results['date']}: {results['machine']}",
                    fontsize=9)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format=path.suffix[1:], metadata={"Date": None})
    plt.close(figure)


def _spread_labels(figure, ax) -> None:
    """Keep the labels apart: an upright label (snowpy's) that would cross a point or a
    label above it goes below its point; then each level label moves up or down, a step at
    a time, right of its point or left of it, until it overlaps no point and no label placed
    before it (left to right)."""
    from matplotlib.transforms import Bbox

    renderer = figure.canvas.get_renderer()
    dots = {text: Bbox.from_bounds(*(ax.transData.transform(text.xy) - 4), 8, 8)
            for text in ax.texts}
    placed: list = []
    # an upright label that would cross a point or a label above it goes below its point
    for label in sorted((text for text in ax.texts if text.get_rotation()),
                        key=lambda text: -text.xy[1]):
        box = label.get_window_extent(renderer)
        if any(box.overlaps(other) for other in placed) or \
                any(box.overlaps(dot) for text, dot in dots.items() if text is not label):
            label.xyann = (0, -5)
            label.set_verticalalignment("top")
        placed.append(label.get_window_extent(renderer))
    for label in sorted((text for text in ax.texts if not text.get_rotation()),
                        key=lambda text: text.xy[0]):
        dx, dy = label.xyann
        others = placed + [dot for text, dot in dots.items() if text is not label]
        for step in (0, -6, 6, -12, 12, -18, 18, -24, 24, -30, 30):
            for side in ("left", "right"):  # right of its point, else left of it
                label.xyann = (dx if side == "left" else -dx, dy + step)
                label.set_horizontalalignment(side)
                box = label.get_window_extent(renderer)
                if not any(box.overlaps(other) for other in others):
                    break
            else:
                continue
            break
        placed.append(label.get_window_extent(renderer))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", help="folder of the shared corpora")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calm", type=float, metavar="CORES",
                        help="start each run once the other processes used at most CORES "
                             "of the CPUs over a second (waiting 300 s at most)")
    parser.add_argument("--chart", action="store_true",
                        help="draw the chart from the last results, measure nothing")
    args = parser.parse_args()
    if args.chart:
        results = json.loads(RESULTS.read_text())
    else:
        data = corpora_dir(args.corpora)
        before = os.getloadavg()
        version = subprocess.run([*VW, "--version"], capture_output=True, text=True,
                                 env=user_env()).stdout.split()[0]
        corpora = measure(data, args.repeat, args.calm)
        results = {"machine": machine(), "date": time.strftime("%Y-%m-%d"),
                   "repeat": args.repeat, "calm": args.calm, "vw": version,
                   "load": {"before": before, "after": os.getloadavg()}, "corpora": corpora}
        RESULTS.write_text(json.dumps(results, indent=1))
    chart(results)
    print(frontier_table(results))


if __name__ == "__main__":
    main()
