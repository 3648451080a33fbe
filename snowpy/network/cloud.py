"""``snowpy.Cloud``: SNoW's clouds, several target nodes per label voting by confidence.

A cloud trains one network per member rule on the same examples (each a
:class:`~snowpy.Network`: every option, every rule parameter). A member's
target node starts with confidence 1, divided by ``1 + 2 / (100 + m)`` at its
``m``-th mistake (SNoW's weighted-majority scheme, a mistake being an update
of the node); the confidences are normalised within the cloud, label by
label, and the cloud's activation for a label is the confidence-weighted sum
of its members' sigmoid activations, ``1 / (1 + exp(theta - activation))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from snowpy.exceptions import ConfigurationError, NotFittedError

__all__ = ["Cloud", "confidence"]


def confidence(mistakes: Any) -> np.ndarray:
    """SNoW's confidence after ``mistakes`` mistakes: 1 divided by ``1 + 2 / (100 + m)``
    at the ``m``-th, which telescopes to ``101 * 102 / ((101 + M) * (102 + M))``.

    >>> confidence([0, 1, 2]).round(6).tolist()
    [1.0, 0.980583, 0.961725]
    """
    M = np.asarray(mistakes, dtype=np.float64)
    return 101.0 * 102.0 / ((101.0 + M) * (102.0 + M))


def _sigmoid(scores: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * scores))  # 1 / (1 + exp(-s)), without overflow


class Cloud:
    """Several update rules per label, voting by confidence (SNoW's clouds).

    Parameters
    ----------
    members : sequence of str or (str, dict), default ("winnow", "perceptron")
        The rule of each member network, with its rule parameters.
    **options
        :class:`~snowpy.Network` options shared by every member (``epochs``,
        ``average``, ``links``, ``thickness``...).

    Attributes
    ----------
    networks_ : list of Network
        The members, trained.
    confidence_ : ndarray, shape (members, labels)
        Each member's confidence per label, normalised within the cloud.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 1]]))
    >>> cloud = Cloud(("winnow", "perceptron"), epochs=5).fit(X, ["a", "b", "a"])
    >>> cloud.predict(X).tolist()
    ['a', 'b', 'a']
    >>> cloud.confidence_.sum(axis=0).tolist()
    [1.0, 1.0]
    """

    def __init__(self, members: Sequence[Any] = ("winnow", "perceptron"), **options: Any
                 ) -> None:
        self.members = members
        self.options = options

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"members": self.members, **self.options}

    def set_params(self, **params: Any) -> Cloud:
        if "members" in params:
            self.members = params.pop("members")
        self.options.update(params)
        return self

    def _specs(self) -> list[tuple[str, dict[str, Any]]]:
        specs = []
        for member in self.members:
            rule, params = (member, {}) if isinstance(member, str) else (
                tuple(member) if isinstance(member, (tuple, list)) and len(member) == 2
                else (None, None))
            if not isinstance(rule, str) or not isinstance(params, dict):
                raise ConfigurationError(f"a cloud member is a rule name or (rule, parameters), "
                                         f"got {member!r}")
            specs.append((rule, dict(params)))
        if len(specs) < 2:
            raise ConfigurationError("a cloud needs at least two members")
        return specs

    def _make(self) -> list[Any]:
        from snowpy.network.network import Network

        options = {k: v for k, v in self.options.items() if k != "calibrate"}
        networks = [Network(rule, **options, **params) for rule, params in self._specs()]
        for network in networks:
            network.check_options()
        return networks

    # -------------------------------------------------------------- training
    def fit(self, X: Any, y: Sequence[Any], **fit_params: Any) -> Cloud:
        """Train every member on ``(X, y)`` (see :meth:`Network.fit`)."""
        networks = self._make()
        for network in networks:
            network.fit(X, y, **fit_params)
        self.networks_ = networks
        return self

    def partial_fit(self, X: Any, y: Sequence[Any], **fit_params: Any) -> Cloud:
        """One more pass of every member over ``(X, y)``, in order."""
        if not hasattr(self, "networks_"):
            self.networks_ = self._make()
        for network in self.networks_:
            network.partial_fit(X, y, **fit_params)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "networks_"):
            raise NotFittedError("this Cloud is not trained yet; call fit or partial_fit first")

    # ------------------------------------------------------------ prediction
    @property
    def classes_(self) -> np.ndarray:
        self._check_fitted()
        return self.networks_[0].classes_

    @property
    def confidence_(self) -> np.ndarray:
        """Per member and label, the confidence normalised within the cloud."""
        self._check_fitted()
        raw = np.stack([confidence(n.promotions_ + n.demotions_) for n in self.networks_])
        return raw / raw.sum(axis=0, keepdims=True)

    def decision_function(self, X: Any) -> np.ndarray:
        """The cloud's activation of every label, ``float64[n, labels]``, from 0 to 1."""
        self._check_fitted()
        weights = self.confidence_
        total = np.zeros(0)
        for weight, network in zip(weights, self.networks_):
            part = weight * _sigmoid(network.target_scores(X))
            total = part if total.size == 0 else total + part
        return total

    def predict(self, X: Any) -> Any:
        """The label of the highest cloud activation (multi-label: those above 1/2)."""
        scores = self.decision_function(X)
        classes = self.classes_
        if self.networks_[0].multilabel_:
            return [tuple(classes[np.flatnonzero(row >= 0.5)].tolist()) for row in scores]
        return classes[np.argmax(scores, axis=1)]

    def score(self, X: Any, y: Sequence[Any]) -> float:
        predicted = self.predict(X)
        if self.networks_[0].multilabel_:
            return float(np.mean([set(p) == set(t) for p, t in zip(predicted, y)]))
        return float(np.mean(np.asarray(predicted, dtype=object) == np.asarray(y, dtype=object)))

    # ------------------------------------------------------------ model files
    def _model_state(self, inference_only: bool = False) -> tuple[dict, dict]:
        from snowpy.network.state import network_state

        self._check_fitted()
        members, arrays = [], {}
        for k, network in enumerate(self.networks_):
            header, member_arrays = network_state(network, inference_only)
            members.append(header)
            arrays.update({f"member{k}.{name}": a for name, a in member_arrays.items()})
        return {"kind": "cloud", "cloud": {"members": members}}, arrays

    def save(self, path: Any, *, inference_only: bool = False) -> Any:
        """Save the cloud atomically (see :func:`snowpy.save`)."""
        from snowpy.model_file import write_model

        return write_model(path, *self._model_state(inference_only))

    @classmethod
    def _restore(cls, header: dict[str, Any], arrays: dict[str, np.ndarray], where: str
                 ) -> Cloud:
        from snowpy.exceptions import ModelFileError
        from snowpy.network.network import Network
        from snowpy.network.state import restore_network

        members = header.get("members")
        if not isinstance(members, list) or len(members) < 2:
            raise ModelFileError(f"{where}: a cloud lists at least two members")
        networks = []
        for k, member in enumerate(members):
            prefix = f"member{k}."
            part = {name[len(prefix):]: a for name, a in arrays.items()
                    if name.startswith(prefix)}
            networks.append(restore_network(Network, member, part, f"{where} (member {k})"))
        if any(n.classes_.tolist() != networks[0].classes_.tolist() for n in networks):
            raise ModelFileError(f"{where}: the cloud's members have different labels")
        options = {k: v for k, v in (members[0].get("options") or {}).items() if k != "rule"}
        cloud = cls([(n.rule, dict(n.rule_params)) for n in networks], **options)
        cloud.networks_ = networks
        return cloud
