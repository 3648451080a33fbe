"""Normalised Winnow against its bound 2 (R/rho)^2 ln N (Littlestone 1988; Mohri, Rostamizadeh and Talwalkar 2018).

Examples ``x`` in ``{-1, +1}^N``, labelled by a majority of ``k`` (odd)
relevant features: ``v`` is 1 on them, so ``y (v . x) >= 1``, ``||v||_1 = k``,
the margin ``rho = 1/k`` and ``R = 1``. With ``eta = rho / R^2`` the theorem
allows ``2 k^2 ln N`` mistakes. snowpy's rule (``normalised-winnow``, in the
sparse engine with its per-target scale) runs beside a direct transcription
of the book's pseudo-code (dense, normalised after every update): the two make
the same mistakes, and both stay under the bound.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from snowpy.experiments.common import Result, lines, positive_first, single_target
from snowpy.network import Network

__all__ = ["majority_data", "reference_mistakes", "run"]


def majority_data(n: int, k: int, m: int, rng: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``m`` examples in ``{-1, +1}^n`` labelled by the majority of ``k`` features."""
    X = rng.choice([-1.0, 1.0], size=(m, n))
    relevant = rng.choice(n, size=k, replace=False)
    y = X[:, relevant].sum(axis=1) > 0
    return X, y


def reference_mistakes(X: np.ndarray, y: np.ndarray, eta: float, passes: int = 1
                       ) -> list[int]:
    """The book's WINNOW(eta) as written: ``w = 1/N``, ``w_i <- w_i exp(eta y x_i) / Z``
    on a mistake, predicting ``sgn(w . x)`` (0 counts as positive: a target claims an
    example at its threshold, in SNoW as in snowpy).
    Mistakes per pass, until a pass without one."""
    w = np.full(X.shape[1], 1.0 / X.shape[1])
    signs = np.where(y, 1.0, -1.0)
    per_pass = []
    for _ in range(passes):
        mistakes = 0
        for x, s in zip(X, signs):
            predicted = 1.0 if w @ x >= 0.0 else -1.0
            if predicted != s:
                mistakes += 1
                w = w * np.exp(eta * s * x)
                w /= w.sum()
        per_pass.append(mistakes)
        if mistakes == 0:
            break
    return per_pass


def run(features=(16, 64, 256, 1024, 4096), k: int = 3, examples: int = 2000,
        seed: int = 0) -> Result:
    rng = np.random.default_rng(seed)
    rho, eta = 1.0 / k, 1.0 / k
    rows = []
    for n in features:
        X, y = majority_data(n, k, examples, rng)
        X, y = positive_first(X, y)
        net = Network("normalised-winnow", eta=eta, bias=False, average=False, shuffle=False,
                      links="touched", precision="float64", epochs=100, discard=None
                      ).fit(sp.csr_matrix(X), single_target(y))
        reference = reference_mistakes(X, y, eta, passes=100)
        rows.append({"features": n, "mistakes": int(sum(net.mistakes_)),
                     "reference_mistakes": int(sum(reference)),
                     "bound": 2 * math.log(n) / rho**2, "passes": len(net.mistakes_)})
    return Result(
        name="normalised-winnow",
        title=f"Normalised Winnow: majority of {k} of N features, eta = rho = 1/{k}",
        rows=rows, xlabel="features N (log scale)", ylabel="mistakes until a clean pass",
        series=lines(rows, "features", ("snowpy normalised-winnow", "mistakes"),
                     ("the book's pseudo-code", "reference_mistakes", "s"),
                     ("bound 2 (R/rho)^2 ln N", "bound", "--")),
        logx=True,
        note="Mohri, Rostamizadeh and Talwalkar 2018: Winnow and its bound",
    )
