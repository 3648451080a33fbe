"""Iterative parameter mixing of sparse link tables (McDonald, Hall and Mann, 2010).

Every round, each shard's worker trains one epoch starting from the mixed
network; the next mixed network is the average of the shards' networks,
weighted by their examples. What travels is a :class:`Mixture`: the links of
one network (or a weighted sum of several) keyed by ``(feature, target)``,
never a full ``features x targets`` table. Two mixtures add up
(:meth:`Mixture.combine`) in any grouping, so the workers reduce them as a tree
and only the last sum becomes a network again (:meth:`Mixture.state`).

Averaging
---------
A link one shard made and another did not counts, for the other, as the
planes a new link starts with (the rule's initial weights): the shards'
planes are averaged as if every network held every link, the ones it never
needed at their starting point. ``"arithmetic"`` averages the planes,
``"geometric"`` (multiplicative rules: every weight positive) their
logarithms. Wherever a missing link weighs what a new one does
(Perceptron, and every rule with the ``"touched"`` and ``"all"`` policies),
the arithmetic mixture scores every example with the average of the
shards' scores: IPM as published. With ``"signed"`` and ``"positive"`` links
a missing link weighs 0 and a new one the initial weight; counting missing
links as 0 would average what the shards predict exactly, and it shrinks
every multiplicative plane towards 0, and with it every later step of the
rule: on 20 Newsgroups (Balanced Winnow, 2 shards) that cost 9 points of
accuracy, counting them as new links none (``docs/distributed.md``).

Both the current weights and the averaged weights (``W - U / seen``, see
:class:`snowpy.network.links.LinkStore`) are mixed; the mixed network's
averaging sums are set so that it predicts with the mixed averages and keeps
averaging from there.

This module is plain numpy: it runs, and is tested, without Dask.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snowpy.distributed.merging import merge, table
from snowpy.exceptions import ConfigurationError
from snowpy.network.links import PRECISIONS

__all__ = ["MIXING", "Mixture"]

#: How link weights are averaged.
MIXING = ("arithmetic", "geometric")


@dataclass
class Mixture:
    """A weighted sum of networks' links, keyed by ``(feature, target)``.

    ``W`` and ``V`` hold, per key, ``sum_i n_i * (f(w_i) - f(reference))`` for
    the current (``W``) and the averaged (``V``) weight planes, where ``f`` is
    the identity or the logarithm; keys a network lacks add nothing, which is
    what makes the sums of a sparse table those of the full one.
    """

    keys: np.ndarray          # int64, sorted: (feature + 1) * targets + target; bias: -1
    W: np.ndarray             # float64 [keys, planes]
    V: np.ndarray             # float64 [keys, planes] (no columns without averaging)
    weight: float             # sum of n_i
    seen: float               # sum of n_i * seen_i (the averaging clocks)
    rule_state: np.ndarray    # sum of n_i * per-target rule state
    counts: np.ndarray        # int64 [targets, 2]: promotions, demotions made this round
    link_counts: np.ndarray   # int64 per key, summed (eligible_percent), or empty
    row_ids: np.ndarray       # int64 feature ids with an eligibility count ...
    row_counts: np.ndarray    # ... and the counts, summed
    stats: dict[str, int] = field(default_factory=dict)  # mistakes, updates, examples...
    #: counts are this round's to add up (the first round); later rounds carry them
    summed_counts: bool = True

    # ------------------------------------------------------------ building
    @classmethod
    def of_network(cls, arrays: dict[str, np.ndarray], header: dict[str, Any],
                   reference: np.ndarray, mixing: str, weight: float,
                   counts: np.ndarray, stats: dict[str, int],
                   counted: bool) -> Mixture:
        """One network's links (its :func:`~snowpy.network.state.network_state`),
        weighted by ``weight`` (its examples this round).

        ``reference`` is the planes a missing link counts as; ``counts`` the
        promotions and demotions made this round; ``counted``: whether the
        eligibility counts are this round's (the first) to be summed.
        """
        n_targets = len(header["labels"])
        sizes = arrays["row_sizes"].astype(np.int64)
        features = np.concatenate([[-1], arrays["feature_ids"].astype(np.int64)])
        averaging = arrays.get("link_averaging")
        seen = float(header["seen"])
        _transform(mixing)  # (an unknown mixing is refused by name)
        if mixing == "geometric" and arrays["link_weights"].size and \
                float(arrays["link_weights"].min()) <= 0:
            _transform(mixing)(arrays["link_weights"])  # (refuses signed weights)
        keys, W, V, order = table(
            features, sizes, arrays["link_targets"].astype(np.int64), arrays["link_weights"],
            averaging if averaging is not None else arrays["link_weights"][:0],
            seen, np.asarray(reference, np.float64), mixing == "geometric", float(weight),
            n_targets)
        if keys.size > 1 and not bool(np.all(keys[1:] > keys[:-1])):
            resort = np.argsort(keys, kind="stable")  # (a row's links out of target order)
            keys, W, V, order = keys[resort], W[resort], V[resort], order[resort]
        link_counts = arrays["link_counts"][order].astype(np.int64) \
            if "link_counts" in arrays else np.zeros(0, np.int64)
        if "row_counts" in arrays:
            rows = np.argsort(features)
            row_ids, row_counts = features[rows], arrays["row_counts"].astype(np.int64)[rows]
        else:
            row_ids, row_counts = np.zeros(0, np.int64), np.zeros(0, np.int64)
        return cls(keys, W, V, float(weight), weight * seen,
                   weight * np.asarray(arrays["state"], dtype=np.float64),
                   np.asarray(counts, dtype=np.int64), link_counts, row_ids, row_counts,
                   dict(stats), counted)

    # ----------------------------------------------------------- combining
    @staticmethod
    def combine(parts: list[Mixture]) -> Mixture:
        """The sum of ``parts`` (in the order given: the same order, the same bits)."""
        if not parts:
            raise ValueError("nothing to mix")
        if len(parts) == 1:
            return parts[0]
        adding = parts[0].summed_counts
        keys, W, V, link_counts = parts[0].keys, parts[0].W, parts[0].V, parts[0].link_counts
        for part in parts[1:]:  # linear merges of sorted tables, in the order given
            keys, W, V, link_counts = merge(keys, W, V, link_counts, part.keys, part.W,
                                            part.V, part.link_counts, adding)

        def counted(arrays: list[np.ndarray], index: np.ndarray, size: int) -> np.ndarray:
            """Counts per row: added up (first round) or carried (the largest)."""
            values = np.concatenate(arrays).astype(np.int64)
            if adding:
                return np.bincount(index, weights=values, minlength=size).astype(np.int64)
            out = np.zeros(size, np.int64)
            np.maximum.at(out, index, values)
            return out

        rows = np.concatenate([p.row_ids for p in parts])
        row_ids, row_where = np.unique(rows, return_inverse=True)
        row_counts = counted([p.row_counts for p in parts], row_where, row_ids.size) \
            if rows.size else np.zeros(0, np.int64)
        stats: dict[str, int] = {}
        for part in parts:
            for name, value in part.stats.items():
                stats[name] = stats.get(name, 0) + int(value)
        return Mixture(
            keys, W, V,
            sum(p.weight for p in parts), sum(p.seen for p in parts),
            np.sum([p.rule_state for p in parts], axis=0),
            np.sum([p.counts for p in parts], axis=0), link_counts, row_ids, row_counts,
            stats, adding)

    @property
    def nbytes(self) -> int:
        """Bytes of its arrays (what moving it between workers costs, give or take)."""
        return sum(a.nbytes for a in (self.keys, self.W, self.V, self.rule_state, self.counts,
                                      self.link_counts, self.row_ids, self.row_counts))

    # ------------------------------------------------------------ the result
    def state(self, start: tuple[dict[str, Any], dict[str, np.ndarray]],
              reference: np.ndarray, mixing: str
              ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The mixed network as a header and arrays, from the round's ``start``.

        Per-round figures (mistakes, updates, examples, clamped updates) add to
        the start's; the averaging clock is the weighted mean of the shards'.
        """
        header, arrays = copy.deepcopy(start[0]), dict(start[1])
        n_targets = len(header["labels"])
        inverse = _inverse(mixing)
        total = self.weight if self.weight > 0 else 1.0
        with np.errstate(over="ignore", under="ignore"):
            W = inverse(self.W / total + _transform(mixing)(reference))
            V = inverse(self.V / total + _transform(mixing)(reference)) if self.V.shape[1] \
                else None
        features = self.keys // n_targets - 1
        targets = (self.keys - (features + 1) * n_targets).astype(np.int32)
        link_rows, sizes = np.unique(features, return_counts=True)
        if link_rows.size == 0 or link_rows[0] != -1:  # the bias row is always there
            link_rows = np.concatenate([[-1], link_rows])
            sizes = np.concatenate([[0], sizes])
        rows = link_rows
        if self.row_ids.size:
            rows = np.union1d(link_rows, self.row_ids)
        row_sizes = np.zeros(rows.size, np.int32)
        row_sizes[np.searchsorted(rows, link_rows)] = sizes
        seen = int(round(self.seen / total))
        dtype, _, limit = PRECISIONS[header["links"]["precision"]]
        arrays.update(
            feature_ids=rows[1:].astype(np.int64), row_sizes=row_sizes,
            link_targets=targets,
            link_weights=np.clip(W, -limit, limit).astype(dtype),
            state=self.rule_state / total if self.rule_state.size else self.rule_state,
            promotions=arrays["promotions"] + self.counts[:, 0],
            demotions=arrays["demotions"] + self.counts[:, 1],
        )
        if V is not None:
            arrays["link_averaging"] = np.clip(seen * (W - V), -limit, limit).astype(dtype)
        if self.link_counts.size or "link_counts" in arrays:
            arrays["link_counts"] = (self.link_counts if self.link_counts.size else
                                     np.zeros(targets.size, np.int64)).astype(np.int32)
        if self.row_ids.size or "row_counts" in arrays:
            counts = np.zeros(rows.size, np.int64)
            if self.row_ids.size:
                counts[np.searchsorted(rows, self.row_ids)] = self.row_counts
            arrays["row_counts"] = counts.astype(np.int32)
        stats = header["stats"]
        stats["mistakes"] = list(stats["mistakes"]) + [int(self.stats.get("mistakes", 0))]
        stats["updates"] = list(stats["updates"]) + [int(self.stats.get("updates", 0))]
        for name in ("n_examples_seen", "overflows", "underflows"):
            stats[name] = int(stats.get(name, 0)) + int(self.stats.get(name, 0))
        header["seen"] = seen
        return header, arrays


def _transform(mixing: str) -> Any:
    if mixing == "arithmetic":
        return lambda values: values
    if mixing == "geometric":
        def log(values: np.ndarray) -> np.ndarray:
            values = np.asarray(values, dtype=np.float64)
            if values.size and values.min() <= 0:
                raise ConfigurationError(
                    "geometric mixing averages logarithms of weights and needs every weight "
                    "positive (Winnow, Balanced Winnow); this rule's are not: use "
                    "mixing='arithmetic'")
            return np.log(values)
        return log
    raise ConfigurationError(f"mixing must be one of {', '.join(MIXING)}, got {mixing!r}")


def _inverse(mixing: str) -> Any:
    return (lambda values: values) if mixing == "arithmetic" else np.exp
