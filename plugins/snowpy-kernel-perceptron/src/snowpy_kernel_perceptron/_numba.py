"""The similarity as a numba ``@cfunc`` of snowpy's similarity ABI.

Imported only where a network of this rule is built (``plugin._build``): a process that
lists or never uses the rule never imports numba. ``cache=True``: numba compiles the
cfunc once per machine and loads it afterwards.
"""

from __future__ import annotations

import math

import numba

from snowpy.numba_kernels import SIMILARITY

__all__ = ["similarity"]


@numba.cfunc(SIMILARITY, cache=True, error_model="numpy")
def similarity(a_ids, a_vals, a_n, b_ids, b_vals, b_n, params, n_params,
               user_data):  # pragma: no cover - compiled
    """``params = [kernel, degree, gamma, coef0]`` (kernel 0 linear, 1 polynomial, 2
    Gaussian); the two sparse vectors' ids are sorted."""
    i = 0
    j = 0
    dot = 0.0
    while i < a_n and j < b_n:
        if a_ids[i] == b_ids[j]:
            dot += a_vals[i] * b_vals[j]
            i += 1
            j += 1
        elif a_ids[i] < b_ids[j]:
            i += 1
        else:
            j += 1
    kind = params[0]
    if kind == 0.0:
        return dot
    if kind == 1.0:
        return (params[2] * dot + params[3]) ** params[1]
    a2 = 0.0
    for k in range(a_n):
        a2 += a_vals[k] * a_vals[k]
    b2 = 0.0
    for k in range(b_n):
        b2 += b_vals[k] * b_vals[k]
    return math.exp(-params[2] * max(a2 + b2 - 2.0 * dot, 0.0))
