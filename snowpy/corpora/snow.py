"""SNoW's own example format: active feature ids, labels among them, target subsets.

An example lists active feature ids, each optionally with a strength, and
ends with a colon::

    7(1.5), 5, 13:
    0, 4, 9; 0, 1:

Ids that are targets (given by ``targets``) are the example's labels; the
others are features. A ``;`` introduces the subset of targets allowed to see
the example (SNoW's sequential model). Examples may span lines; whitespace
is free. The result feeds :class:`snowpy.Network` directly (no text).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from snowpy._lazy import lazy_module
from snowpy.corpora.documents import Problems
from snowpy.corpora.sources import decode, read_file
from snowpy.exceptions import ConfigurationError

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["SnowExamples", "parse_targets", "read_snow"]

_ITEM = re.compile(r"^(\d+)(?:\(([^)]*)\))?$")


@dataclass
class SnowExamples:
    """Examples read from SNoW's format.

    Attributes
    ----------
    X : csr_matrix
        Feature strengths, one row per example, a column per feature id.
    labels : list of tuple of int
        The target ids among each example's ids (multi-label, possibly empty).
    restrictions : list of tuple of int, or None
        Each example's allowed targets (all targets when it names none;
        ``None`` when no example of the file names any).
    sources : list of str
        ``file:line`` of each example.
    """

    X: sp.csr_matrix
    labels: list[tuple[int, ...]]
    restrictions: list[tuple[int, ...]] | None
    sources: list[str]


def parse_targets(text: str) -> set[int]:
    """Target ids from SNoW's notation, ``"0-3,7"``.

    >>> sorted(parse_targets("0-3,7"))
    [0, 1, 2, 3, 7]
    """
    targets: set[int] = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        low, dash, high = part.partition("-")
        try:
            first, last = int(low), int(high if dash else low)
        except ValueError:
            raise ConfigurationError(f"targets must look like '0-3,7', got {text!r}") from None
        if first > last:
            raise ConfigurationError(f"targets: empty range {part!r}")
        targets.update(range(first, last + 1))
    if not targets:
        raise ConfigurationError("targets: no target id given")
    return targets


def read_snow(
    source: str | os.PathLike,
    *,
    targets: Collection[int],
    n_features: int | None = None,
    encoding: str = "utf-8",
    problems: Problems | None = None,
) -> SnowExamples:
    """Read a file of SNoW examples (see the module docstring)."""
    problems = problems or Problems()
    targets = set(targets)
    where, content = read_file(source)
    text = decode(content, encoding, "strict", where) or ""  # (strict: never None)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    labels: list[tuple[int, ...]] = []
    restrictions: list[tuple[int, ...]] = []
    sources: list[str] = []
    any_restriction = False
    line = 1
    for chunk in text.split(":"):
        start_line = line + chunk[: len(chunk) - len(chunk.lstrip())].count("\n")
        line += chunk.count("\n")
        body = chunk.strip()
        if not body:
            continue
        at = f"{where}:{start_line}"
        example, semicolon, subset = body.partition(";")
        features: dict[int, float] = {}
        positive: list[int] = []
        bad = None
        for item in (i.strip() for i in example.split(",")):
            match = _ITEM.match(item.replace(" ", ""))
            if not match:
                bad = f"cannot read {item!r} (expected an id, or id(strength))"
                break
            identifier = int(match.group(1))
            if match.group(2) is not None:
                try:
                    strength = float(match.group(2))
                except ValueError:
                    bad = f"strength of {identifier} is not a number: {match.group(2)!r}"
                    break
                if not np.isfinite(strength):
                    bad = f"strength of {identifier} is not finite"
                    break
            else:
                strength = 1.0
            if identifier in targets:
                positive.append(identifier)
            else:
                features[identifier] = features.get(identifier, 0.0) + strength
        allowed: tuple[int, ...] = tuple(sorted(targets))  # no subset: every target
        if semicolon and bad is None:
            try:
                allowed = tuple(int(i) for i in subset.replace(" ", "").split(",") if i)
            except ValueError:
                bad = f"cannot read the target subset {subset.strip()!r}"
            if bad is None and not set(allowed) <= targets:
                bad = f"the subset names ids that are not targets: {sorted(set(allowed) - targets)}"
        if bad is not None:
            problems.report(at, bad)
            continue
        if n_features is not None and features and max(features) >= n_features:
            problems.report(at, f"feature id {max(features)} is beyond n_features={n_features}")
            continue
        any_restriction |= bool(semicolon)
        row = len(labels)
        for identifier, strength in features.items():
            rows.append(row)
            cols.append(identifier)
            vals.append(strength)
        labels.append(tuple(sorted(set(positive))))
        restrictions.append(allowed)
        sources.append(at)
    if text.strip() and not text.rstrip().endswith(":"):
        problems.report(f"{where}:{line}", "the last example does not end with ':'")
    width = n_features if n_features is not None else (max(cols) + 1 if cols else 1)
    X = sp.csr_matrix((np.asarray(vals, dtype=np.float64), (rows, cols)),
                      shape=(len(labels), width))
    X.sum_duplicates()
    return SnowExamples(X, labels, restrictions if any_restriction else None, sources)
