"""Sigmoid calibration of target activations into probabilities (Platt scaling).

For each target node, ``P(y = 1 | s) = 1 / (1 + exp(A s + B))`` where ``s``
is the node's decision score (activation minus threshold), fitted on scores
the model did not train on, with Platt's smoothed targets
``(N+ + 1) / (N+ + 2)`` for positives and ``1 / (N- + 2)`` for negatives, by
Newton's method with backtracking (Lin, Lin and Weng 2007, "A note on Platt's
probabilistic outputs"). Scores are standardised before fitting, which keeps
the problem well conditioned whatever the rule's scale, and a class with one
or two examples (or none) still gets finite parameters.

Single-label networks share one sigmoid between their targets (so the most
probable label is always the predicted one), multi-label networks fit one per
target, each through probability 1/2 at the target's threshold (score 0, ``B = 0``): a
multi-label network's predicted set is every label whose target reaches its threshold,
so it is every label of probability 1/2 or more, as printed beside it. (With Platt's
free intercept, 278 of the 3,299 Reuters-21578 ModApte test documents got a set other
than their labels of probability 1/2 or more: a label of 0.99 left out of a set that
held one of 0.30.) Each of its labels' probabilities stays between the smoothed targets
its sigmoid was fitted to: no more sure than its held-out scores can say (a five-word
document's strong words, scored beyond them all, printed 1.0000). Single-label networks
normalise across targets. Two choices exist: dividing
the per-target probabilities by their sum, or a softmax over the calibrated
logits ``-(A s + B)``. snowpy uses the division (``normalize="sum"``), the
choice of scikit-learn's CalibratedClassifierCV, with one more parameter
fitted on the same held-out scores: a temperature ``T``, the normalised
probabilities being ``p_t^T / sum_k p_k^T`` (``T = 1`` is plain division).
One-vs-rest sigmoids of twenty targets that each hedge leave the division
underconfident: Winnow on 20 Newsgroups gave a mean top probability of 0.53
at accuracy 0.81 (ECE 0.28) before the temperature, 0.80 (ECE 0.03) with it;
``docs/calibration.md`` records the measurements behind both choices.
Multi-label networks keep each target's probability as it is.

With a document's Naive Bayes evidence for each label beside its scores (a classifier's
``evidence=True``: :class:`snowpy.text.weighing.LabelRatios`), the held-out scores and
evidence are stacked first: a logistic regression of the two inputs (shared by the
targets of a single-label network, with an intercept; one per target of a multi-label
network, through 1/2 at 0) gives the evidence's weight against the score's, ``w = E /
A``, and each target's score becomes ``s + w e`` before the sigmoids are fitted on
it. Prediction then takes its decision from the stacked scores: NBSVM's interpolation of
an SVM toward Naive Bayes (Wang and Manning 2012), its weight fitted on scores the
network did not train on instead of set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from snowpy._core import platt as _platt
from snowpy.exceptions import ConfigurationError

__all__ = ["METHODS", "NORMALIZATIONS", "Calibration", "fit_sigmoid", "fit_slope", "fit_stacking",
           "sigmoid"]

#: How held-out scores are obtained: k-fold cross-fitting, or one held-out fraction.
METHODS = ("cv", "holdout")
NORMALIZATIONS = ("sum", "softmax", "none")
#: How far (in probability) the division's mean top probability may fall below the
#: held-out accuracy before a temperature sharpens it.
HEDGING = 0.15


def fit_sigmoid(scores: np.ndarray, positive: np.ndarray, *, max_iter: int = 100,
                start: tuple[float, float] | None = None) -> tuple[float, float]:
    """Platt's ``(A, B)`` for ``P(y=1|s) = 1 / (1 + exp(A s + B))``.

    ``start``: an ``(A, B)`` to start Newton's method from instead of Platt's (the last
    fit of a window that has since moved on a little: two steps instead of seven). The
    problem is convex and the steps search their length: the optimum is the same.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(size=20000)
    >>> y = rng.random(20000) < 1 / (1 + np.exp(-2 * s + 0.5))
    >>> a, b = fit_sigmoid(s, y)
    >>> round(float(a), 1), round(float(b), 1)
    (-2.0, 0.5)
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64).ravel()
    flags = np.ascontiguousarray(positive, dtype=bool).ravel().view(np.uint8)
    warm_a, warm_b = (0.0, 0.0) if start is None else (float(start[0]), float(start[1]))
    a, b, _ = _platt.fit(scores, flags, warm_a, warm_b, start is not None, int(max_iter))
    return a, b


