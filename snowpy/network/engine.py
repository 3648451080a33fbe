"""The training epoch: one compiled loop over a CSR matrix and the link pool.

:func:`run_epoch` takes the rule's ``update`` kernel as a first-class
function: a C callback of one fixed signature
(:data:`snowpy.records.rules.KERNEL_SIGNATURE`), passed by its address
(:func:`~snowpy.records.kernels.kernel_handle`), which costs a call nothing. One compiled loop therefore
serves every rule, built-in or third-party, at the same speed, with no Python
or pluggy call per example, and it is cached on disk, so a new process does
not compile it again. (Passing the kernel as a dispatcher instead, the
pattern pynndescent uses, specialises the loop per rule but makes it
uncacheable: numba keys such caches by an identity that changes in every
process, numba issues #2956 and #6264.)

Per example ``i`` (in the order given):

1. gather the active rows and strengths, the bias first (with its strength)
   when on; count the rows' activity when eligibility needs it (SNoW ``-e``);
   a row is *eligible* once its count reaches ``min_count``;
2. the activation of every target from its links: ``absent * sum_k v_k +
   sum_k v_k * sum_{links of r_k} (w - absent)``, where ``absent`` is the
   effective weight of a missing link (0 for ``POSITIVE``, the initial
   effective weight otherwise);
3. the network's prediction before learning (winner-take-all over the
   allowed targets, or for multi-label networks every target at or above
   ``theta``) and whether it was a mistake;
4. create links (SNoW's sparse network): with ``POSITIVE`` every eligible
   active row is linked to each target the example is positive for, with
   ``ALL`` to every target it is shown to; a new link's initial weight joins
   the target's activation from here on (the prediction was made without
   it: the example's label must not leak into it);
5. for every allowed target, SNoW's test: a positive example needs
   ``activation >= theta + thickness``, a negative one ``activation < theta -
   negative_thickness``; otherwise the target's weights on the example's
   eligible rows are gathered (a missing link at its initial weights with
   ``TOUCHED``; skipped with ``POSITIVE``) and the rule's kernel updates them.
   With ``constraint`` (SNoW's constraint classification, ``-O +``) the test
   is relative: every other allowed target whose activation is at least the
   true target's minus the thickness is demoted, and the true target
   promoted once if there was any;
6. the updated weights are checked and written back: magnitudes clamped into
   ``[min_magnitude, max_magnitude]`` (a multiplicative rule's weight that
   reached zero is raised to the floor: an underflow), counted, never
   silent; NaN stops the epoch. ``TOUCHED`` creates the link of a weight the
   update changed. Averaged weights are kept with the usual trick ``U +=
   c * delta``, so that the average is ``W - U / c``.

Nothing is searched for. A dense row (linked to every target, in target
order: :mod:`snowpy.network.blocks`) holds target ``t``'s link at offset
``t``, and is scored as a plain vector. The links of the other rows that
belong to the targets an example needs (those that get links, and those an
update calls for) are threaded onto a list per target (``head[t]``,
``nxt[q]``) in one pass, so creating a target's missing links and gathering
its weights walk that target's links of the example and nothing else. Links
are appended to their row's block and keep their offset in it, so the lists
stay valid when a block moves; a block completed out of order is sorted
after the example.

The pool must have room for the links an example may create; when it has
not, the epoch stops before that example and reports the room it needs (the
last of :data:`RESULT_FIELDS`): the caller grows the pool and continues from
there.
"""

from __future__ import annotations

import numpy as np

from snowpy._jit import jit
from snowpy.network.blocks import DENSE_SHARE, USED, append_link, densify, leaf
from snowpy.records.kernels import as_kernel

__all__ = ["ALL", "POLICIES", "POSITIVE", "RESULT_FIELDS", "SIGNED", "TOUCHED", "epoch_loop",
           "new_workspace", "run_epoch"]

#: Link policies (``links=`` of :class:`snowpy.Network`), as the engine numbers them.
POSITIVE = 0
TOUCHED = 1
ALL = 2
SIGNED = 3
POLICIES = {"positive": POSITIVE, "touched": TOUCHED, "all": ALL, "signed": SIGNED}

