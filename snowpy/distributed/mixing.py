"""Iterative parameter mixing of sparse link tables (McDonald, Hall and Mann, 2010).

Every round, each shard's worker trains one epoch starting from the mixed
network; the next mixed network is the start moved by the average of what
the shards changed, weighted by their examples. What travels is a
:class:`Mixture`: the links a shard's epoch changed (or a sum of several
shards'), keyed by ``(feature, target)``, never a full ``features x targets``
table and never the links nobody touched. Two mixtures add up
(:meth:`Mixture.combine`) in any grouping, so the workers reduce them as a tree
and only the last sum is applied to the start (:meth:`Mixture.state`).

Averaging
---------
``per_link=False`` is IPM as published: each link moves by the average of
the shards' changes, a shard that did not change it counting as a change of
0, so a link only one shard of ``k`` needed moves ``1/k`` of the way that
shard moved it. ``per_link=True`` (the default) averages each link's change
over the shards that changed it: links every shard updates (the bias,
frequent words) are averaged as in IPM, a rare feature's link moves as its
shard moved it. On 20 Newsgroups the published mixing loses 1.1 points of
accuracy at 8 shards and 4.0 at 16; per link, it gains 0.6 and 0.7
(``docs/distributed.md``).

A link that is new to the start counts as starting from the planes a new
link starts with (the rule's initial weights). ``"arithmetic"`` averages the
changes of the planes, ``"geometric"`` (multiplicative rules: every weight
positive) the changes of their logarithms. The averaging sums (``U``, the
time-weighted updates: the averaged weight is ``W - U / seen``) move by the
average of their changes too, and the averaging clock by the average of the
shards' examples, so an untouched link's average keeps moving towards its
weight as in one process.

This module is plain numpy with compiled loops (:mod:`snowpy._core.merging`):
it runs, and is tested, without Dask.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snowpy._core.merging import changes, merge, mixed
from snowpy.exceptions import ConfigurationError
from snowpy.network.links import PRECISIONS

__all__ = ["MIXING", "Mixture", "State"]

#: How link weights are averaged.
MIXING = ("arithmetic", "geometric")

#: A network as plain data, what ``to_state`` gives: its header and its named arrays.
State = tuple[dict[str, Any], dict[str, np.ndarray]]


def _links(state: State, mixing: str) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                np.ndarray, np.ndarray, bool]:
    """A network's links as :func:`~snowpy._core.merging.changes` and ``mixed`` read
    them: its features (the bias first, -1), the rows' sizes, the links' targets,
    weights and averaging sums, and whether it averages."""
    arrays = state[1]
    weights = arrays["link_weights"]
    if mixing not in MIXING:
        raise ConfigurationError(f"mixing must be one of {', '.join(MIXING)}, got {mixing!r}")
    if mixing == "geometric" and weights.size and float(weights.min()) <= 0:
        raise ConfigurationError(
            "geometric mixing averages logarithms of weights and needs every weight "
            "positive (Winnow, Balanced Winnow); this rule's are not: use "
            "mixing='arithmetic'")
    averaging = arrays.get("link_averaging")
    W = np.ascontiguousarray(weights)
    U = W[:0] if averaging is None or averaging.shape[0] == 0 else \
        np.ascontiguousarray(averaging, dtype=W.dtype)  # (read only for links it has)
    return (np.concatenate([[-1], arrays["feature_ids"].astype(np.int64)]),
            np.ascontiguousarray(arrays["row_sizes"], dtype=np.int32),
            np.ascontiguousarray(arrays["link_targets"], dtype=np.int32), W, U,
            averaging is not None)


def _planes(links: tuple) -> tuple[int, int]:
    """The weight planes and averaging columns of a network's :func:`_links`."""
    W, averaging = links[3], links[5]
    return W.shape[1], W.shape[1] if averaging else 0


def figures(parts: list[Mixture]) -> dict[str, int]:
    """The round's figures (mistakes, updates, examples...) of ``parts``, added up."""
    stats: dict[str, int] = {}
    for part in parts:
        for name, value in part.stats.items():
            stats[name] = stats.get(name, 0) + int(value)
    return stats


