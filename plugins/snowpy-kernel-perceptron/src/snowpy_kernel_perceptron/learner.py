"""Support vectors: the learner of a dual rule (a rule whose state is no weight table).

A linear rule updates a weight per (feature, target) link. A *dual* rule, such as the
kernel Perceptron, keeps the examples it erred on, the *support vectors* ``x_s``, with
a coefficient per target, and scores

    ``f_t(x) = sum_s alpha[s, t] * K(x_s, x) - theta``

for a similarity ``K`` of its own. Its ``build`` returns :class:`SupportVectors`, a
:class:`snowpy.rules.Learner`: snowpy's network hosts it (the labels, the epochs, the
calibration, one example at a time, the model file) and this class keeps the support
vectors. One compiled loop (:mod:`snowpy_kernel_perceptron._dual`) learns and scores
for any similarity, which it calls as a C function through a pointer: another
plugin's dual rule can build a :class:`SupportVectors` with a similarity of its own.

The similarity contract
-----------------------
``similarity(a_ids, a_vals, b_ids, b_vals, params) -> float``: two sparse examples as
their feature ids (sorted, unique, ``int64[::1]``) and strengths (``float64[::1]``),
and the rule's packed parameters. The loop calls it as a C function of one ABI::

    double similarity(const int64_t *a_ids, const double *a_vals, int64_t a_n,
                      const int64_t *b_ids, const double *b_vals, int64_t b_n,
                      const double *params, int64_t n_params, void *user_data);

given as a ``PyCapsule`` named ``snowpy.rules.kernels.SIMILARITY_SIGNATURE`` (C,
Cython), a numba ``@cfunc`` of ``snowpy.numba_kernels.SIMILARITY`` or a
``@numba.njit`` function of the array contract (compiled on first use), or a Python
function of the array contract (slow: for prototyping); see
:func:`snowpy.rules.kernels.kernel_of`.

The update
----------
SNoW's test per target, as for a linear rule: a positive example needs ``f_t(x) >=
thickness``, a negative one ``f_t(x) < -negative_thickness``. When some target fails
it, ``x`` becomes a support vector with ``alpha[s, t] = step * y_t`` on the targets
that failed and 0 on the others: the Perceptron's dual update (with the linear
similarity it makes exactly the primal Perceptron's mistakes). With a ``budget`` of
``B`` support vectors the oldest is dropped for a new one once ``B`` are held (the
Forgetron's removal, without its shrinking: Dekel, Shalev-Shwartz and Singer 2008):
memory stays bounded whatever the stream.

The state: each support vector's feature ids and strengths in a row of ``width``
slots (slot ``s`` holds ``lengths[s]`` of them at ``ids[s * width:]`` and
``vals[s * width:]``), and its coefficients ``alpha[s, t]``, in a ring of at most
``budget`` rows (``ring[0]``: rows held, ``ring[1]``: the oldest).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from snowpy.exceptions import ModelFileError, PluginError
from snowpy.rules import Examples, Learner
from snowpy.rules.kernels import SimilarityKernel, implementation_of, kernel_of

from snowpy_kernel_perceptron._dual import dual_epoch, dual_scores

__all__ = ["SupportVectors"]

#: The narrowest slots (features per support vector) a learner starts with.
MIN_WIDTH = 16


class SupportVectors(Learner):
    """The support vectors of a dual rule and their coefficients (the module's
    description).

    Parameters
    ----------
    similarity : SimilarityKernel, capsule, numba function or Python function
        The similarity ``K`` (the module's contract).
    params : sequence of float
        The numbers the similarity reads, in the order it reads them.
    theta, thickness, negative_thickness : float
        The threshold and SNoW's thick separator.
    step : float
        The coefficient a support vector gets on a target that failed the test (times
        the label's sign): the Perceptron's learning rate.
    budget : int
        The most support vectors kept (the oldest is dropped for a new one); 0 keeps
        every one.
    reference : callable or None
        The similarity written in Python (the array contract), which snowpy's
        conformance suite runs beside the compiled one; by default ``similarity`` itself
        when that is a Python or numba function.
    """

    def __init__(self, similarity: Callable[..., Any], params: Sequence[float], *,
                 theta: float = 0.0, thickness: float = 0.0,
                 negative_thickness: float | None = None, step: float = 1.0,
                 budget: int = 0, reference: Callable[..., Any] | None = None) -> None:
        if not callable(similarity) and type(similarity).__name__ != "PyCapsule":
            raise PluginError(f"the similarity {similarity!r} must be a kernel, a capsule "
                              "or a function")
        if reference is None and implementation_of(similarity) in ("python", "numba"):
            reference = getattr(similarity, "py_func", None) or similarity
        packed = np.ascontiguousarray(np.asarray(params, dtype=np.float64).reshape(-1))
        if not np.all(np.isfinite(packed)):
            raise PluginError(f"similarity parameters must be finite, got {packed.tolist()}")
        if not (math.isfinite(step) and step > 0):
            raise PluginError(f"step must be a positive number, got {step}")
        if int(budget) != budget or budget < 0:
            raise PluginError(f"budget must be a whole number >= 0, got {budget}")
        self.similarity, self.reference, self.params = similarity, reference, packed
        self.theta, self.thickness = float(theta), float(thickness)
        self.negative_thickness = float(thickness if negative_thickness is None
                                        else negative_thickness)
        self.step, self.budget = float(step), int(budget)
        self.width = MIN_WIDTH
        rows = self.budget if 0 < self.budget <= 64 else 64
        self.ids = np.zeros(rows * self.width, np.int64)
        self.vals = np.zeros(rows * self.width, np.float64)
        self.lengths = np.zeros(rows, np.int64)
        self.alpha = np.zeros((rows, 1), np.float64)
        self.ring = np.zeros(2, np.int64)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its compiled similarity (made again on use)."""
        return {k: v for k, v in self.__dict__.items() if k != "compiled"}

    @functools.cached_property
    def compiled(self) -> SimilarityKernel:
        """The similarity as the compiled loop calls it (compiled on first use for a
        numba function)."""
        return kernel_of(self.similarity, SimilarityKernel,
                         getattr(self.similarity, "__name__", ""))

    @property
    def n_support(self) -> int:
        """Support vectors held (at most the budget)."""
        return int(self.ring[0])

    @property
    def dual_coef(self) -> np.ndarray:
        """``float64[support vectors, targets]``: each support vector's coefficients."""
        return self.alpha[:self.n_support]

    # ----------------------------------------------------------- the protocol
    def learn(self, examples: Examples, order: np.ndarray,
              before: np.ndarray | None = None) -> tuple[int, int]:
        """Learn the examples ``order``, the slots widened and the ring grown as they
        ask (:meth:`snowpy.rules.Learner.learn`)."""
        assert examples.y_indptr is not None and examples.y_targets is not None
        self._cover(examples.n_targets)
        mistakes = updates = done_so_far = 0
        scores = np.empty((order.size if before is not None else 0, self.alpha.shape[1]))
        while done_so_far < order.size:
            rest = order[done_so_far:]
            done, m, u, need = dual_epoch(
                self.compiled, self.ids, self.vals, self.lengths, self.width, self.alpha,
                self.ring, self.budget, examples.indptr, examples.ids, examples.vals, rest,
                examples.y_indptr, examples.y_targets, self.params, self.theta,
                self.thickness, self.negative_thickness, self.step, examples.multilabel,
                scores[done_so_far:])
            mistakes, updates, done_so_far = mistakes + m, updates + u, done_so_far + done
            if need > 0:
                self._widen(max(need, 2 * self.width))
            elif need < 0:
                self._grow()
        if before is not None:
            before[:] = scores[:, :before.shape[1]]
        return mistakes, updates

    def scores(self, examples: Examples) -> np.ndarray:
        """``f_t(x) - theta`` of every target, ``float64[n, targets]``."""
        out = np.empty((examples.n, examples.n_targets))
        alpha = np.zeros((self.alpha.shape[0], examples.n_targets))
        width = min(examples.n_targets, self.alpha.shape[1])
        alpha[:, :width] = self.alpha[:, :width]
        dual_scores(self.compiled, self.ids, self.vals, self.lengths, self.width,
                    self.n_support, alpha, examples.indptr, examples.ids, examples.vals,
                    self.params, self.theta, out)
        return out

    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The support vectors without gaps (their feature ids and strengths one after
        the other, each one's length), their coefficients, and the ring's oldest."""
        return {"oldest": int(self.ring[1])}, {
            "sv_ids": self._held(self.ids), "sv_vals": self._held(self.vals),
            "sv_len": self.lengths[:self.n_support].copy(),
            "sv_alpha": np.ascontiguousarray(self.dual_coef)}

    def restore(self, header: dict[str, Any], arrays: dict[str, np.ndarray], *,
                n_features: int, n_targets: int, where: str) -> None:
        """Take support vectors stored without gaps, every part checked to agree
        (integer ids and lengths, shapes, a coefficient per target, ids within
        ``n_features``, the budget) before any is used."""
        lengths, alpha = arrays.get("sv_len"), arrays.get("sv_alpha")
        ids, vals = arrays.get("sv_ids"), arrays.get("sv_vals")
        if lengths is None or alpha is None or ids is None or vals is None or \
                lengths.dtype.kind not in "iu" or ids.dtype.kind not in "iu" or \
                lengths.ndim != 1 or alpha.shape != (lengths.size, max(n_targets, 1)) or \
                ids.size != vals.size or ids.size != int(lengths.sum()) or \
                np.any(lengths < 0) or (ids.size and (ids.min() < 0 or
                                                      ids.max() >= n_features)):
            raise ModelFileError(f"{where}: the support vectors are inconsistent")
        if self.budget and lengths.size > self.budget:
            raise ModelFileError(f"{where}: {lengths.size} support vectors exceed the "
                                 f"budget {self.budget}")
        n = int(lengths.size)
        width = max(MIN_WIDTH, int(lengths.max(initial=0)))
        rows = max(n, 1) if self.budget == 0 else self.budget
        self.width = width
        self.ids = np.zeros(rows * width, np.int64)
        self.vals = np.zeros(rows * width, np.float64)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        for s in range(n):
            self.ids[s * width:s * width + lengths[s]] = ids[offsets[s]:offsets[s + 1]]
            self.vals[s * width:s * width + lengths[s]] = vals[offsets[s]:offsets[s + 1]]
        self.lengths = np.zeros(rows, np.int64)
        self.lengths[:n] = lengths
        self.alpha = np.zeros((rows, max(alpha.shape[1], 1)))
        self.alpha[:n, :alpha.shape[1]] = alpha
        self.ring[:] = n, int(header.get("oldest", 0)) % max(rows, 1)

    # ------------------------------------------------- what it says of itself
    def describe(self, labels: Sequence[Any]) -> dict[str, Any]:
        """The support vectors held, the budget, and by label those with a positive
        coefficient."""
        return {"support_vectors": self.n_support, "budget": self.budget,
                "positive_support_vectors": {
                    str(label): int(np.count_nonzero(self.dual_coef[:, t] > 0))
                    for t, label in enumerate(labels)}}

    def kernel_values(self, examples: Examples) -> np.ndarray:
        """``K(s, x)`` of each support vector ``s`` with each example ``x``,
        ``float64[n, support vectors]``: a target's score is ``kernel_values @
        dual_coef[:, t] - theta``."""
        n_support, width = self.n_support, self.width
        out = np.empty((examples.n, n_support))
        for start in range(0, n_support, 256):  # (an identity of coefficients, by blocks)
            end = min(start + 256, n_support)
            block = np.empty((examples.n, end - start))
            dual_scores(self.compiled, self.ids[start * width:end * width],
                        self.vals[start * width:end * width], self.lengths[start:end],
                        width, end - start, np.eye(end - start), examples.indptr,
                        examples.ids, examples.vals, self.params, 0.0, block)
            out[:, start:end] = block
        return out

    def explain(self, examples: Examples, targets: Sequence[int],
                scores: np.ndarray) -> list[dict[str, Any]]:
        """Each support vector's ``kernel`` value times its ``coefficient``, largest
        contributions first; they add up, less ``theta``, to the score (``residual``:
        the float64 rounding between)."""
        kernel = self.kernel_values(examples)[0]
        explained = []
        for t in targets:
            terms = kernel * self.dual_coef[:, t]
            support = [{"support_vector": int(s), "kernel": float(kernel[s]),
                        "coefficient": float(self.dual_coef[s, t]),
                        "contribution": float(terms[s])} for s in np.flatnonzero(terms)]
            support.sort(key=lambda row: -abs(row["contribution"]))
            explained.append({"theta": self.theta, "support_vectors": support,
                              "residual": float(scores[t] - (float(terms.sum())
                                                             - self.theta))})
        return explained

    def features(self) -> np.ndarray:
        """The feature ids of the support vectors, one per (support vector, feature)."""
        return self._held(self.ids)

    # ------------------------------------------------------------- the arrays
    def _held(self, slots: np.ndarray) -> np.ndarray:
        """What ``slots`` (:attr:`ids` or :attr:`vals`) hold, without gaps."""
        parts = [slots[s * self.width:s * self.width + int(self.lengths[s])]
                 for s in range(self.n_support)]
        return np.concatenate(parts) if parts else np.zeros(0, slots.dtype)

    def _cover(self, n_targets: int) -> None:
        """A coefficient column for every target."""
        if n_targets > self.alpha.shape[1]:
            grown = np.zeros((self.alpha.shape[0], n_targets))
            grown[:, :self.alpha.shape[1]] = self.alpha
            self.alpha = grown

    def _widen(self, width: int) -> None:
        """Slots of ``width`` features (the support vectors moved, not changed)."""
        rows, old = self.lengths.shape[0], self.width
        ids, vals = np.zeros(rows * width, np.int64), np.zeros(rows * width, np.float64)
        for s in range(self.n_support):
            n = int(self.lengths[s])
            ids[s * width:s * width + n] = self.ids[s * old:s * old + n]
            vals[s * width:s * width + n] = self.vals[s * old:s * old + n]
        self.ids, self.vals, self.width = ids, vals, width

    def _grow(self) -> None:
        """Twice the rows (at most the budget, when there is one)."""
        rows = self.lengths.shape[0]
        more = 2 * rows if self.budget == 0 else min(2 * rows, self.budget)
        self.ids = np.concatenate([self.ids, np.zeros((more - rows) * self.width, np.int64)])
        self.vals = np.concatenate([self.vals, np.zeros((more - rows) * self.width)])
        self.lengths = np.concatenate([self.lengths, np.zeros(more - rows, np.int64)])
        grown = np.zeros((more, self.alpha.shape[1]))
        grown[:rows] = self.alpha
        self.alpha = grown
