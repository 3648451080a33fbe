"""Halving and weighted majority: learning from a class of hypotheses or a pool of
experts (Littlestone 1988; Littlestone and Warmuth 1994).

* Halving: keep every hypothesis of a finite class ``C`` consistent with the examples
  so far, predict as their majority; each mistake at least halves them, so there are
  at most ``log2 |C|`` mistakes when the target is in ``C``. Here ``C`` is the
  ``2**n`` monotone disjunctions over ``n`` Boolean attributes.
* Weighted majority (Littlestone and Warmuth): ``N`` experts with weight 1, predict
  the weighted majority, multiply a wrong expert's weight by ``beta = 1/2``; at most
  ``2.41 (m + log2 N)`` mistakes, ``m`` those of the best expert. The randomized
  version predicts with an expert drawn by weight: expected mistakes at most
  ``(m ln(1/beta) + ln N) / (1 - beta)``.
"""

from __future__ import annotations

import numpy as np

from snowpy.experiments.common import Result, lines


def halving_mistakes(X: np.ndarray, y: np.ndarray) -> int:
    """Mistakes of the Halving algorithm over all monotone disjunctions of X's columns.

    >>> X = np.array([[1, 0], [0, 1], [0, 0], [1, 1]], dtype=bool)
    >>> halving_mistakes(X, X[:, 0])  # the target x0 is one of the 4 hypotheses
    1
    """
    n = X.shape[1]
    masks = np.arange(1 << n, dtype=np.int64)  # hypothesis h: the attributes it ORs
    alive = np.ones(masks.size, dtype=bool)
    weights = 1 << np.arange(n, dtype=np.int64)
    mistakes = 0
    for x, label in zip(X, y):
        on = int(weights[x].sum())
        says = (masks & on) != 0  # each hypothesis' prediction
        votes = says[alive]
        predicted = votes.sum() * 2 > votes.size  # the majority (ties: negative)
        mistakes += int(predicted != label)
        alive &= says == label
    return mistakes


def weighted_majority(predictions: np.ndarray, y: np.ndarray, beta: float = 0.5
                      ) -> tuple[int, float]:
    """Mistakes of weighted majority and expected mistakes of its randomized version,
    for experts' predictions ``[examples, experts]`` (Booleans) and labels ``y``.

    >>> p = np.array([[1, 0], [1, 0], [0, 1]], dtype=bool)  # expert 0 is always right
    >>> mistakes, expected = weighted_majority(p, np.array([1, 1, 0], dtype=bool))
    >>> mistakes, round(expected, 4)  # the tie at the start: 1 mistake; 1/2 + 1/3 + 1/5
    (1, 1.0333)
    """
    weights = np.ones(predictions.shape[1])
    mistakes, expected = 0, 0.0
    for says, label in zip(predictions, y):
        total = weights.sum()
        positive = weights[says].sum()
        mistakes += int((positive * 2 > total) != label)  # ties: negative
        expected += weights[says != label].sum() / total  # P(the drawn expert errs)
        weights[says != label] *= beta
    return mistakes, float(expected)


def run_halving(sizes=(4, 6, 8, 10, 12), examples: int = 400, seed: int = 0) -> Result:
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        worst = 0
        for _ in range(5):  # several targets and streams: the largest count is shown
            relevant = rng.random(n) < 0.3
            relevant[rng.integers(n)] = True
            X = rng.random((examples, n)) < 1 - 0.5 ** (1 / max(relevant.sum(), 1))
            worst = max(worst, halving_mistakes(X, X[:, relevant].any(axis=1)))
        rows.append({"attributes": n, "class_size": 2**n, "mistakes": worst,
                     "bound_log2_class": n})
    return Result(
        name="halving", title="Halving over monotone disjunctions: mistakes <= log2 |C|",
        rows=rows, xlabel="log2 |C| (attributes n: |C| = 2^n)", ylabel="mistakes",
        series=lines(rows, "attributes", ("Halving: most mistakes in 5 runs", "mistakes"),
                     ("bound log2 |C|", "bound_log2_class", "--")),
        note="Littlestone 1988 (the Halving algorithm)",
    )


def run_weighted_majority(pools=(8, 32, 128, 512, 2048), examples: int = 500,
                          best_error: float = 0.1, seed: int = 0) -> Result:
    rng = np.random.default_rng(seed)
    rows = []
    for n in pools:
        y = rng.random(examples) < 0.5
        rates = np.r_[best_error, rng.uniform(0.2, 0.5, n - 1)]  # one good expert
        wrong = rng.random((examples, n)) < rates
        predictions = np.where(wrong, ~y[:, None], y[:, None])
        m = int(wrong.sum(axis=0).min())
        mistakes, expected = weighted_majority(predictions, y)
        rows.append({"experts": n, "best_expert_mistakes": m, "wm_mistakes": mistakes,
                     "wm_bound": float(2.41 * (m + np.log2(n))),
                     "rwm_expected_mistakes": expected,
                     "rwm_bound": float((m * np.log(2) + np.log(n)) / 0.5)})
    return Result(
        name="weighted-majority",
        title="Weighted majority (beta = 1/2): mistakes against the bounds",
        rows=rows, xlabel="experts N (log scale)", ylabel="mistakes",
        series=lines(rows, "experts", ("WM mistakes", "wm_mistakes"),
                     ("bound 2.41 (m + log2 N)", "wm_bound", "--"),
                     ("randomized WM: expected mistakes", "rwm_expected_mistakes", "-s"),
                     ("bound (m ln 2 + ln N) / (1/2)", "rwm_bound", ":"),
                     ("best expert m", "best_expert_mistakes", "-^")),
        logx=True,
        note="Littlestone and Warmuth 1994 (weighted majority)",
    )
