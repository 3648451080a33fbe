"""What experiments share: the result record, writing tables, drawing figures."""

from __future__ import annotations

import csv
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["Result", "Series", "corpus_split", "disjunction_stream", "lines", "single_target"]


@dataclass
class Series:
    """One line of a figure."""

    label: str
    x: Sequence[float]
    y: Sequence[float]
    style: str = "-o"


@dataclass
class Result:
    """An experiment's table (rows of plain values) and how to draw it."""

    name: str
    title: str
    rows: list[dict[str, Any]]
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    logx: bool = False
    logy: bool = False
    note: str = ""

    def write_table(self, path: Path) -> Path:
        """The rows as CSV (``.csv``) or JSON (anything else)."""
        path = Path(path)
        if path.suffix.lower() == ".csv":
            with open(path, "w", newline="") as out:
                writer = csv.DictWriter(out, fieldnames=list(self.rows[0]))
                writer.writeheader()
                writer.writerows(self.rows)
        else:
            import orjson

            path.write_bytes(orjson.dumps({"experiment": self.name, "title": self.title,
                                           "note": self.note, "rows": self.rows},
                                          option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
        return path

    def draw(self, path: Path) -> Path | None:
        """The figure, PNG or SVG by suffix; None (with a warning) without matplotlib."""
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            warnings.warn("figures need matplotlib: pip install '.[plot]' in snowpy's source folder", stacklevel=2)
            return None
        from snowpy.plots import drawn

        with drawn(path, figsize=(7, 4.5)) as (_, axis):
            for line in self.series:
                axis.plot(line.x, line.y, line.style, label=line.label, markersize=4)
            if self.logx:
                axis.set_xscale("log", base=2)
            if self.logy:
                axis.set_yscale("log")
            axis.set_xlabel(self.xlabel)
            axis.set_ylabel(self.ylabel)
            axis.set_title(self.title)
            axis.grid(True, alpha=0.3)
            axis.legend()
        return Path(path)


def lines(rows: list[dict[str, Any]], x: str | Sequence[float], *drawn: tuple[str, ...]
          ) -> list[Series]:
    """A :class:`Series` per ``(label, column[, style])`` of ``rows``, against their
    column ``x`` (or the values ``x``)."""
    xs = [row[x] for row in rows] if isinstance(x, str) else x
    return [Series(label, xs, [row[column] for row in rows], *style)
            for label, column, *style in drawn]


def corpus_split(corpus: str | None, split: str | None) -> tuple[str, list[Any], list[Any]]:
    """The name, texts and labels of a split of ``corpus`` (None: its default): 20
    Newsgroups when ``$SNOWPY_DATA`` holds it (or when named), a registered corpus named,
    else snowpy's demo corpus."""
    from snowpy import corpora

    if corpus in (None, "20newsgroups"):
        try:
            loaded = corpora.load("20newsgroups", split, download=False)
            return "20 Newsgroups", loaded.texts, loaded.labels
        except corpora.CorpusError:
            if corpus is not None:
                raise
    if corpus not in (None, "demo"):
        loaded = corpora.load(corpus, split)
        return corpus, loaded.texts, loaded.labels
    documents = list(corpora.read_tsv(corpora.demo_path(split or "train")))
    return "the demo corpus", [d.text for d in documents], [d.label for d in documents]


def disjunction_stream(n: int, k: int, m: int, rng: np.random.Generator,
                       relevant: np.ndarray | None = None):
    """``m`` Boolean examples over ``n`` attributes labelled by a k-disjunction.

    Each attribute is on with probability ``1 - 2**(-1/k)``, so about half
    the examples are positive whatever ``k``.
    """
    if relevant is None:
        relevant = rng.choice(n, size=k, replace=False)
    p = 1 - 0.5 ** (1 / k)
    dense = rng.random((m, n)) < p
    y = dense[:, relevant].any(axis=1)
    return sp.csr_matrix(dense.astype(np.float64)), y, relevant


def single_target(labels: np.ndarray) -> list[list[str]]:
    """Boolean labels for a network with the one target ``"f"`` (a single LTU)."""
    return [["f"] if value else [] for value in labels]


def positive_first(X: sp.csr_matrix, y: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """Move the first positive example to the front: it creates the target node."""
    first = int(np.flatnonzero(y)[0])
    order = np.r_[first, np.delete(np.arange(len(y)), first)]
    return X[order], y[order]

