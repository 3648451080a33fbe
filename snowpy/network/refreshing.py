"""Scoring planes derived from learned ones, for rules with a ``refresh`` (Naive Bayes).

A rule that is not a sum of independently updated weights (Naive Bayes: a
count divided by its target's total, which every example of the target
changes) keeps what it learns in planes of coefficient 0 and derives the
planes that score from them (:class:`snowpy.rules.RuleKernel`'s ``refresh``).
Training marks the network stale (batch training also refreshes when the
examples seen reach 1, 2, 4, 8..., so that it learns from predictions of the
counts so far); the next batch prediction, save or weight view refreshes
first, exactly. A prediction of one example (``predict_one``, the progressive
validation of a stream) refreshes once the examples learned since the last
refresh reach the network's pool size over :data:`ONLINE_REFRESH_LINKS`:
every example while the network is small, and never more than that many link
updates an example on average, instead of a pass over every link per example
(20 Newsgroups as a stream: more than ten minutes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy.network.blocks import USED
from snowpy.network.options import bias_strength

__all__ = ["ONLINE_REFRESH_LINKS", "ensure_fresh", "refresh_planes"]

#: One-example predictions refresh after (pool slots / this) examples learned.
ONLINE_REFRESH_LINKS = 20_000


def refresh_planes(net: Any) -> None:
    """Call the rule's ``refresh`` on every live link and write the planes back."""
    state = net.state_
    state.planes_stale = False
    state.stale_examples = 0
    refresh = state.kernel.refresh
    store = state.store
    if refresh is None or store.frozen:
        return
    live = store.live_slots()
    W = store.W[live].astype(np.float64)
    target = store.target[live].astype(np.int64)
    bias_end = store.start[0] + (store.cap[0] if store.dense[0] else store.size[0]) \
        if store.n_rows else 0
    in_bias = (live >= (store.start[0] if store.n_rows else 0)) & (live < bias_end)
    bias = np.where(in_bias, bias_strength(net.bias), 0.0)
    refresh(W, target, bias, store.S, net.kernel_.params)
    if not np.all(np.isfinite(W)):
        from snowpy.exceptions import NumericalError

        raise NumericalError(f"rule {net.rule!r}: refresh produced non-finite weights")
    store.W[live] = W.astype(store.W.dtype)
    net.state_.cache.invalidate()


def ensure_fresh(net: Any, *, online: bool = False) -> None:
    """Refresh when training left the derived planes behind; ``online`` (a prediction
    of one example), only once enough examples were learned since the last refresh."""
    state = net.state_
    if not state.planes_stale:
        return
    if online and state.stale_examples < int(state.store.meta[USED]) // ONLINE_REFRESH_LINKS:
        return
    refresh_planes(net)
