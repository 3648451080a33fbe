"""Perceptron mistakes against the margin bounds (Novikoff 1962; Freund and Schapire 1999).

Separable data with margin gamma (a unit vector u, examples of norm at most
R = 1 with |u.x| >= gamma): the Perceptron makes at most R^2 / gamma^2
mistakes (Novikoff). Labels flipped at random make the data non-separable;
the mistakes of one pass stay below ((R + D) / gamma)^2, D the norm of the
margin deficits (Freund and Schapire).
"""

from __future__ import annotations

import numpy as np

from snowpy.experiments.common import Result, lines, positive_first, single_target
from snowpy.network import Network


def _data(d: int, m: int, gamma: float, rng: np.random.Generator, flip: float):
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    X = rng.normal(size=(8 * m, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X *= rng.uniform(0.2, 1.0, size=(8 * m, 1))
    score = X @ u
    keep = np.abs(score) >= gamma
    X, score = X[keep][:m], score[keep][:m]
    y = score > 0
    if flip:
        y = np.where(rng.random(len(y)) < flip, ~y, y)
    return X, y, u


def run(gammas=(0.4, 0.2, 0.1, 0.05, 0.025), flip: float = 0.05, d: int = 20,
        examples: int = 400, seed: int = 0) -> Result:
    rng = np.random.default_rng(seed)
    rows = []
    for gamma in gammas:
        X, y, u = _data(d, examples, gamma, rng, 0.0)
        R = float(np.linalg.norm(X, axis=1).max())
        X, y = positive_first(X, y)
        separable = Network("perceptron", learning_rate=1.0, bias=False, average=False,
                            shuffle=False, epochs=1000).fit(X, single_target(y))
        Xn, yn, un = _data(d, examples, gamma, rng, flip)
        signed = np.where(yn, 1.0, -1.0)
        D = float(np.sqrt(np.sum(np.maximum(0.0, gamma - signed * (Xn @ un)) ** 2)))
        Rn = float(np.linalg.norm(Xn, axis=1).max())
        Xn, yn = positive_first(Xn, yn)
        noisy = Network("perceptron", learning_rate=1.0, bias=False, average=False,
                        shuffle=False, epochs=1, early_stop=False).fit(Xn, single_target(yn))
        rows.append({"gamma": gamma, "separable_mistakes": int(sum(separable.mistakes_)),
                     "novikoff_bound": R**2 / gamma**2,
                     "nonseparable_mistakes_one_pass": int(noisy.mistakes_[0]),
                     "freund_schapire_bound": (Rn + D) ** 2 / gamma**2, "D": D,
                     "R": R, "R_nonseparable": Rn})
    return Result(
        name="margin",
        title="Perceptron mistakes against 1/gamma (R = 1)",
        rows=rows, xlabel="1 / margin gamma (log scale)", ylabel="mistakes (log scale)",
        series=lines(rows, [1 / r["gamma"] for r in rows],
                     ("separable: mistakes", "separable_mistakes"),
                     ("Novikoff bound R^2/gamma^2", "novikoff_bound", "--"),
                     (f"{flip:.0%} labels flipped: mistakes in one pass",
                      "nonseparable_mistakes_one_pass", "-s"),
                     ("bound ((R+D)/gamma)^2", "freund_schapire_bound", ":")),
        logx=True, logy=True,
        note="Novikoff 1962; Freund and Schapire 1999",
    )
