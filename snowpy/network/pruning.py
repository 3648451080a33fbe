"""Pruning a trained network's links: SNoW's eligibility by percent and discarding.

``eligibility="percent:p"`` keeps, per target, the links of its most active features;
``discard`` drops links whose weight is negligible. :meth:`snowpy.Network.fit`
applies them (after its first epoch and at its end); :meth:`snowpy.Network.prune`
applies both on demand.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy.network.options import eligibility_of
from snowpy.network.refreshing import ensure_fresh

__all__ = ["discard", "keep_top_percent", "prune"]


def prune(net: Any) -> int:
    """``eligibility="percent:p"`` then ``discard``; returns the links dropped."""
    dropped = keep_top_percent(net) if eligibility_of(net.eligibility).percent else 0
    return dropped + discard(net)


def discard(net: Any) -> int:
    """Drop the links ``discard`` calls negligible; returns how many.

    Negligible: the link's prediction weight differs from a missing link's by
    less than ``discard`` times the rule's initial effective weight, or, for
    rules whose weights start at 0 or are derived (Naive Bayes'
    log-probabilities), times the mean difference from a missing link's of the link
    weights that differ from it. The bias is kept.
    """
    if net.discard is None:
        return 0
    ensure_fresh(net)  # (a rule's derived weights, as prediction would see them)
    store = net.state_.store
    initial = abs(net.kernel_.initial_effective_weight)
    if initial > 0 and net.kernel_.refresh is None:
        scale = initial
    else:  # the links that moved: a link still at the missing weight (links="all" has
        #    one per feature seen) says nothing of the scale, and must not lower it
        moved = np.abs(net.effective_links().data - store.absent)
        moved = moved[moved > 0]
        scale = float(moved.mean()) if moved.size else 0.0
    net.state_.cache.invalidate()
    return store.prune(threshold=float(net.discard) * scale, averaged=bool(net.average))


def keep_top_percent(net: Any) -> int:
    """Keep, per target, the links of its ``p`` percent most active features
    (``eligibility="percent:p"``).

    Activity is the link's count of positive examples (``links="positive"``);
    ties at the cut are kept. Returns the links dropped.
    """
    store = net.state_.store
    positions = store.live_slots()
    targets = store.target[positions]
    counts = store.lcount[positions]
    keep = np.zeros(store.target.shape[0], dtype=bool)
    share = float(eligibility_of(net.eligibility).percent or 100.0) / 100.0
    order = np.lexsort((-counts, targets))
    bounds = np.searchsorted(targets[order], np.arange(store.n_targets + 1))
    for t in range(store.n_targets):
        members = order[bounds[t]:bounds[t + 1]]
        if members.size == 0:
            continue
        quota = max(1, int(np.ceil(share * members.size)))
        floor = counts[members[quota - 1]]
        keep[positions[members[counts[members] >= floor]]] = True
    dropped = store.prune(keep)
    net.state_.cache.invalidate()
    return dropped
