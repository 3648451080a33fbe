"""The training epoch: one compiled loop over a CSR matrix.

:func:`run_epoch` takes the rule's ``update`` kernel as a first-class
function: a C callback of one fixed signature
(:data:`snowpy.rules.spec.KERNEL_SIGNATURE`). One compiled loop therefore
serves every rule, built-in or third-party, at the same speed, with no Python
or pluggy call per example, and it is cached on disk, so a new process does
not compile it again. (Passing the kernel as a dispatcher instead, the
pattern pynndescent uses, specialises the loop per rule but makes it
uncacheable: numba keys such caches by an identity that changes in every
process, numba issues #2956 and #6264; that cost about a second per rule per
process.)

Per example ``i`` (in the order given):

1. gather the active rows and strengths, the bias first (with its strength)
   when on;
2. the activation of every target, ``sum_k v_k * sum_p c_p W[r_k, p, t]``;
3. the network's prediction before learning (winner-take-all over the allowed
   targets, or for multi-label networks every target at or above ``theta``)
   and whether it was a mistake;
4. for every allowed target, SNoW's test: a positive example needs
   ``activation >= theta + thickness``, a negative one ``activation < theta -
   negative_thickness``; otherwise the rule's kernel updates the target.
   With ``constraint`` (SNoW's constraint classification, ``-O +``; single
   label only) the test is relative instead: every other allowed target
   whose activation is at least the true target's minus the thickness (a tie
   included) is demoted, and the true target promoted once if there was any;
5. the updated weights are checked: magnitudes are clamped into
   ``[MIN_MAGNITUDE, MAX_MAGNITUDE]`` (overflows and underflows counted apart,
   never silent), NaN stops the epoch; averaged weights are kept with the usual trick
   ``U += c * delta`` so that the average is ``W - U / c``.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["run_epoch", "MIN_MAGNITUDE", "MAX_MAGNITUDE"]

#: Smallest non-zero weight magnitude kept; smaller magnitudes are raised to it.
MIN_MAGNITUDE = 1e-100
#: Largest weight magnitude kept; larger ones are lowered to it.
MAX_MAGNITUDE = 1e100


@numba.njit(nogil=True, cache=True)
def run_epoch(
    update,
    W,
    S,
    planes,
    params,
    indptr,
    rows,
    vals,
    order,
    y_indptr,
    y_targets,
    a_indptr,
    a_targets,
    theta,
    pos_thickness,
    neg_thickness,
    bias,
    multilabel,
    constraint,
    U,
    seen,
    counts,
    max_active,
    scores,
):  # pragma: no cover - compiled; covered by the NUMBA_DISABLE_JIT test run
    """Train for one pass over ``order`` and return the epoch's figures.

    Returns
    -------
    mistakes : int
        Examples the network got wrong before learning from them.
    updates : int
        Target updates made.
    overflows, underflows : int
        Weights whose magnitude was lowered to ``MAX_MAGNITUDE`` or raised to
        ``MIN_MAGNITUDE``.
    nonfinite : int
        1 when the kernel produced NaN (the epoch stopped there), else 0.
    seen : int
        ``seen`` plus the number of examples processed (averaging clock).

    When ``scores`` has rows, ``scores[pos, t]`` receives target ``t``'s score
    (activation minus ``theta``) for the ``pos``-th example of ``order``
    *before* learning from it, from the averaged weights when averaging
    (progressive validation, for calibration).
    """
    n_targets = W.shape[2]
    n_planes = W.shape[1]
    restricted = a_indptr.shape[0] > 0
    averaging = U.shape[0] > 0
    single = n_planes == 1 and planes[0] == 1.0
    balanced = n_planes == 2 and planes[0] == 1.0 and planes[1] == -1.0
    row_buf = np.empty(max_active + 1, np.int64)
    val_buf = np.empty(max_active + 1, np.float64)
    old = np.empty((max_active + 1) * n_planes, np.float64)
    acc = np.empty(n_targets, np.float64)
    stamp = np.zeros(n_targets, np.int64)
    recording = scores.shape[0] > 0
    mistakes = 0
    updates = 0
    overflows = 0
    underflows = 0
    for pos in range(order.shape[0]):
        i = order[pos]
        mark = pos + 1
        m = 0
        if bias != 0.0:
            row_buf[0] = 0
            val_buf[0] = bias
            m = 1
        for j in range(indptr[i], indptr[i + 1]):
            row_buf[m] = rows[j]
            val_buf[m] = vals[j]
            m += 1
        sqnorm = 0.0
        for k in range(m):
            sqnorm += val_buf[k] * val_buf[k]
        for t in range(n_targets):
            acc[t] = 0.0
        if single:
            for k in range(m):
                r = row_buf[k]
                v = val_buf[k]
                for t in range(n_targets):
                    acc[t] += v * W[r, 0, t]
        elif balanced:
            for k in range(m):
                r = row_buf[k]
                v = val_buf[k]
                for t in range(n_targets):
                    acc[t] += v * (W[r, 0, t] - W[r, 1, t])
        else:
            for k in range(m):
                r = row_buf[k]
                for p in range(n_planes):
                    cv = planes[p] * val_buf[k]
                    if cv != 0.0:
                        for t in range(n_targets):
                            acc[t] += cv * W[r, p, t]
        if recording:
            for t in range(n_targets):
                scores[pos, t] = acc[t] - theta
            if averaging and seen > 0:  # the averaged weights' score, as predict sees it
                for k in range(m):
                    r = row_buf[k]
                    for p in range(n_planes):
                        cv = planes[p] * val_buf[k] / seen
                        if cv != 0.0:
                            for t in range(n_targets):
                                scores[pos, t] -= cv * U[r, p, t]
        for j in range(y_indptr[i], y_indptr[i + 1]):
            stamp[y_targets[j]] = mark
        if restricted:
            lo = a_indptr[i]
            n_allowed = a_indptr[i + 1] - lo
        else:
            lo = 0
            n_allowed = n_targets
        if n_allowed > 0:
            wrong = False
            if multilabel:
                for q in range(n_allowed):
                    t = a_targets[lo + q] if restricted else q
                    if (acc[t] >= theta) != (stamp[t] == mark):
                        wrong = True
                        break
            else:
                best = -1
                for q in range(n_allowed):
                    t = a_targets[lo + q] if restricted else q
                    if best < 0 or acc[t] > acc[best]:
                        best = t
                wrong = stamp[best] != mark
            if wrong:
                mistakes += 1
        true_score = 0.0
        violated = False
        if constraint:
            for j in range(y_indptr[i], y_indptr[i + 1]):
                true_score = acc[y_targets[j]]
            for q in range(n_allowed):
                t = a_targets[lo + q] if restricted else q
                if stamp[t] != mark and acc[t] >= true_score - pos_thickness:
                    violated = True
                    break
        for q in range(n_allowed):
            t = a_targets[lo + q] if restricted else q
            if constraint:
                if stamp[t] == mark:
                    if not violated:
                        continue
                    y = 1.0
                else:
                    if acc[t] < true_score - pos_thickness:
                        continue
                    y = -1.0
            elif stamp[t] == mark:
                if acc[t] >= theta + pos_thickness:
                    continue
                y = 1.0
            else:
                if acc[t] < theta - neg_thickness:
                    continue
                y = -1.0
            if averaging:
                for k in range(m):
                    for p in range(n_planes):
                        old[k * n_planes + p] = W[row_buf[k], p, t]
            update(W, S, t, y, acc[t], row_buf, val_buf, m, sqnorm, params)
            for k in range(m):
                r = row_buf[k]
                for p in range(n_planes):
                    w = W[r, p, t]
                    if w != w:
                        return mistakes, updates, overflows, underflows, 1, seen + pos
                    magnitude = abs(w)
                    if magnitude > MAX_MAGNITUDE:
                        W[r, p, t] = MAX_MAGNITUDE if w > 0 else -MAX_MAGNITUDE
                        overflows += 1
                    elif magnitude < MIN_MAGNITUDE and w != 0.0:
                        W[r, p, t] = MIN_MAGNITUDE if w > 0 else -MIN_MAGNITUDE
                        underflows += 1
                    if averaging:
                        U[r, p, t] += seen * (W[r, p, t] - old[k * n_planes + p])
            if y > 0:
                counts[t, 0] += 1
            else:
                counts[t, 1] += 1
            updates += 1
        seen += 1
    return mistakes, updates, overflows, underflows, 0, seen