#: What :func:`run_epoch` returns, in order.
RESULT_FIELDS = ("processed", "mistakes", "updates", "overflows", "underflows", "nonfinite",
                 "seen", "need_room")


@jit(inline="always")
def _plane_sum(W, j, planes, kind):  # pragma: no cover - compiled
    if kind == 1:
        return W[j, 0]
    if kind == 2:
        return W[j, 0] - W[j, 1]
    total = 0.0
    for p in range(planes.shape[0]):
        total += planes[p] * W[j, p]
    return total


@jit
def new_workspace(max_active, n_targets, n_planes, W, queue):  # pragma: no cover - compiled
    """The scratch arrays of :func:`epoch_loop`, for examples of up to ``max_active``
    features and ``n_targets`` targets, with ``queue`` entries of link lists (a
    tuple; the last item is its clock)."""
    a = max_active + 1
    q = queue
    return (np.empty(a, np.int64), np.empty(a, np.float64), np.empty(a, np.bool_),
            np.empty(a, np.bool_), np.zeros(a, np.bool_), np.zeros(a, np.int64),
            np.empty(a, np.int64), np.empty((a, n_planes), np.float64), np.empty(a, np.float64),
            np.empty(a, np.int64), np.empty(a, np.int64), np.empty(n_planes, np.float64),
            np.empty(n_planes, np.float64), np.empty(n_targets, np.float64),
            np.zeros(n_targets, np.int64), np.zeros(n_targets, np.int64),
            np.empty(n_targets, np.int64), np.zeros(n_targets, np.int64),
            np.zeros(n_targets, np.int64), np.empty(q, np.int64), np.empty(q, np.int64),
            np.empty(q, np.int64), np.empty(2 * n_planes, W.dtype),
            np.empty(n_planes, np.float64), np.empty(n_planes, np.float64),
            np.zeros(2, np.int64))


@jit
def run_epoch(kernel, start, size, cap, count, dense_rows, target, W, U, lcount, meta, S,
              planes, params, init_w, absent_w, policy, min_count,
              counting, creating, multiplicative, min_magnitude, max_magnitude, indptr, rows,
              vals, order, y_indptr, y_targets, a_indptr, a_targets, theta, pos_thickness,
              neg_thickness, bias, multilabel, constraint, seen, counts, max_active,
              scores):  # pragma: no cover - compiled; covered by the NUMBA_DISABLE_JIT run
    """Train for one pass over ``order``; returns the figures of :data:`RESULT_FIELDS`.

    ``start, size, cap, count, dense_rows`` describe each feature row's block
    (``count`` is empty unless ``min_count > 1``); ``target, W, U, lcount,
    meta`` hold the links (``U`` empty unless averaging, ``lcount`` empty
    unless link counts are kept). Arrays, not tuples of them: numba types a
    tuple argument in Python, microseconds a call. When ``scores``
    has rows, ``scores[pos, t]`` receives target ``t``'s score (activation
    minus ``theta``) for the ``pos``-th example of ``order`` *before* learning
    from it, from the averaged weights when averaging (progressive validation).
    ``max_active``: the most features an example of ``order`` has.
    """
    queue = 16 * (max_active + 1)
    ws = new_workspace(max_active, counts.shape[0], planes.shape[0], W, queue)
    done = mistakes = updates = overflows = underflows = 0
    recording = scores.shape[0] > 0
    while True:
        rest = scores[done:] if recording else scores
        r = epoch_loop(kernel, start, size, cap, count, dense_rows, target, W, U, lcount, meta,
                       S, planes, params, init_w, absent_w, policy, min_count, counting,
                       creating, multiplicative, min_magnitude, max_magnitude, indptr, rows,
                       vals, order[done:], y_indptr, y_targets, a_indptr, a_targets, theta,
                       pos_thickness, neg_thickness, bias, multilabel, constraint, seen, counts,
                       rest, ws)
        done += r[0]
        mistakes += r[1]
        updates += r[2]
        overflows += r[3]
        underflows += r[4]
        seen = r[6]
        if r[8] == 0 or r[5]:
            return done, mistakes, updates, overflows, underflows, r[5], seen, r[7]
        queue = 2 * r[8]  # an example with more links than the lists had room for
        ws = new_workspace(max_active, counts.shape[0], planes.shape[0], W, queue)


