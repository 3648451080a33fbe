"""The voted Perceptron (Freund and Schapire 1999): every weight vector the
Perceptron held, voting with the number of examples it survived.

Prediction is ``sign(sum_k c_k sign(w_k . x))``: a vote of the hypotheses, where the
averaged Perceptron (snowpy's default, ``average=True``) predicts
``sign((sum_k c_k w_k) . x)``, one vector. The vote needs every vector kept (memory
grows with the mistakes), which is why snowpy's networks average instead; this
binary implementation serves the averaging experiment and the comparison.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["VotedPerceptron"]


class VotedPerceptron:
    """A binary voted Perceptron over labels in {-1, +1} (learning rate 1, no bias).

    Examples
    --------
    >>> vp = VotedPerceptron().partial_fit(np.array([[1.0, 0.0], [0.0, 1.0]]), [1, -1])
    >>> vp.vectors_.tolist(), vp.counts_.tolist()  # (0,0) survived no example, (1,0) one
    ([[0.0, 0.0], [1.0, 0.0], [1.0, -1.0]], [0, 1, 1])
    """

    def __init__(self) -> None:
        self._vectors: list[np.ndarray] = []
        self._counts: list[int] = []
        self._w: np.ndarray | None = None
        self._survived = 0

    def partial_fit(self, X: Any, y: Any) -> VotedPerceptron:
        """One pass over ``(X, y)``, in order; labels are +1 or -1."""
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        labels = np.asarray(y)
        if self._w is None:
            self._w = np.zeros(X.shape[1])
        for x, label in zip(X, labels):
            if label * float(self._w @ x) <= 0:  # a mistake (0 counts as one)
                self._vectors.append(self._w.copy())
                self._counts.append(self._survived)
                self._w = self._w + label * x
                self._survived = 1
            else:
                self._survived += 1
        return self

    @property
    def vectors_(self) -> np.ndarray:
        """Every hypothesis held, the current one last."""
        assert self._w is not None
        return np.vstack([*self._vectors, self._w])

    @property
    def counts_(self) -> np.ndarray:
        """The examples each survived (its vote)."""
        return np.array([*self._counts, self._survived])

    def predict(self, X: Any) -> np.ndarray:
        """``sign(sum_k c_k sign(w_k . x))`` (ties: +1)."""
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        votes = np.sign(self.vectors_ @ X.T)  # [vectors, examples]
        total = self.counts_ @ votes
        return np.where(total >= 0, 1, -1)
