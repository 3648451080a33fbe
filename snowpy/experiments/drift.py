"""Winnow-R against Winnow when the target disjunction drifts (Auer and Warmuth 1998).

A k-disjunction over n attributes; every ``period`` examples the adversary
replaces one relevant attribute by an irrelevant one (cost 2). Plain Winnow
has demoted the newcomer's weight, possibly far below 1, and needs many
promotions to recover it; Winnow-R keeps every weight at least 1/2 and
recovers in a few. Cumulative online mistakes tell.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from snowpy.experiments.common import Result, lines, single_target
from snowpy.network import Network


def run(n: int = 1000, k: int = 5, examples: int = 20000, period: int = 1000,
        block: int = 250, seed: int = 0) -> Result:
    rng = np.random.default_rng(seed)
    relevant = rng.choice(n, size=k, replace=False)
    p = 1 - 0.5 ** (1 / k)
    X = sp.csr_matrix((rng.random((examples, n)) < p).astype(np.float64))
    y = np.zeros(examples, dtype=bool)
    for start in range(0, examples, period):
        if start:
            outside = np.setdiff1d(np.arange(n), relevant)
            relevant = relevant.copy()
            relevant[rng.integers(k)] = rng.choice(outside)
        stop = min(start + period, examples)
        y[start:stop] = np.asarray(X[start:stop][:, relevant].sum(axis=1)).ravel() > 0
    y[0] = True  # the first example creates the target node
    X = X.tolil()
    X[0, relevant[0]] = 1.0
    X = X.tocsr()
    options: dict[str, Any] = dict(alpha=2, beta=0.5, theta=n, initial_weight=1, bias=False,
                                   average=False)
    plain = Network("winnow", **options)
    robust = Network("winnow", floor=0.5, **options)
    rows = []
    totals = {"winnow": 0, "winnow_r": 0}
    for start in range(0, examples, block):
        labels = single_target(y[start:start + block])
        plain.partial_fit(X[start:start + block], labels)
        robust.partial_fit(X[start:start + block], labels)
        totals["winnow"] += plain.mistakes_[-1]
        totals["winnow_r"] += robust.mistakes_[-1]
        rows.append({"examples": start + block, "winnow_mistakes": totals["winnow"],
                     "winnow_r_mistakes": totals["winnow_r"],
                     "adversary_cost": 2 * (start // period)})
    return Result(
        name="drift",
        title=f"A drifting {k}-disjunction over {n} attributes (a change every {period})",
        rows=rows, xlabel="examples seen", ylabel="cumulative online mistakes",
        series=lines(rows, "examples", ("Winnow", "winnow_mistakes", "-"),
                     ("Winnow-R (floor 1/2)", "winnow_r_mistakes", "-")),
        note="Auer and Warmuth 1998: Winnow-R makes O(c log n) mistakes, c the adversary's cost",
    )