@leaf
def epoch_loop(kernel, start, size, cap, count, dense_rows, target, W, U, lcount, meta, S,
               planes, params, init_w, absent_w, policy, min_count,
               counting, creating, multiplicative, min_magnitude, max_magnitude, indptr, rows,
               vals, order, y_indptr, y_targets, a_indptr, a_targets, theta, pos_thickness,
               neg_thickness, bias, multilabel, constraint, seen, counts, scores,
               ws):  # pragma: no cover - compiled; covered by the NUMBA_DISABLE_JIT run
    """:func:`run_epoch` in a workspace from :func:`new_workspace`, large enough for
    every example of ``order`` and every target. A workspace serves call after call
    (the one-example path keeps one): its clock numbers the examples and the target
    visits across calls, so that its stamps are never cleared.

    It allocates nothing (a :func:`~snowpy.network.blocks.leaf`: no reference
    counting of its sixty arrays, a microsecond a call): when an example's link
    lists need more room than the workspace's queue, it stops before that
    example and returns the room needed as a ninth figure (0 otherwise).
    """
    update = as_kernel(kernel)  # the rule's kernel, from its address
    n_targets = counts.shape[0]
    n_planes = planes.shape[0]
    kind = 0
    if n_planes == 1 and planes[0] == 1.0:
        kind = 1
    elif n_planes == 2 and planes[0] == 1.0 and planes[1] == -1.0:
        kind = 2
    restricted = a_indptr.shape[0] > 0
    averaging = U.shape[0] > 0
    counting_rows = count.shape[0] > 0 and counting
    counting_links = lcount.shape[0] > 0 and counting
    (row_buf, val_buf, eligible, dense, grown, kmark, open_k, wbuf, vbuf, kbuf, jbuf, new_w,
     new_u, acc, stamp, allowed_stamp, head, listed, needed, qk, qo, nxt, stored, init_local,
     absent_local, clock) = ws
    # initial and absent weights as the pool stores them (rounded when float32)
    for p in range(n_planes):
        stored[p] = init_w[p]
        stored[n_planes + p] = absent_w[p]
    init_w = init_local
    absent_w = absent_local
    absent = 0.0
    initial = 0.0
    for p in range(n_planes):
        init_w[p] = stored[p]
        absent_w[p] = stored[n_planes + p]
        absent += planes[p] * absent_w[p]
        initial += planes[p] * init_w[p]
    capacity = target.shape[0]
    dense_at = max(1, int(DENSE_SHARE * n_targets + 0.5))
    dense_room = n_targets
    qcap = qk.shape[0]
    recording = scores.shape[0] > 0
    mistakes = 0
    updates = 0
    overflows = 0
    underflows = 0
    first_mark = clock[0]  # marks and tags go on from the workspace's last call
    tag = clock[1]
    for pos in range(order.shape[0]):
        i = order[pos]
        mark = first_mark + pos + 1
        clock[0] = mark  # (kept current: every return leaves the clock past what it used)
        clock[1] = tag
        m = 0
        if bias != 0.0:
            row_buf[0] = 0
            val_buf[0] = bias
            m = 1
        for j in range(indptr[i], indptr[i + 1]):
            row_buf[m] = rows[j]
            val_buf[m] = vals[j]
            m += 1
        if restricted:
            lo = a_indptr[i]
            n_allowed = a_indptr[i + 1] - lo
        else:
            lo = 0
            n_allowed = n_targets
        n_positive = y_indptr[i + 1] - y_indptr[i]
        for j in range(y_indptr[i], y_indptr[i + 1]):
            stamp[y_targets[j]] = mark
        linked = 0
        vsum = 0.0
        for k in range(m):
            r = row_buf[k]
            dense[k] = dense_rows[r] == 1
            linked += 2 * dense_room if dense[k] else size[r]
            vsum += val_buf[k]
            grown[k] = False
            eligible[k] = True
        fan = n_allowed if policy == ALL else n_positive
        # --- room for the links this example may create, and for its link lists
        if policy == TOUCHED or policy == SIGNED or creating:
            need = 4 * (linked + m * (n_allowed if policy != POSITIVE else n_positive))
            if meta[USED] + need > capacity:
                clock[1] = tag
                return pos, mistakes, updates, overflows, underflows, 0, seen, need, 0
        if linked + m * fan + 1 > qcap:
            clock[1] = tag
            return pos, mistakes, updates, overflows, underflows, 0, seen, 0, linked + m * fan + 1
        # --- a new row about to link half the targets or more starts dense (no list
        #     refers to it yet)
        if creating and policy == ALL and fan >= dense_at:
            for k in range(m):
                r = row_buf[k]
                if size[r] == 0 and not dense[k] and meta[USED] + dense_room <= capacity:
                    densify(r, n_targets, start, size, cap, dense_rows, target, W, U, lcount,
                            meta, absent_w)
                    dense[k] = True
        # --- eligibility (SNoW -e): rows count their activity
        if min_count > 1:
            for k in range(m):
                r = row_buf[k]
                if counting_rows and r > 0 and count[r] < 2147483647:
                    count[r] += 1
                eligible[k] = r == 0 or count[r] >= min_count
        # --- activations (flat loops per kind of planes: a dense row is a vector)
        for t in range(n_targets):
            acc[t] = absent * vsum
        if kind == 1:
            for k in range(m):
                r = row_buf[k]
                v = val_buf[k]
                first = start[r]
                if dense[k]:
                    for t in range(min(cap[r], n_targets)):
                        acc[t] += v * (W[first + t, 0] - absent)
                else:
                    for j in range(first, first + size[r]):
                        acc[target[j]] += v * (W[j, 0] - absent)
        elif kind == 2:
            for k in range(m):
                r = row_buf[k]
                v = val_buf[k]
                first = start[r]
                if dense[k]:
                    for t in range(min(cap[r], n_targets)):
                        acc[t] += v * (W[first + t, 0] - W[first + t, 1] - absent)
                else:
                    for j in range(first, first + size[r]):
                        acc[target[j]] += v * (W[j, 0] - W[j, 1] - absent)
        else:
            for k in range(m):
                r = row_buf[k]
                v = val_buf[k]
                if dense[k]:
                    for t in range(min(cap[r], n_targets)):
                        acc[t] += v * (_plane_sum(W, start[r] + t, planes, 0) - absent)
                else:
                    for j in range(start[r], start[r] + size[r]):
                        acc[target[j]] += v * (_plane_sum(W, j, planes, 0) - absent)
        if recording:
            for t in range(n_targets):
                scores[pos, t] = acc[t] - theta
            if averaging and seen > 0:  # the averaged weights' score, as predict sees it
                for k in range(m):
                    r = row_buf[k]
                    v = val_buf[k] / seen
                    if dense[k]:  # holes hold no averaging sum
                        for t in range(min(cap[r], n_targets)):
                            scores[pos, t] -= v * _plane_sum(U, start[r] + t, planes, 0)
                    else:
                        for j in range(start[r], start[r] + size[r]):
                            scores[pos, target[j]] -= v * _plane_sum(U, j, planes, 0)
        # --- the prediction before learning
        if n_allowed > 0:
            wrong = False
            if multilabel:
                for c in range(n_allowed):
                    t = a_targets[lo + c] if restricted else c
                    if (acc[t] >= theta) != (stamp[t] == mark):
                        wrong = True
                        break
            else:
                best = -1
                for c in range(n_allowed):
                    t = a_targets[lo + c] if restricted else c
                    if best < 0 or acc[t] > acc[best]:
                        best = t
                wrong = stamp[best] != mark
            if wrong:
                mistakes += 1
        # --- the targets that need their links of this example: those that may get
        #     links, and those whose activation calls for an update
        tag += 1
        wanted = 0
        creating_now = creating and policy != TOUCHED
        if creating_now:
            if restricted:
                for c in range(n_allowed):
                    allowed_stamp[a_targets[lo + c]] = mark
            for c in range(fan):
                if policy == ALL:
                    t = a_targets[lo + c] if restricted else c
                else:
                    t = y_targets[y_indptr[i] + c]
                    if restricted and allowed_stamp[t] != mark:
                        continue
                if needed[t] != tag:
                    needed[t] = tag
                    wanted += 1
        for c in range(n_allowed):
            t = a_targets[lo + c] if restricted else c
            if needed[t] == tag:
                continue
            if constraint:
                calls = True  # decided below, against the true target's activation
            elif stamp[t] == mark:
                calls = acc[t] < theta + pos_thickness
            else:
                calls = acc[t] >= theta - neg_thickness
            if calls:
                needed[t] = tag
                wanted += 1
        q = 0
        if wanted > 0:
            for k in range(m):
                if dense[k]:
                    continue  # target t's link is at offset t
                r = row_buf[k]
                first = start[r]
                for off in range(size[r]):
                    t = target[first + off]
                    if needed[t] != tag:
                        continue
                    qk[q] = k
                    qo[q] = off
                    if listed[t] == mark:
                        nxt[q] = head[t]
                    else:
                        nxt[q] = -1
                        listed[t] = mark
                    head[t] = q
                    q += 1
        # --- link creation (SNoW's sparse network), after the prediction: the new
        #     links, at their initial weights, join the activation the updates see
        if creating_now:
            for p in range(n_planes):
                new_w[p] = init_w[p]
                new_u[p] = seen * (init_w[p] - absent_w[p]) if averaging else 0.0
            n_open = 0  # the rows that may lack a link: not linked to every target
            for k in range(m):
                if not (dense[k] and size[row_buf[k]] >= n_targets) and eligible[k]:
                    open_k[n_open] = k
                    n_open += 1
            for c in range(fan):
                if policy == ALL:
                    t = a_targets[lo + c] if restricted else c
                else:
                    t = y_targets[y_indptr[i] + c]
                    if restricted and allowed_stamp[t] != mark:
                        continue
                tag += 1
                if listed[t] == mark:
                    e = head[t]
                    while e >= 0:
                        kmark[qk[e]] = tag
                        if counting_links:
                            lcount[start[row_buf[qk[e]]] + qo[e]] += 1
                        e = nxt[e]
                if counting_links:  # links of complete rows are counted here
                    for k in range(m):
                        if dense[k] and size[row_buf[k]] >= n_targets:
                            lcount[start[row_buf[k]] + t] += 1
                for o in range(n_open):
                    k = open_k[o]
                    r = row_buf[k]
                    if dense[k]:
                        j = start[r] + t
                        if t < cap[r] and target[j] == t:
                            if counting_links:
                                lcount[j] += 1
                            continue
                        j = append_link(r, t, start, size, cap, dense_rows, target, W, U,
                                        lcount, meta, new_w, new_u, absent_w)
                        if counting_links:
                            lcount[j] += 1
                        acc[t] += val_buf[k] * (initial - absent)
                        continue  # a dense row's link is found at offset t: not listed
                    if kmark[k] == tag:
                        continue
                    j = append_link(r, t, start, size, cap, dense_rows, target, W, U, lcount,
                                    meta, new_w, new_u, absent_w)
                    grown[k] = True
                    if counting_links:
                        lcount[j] += 1
                    acc[t] += val_buf[k] * (initial - absent)
                    qk[q] = k
                    qo[q] = j - start[r]
                    if listed[t] == mark:
                        nxt[q] = head[t]
                    else:
                        nxt[q] = -1
                        listed[t] = mark
                    head[t] = q
                    q += 1
        true_score = 0.0
        violated = False
        if constraint:
            for j in range(y_indptr[i], y_indptr[i + 1]):
                true_score = acc[y_targets[j]]
            for c in range(n_allowed):
                t = a_targets[lo + c] if restricted else c
                if stamp[t] != mark and acc[t] >= true_score - pos_thickness:
                    violated = True
                    break
        # --- updates
        for c in range(n_allowed):
            t = a_targets[lo + c] if restricted else c
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
            tag += 1
            g = 0
            sqnorm = 0.0
            for k in range(m):  # dense rows: the link is at offset t
                if dense[k]:
                    j = start[row_buf[k]] + t
                    if t >= cap[row_buf[k]] or target[j] != t:
                        continue  # a hole: a missing link
                    for p in range(n_planes):
                        wbuf[g, p] = W[j, p]
                    kmark[k] = tag
                    jbuf[g] = j
                    kbuf[g] = k
                    vbuf[g] = val_buf[k]
                    sqnorm += val_buf[k] * val_buf[k]
                    g += 1
            if listed[t] == mark:
                e = head[t]
                while e >= 0:
                    k = qk[e]
                    j = start[row_buf[k]] + qo[e]
                    for p in range(n_planes):
                        wbuf[g, p] = W[j, p]
                    kmark[k] = tag
                    jbuf[g] = j
                    kbuf[g] = k
                    vbuf[g] = val_buf[k]
                    sqnorm += val_buf[k] * val_buf[k]
                    g += 1
                    e = nxt[e]
            if policy == TOUCHED or (policy == SIGNED and y < 0):
                for k in range(m):
                    if not eligible[k] or kmark[k] == tag:
                        continue
                    for p in range(n_planes):
                        wbuf[g, p] = init_w[p]
                    jbuf[g] = -1
                    kbuf[g] = k
                    vbuf[g] = val_buf[k]
                    sqnorm += val_buf[k] * val_buf[k]
                    g += 1
            if g == 0:
                continue
            update(wbuf, S, t, y, acc[t], vbuf, g, sqnorm, params)
            for h in range(g):
                for p in range(n_planes):
                    w = wbuf[h, p]
                    if w != w:
                        clock[1] = tag
                        return pos, mistakes, updates, overflows, underflows, 1, seen, 0, 0
                    magnitude = abs(w)
                    if multiplicative and w <= 0.0:
                        w = min_magnitude
                        underflows += 1
                    elif magnitude > max_magnitude:
                        w = max_magnitude if w > 0 else -max_magnitude
                        overflows += 1
                    elif magnitude < min_magnitude and w != 0.0:
                        w = min_magnitude if w > 0 else -min_magnitude
                        underflows += 1
                    wbuf[h, p] = w
                j = jbuf[h]
                if j >= 0:
                    for p in range(n_planes):
                        old = W[j, p]
                        W[j, p] = wbuf[h, p]
                        if averaging:
                            U[j, p] += seen * (W[j, p] - old)
                    continue
                # a missing link the update reached: TOUCHED links a weight the update
                # changed; SIGNED one a demotion took below a missing link's weight
                if policy == TOUCHED:
                    changed = False
                    for p in range(n_planes):
                        if wbuf[h, p] != init_w[p]:
                            changed = True
                else:
                    moved = 0.0
                    for p in range(n_planes):
                        moved += planes[p] * wbuf[h, p]
                    changed = moved < absent
                if changed:
                    k = kbuf[h]
                    j = append_link(row_buf[k], t, start, size, cap, dense_rows, target, W, U,
                                    lcount, meta, wbuf[h], new_u, absent_w)
                    grown[k] = True
                    if averaging:
                        for p in range(n_planes):
                            U[j, p] = seen * (W[j, p] - (init_w[p] if policy == TOUCHED
                                                         else absent_w[p]))
            if y > 0:
                counts[t, 0] += 1
            else:
                counts[t, 1] += 1
            updates += 1
        # --- rows that link half the targets are laid out densely (when the pool has
        #     the room now; else at a later example)
        for k in range(m):
            if grown[k] and not dense[k]:
                r = row_buf[k]
                if size[r] >= dense_at and meta[USED] + dense_room <= capacity:
                    densify(r, n_targets, start, size, cap, dense_rows, target, W, U, lcount,
                            meta, absent_w)
        seen += 1
    clock[1] = tag
    return order.shape[0], mistakes, updates, overflows, underflows, 0, seen, 0, 0
