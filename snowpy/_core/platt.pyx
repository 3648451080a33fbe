"""Platt's sigmoid fitted by Newton's method, compiled (:func:`snowpy.calibration.fit_sigmoid`).

One pass over the pairs per evaluation and no temporary array: a progressive window
refits its sigmoid every tenth of its length, a few hundred pairs at a time, where
numpy's cost per operation outweighed the arithmetic.
"""

from libc.math cimport NAN, exp, fabs, log, log1p, sqrt, tanh
from libc.stdint cimport uint8_t
from libc.stdlib cimport free, malloc


cdef double _objective(const double *s, const uint8_t *positive, Py_ssize_t n, double high,
                       double low, double a, double b, double *ex) noexcept nogil:
    """``sum t z + log(1 + exp(-z))`` over the pairs, ``z = a s + b``, ``t`` Platt's
    smoothed target; written so that it never overflows. ``ex[i]`` receives
    ``exp(-|z_i|)``, which the gradient at the same ``(a, b)`` reads again."""
    cdef double total = 0.0
    cdef double z, t, e
    cdef Py_ssize_t i
    for i in range(n):
        z = a * s[i] + b
        t = high if positive[i] else low
        ex[i] = exp(-fabs(z))
        e = log1p(ex[i])
        total += (t * z + e) if z >= 0 else ((t - 1.0) * z + e)
    return total


def fit(const double[::1] scores, const uint8_t[::1] positive, double start_a,
        double start_b, bint warm, int max_iter):
    """``(A, B)`` of ``P(y=1|s) = 1 / (1 + exp(A s + B))`` for ``scores`` and their
    ``positive`` flags, and the Newton steps taken. The scores are standardised, Platt's
    smoothed targets used, and Platt's start, or ``(start_a, start_b)`` when ``warm``;
    backtracking line search (Lin, Lin and Weng 2007), until the gradient vanishes or the
    step's decrease is below the objective's rounding (then the last step is taken
    whole)."""
    cdef Py_ssize_t n = scores.shape[0]
    cdef Py_ssize_t i
    cdef Py_ssize_t n_pos = 0
    cdef double centre = 0.0, spread = 0.0, scale, high, low
    cdef double a, b, value, warm_a, warm_b
    cdef double z, e, p, q, d2, d1, h11, h22, h21, g1, g2, det, da, db, slope, step
    cdef double new_a, new_b, new_value
    cdef double sigma = 1e-12
    cdef int steps = 0
    cdef double *s
    cdef double *ex      # exp(-|z|) at the current (a, b)
    cdef double *trial   # ... at the step the line search tries
    cdef double *swap
    if positive.shape[0] != n:
        raise ValueError("scores and flags differ in length")
    s = <double *>malloc(3 * (n if n > 0 else 1) * sizeof(double))
    if s == NULL:
        raise MemoryError("no memory to fit a sigmoid")
    ex = s + (n if n > 0 else 1)
    trial = ex + (n if n > 0 else 1)
    with nogil:
        for i in range(n):
            n_pos += positive[i] != 0
            centre += scores[i]
        high = (n_pos + 1.0) / (n_pos + 2.0)
        low = 1.0 / (n - n_pos + 2.0)
        centre = centre / n if n else 0.0
        for i in range(n):
            spread += (scores[i] - centre) * (scores[i] - centre)
        scale = sqrt(spread / n) if n else 0.0
        if scale == 0.0:
            scale = 1.0
        for i in range(n):
            s[i] = (scores[i] - centre) / scale
        a = 0.0
        b = log((n - n_pos + 1.0) / (n_pos + 1.0))
        warm_a = start_a * scale  # A s + B = a s' + b, s' = (s - centre) / scale
        warm_b = start_b + start_a * centre
        if warm and warm_a - warm_a == 0.0 and warm_b - warm_b == 0.0:  # (finite)
            a, b = warm_a, warm_b  # (Newton's steps with a line search converge from
            #                        any start on this convex problem: no comparison)
        value = _objective(s, &positive[0] if n else NULL, n, high, low, a, b, ex)
        while steps < max_iter:
            h11 = h22 = sigma
            h21 = g1 = g2 = 0.0
            for i in range(n):
                z = a * s[i] + b
                e = ex[i]  # (exp(-|z|), computed with the objective at this (a, b))
                p = e / (1.0 + e) if z >= 0 else 1.0 / (1.0 + e)  # 1 / (1 + exp(z))
                q = 1.0 - p
                d2 = p * q
                h11 += s[i] * s[i] * d2
                h22 += d2
                h21 += s[i] * d2
                d1 = (high if positive[i] else low) - p
                g1 += s[i] * d1
                g2 += d1
            if fabs(g1) < 1e-6 and fabs(g2) < 1e-6:
                break
            det = h11 * h22 - h21 * h21
            if det <= 0:
                break
            steps += 1
            da = -(h22 * g1 - h21 * g2) / det
            db = -(-h21 * g1 + h11 * g2) / det
            slope = g1 * da + g2 * db
            if -slope <= 1e-12 * fabs(value):
                # the step would lower the objective by less than the objective's own
                # rounding: Newton's method is in its quadratic phase, its full step
                # lands on the optimum, and a line search would only halve it in noise
                a += da
                b += db
                break
            step = 1.0
            while step >= 1e-10:
                new_a = a + step * da
                new_b = b + step * db
                new_value = _objective(s, &positive[0], n, high, low, new_a, new_b, trial)
                if new_value < value + 1e-4 * step * slope:
                    a, b, value = new_a, new_b, new_value
                    swap = ex
                    ex = trial
                    trial = swap
                    break
                step /= 2
            else:
                break
    free(s)
    return a / scale, b - a * centre / scale, steps


def division(const double[:, ::1] scores, const uint8_t[:, ::1] positives,
             const double[::1] a, const double[::1] b):
    """Over the examples with exactly one true target: how many, the share whose highest
    calibrated logit ``-(a s + b)`` is the true target's, and the mean top probability of
    the plain division (``max p / sum p``, ``p`` the sigmoid of the logits, NaN when an
    example's every ``p`` underflowed). What :meth:`snowpy.calibration.Calibration.
    _fit_temperature` decides on, in one pass."""
    cdef Py_ssize_t n = scores.shape[0]
    cdef Py_ssize_t k = scores.shape[1]
    cdef Py_ssize_t i, t, best, truth, trues
    cdef Py_ssize_t counted = 0, right = 0
    cdef double logit, top_logit, p, top_p, total, share = 0.0
    if positives.shape[0] != n or positives.shape[1] != k or a.shape[0] != k \
            or b.shape[0] != k:
        raise ValueError("scores, flags and sigmoids differ in shape")
    with nogil:
        for i in range(n):
            trues = 0
            truth = 0
            for t in range(k):
                if positives[i, t]:
                    trues += 1
                    truth = t
            if trues != 1:
                continue
            counted += 1
            best = 0
            top_logit = 0.0
            top_p = total = 0.0
            for t in range(k):
                logit = -(scores[i, t] * a[t] + b[t])
                if t == 0 or logit > top_logit:
                    best, top_logit = t, logit
                p = 0.5 * (1.0 + tanh(0.5 * logit))
                total += p
                if p > top_p:
                    top_p = p
            right += best == truth
            share += top_p / total if total > 0 else NAN
    if counted == 0:
        return 0, 0.0, 0.0
    return counted, right / <double>counted, share / counted
