"""Naive Bayes, SNoW's ``-B`` and LBJava's ``NaiveBayes``: counts, not mistakes.

Each target counts the examples it is positive for (``n_t``) and, per
feature, those in which the feature is active (``c_ft``), on every example
(the rule is not mistake-driven: :class:`~snowpy.rules.RuleKernel`'s
``mistake_driven=False``; one pass, as SNoW counted in its first cycle). The
score of target ``t`` is LBJava's

    ``log n_t + sum over active f of log(c_ft / n_t)``, and ``smoothing`` (-15:
    a probability of ``e**-15``) for a feature never seen with ``t``,

that is ``log P(t) + sum_f log P(f | t)`` up to a constant. Feature strengths
multiply their terms (LBJava ignores strengths; with binary features, the
default, the two agree). The prior rides on the bias feature (with
``bias=False`` the labels are equally likely).

How it fits the engine: plane 0 (coefficient 0) holds the count ``c_ft``, the
per-target state ``S[t] = [n_t, examples shown]``; plane 1 (coefficient 1)
holds the score weight, derived after training by ``refresh``: ``log(c_ft /
n_t)``. A missing link weighs ``smoothing`` whatever the link policy
(``RuleKernel(absent_initial=True)``), so every target's activation is its
Naive Bayes score ``log P(t) + sum_f log P(f | t)`` (the prior over the
examples seen), with no offset: winner-take-all, a softmax over targets and
calibration see Naive Bayes' own numbers. The bias link's weight is
``log(n_t / n) / bias strength``, ``n`` the examples seen (the most any target
was shown; a target met later in a stream was not shown the earlier ones).

>>> import numpy as np, scipy.sparse as sp
>>> from snowpy import Network
>>> X = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 1]]))
>>> net = Network("naive-bayes", average=False, discard=None).fit(X, ["a", "a", "b"])
>>> net.predict(X).tolist()
['a', 'a', 'b']
"""

from __future__ import annotations

import math

import numpy as np

from snowpy._core.rules import UpdateKernel
from snowpy.hookspecs import hookimpl
from snowpy.rules.spec import BuildContext, Param, RuleKernel, RuleSpec, theta_param

__all__ = ["NAIVE_BAYES", "naive_bayes_refresh", "naive_bayes_update"]


def naive_bayes_update(w, S, t, y, activation, vals, m, sqnorm, params):
    """Count the example: ``S[t] = [positives, shown]``, ``w[k, 0]`` the feature's count,
    and ``w[k, 1] = log(count / positives)`` for the example's features at once (the
    other links of ``t`` drift by ``log(n_t / (n_t + 1))`` until the next refresh)."""
    S[t, 1] += 1.0
    if y > 0.0:
        S[t, 0] += 1.0
        n = S[t, 0]
        for k in range(m):
            w[k, 0] += 1.0
            w[k, 1] = math.log(w[k, 0] / n)


def naive_bayes_refresh(W: np.ndarray, target: np.ndarray, bias: np.ndarray, S: np.ndarray,
                        params: np.ndarray) -> None:
    """Score weights from counts: ``log(c / n_t)`` (``smoothing`` for a count of 0); the
    prior ``log(n_t / n)`` on the bias."""
    smoothing = params[0]
    positives = S[target, 0]
    shown = max(float(S[:, 1].max()) if S.shape[0] else 1.0, 1.0)  # the examples seen
    counts = W[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where((counts > 0) & (positives > 0),
                         np.log(counts / np.maximum(positives, 1.0)), smoothing)
        on_bias = bias > 0
        prior = np.where(positives > 0, np.log(np.maximum(positives, 1.0) / shown), smoothing)
        score[on_bias] = prior[on_bias] / bias[on_bias]
    W[:, 1] = score


def _build(params: dict, context: BuildContext) -> RuleKernel:
    return RuleKernel(
        update=UpdateKernel.builtin("naive-bayes"),
        reference=naive_bayes_update,
        params=[params["smoothing"]],
        initial_weights=(0.0, params["smoothing"]),
        planes=(0.0, 1.0),
        initial_state=(0.0, 0.0),
        mistake_driven=False,
        refresh=naive_bayes_refresh,
        absent_initial=True,
        relative_scores=True,
    )


NAIVE_BAYES = RuleSpec(
    name="naive-bayes",
    build=_build,
    params=(
        Param("smoothing", -15.0, "log probability given to a feature never seen with a "
              "target (LBJava's smoothing; SNoW's unseen-feature penalty 15)",
              high=0.0, high_open=True),
        theta_param(0.0),
    ),
    summary="counts on positive examples, log P(t) + sum log P(f|t) (every example, one pass)",
    reference="SNoW -B; LBJava NaiveBayes (smoothing -15)",
    nonnegative=True,
)


@hookimpl
def snowpy_update_rules() -> list[RuleSpec]:
    """Naive Bayes."""
    return [NAIVE_BAYES]

