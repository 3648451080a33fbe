"""The compiled loops of a dual network: scoring and learning with support vectors.

Support vectors live in slots of fixed ``width`` (the most features an
example has): slot ``s`` holds ``sv_len[s]`` feature ids and strengths at
``sv_ids[s * width:]`` and ``sv_vals[s * width:]``, and ``alpha[s, t]`` its
coefficient for target ``t``. ``state`` holds the slots in use and, once a
budget is full, the ring position of the oldest one (the next to be replaced).
The similarity is the rule's C callback (:mod:`snowpy.records.dual`), passed
as a first-class function: one compiled loop serves every dual rule.
"""

from __future__ import annotations

import numpy as np

from snowpy._jit import jit

__all__ = ["MIN_WIDTH", "OLDEST", "USED", "dual_epoch", "dual_scores"]

#: ``state[USED]``: slots holding a support vector; ``state[OLDEST]``: the next replaced.
USED = 0
OLDEST = 1

#: The narrowest slots (features per support vector) a network starts with.
MIN_WIDTH = 16


@jit
def _score_one(sim, sv_ids, sv_vals, sv_len, width, n_sv, alpha, x_ids, x_vals, params,
               out):  # pragma: no cover - compiled
    out[:] = 0.0
    for s in range(n_sv):
        begin = s * width
        k = sim(sv_ids[begin:begin + sv_len[s]], sv_vals[begin:begin + sv_len[s]], x_ids,
                x_vals, params)
        if k != 0.0:
            for t in range(out.shape[0]):
                out[t] += alpha[s, t] * k


@jit
def dual_scores(sim, sv_ids, sv_vals, sv_len, width, n_sv, alpha, indptr, ids, vals, params,
                theta, out):  # pragma: no cover - compiled
    """``out[i, t] = sum_s alpha[s, t] K(sv_s, x_i) - theta`` for every row of a CSR."""
    row = np.empty(out.shape[1])
    for i in range(out.shape[0]):
        lo, hi = indptr[i], indptr[i + 1]
        _score_one(sim, sv_ids, sv_vals, sv_len, width, n_sv, alpha, ids[lo:hi], vals[lo:hi],
                   params, row)
        for t in range(out.shape[1]):
            out[i, t] = row[t] - theta


@jit
def dual_epoch(sim, sv_ids, sv_vals, sv_len, width, alpha, state, budget, indptr, ids, vals,
               order, y_indptr, y_targets, params, theta, pos_thickness, neg_thickness, step,
               multilabel, record):  # pragma: no cover - compiled
    """Learn the examples of ``order``; returns ``(processed, mistakes, updates, need)``.

    When ``record`` has rows, ``record[pos, t]`` receives target ``t``'s score (minus
    ``theta``) of the ``pos``-th example before learning from it (progressive
    validation, for calibration).

    ``need`` is 0 when every example was learned; otherwise the loop stopped before
    an example for want of room: ``need > 0`` is the width that example needs, ``-1``
    more slots (no budget, or a budget not yet allocated in full).
    """
    n_targets = alpha.shape[1]
    capacity = alpha.shape[0]
    scores = np.empty(n_targets)
    positive = np.zeros(n_targets, np.bool_)
    delta = np.empty(n_targets)
    mistakes = updates = 0
    for pos in range(order.shape[0]):
        i = order[pos]
        lo, hi = indptr[i], indptr[i + 1]
        m = hi - lo
        if m > width:
            return pos, mistakes, updates, m
        full = state[USED] == capacity
        if full and (budget == 0 or capacity < budget):
            return pos, mistakes, updates, -1
        _score_one(sim, sv_ids, sv_vals, sv_len, width, state[USED], alpha, ids[lo:hi],
                   vals[lo:hi], params, scores)
        if record.shape[0] > 0:
            for t in range(n_targets):
                record[pos, t] = scores[t] - theta
        for c in range(y_indptr[i], y_indptr[i + 1]):
            positive[y_targets[c]] = True
        # the prediction before learning: winner-take-all, or every target at theta
        if n_targets > 0:
            wrong = False
            if multilabel:
                for t in range(n_targets):
                    if (scores[t] >= theta) != positive[t]:
                        wrong = True
                        break
            else:
                best = 0
                for t in range(1, n_targets):
                    if scores[t] > scores[best]:
                        best = t
                wrong = not positive[best]
            if wrong:
                mistakes += 1
        # SNoW's test on every target; the failed ones get the example's coefficient
        changed = 0
        for t in range(n_targets):
            delta[t] = 0.0
            if positive[t]:
                if scores[t] < theta + pos_thickness:
                    delta[t] = step
            elif not scores[t] < theta - neg_thickness:
                delta[t] = -step
            if delta[t] != 0.0:
                changed += 1
        for c in range(y_indptr[i], y_indptr[i + 1]):
            positive[y_targets[c]] = False
        if changed:
            if full:  # the budget is full: the oldest support vector makes room
                slot = state[OLDEST]
                state[OLDEST] = (slot + 1) % capacity
            else:
                slot = state[USED]
                state[USED] += 1
            begin = slot * width
            for k in range(m):
                sv_ids[begin + k] = ids[lo + k]
                sv_vals[begin + k] = vals[lo + k]
            sv_len[slot] = m
            for t in range(n_targets):
                alpha[slot, t] = delta[t]
            updates += changed
    return order.shape[0], mistakes, updates, 0
