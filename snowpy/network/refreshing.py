"""Scoring planes derived from learned ones, for rules with a ``refresh`` (Naive Bayes).

A rule that is not a sum of independently updated weights (Naive Bayes: a
count divided by its target's total, which every example of the target
changes) keeps what it learns in planes of coefficient 0 and derives the
planes that score from them (:class:`snowpy.rules.RuleKernel`'s ``refresh``).
Batch training refreshes once at its end; one-example learning marks the
network stale, and the next prediction, save or weight view refreshes first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ensure_fresh", "refresh_planes"]


def refresh_planes(net: Any) -> None:
    """Call the rule's ``refresh`` on every live link and write the planes back."""
    net._planes_stale = False
    refresh = net.kernel_.refresh
    store = net._store
    if refresh is None or store.frozen:
        return
    live = store.live_slots()
    W = store.W[live].astype(np.float64)
    target = store.target[live].astype(np.int64)
    bias_end = store.start[0] + (store.cap[0] if store.dense[0] else store.size[0]) \
        if store.n_rows else 0
    in_bias = (live >= (store.start[0] if store.n_rows else 0)) & (live < bias_end)
    bias = np.where(in_bias, net._bias_strength(), 0.0)
    refresh(W, target, bias, store.S, net.kernel_.params)
    if not np.all(np.isfinite(W)):
        from snowpy.exceptions import NumericalError

        raise NumericalError(f"rule {net.rule!r}: refresh produced non-finite weights")
    store.W[live] = W.astype(store.W.dtype)
    net._effective_cache.clear()


def ensure_fresh(net: Any) -> None:
    """Refresh when one-example learning left the derived planes behind."""
    if getattr(net, "_planes_stale", False):
        refresh_planes(net)
