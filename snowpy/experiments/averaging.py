"""Averaged against last-hypothesis Perceptron as examples accumulate (Freund and Schapire 1999).

A noisy linearly separable problem (10% of labels flipped); one stream of
training examples feeds two Perceptrons, one predicting with its last weight
vector, one with the average over all examples. Test error is measured as the
stream goes: the average is steadier and lower, the argument that a
hypothesis surviving a long stretch deserves more say. The voted Perceptron
(Freund and Schapire 1999), every hypothesis voting with the examples it
survived, is drawn beside them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from snowpy.experiments.common import Result, lines
from snowpy.experiments.voted import VotedPerceptron
from snowpy.network import Network


def run(d: int = 200, examples: int = 6000, test: int = 3000, block: int = 200,
        noise: float = 0.1, seed: int = 0) -> Result:
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)

    def sample(m: int, flip: float):
        X = (rng.random((m, d)) < 0.1) * rng.uniform(0.5, 1.5, size=(m, d))
        y = X @ u > np.median(X @ u)
        y = np.where(rng.random(m) < flip, ~y, y)
        return sp.csr_matrix(X), np.where(y, "pos", "neg")

    X, y = sample(examples, noise)
    X_test, y_test = sample(test, 0.0)
    last = Network("perceptron", average=False)
    averaged = Network("perceptron", average=True)
    voted = VotedPerceptron()
    signs, test_signs = np.where(y == "pos", 1, -1), np.where(y_test == "pos", 1, -1)
    rows = []
    for start in range(0, examples, block):
        last.partial_fit(X[start:start + block], y[start:start + block])
        averaged.partial_fit(X[start:start + block], y[start:start + block])
        voted.partial_fit(X[start:start + block], signs[start:start + block])
        rows.append({"examples": start + block,
                     "last_hypothesis_error": 1 - last.score(X_test, y_test),
                     "averaged_error": 1 - averaged.score(X_test, y_test),
                     "voted_error": float(np.mean(voted.predict(X_test) != test_signs))})
    return Result(
        name="averaging",
        title=f"Test error of the Perceptron as examples accumulate ({noise:.0%} label noise)",
        rows=rows, xlabel="training examples seen", ylabel="test error",
        series=lines(rows, "examples", ("last hypothesis", "last_hypothesis_error", "-"),
                     ("averaged Perceptron", "averaged_error", "-"),
                     ("voted Perceptron", "voted_error", "--")),
        note="Freund and Schapire 1999 (averaged and voted Perceptron)",
    )
