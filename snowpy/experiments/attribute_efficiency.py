"""Attribute efficiency: Winnow against the Perceptron on k-disjunctions (Littlestone 1988).

For n from 2^6 up, a random k-disjunction over n Boolean attributes; both
rules learn it online until an epoch makes no mistake. Winnow (alpha = 2,
beta = 1/2, theta = n, unit weights) makes at most ``2 + 3k(1 + log2 n)``
mistakes: logarithmic in n. The Perceptron's bound grows with the examples'
norm, here linear in n.
"""

from __future__ import annotations

import math

import numpy as np

from snowpy.experiments.common import (
    Result,
    disjunction_stream,
    lines,
    positive_first,
    single_target,
)
from snowpy.network import Network


def run(k: int = 4, min_exponent: int = 6, max_exponent: int = 13, examples: int = 400,
        seed: int = 0) -> Result:
    rng = np.random.default_rng(seed)
    rows = []
    for exponent in range(min_exponent, max_exponent + 1):
        n = 2**exponent
        X, y, _ = disjunction_stream(n, k, examples, rng)
        X, y = positive_first(X, y)
        labels = single_target(y)
        winnow = Network("winnow", alpha=2, beta=0.5, theta=n, initial_weight=1, bias=False,
                         average=False, shuffle=False, epochs=100).fit(X, labels)
        perceptron = Network("perceptron", learning_rate=1.0, theta=0.0, average=False,
                             shuffle=False, epochs=100).fit(X, labels)
        rows.append({"n": n, "k": k, "winnow_mistakes": int(sum(winnow.mistakes_)),
                     "winnow_bound": 2 + 3 * k * (1 + math.log2(n)),
                     "perceptron_mistakes": int(sum(perceptron.mistakes_)),
                     "winnow_converged": winnow.mistakes_[-1] == 0,
                     "perceptron_converged": perceptron.mistakes_[-1] == 0})
    return Result(
        name="attribute-efficiency",
        title=f"Learning a {k}-disjunction: mistakes against the number of attributes",
        rows=rows, xlabel="attributes n (log scale)", ylabel="mistakes until convergence",
        series=lines(rows, "n", ("Winnow", "winnow_mistakes"),
                     ("Winnow bound 2 + 3k(1 + log2 n)", "winnow_bound", "--"),
                     ("Perceptron", "perceptron_mistakes", "-s")),
        logx=True,
        note="Littlestone 1988: Winnow stays under its logarithmic bound "
             "while the Perceptron's mistakes grow with n",
    )