#: At most this many (score, is-true) pairs fit a shared sigmoid (a uniform sample of
#: them beyond: 100,000 documents of 1,000 labels would be 10^8).
POOLED_PAIRS = 4_000_000


def fit_slope(scores: np.ndarray, positive: np.ndarray, *, max_iter: int = 100,
              start: float | None = None) -> float:
    """Platt's ``A`` for ``P(y=1|s) = 1 / (1 + exp(A s))``, the sigmoid through 1/2 at
    ``s = 0`` (``B = 0``), against Platt's smoothed targets, by Newton's method with
    backtracking (the problem is convex in ``A``), from ``start`` (an earlier fit) or 0.

    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(size=20000)
    >>> round(fit_slope(s, rng.random(20000) < 1 / (1 + np.exp(-2 * s))), 1)
    -2.0
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    y = np.asarray(positive, dtype=bool).ravel()
    n_pos = int(y.sum())
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (y.size - n_pos + 2.0))

    def loss(a: float) -> float:
        z = -a * s  # the logit
        return float(np.sum(np.logaddexp(0.0, z) - t * z))

    a = 0.0 if start is None or not np.isfinite(start) else float(start)
    current = loss(a)
    for _ in range(max_iter):
        p = sigmoid(-a * s)
        gradient = float(np.sum((t - p) * s))  # d loss / d a
        hessian = float(np.sum(p * (1.0 - p) * s * s))
        if hessian <= 1e-12 or abs(gradient) < 1e-9 * max(1.0, abs(current)):
            break
        step = gradient / hessian
        while True:  # backtracking: never a step that raises the loss
            candidate = loss(a - step)
            if candidate <= current or abs(step) < 1e-12:
                break
            step /= 2
        if candidate > current:
            break
        a, current = a - step, candidate
    return float(a)


def fit_stacking(scores: np.ndarray, evidence: np.ndarray, positive: np.ndarray, *,
                 intercept: bool = True, max_iter: int = 100) -> float:
    """The weight ``w`` of ``evidence`` against ``scores``: the logistic regression
    ``P(y=1) = 1 / (1 + exp(-(c_s s + c_e e [+ c_0])))`` fitted on Platt's smoothed
    targets by Newton's method with backtracking (the inputs standardised; a ridge of
    1e-6), ``w = c_e / c_s``; 0 when the scores do not rise with the labels (``c_s <= 0``:
    nothing to weigh the evidence against).

    >>> rng = np.random.default_rng(0)
    >>> s, e = rng.normal(size=(2, 20000))
    >>> y = rng.random(20000) < 1 / (1 + np.exp(-(2 * s + e)))
    >>> round(fit_stacking(s, e, y), 1)
    0.5
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    e = np.asarray(evidence, dtype=np.float64).ravel()
    y = np.asarray(positive, dtype=bool).ravel()
    n_pos = int(y.sum())
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (y.size - n_pos + 2.0))
    scale = np.array([s.std() or 1.0, e.std() or 1.0])
    columns = [s / scale[0], e / scale[1]] + ([np.ones_like(s)] if intercept else [])
    X = np.stack(columns, axis=1)
    ridge = 1e-6 * y.size

    def loss(c: np.ndarray) -> float:
        z = X @ c
        return float(np.sum(np.logaddexp(0.0, z) - t * z) + 0.5 * ridge * (c[:2] @ c[:2]))

    c = np.zeros(X.shape[1])
    current = loss(c)
    penalty = np.diag([ridge, ridge] + [0.0] * (X.shape[1] - 2))
    for _ in range(max_iter):
        p = sigmoid(X @ c)
        gradient = X.T @ (p - t) + penalty @ c
        hessian = (X * (p * (1.0 - p))[:, None]).T @ X + penalty
        try:
            step = np.linalg.solve(hessian + 1e-12 * np.eye(X.shape[1]), gradient)
        except np.linalg.LinAlgError:
            break
        size = 1.0
        while True:  # backtracking: never a step that raises the loss
            candidate = loss(c - size * step)
            if candidate <= current or size < 1e-10:
                break
            size /= 2
        if candidate > current:
            break
        c, done = c - size * step, current - candidate < 1e-10 * max(1.0, abs(current))
        current = candidate
        if done:
            break
    slope, weight = c[0] / scale[0], c[1] / scale[1]
    return float(weight / slope) if slope > 0 else 0.0