@dataclass
class Mixture:
    """The changes of one or more shards' networks in a round, keyed by
    ``(feature, target)``: per key, ``sum_i n_i * change_i`` of the planes (in the
    mixing's terms) and of the averaging sums, and ``sum_i n_i`` over the shards
    that changed it."""

    keys: np.ndarray          # int64, sorted: (feature + 1) * targets + target; bias: -1
    W: np.ndarray             # float64 [keys, planes]
    U: np.ndarray             # float64 [keys, planes] (no columns without averaging)
    C: np.ndarray             # float64 [keys]: the weight of the shards that changed it
    weight: float             # sum of n_i
    seen: float               # sum of n_i * seen_i (the averaging clocks)
    rule_state: np.ndarray    # sum of n_i * per-target rule state
    counts: np.ndarray        # int64 [targets, 2]: promotions, demotions made this round
    link_counts: np.ndarray   # int64 per key (eligibility by percent), or empty
    row_ids: np.ndarray       # int64 feature ids with an eligibility count ...
    row_counts: np.ndarray    # ... and the counts
    stats: dict[str, int] = field(default_factory=dict)  # mistakes, updates, examples...
    #: counts are this round's to add up (the first round); later rounds carry them
    summed_counts: bool = True
    #: seconds: the longest epoch of one shard among those mixed (the round's floor)
    slowest: float = 0.0

    # ------------------------------------------------------------ building
    @classmethod
    def of_network(cls, state: State, start: State, reference: np.ndarray, mixing: str,
                   weight: float, counts: np.ndarray, stats: dict[str, int],
                   counted: bool, seconds: float = 0.0) -> Mixture:
        """What one shard's epoch changed from ``start`` (the round's network, from which
        the shard's network was restored and trained: its rows come first, in their
        order), weighted by ``weight`` (its examples this round).

        ``counts`` are the promotions and demotions made this round; ``counted``:
        whether the eligibility counts are this round's (the first) to be summed;
        ``seconds``, the epoch's time.
        """
        header, arrays = state
        links, before = _links(state, mixing), _links(start, mixing)
        if _planes(links) != _planes(before):
            raise ValueError("the round's start and the trained network have different planes")
        features = links[0]
        n_start = before[0].shape[0]
        if not np.array_equal(features[:n_start], before[0]):
            raise ValueError("the trained network's rows do not begin with its start's")
        keys, W, U, C, taken = changes(  # (rows visited in the features' order)
            features, np.argsort(features, kind="stable").astype(np.int64), *links[1:],
            *before[1:5], np.asarray(reference, np.float64), mixing == "geometric",
            len(header["labels"]), float(weight))
        link_counts = arrays["link_counts"][taken].astype(np.int64) \
            if "link_counts" in arrays else np.zeros(0, np.int64)
        row_ids, row_counts = _row_counts(state)
        order = np.argsort(row_ids)
        row_ids, row_counts = row_ids[order], row_counts[order]
        return cls(keys, W, U, C, float(weight),
                   weight * float(header["seen"]),
                   weight * np.asarray(arrays["state"], dtype=np.float64),
                   np.asarray(counts, dtype=np.int64), link_counts, row_ids, row_counts,
                   dict(stats), counted, float(seconds))

    # ----------------------------------------------------------- combining
    @staticmethod
    def combine(parts: list[Mixture]) -> Mixture:
        """The sum of ``parts`` (in the order given: the same order, the same bits)."""
        if not parts:
            raise ValueError("nothing to mix")
        if len(parts) == 1:
            return parts[0]
        adding = parts[0].summed_counts
        first = parts[0]
        if any(p.W.shape[1] != first.W.shape[1] or p.U.shape[1] != first.U.shape[1]
               for p in parts):
            raise ValueError("mixtures of networks with different planes")
        keys, W, U, C, link_counts = first.keys, first.W, first.U, first.C, first.link_counts
        for part in parts[1:]:  # linear merges of sorted tables, in the order given
            keys, W, U, C, link_counts = merge(keys, W, U, C, link_counts, part.keys, part.W,
                                               part.U, part.C, part.link_counts, adding)
        rows = np.concatenate([p.row_ids for p in parts])
        row_ids, row_where = np.unique(rows, return_inverse=True)
        row_counts = np.zeros(row_ids.size, np.int64)
        if rows.size:
            values = np.concatenate([p.row_counts for p in parts])
            if adding:
                np.add.at(row_counts, row_where, values)
            else:
                np.maximum.at(row_counts, row_where, values)
        return Mixture(keys, W, U, C, sum(p.weight for p in parts),
                       sum(p.seen for p in parts),
                       np.sum([p.rule_state for p in parts], axis=0),
                       np.sum([p.counts for p in parts], axis=0), link_counts, row_ids,
                       row_counts, figures(parts), adding, max(p.slowest for p in parts))

    # ------------------------------------------------------------ the result
    def state(self, start: State, reference: np.ndarray, mixing: str, *,
              per_link: bool = True) -> State:
        """The mixed network as a header and arrays: ``start`` moved by the changes.

        Each link's change is divided by the weight of the shards that made it
        (``per_link``) or by that of all shards; links only made, never moved, stay
        where they start. Per-round figures (mistakes, updates, examples, clamped
        updates) add to the start's; the averaging clock is the weighted mean of the
        shards'.
        """
        header, arrays = copy.deepcopy(start[0]), dict(start[1])
        n_targets = len(header["labels"])
        total = self.weight if self.weight > 0 else 1.0
        before = _links(start, mixing)
        if _planes(before) != (self.W.shape[1], self.U.shape[1]):
            raise ValueError("the start and the changes have different planes")
        if before[0].size > 1 and not bool(np.all(before[0][1:] > before[0][:-1])):
            raise ValueError("the round's start is not laid out by its features' order")
        divisor = self.C if per_link else np.full(self.C.shape, float(total))
        scale = np.divide(1.0, divisor, out=np.zeros_like(divisor), where=divisor > 0)
        dtype, _, limit = PRECISIONS[header["links"]["precision"]]
        geometric = mixing == "geometric"
        reference = np.asarray(reference, np.float64)
        start_counts = arrays["link_counts"].astype(np.int64) if "link_counts" in arrays \
            else np.zeros(0, np.int64)
        link_rows, sizes, targets, W, U, link_counts = mixed(
            *before, start_counts, self.keys, self.W, self.U, scale,
            self.link_counts, reference, np.log(reference) if geometric else reference,
            geometric, n_targets, limit, dtype == np.float32)
        if geometric:
            with np.errstate(over="ignore", under="ignore"):
                W = np.clip(np.exp(W), -limit, limit).astype(dtype)
        rows = link_rows
        carried = _row_counts(start)
        row_ids = np.concatenate([self.row_ids, carried[0]])
        if row_ids.size:
            rows = np.union1d(link_rows, row_ids)
            row_sizes = np.zeros(rows.size, np.int32)
            row_sizes[np.searchsorted(rows, link_rows)] = sizes
        else:
            row_sizes = sizes
        seen = int(round(self.seen / total))
        arrays.update(
            feature_ids=rows[1:].astype(np.int64), row_sizes=row_sizes,
            link_targets=targets, link_weights=W,
            state=self.rule_state / total if self.rule_state.size else self.rule_state,
            promotions=arrays["promotions"] + self.counts[:, 0],
            demotions=arrays["demotions"] + self.counts[:, 1],
        )
        if U.shape[1]:
            arrays["link_averaging"] = U
        if link_counts.size or "link_counts" in arrays:
            arrays["link_counts"] = (link_counts if link_counts.size else
                                     np.zeros(targets.size, np.int64)).astype(np.int32)
        if row_ids.size or "row_counts" in arrays:
            counts = np.zeros(rows.size, np.int64)
            counts[np.searchsorted(rows, carried[0])] = carried[1]
            if self.row_ids.size:  # this round's (the first) or carried: the largest
                at = np.searchsorted(rows, self.row_ids)
                counts[at] = np.maximum(counts[at], self.row_counts)
            arrays["row_counts"] = counts.astype(np.int32)
        stats = header["stats"]
        stats["mistakes"] = list(stats["mistakes"]) + [int(self.stats.get("mistakes", 0))]
        stats["updates"] = list(stats["updates"]) + [int(self.stats.get("updates", 0))]
        for name in ("n_examples_seen", "overflows", "underflows"):
            stats[name] = int(stats.get(name, 0)) + int(self.stats.get(name, 0))
        header["seen"] = seen
        return header, arrays


def _row_counts(state: State) -> tuple[np.ndarray, np.ndarray]:
    """The eligibility counts of ``state``'s rows, by feature id (the bias: -1)."""
    arrays = state[1]
    if "row_counts" not in arrays:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    features = np.concatenate([[-1], arrays["feature_ids"].astype(np.int64)])
    return features, arrays["row_counts"].astype(np.int64)

