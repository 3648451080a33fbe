"""Figures of an evaluation: a reliability diagram and a confusion matrix.

matplotlib is optional (``pip install '.[plot]' in snowpy's source folder``); it is imported only here, and
only when a figure is drawn. Each plot is written as a PNG or an SVG, chosen by the path's
suffix; no window is opened.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["drawn", "plot_confusion", "plot_coverage", "plot_curve", "plot_reliability"]


@contextlib.contextmanager
def drawn(path: Any, *rows: int, format: str | None = None, **options: Any
          ) -> Iterator[tuple[Any, Any]]:
    """A figure and its axes (matplotlib's ``subplots(*rows, **options)``, drawn off
    screen), written to ``path`` (a file, or a stream in ``format``) when the block ends."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(*rows, **options)
    try:
        yield figure, axes
        figure.tight_layout()
        figure.savefig(path, format=format)
    finally:
        plt.close(figure)


def _title(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def plot_reliability(data: dict[str, list[float]], path: str, title: str = "",
                     xlabel: str = "confidence of the predicted label",
                     ylabel: str = "accuracy") -> None:
    """Draw a reliability diagram (from :func:`snowpy.metrics.reliability`) to ``path``.

    Bars are the accuracy of each confidence bin; the dashed diagonal is perfect
    calibration; the bins' counts are drawn below as a histogram.
    """
    edges = np.asarray(data["edges"])
    centres = (edges[:-1] + edges[1:]) / 2
    accuracy = np.asarray(data["accuracy"], dtype=float)
    counts = np.asarray(data["counts"])
    with drawn(path, 2, 1, figsize=(5, 6.2), sharex=True,
               gridspec_kw={"height_ratios": [4, 1]}) as (figure, (axis, below)):
        axis.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
        shown = counts > 0
        axis.bar(centres[shown], accuracy[shown], width=np.diff(edges)[shown],
                 edgecolor="black", alpha=0.7, label=f"{ylabel} per bin")
        axis.set_ylabel(ylabel)
        axis.set_xlim(0, 1)
        axis.set_ylim(0, 1)
        axis.set_title(_title(title or "Reliability diagram", 44), fontsize=11)
        axis.legend(loc="upper left")
        below.bar(centres, counts, width=np.diff(edges), color="grey", edgecolor="black")
        below.set_xlabel(xlabel)
        below.set_ylabel("documents")


def plot_confusion(matrix: Sequence[Sequence[int]], labels: Sequence[Any], path: str,
                   title: str = "") -> None:
    """Draw a confusion matrix (rows: true class, columns: predicted) to ``path``.

    Each row is shaded by the share of its class's documents, so a small class's
    errors show as plainly as a large one's; the counts are written in the cells
    when there are at most 30 classes.
    """
    counts = np.asarray(matrix, dtype=float)
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    n = len(labels)
    size = min(4 + 0.45 * n, 24)
    with drawn(path, figsize=(size + 1.5, size)) as (figure, axis):
        image = axis.imshow(shares, cmap="Blues", vmin=0, vmax=1)
        figure.colorbar(image, ax=axis, fraction=0.046, pad=0.04,
                        label="share of the true class's documents")
        names = [str(label) for label in labels]
        axis.set_xticks(range(n), names, rotation=60, ha="right", fontsize=8 if n > 12 else 10)
        axis.set_yticks(range(n), names, fontsize=8 if n > 12 else 10)
        axis.set_xlabel("predicted class")
        axis.set_ylabel("true class")
        axis.set_title(_title(title or "Confusion matrix", int(8 * size)), fontsize=11)
        if n <= 30:
            for i in range(n):
                for j in range(n):
                    if counts[i, j]:
                        axis.text(j, i, f"{int(counts[i, j])}", ha="center", va="center",
                                  fontsize=7 if n > 12 else 9,
                                  color="white" if shares[i, j] > 0.5 else "black")


def plot_curve(points: Sequence[dict[str, Any]], path: str, title: str = "") -> None:
    """A learning curve: test accuracy against training examples seen (from
    ``snowpy train --test``), epochs marked."""
    with drawn(path, figsize=(7, 4.5)) as (figure, axis):
        x = [p["examples"] for p in points]
        axis.plot(x, [p["accuracy"] for p in points], "-o", markersize=3)
        for p in points[1:]:
            if p["epoch"] != points[points.index(p) - 1]["epoch"]:
                axis.axvline(p["examples"], color="grey", linestyle=":", linewidth=0.8)
        axis.set_xlabel("training examples seen (dotted: a new epoch)")
        axis.set_ylabel("test accuracy")
        axis.set_title(_title(title or "Learning curve", 60), fontsize=11)
        axis.grid(True, alpha=0.3)


def plot_coverage(curve: Sequence[dict[str, Any]], path: str, title: str = "") -> None:
    """Accuracy on the documents answered against coverage, as the abstention margin
    (SNoW's ``-p k``) grows from 0 (answer everything) to 1; margins labelled."""
    points = [p for p in curve if p["accuracy"] is not None]
    with drawn(path, figsize=(6, 4.5)) as (figure, axis):
        axis.plot([p["coverage"] for p in points], [p["accuracy"] for p in points], "-o",
                  markersize=3)
        for p in points[::4]:
            axis.annotate(f"{p['margin']:g}", (p["coverage"], p["accuracy"]), fontsize=8,
                          textcoords="offset points", xytext=(4, -10))
        axis.set_xlabel("coverage (share of documents answered)")
        axis.set_ylabel("accuracy on the documents answered")
        axis.set_title(_title(title or "Coverage against accuracy", 55), fontsize=11)
        axis.invert_xaxis()
        axis.grid(True, alpha=0.3)