def _pooled(scores: np.ndarray, positives: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (score, is-true) pair of every target, or a seeded uniform sample."""
    flat_scores, flat_positives = scores.ravel(), positives.ravel()
    if flat_scores.size > POOLED_PAIRS:  # (drawn with replacement: no permutation of
        keep = np.random.default_rng(0).integers(0, flat_scores.size, POOLED_PAIRS)
        flat_scores, flat_positives = flat_scores[keep], flat_positives[keep]  # all)
    return flat_scores, flat_positives


def _in_order(scores: np.ndarray, positives: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(score, is-true) pairs sorted: a canonical order for a fit."""
    order = np.lexsort((positives, scores))
    return scores[order], positives[order]


def _as_they_come(scores: np.ndarray, positives: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    return scores, positives


def sigmoid(z: np.ndarray) -> np.ndarray:
    """The logistic function ``1 / (1 + exp(-z))`` without overflow.

    >>> sigmoid(np.array([-800.0, 0.0, 800.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    """``log(1 / (1 + exp(-z)))`` without overflow or underflow to -inf."""
    return -np.logaddexp(0.0, -z)


def _single_label_cap(scores: np.ndarray) -> int:
    """How many examples the held-out scores of one label each may hold before a sample
    of them stands for all (:data:`POOLED_PAIRS` scores)."""
    return max(POOLED_PAIRS // scores.shape[1], 2)


def _single_label_rows(scores: np.ndarray, positives: np.ndarray) -> np.ndarray:
    """The held-out examples with exactly one true label, a seeded sample of them when
    there are more than memory allows (:data:`POOLED_PAIRS` scores)."""
    single = np.flatnonzero(positives.sum(axis=1) == 1)
    most = _single_label_cap(scores)
    if single.size > most:
        single = np.sort(np.random.default_rng(0).choice(single, most, replace=False))
    return single


def _fit_softmax_slope(scores: np.ndarray, positives: np.ndarray) -> float:
    """The ``c`` of ``softmax(c * scores)`` with the least log loss on the held-out
    examples that have exactly one true label, against Platt's smoothed targets (a
    temperature ``1/c``; golden-section search on ``log c`` over ``[1e-4, 1e2]``). For
    scores whose differences between targets are log-likelihoods (Naive Bayes), ``c =
    1`` is the model's own posterior."""
    single = _single_label_rows(scores, positives)
    if single.size < 2:
        return 1.0
    s = scores[single] - scores[single].max(axis=1, keepdims=True)
    truth = positives[single].argmax(axis=1)
    n, k = s.shape
    # Platt's targets: the true label (n + 1) / (n + 2), the others sharing 1 / (n + 2),
    # so that held-out examples all ranked right do not drive the slope to infinity
    off = 1.0 / ((n + 2.0) * (k - 1))
    targets = np.full(s.shape, off)
    targets[np.arange(n), truth] = (n + 1.0) / (n + 2.0)

    cap = 3.0 * np.log(k)  # an example's loss counts at most three times a uniform guess's

    def loss(log_c: float) -> float:
        z = np.exp(log_c) * s
        log_norm = np.log(np.exp(z).sum(axis=1, keepdims=True))
        each = -np.sum(targets * (z - log_norm), axis=1)
        return float(np.mean(np.minimum(each, cap)))

    low, high = np.log(1e-4), np.log(1e2)
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = high - ratio * (high - low), low + ratio * (high - low)
    f1, f2 = loss(x1), loss(x2)
    for _ in range(60):
        if f1 < f2:
            high, x2, f2 = x2, x1, f1
            x1 = high - ratio * (high - low)
            f1 = loss(x1)
        else:
            low, x1, f1 = x1, x2, f2
            x2 = low + ratio * (high - low)
            f2 = loss(x2)
    return float(np.exp((low + high) / 2))


class Calibration:
    """Fitted sigmoids of every target, and how they are combined.

    Attributes
    ----------
    a, b : ndarray, shape (n_targets,)
        Platt's parameters per target.
    normalize : {"sum", "softmax", "none"}
        Across targets for single-label networks; ``"none"`` for multi-label.
    method : str
        How the held-out scores were obtained (``"cv"``, ``"holdout"``).
    temperature : float
        The exponent of the ``"sum"`` normalisation (1: plain division).
    bounds : (ndarray, ndarray) or None
        A multi-label network's least and greatest probability per target: Platt's
        smoothed targets ``1 / (N- + 2)`` and ``(N+ + 1) / (N+ + 2)`` of the held-out
        scores its sigmoid was fitted on, what they can support (None: unbounded,
        files written before them).
    evidence : ndarray or None
        The weight of each target's Naive Bayes evidence added to its score before the
        sigmoid (:meth:`stacked`; the module docstring), or None: scores alone.
    """

    def __init__(self, a: np.ndarray, b: np.ndarray, *, normalize: str, method: str,
                 temperature: float = 1.0,
                 bounds: tuple[np.ndarray, np.ndarray] | None = None,
                 evidence: np.ndarray | None = None) -> None:
        self.evidence = None if evidence is None else np.asarray(evidence, dtype=np.float64)
        self.a = np.asarray(a, dtype=np.float64)
        self.b = np.asarray(b, dtype=np.float64)
        self.bounds = None if bounds is None else (np.asarray(bounds[0], dtype=np.float64),
                                                   np.asarray(bounds[1], dtype=np.float64))
        if normalize not in NORMALIZATIONS:
            raise ConfigurationError(f"normalize must be one of {NORMALIZATIONS}")
        if not (np.isfinite(temperature) and temperature > 0):
            raise ConfigurationError(f"temperature must be a positive number, got {temperature}")
        self.normalize = normalize
        self.method = method
        self.temperature = float(temperature)

    def stacked(self, scores: np.ndarray, evidence: np.ndarray | None) -> np.ndarray:
        """Scores ``[n, targets]`` with each target's ``evidence`` (the same shape) added
        at its weight; the scores as they are without evidence or weights."""
        if evidence is None or self.evidence is None:
            return scores
        width = min(scores.shape[1], self.evidence.size)
        stacked = np.array(scores, dtype=np.float64)
        stacked[:, :width] += self.evidence[:width] * evidence[:, :width]
        return stacked

    @classmethod
    def fit(cls, scores: np.ndarray, positives: np.ndarray, *, normalize: str,
            method: str, start: Calibration | None = None,
            evidence: np.ndarray | None = None) -> Calibration:
        """Fit the sigmoids on held-out decision scores ``[n, targets]``.

        Multi-label networks (``normalize="none"``) get one sigmoid per target: each
        label is its own yes/no question. Single-label networks get one sigmoid shared
        by every target, fitted on all (score, is-true) pairs: a score means the same
        whichever target it belongs to, so the most probable label is the one with the
        highest score, and ``predict`` (SNoW's winner-take-all) equals the argmax of
        ``predict_proba`` by construction. Per-target sigmoids broke that tie on 3.4%
        of 20 Newsgroups test documents and cost accuracy (Balanced Winnow 0.8528 ->
        0.8493) for log losses no better (0.6677 against 0.6639 shared).

        ``start``: an earlier calibration of the same targets (a progressive window's
        last fit), whose sigmoids Newton's method starts from (:func:`fit_sigmoid`).

        ``evidence``: each held-out example's Naive Bayes evidence for each target (the
        scores' shape), stacked with the scores first (:func:`fit_stacking`: one weight
        shared by the targets, or one a target for a multi-label network); the sigmoids
        are then fitted on the stacked scores.
        """
        if evidence is not None:
            weights = _stacking_weights(scores, evidence, positives, normalize == "none")
            fitted = cls.fit(scores + weights * evidence, positives, normalize=normalize,
                             method=method, start=start)
            fitted.evidence = weights
            return fitted
        begin = start if start is not None and start.a.size == scores.shape[1] \
            and start.normalize == normalize else None
        if normalize == "softmax" and scores.shape[1] > 1:
            slope = _fit_softmax_slope(scores, positives)
            return cls(np.full(scores.shape[1], -slope), np.zeros(scores.shape[1]),
                       normalize=normalize, method=method)
        # held-out scores fit alike whatever the order of their examples (a corpus read
        # from its file or given as texts in another order): taken in sorted order, the
        # sums of the fit are the same sums
        order = _in_order if method in METHODS else _as_they_come
        if normalize == "none":  # each label's own sigmoid, 1/2 at its threshold
            a = np.array([fit_slope(*order(scores[:, t], positives[:, t]),
                                    start=None if begin is None else begin.a[t])
                          for t in range(scores.shape[1])])
            n_positive = positives.sum(axis=0, dtype=np.float64)
            n_negative = positives.shape[0] - n_positive
            return cls(a, np.zeros(scores.shape[1]), normalize=normalize, method=method,
                       bounds=(1.0 / (n_negative + 2.0), (n_positive + 1.0) / (n_positive + 2.0)))
        elif scores.shape[1] < 2:
            pairs = [fit_sigmoid(*order(scores[:, t], positives[:, t]),
                                 start=None if begin is None else (begin.a[t], begin.b[t]))
                     for t in range(scores.shape[1])]
            a, b = np.array(pairs).reshape(-1, 2).T
        else:
            flat_scores, flat_positives = order(*_pooled(scores, positives))
            shared = fit_sigmoid(flat_scores, flat_positives, start=None if begin is None
                                 else (begin.a[0], begin.b[0]))
            a = np.full(scores.shape[1], shared[0])
            b = np.full(scores.shape[1], shared[1])
        calibration = cls(a, b, normalize=normalize, method=method)
        if normalize == "sum":  # (one target: its division is 1, T stays 1)
            calibration.temperature = calibration.fit_temperature(scores, positives)
        return calibration

    def fit_temperature(self, scores: np.ndarray, positives: np.ndarray) -> float:
        """The ``T`` of ``p_t^T / sum_k p_k^T``: 1, unless the plain division hedges, its
        mean top probability on the held-out examples (those with exactly one true class)
        falling more than :data:`HEDGING` below their accuracy (Winnow on 20 Newsgroups:
        0.62 at 0.88). Then ``T`` makes the two equal (calibration in the large), up to 8
        (a hedging division is only ever sharpened: ``T > 1``). Fitting ``T`` by log loss
        instead, or matching whenever the two differ, made probabilities worse where the
        held-out folds score unlike the final network (the demo corpus: log loss 0.18 ->
        0.55); ``docs/calibration.md`` has the figures."""
        single: np.ndarray | None = None
        log_p: np.ndarray | None = None

        def top(log_t: float) -> float:
            nonlocal single, log_p
            if log_p is None:
                if single is None:
                    single = _single_label_rows(scores, positives)
                log_p = _log_sigmoid(-(scores[single] * self.a + self.b))
            z = np.exp(log_t) * log_p
            e = np.exp(z - z.max(axis=1, keepdims=True))
            return float(np.mean(1.0 / e.sum(axis=1)))

        if scores.shape[0] <= _single_label_cap(scores):  # all of them, in one pass
            counted, accuracy, plain = _platt.division(
                np.ascontiguousarray(scores, dtype=np.float64),
                np.ascontiguousarray(positives, dtype=bool).view(np.uint8), self.a, self.b)
            if counted < 2:
                return 1.0
            if not np.isfinite(plain):  # (an example whose every p underflowed: in logs)
                plain = top(0.0)
        else:  # a sample of them
            single = _single_label_rows(scores, positives)
            if single.size < 2:
                return 1.0
            logits = -(scores[single] * self.a + self.b)
            accuracy = float(np.mean(logits.argmax(axis=1) == positives[single].argmax(axis=1)))
            plain = top(0.0)
        if plain > accuracy - HEDGING:
            return 1.0  # the division is about right: held-out scores say no more

        # top() grows with T, and is below the accuracy at T = 1: bisect on log T in [0, log 8]
        low, high = 0.0, np.log(8.0)
        if top(high) <= accuracy:
            return float(np.exp(high))
        for _ in range(40):
            middle = (low + high) / 2
            low, high = (middle, high) if top(middle) < accuracy else (low, middle)
        return float(np.exp((low + high) / 2))

    def extended(self, n_targets: int) -> Calibration:
        """This calibration for ``n_targets`` targets: targets added since it was fitted
        (labels first met by ``partial_fit``) get the median sigmoid of the others, until
        the network is calibrated again. Probabilities stay available and normalised;
        those of the new labels are rough."""
        extra = n_targets - self.a.size
        if extra <= 0:
            return self
        a_new = float(np.median(self.a)) if self.a.size else -1.0
        b_new = float(np.median(self.b)) if self.b.size else 0.0
        bounds = None
        if self.bounds is not None:  # (the others' median, as the sigmoid)
            low, high = (np.r_[bound, np.full(extra, np.median(bound) if bound.size else 0.5)]
                         for bound in self.bounds)
            bounds = (low, high)
        # (a new label has no evidence counted: its weight is nothing)
        evidence = None if self.evidence is None else np.r_[self.evidence, np.zeros(extra)]
        return Calibration(np.r_[self.a, np.full(extra, a_new)],
                           np.r_[self.b, np.full(extra, b_new)], normalize=self.normalize,
                           method=self.method, temperature=self.temperature, bounds=bounds,
                           evidence=evidence)

    def without(self, target: int) -> Calibration:
        """This calibration with ``target``'s sigmoid gone (a label forgotten)."""
        return Calibration(np.delete(self.a, target), np.delete(self.b, target),
                           normalize=self.normalize, method=self.method,
                           temperature=self.temperature, bounds=None if self.bounds is None
                           else (np.delete(self.bounds[0], target),
                                 np.delete(self.bounds[1], target)),
                           evidence=None if self.evidence is None
                           else np.delete(self.evidence, target))

    def probabilities(self, scores: np.ndarray) -> np.ndarray:
        """Calibrated probabilities for decision scores ``[n, targets]``."""
        if scores.shape[1] != self.a.size:
            raise ConfigurationError(
                f"the calibration covers {self.a.size} targets, the scores have {scores.shape[1]}"
                " (labels were added after calibrating: train again with calibration)"
            )
        logits = -(scores * self.a + self.b)
        if self.normalize == "none":
            if self.bounds is None:
                return sigmoid(logits)
            return np.clip(sigmoid(logits), *self.bounds)
        if self.normalize == "sum" and self.temperature == 1.0:
            p = sigmoid(logits)
            total = p.sum(axis=1, keepdims=True)
            if total.all():  # (else a row's every p underflowed to 0: in logs below)
                return p / total
        # "sum": p^T normalised, a softmax of T log p, in logs (a row whose every p
        # underflowed keeps its order); "softmax": of the logits themselves
        z = logits if self.normalize == "softmax" else self.temperature * _log_sigmoid(logits)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    # -------------------------------------------------------------- storage
    def header(self) -> dict[str, Any]:
        return {"normalize": self.normalize, "method": self.method,
                "temperature": self.temperature}

    def arrays(self) -> dict[str, np.ndarray]:
        arrays = {"calibration_a": self.a, "calibration_b": self.b}
        if self.bounds is not None:
            arrays["calibration_low"], arrays["calibration_high"] = self.bounds
        if self.evidence is not None:
            arrays["calibration_evidence"] = self.evidence
        return arrays

    @classmethod
    def from_file(cls, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray],
                  where: str) -> Calibration:
        from snowpy.exceptions import ModelFileError

        try:
            a, b = arrays["calibration_a"], arrays["calibration_b"]
            if a.shape != b.shape or a.ndim != 1:
                raise ValueError("shapes differ")
            bounds = None
            if "calibration_low" in arrays or "calibration_high" in arrays:
                bounds = (arrays["calibration_low"], arrays["calibration_high"])
                if any(bound.shape != a.shape or not np.all((bound >= 0) & (bound <= 1))
                       for bound in bounds):
                    raise ValueError("the probability bounds are not one in [0, 1] a target")
            evidence = arrays.get("calibration_evidence")
            if evidence is not None and (evidence.shape != a.shape or evidence.dtype.kind != "f"
                                         or not np.all(np.isfinite(evidence))):
                raise ValueError("the evidence weights are not one finite number a target")
            return cls(a, b, normalize=header["normalize"], method=header.get("method", "cv"),
                       temperature=float(header.get("temperature", 1.0)), bounds=bounds,
                       evidence=evidence)
        except (KeyError, ValueError, TypeError, ConfigurationError) as exc:
            raise ModelFileError(f"{where}: the calibration is invalid ({exc})") from None


def _stacking_weights(scores: np.ndarray, evidence: np.ndarray, positives: np.ndarray,
                      each: bool) -> np.ndarray:
    """The evidence's weight for each target (:func:`fit_stacking`): one per target
    through 1/2 at 0 (``each``: a multi-label network's), else one shared by the targets,
    fitted on their (score, evidence, is-true) triples pooled (a seeded uniform sample of
    :data:`POOLED_PAIRS` of them beyond)."""
    n_targets = scores.shape[1]
    if each or n_targets < 2:
        return np.array([fit_stacking(scores[:, t], evidence[:, t], positives[:, t],
                                      intercept=not each) for t in range(n_targets)])
    s, e, y = scores.ravel(), evidence.ravel(), positives.ravel()
    if s.size > POOLED_PAIRS:
        keep = np.random.default_rng(0).integers(0, s.size, POOLED_PAIRS)
        s, e, y = s[keep], e[keep], y[keep]
    order = np.lexsort((y, e, s))  # (a canonical order, as the sigmoid's)
    return np.full(n_targets, fit_stacking(s[order], e[order], y[order]))
