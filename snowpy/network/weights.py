"""What a trained network's weights look like from outside: links, features, coef_.

A mixin of :class:`snowpy.Network`: read-only views of the link store, sparse
(:meth:`~WeightViews.effective_links`) or, for small networks and for
scikit-learn's conventions, dense (``coef_``, ``intercept_``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._lazy import lazy_module
from snowpy.network.learned import LearnedFigures

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

if TYPE_CHECKING:  # pragma: no cover
    from snowpy.network.engine import Engine

__all__ = ["WeightViews"]


class WeightViews(LearnedFigures):
    """The weight views of a trained network (needs ``_state`` and ``_check_fitted``)."""

    _state: Engine
    average: bool

    def _check_fitted(self) -> None:  # pragma: no cover - the estimator's
        raise NotImplementedError

    def _bias_strength(self) -> float:  # pragma: no cover - the estimator's
        raise NotImplementedError

    @property
    def n_links_(self) -> int:
        """Links held: feature-target pairs with a weight of their own."""
        self._check_fitted()
        return self._state.store.n_links

    def effective_links_delta(self) -> np.ndarray:
        """Per pool slot, the link's prediction weight minus a missing link's (cached)."""
        self._check_fitted()
        return self._state.effective_delta(bool(self.average))

    def link_weights(self, columns: Any) -> tuple[np.ndarray, np.ndarray]:
        """The weight of the link from each feature (column of ``X``; ``-1``: the bias) to
        every target as prediction uses it, ``float64[len(columns), targets]``, and
        whether each is a link of its own (False: a missing link, or a feature never seen,
        weighing :attr:`absent_weight_`). A score is ``sum(strength * weight) - theta``
        over the bias and the active features: what :meth:`snowpy.SnowClassifier.explain`
        lays out.

        >>> from snowpy import Network
        >>> import scipy.sparse as sp
        >>> net = Network("perceptron", epochs=1, calibrate=None).fit(
        ...     sp.csr_matrix([[1.0, 0.0], [0.0, 1.0]]), ["a", "b"])
        >>> weights, linked = net.link_weights([-1, 0])   # the bias, then feature 0
        >>> weights.tolist(), linked.tolist()
        ([[-0.05, -0.05], [0.0, -0.1]], [[True, True], [False, True]])
        >>> (weights[0] + weights[1]).tolist(), net.target_scores(sp.csr_matrix([[1.0, 0.0]]))
        ([-0.05, -0.15], array([[-0.05, -0.15]]))
        """
        self._check_fitted()
        columns = np.asarray(columns, dtype=np.int64)
        store = self._state.store
        delta = self.effective_links_delta()
        weights = np.full((columns.size, store.n_targets), float(store.absent))
        linked = np.zeros((columns.size, store.n_targets), dtype=bool)
        for target in range(store.n_targets):
            where = store.positions(columns, target)
            found = where >= 0
            weights[found, target] += delta[where[found]].astype(np.float64)
            linked[found, target] = True
        return weights, linked

    def effective_links(self) -> sp.csr_matrix:
        """The weight of every link as prediction uses it, ``[rows, targets]``.

        Row 0 is the bias, row ``r >= 1`` the feature ``feature_ids_[r - 1]``;
        missing entries weigh :attr:`absent_weight_`.
        """
        self._check_fitted()
        self._state.ensure_fresh()
        return self._state.store.links_csr(averaged=bool(self.average))

    def link_counts(self, columns: Any = None) -> np.ndarray:
        """Links held by each feature (column of ``X``): all features seen, or ``columns``.

        0 for a feature never seen or holding no link. With no ``columns``,
        the counts follow :attr:`feature_ids_`.
        """
        self._check_fitted()
        store = self._state.store
        if columns is None:
            return store.size[1:store.n_rows].astype(np.int64)
        columns = np.asarray(columns, dtype=np.int64)
        rows = store.prediction_rows(sp.csr_matrix(
            (np.ones(columns.size), columns, [0, columns.size]),
            shape=(1, max(self.n_features_in_, int(columns.max(initial=-1)) + 1))))
        counts = np.zeros(columns.size, dtype=np.int64)
        seen = rows >= 0
        counts[seen] = store.size[rows[seen]]
        return counts

    @property
    def feature_ids_(self) -> np.ndarray:
        """The feature (column of ``X``) of each row of :meth:`effective_links` from 1 on."""
        self._check_fitted()
        return self._state.store.feature_ids

    @property
    def absent_weight_(self) -> float:
        """The weight of a missing link, and of a feature never seen in training."""
        self._check_fitted()
        return self._state.store.absent

    def effective_weights(self) -> np.ndarray:
        """Every weight as prediction uses it, dense: ``float64[rows + 1, targets]``.

        Row 0 is the bias, rows follow :attr:`feature_ids_`, and a last row holds
        the weight of features never seen. Memory is rows x targets: for small
        networks and tests; :meth:`effective_links` is the sparse form.
        """
        self._check_fitted()
        self._state.ensure_fresh()
        dense = self._state.store.full_table(averaged=bool(self.average))
        unseen = np.full((1, dense.shape[1]), self._state.store.absent)
        return np.vstack([dense, unseen])

    @property
    def coef_(self) -> np.ndarray:
        """Effective weights as scikit-learn lays them out, ``[targets, n_features]`` (dense)."""
        self._check_fitted()
        links = self.effective_links().tocoo()
        store = self._state.store
        coef = np.full((store.n_targets, self.n_features_in_), store.absent)
        features = links.row >= 1
        ids = self._state.store.feature_ids
        coef[links.col[features], ids[links.row[features] - 1]] = links.data[features]
        return coef

    @property
    def intercept_(self) -> np.ndarray:
        """Bias weight minus threshold, per target (zero bias when ``bias=False``)."""
        self._check_fitted()
        bias = np.full(self._state.store.n_targets, self._state.store.absent)
        row = self.effective_links()[0].tocoo()
        bias[row.col] = row.data
        return self._bias_strength() * bias - float(self.rule_params_["theta"])

