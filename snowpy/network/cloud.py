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

from snowpy.calibration import sigmoid
from snowpy.declared import RUNNING
from snowpy.exceptions import ConfigurationError, NotFittedError
from snowpy.model_kinds import model_kind
from snowpy.network.network import NetworkKind
from snowpy.network.engine import OneExample

__all__ = ["Cloud", "CloudEngine", "cloud_members", "confidence", "share_params"]


def confidence(mistakes: Any) -> np.ndarray:
    """SNoW's confidence after ``mistakes`` mistakes: 1 divided by ``1 + 2 / (100 + m)``
    at the ``m``-th, which telescopes to ``101 * 102 / ((101 + M) * (102 + M))``.

    >>> confidence([0, 1, 2]).round(6).tolist()
    [1.0, 0.980583, 0.961725]
    """
    M = np.asarray(mistakes, dtype=np.float64)
    return 101.0 * 102.0 / ((101.0 + M) * (102.0 + M))


def _vote(weights: np.ndarray, member_scores: list[np.ndarray]) -> np.ndarray:
    """The confidence-weighted sum of the members' sigmoid activations."""
    total = np.zeros(member_scores[0].shape)
    for weight, scores in zip(weights, member_scores):
        total += weight * sigmoid(scores)
    return total


def _logit(activation: np.ndarray) -> np.ndarray:
    """``log(a / (1 - a))``, finite: a vote of 0 or 1 is held 1e-15 inside."""
    a = np.clip(activation, 1e-15, 1.0 - 1e-15)
    return np.log(a) - np.log1p(-a)


def _added(lists: Any) -> list[int]:
    """Lists of per-epoch figures added element by element (the longest one's length)."""
    total: list[int] = []
    for values in lists:
        for k, value in enumerate(values):
            if k < len(total):
                total[k] += int(value)
            else:
                total.append(int(value))
    return total


def cloud_members(rule: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """The members a ``rule`` names, or None for a single rule.

    ``"winnow+perceptron"``, or a list of rule names and ``(name, parameters)`` pairs.

    >>> cloud_members("winnow+perceptron")
    [('winnow', {}), ('perceptron', {})]
    >>> cloud_members("winnow") is None
    True
    """
    if isinstance(rule, str):
        if "+" not in rule:
            return None
        names = [part.strip() for part in rule.split("+")]
        if not all(names):
            raise ConfigurationError(f"rule {rule!r}: a cloud is rules joined by '+', as "
                                     "'winnow+perceptron'")
        return [(name, {}) for name in names]
    if not isinstance(rule, (list, tuple)):
        return None  # (one rule given as an object: the network checks it)
    members = []
    for member in rule:
        name, params = (member, {}) if isinstance(member, str) else (
            tuple(member) if isinstance(member, (tuple, list)) and len(member) == 2
            else (None, None))
        if not isinstance(name, str) or not isinstance(params, dict):
            raise ConfigurationError(f"a cloud member is a rule name or (rule, parameters), "
                                     f"got {member!r}")
        members.append((name, dict(params)))
    return members


def share_params(members: list[tuple[str, dict[str, Any]]], params: dict[str, Any]
                 ) -> list[tuple[str, dict[str, Any]]]:
    """Give each member the shared rule parameters it declares (a member's own win);
    a parameter no member declares is refused."""
    from snowpy.plugins import get_rule

    declared = [set(get_rule(name).param_names) for name, _ in members]
    unknown = [name for name in params if not any(name in d for d in declared)]
    if unknown:
        rules = "+".join(name for name, _ in members)
        raise ConfigurationError(f"no member of the cloud {rules!r} has a parameter "
                                 f"{unknown[0]!r}")
    return [(name, {**{k: v for k, v in params.items() if k in d}, **own})
            for (name, own), d in zip(members, declared)]


@model_kind("cloud")
class Cloud(NetworkKind):
    """Several update rules per label, voting by confidence (SNoW's clouds).

    A network-like estimator: ``fit``, ``partial_fit``, ``learn_one``,
    ``predict`` (with ``targets`` and ``abstain``), ``predict_proba``,
    ``decision_function``, and a :class:`~snowpy.SnowClassifier` with
    ``rule="winnow+perceptron"`` (or ``snowpy train --rule winnow+perceptron``)
    holds one.

    Parameters
    ----------
    members : sequence of str or (str, dict), default ("winnow", "perceptron")
        The rule of each member network, with its rule parameters.
    **options
        :class:`~snowpy.Network` options shared by every member (``epochs``,
        ``average``, ``links``, ``thickness``, ``calibrate``...).

    Attributes
    ----------
    networks_ : list of Network
        The members, trained.
    confidence_ : ndarray, shape (members, labels)
        Each member's confidence per label, normalised within the cloud.

    Notes
    -----
    :meth:`activations` is SNoW's cloud activation, from 0 to 1;
    :meth:`target_scores` is its log-odds (positive: above 1/2, the label
    claimed), which ``predict`` and ``decision_function`` use as a network's
    scores. With ``calibrate``, every member is calibrated and the cloud's
    probability of a label is the confidence-weighted mixture of its members'
    (rows renormalised for single-label clouds).

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
        """Set the members or the options they share; a running parameter (``n_jobs``)
        reaches the members trained already too."""
        if "members" in params:
            self.members = params.pop("members")
        self.options.update(params)
        running = {name: value for name, value in params.items() if name in RUNNING}
        for network in self.__dict__.get("networks_", ()) if running else ():
            network.set_params(**running)
        return self

    @property
    def rule_params_(self) -> list[dict[str, Any]]:
        """Each member's rule and parameters, as it trained."""
        self._check_fitted()
        return [{"rule": n.rule, **n.rule_params_} for n in self.networks_]

    @property
    def rule(self) -> str:
        """The members' rules joined by ``+``."""
        return "+".join(name for name, _ in self._specs())

    def _specs(self) -> list[tuple[str, dict[str, Any]]]:
        specs = cloud_members(list(self.members)) or []
        if len(specs) < 2:
            raise ConfigurationError("a cloud needs at least two members")
        return specs

    def _make(self) -> list[Any]:
        from snowpy.network.network import Network

        networks = [Network(rule, **self.options, **params) for rule, params in self._specs()]
        for network in networks:
            network.check_options()
        return networks

    def check_options(self) -> None:
        """Check every member's rule, parameters and options."""
        self._make()

    # -------------------------------------------------------------- training
    def fit(self, X: Any, y: Sequence[Any] | None = None, **fit_params: Any) -> Cloud:
        """Train every member on ``(X, y)`` (see :meth:`Network.fit`; each member reads
        ``X``: none writes over it, whatever ``copy`` says)."""
        networks = self._make()
        fit_params.pop("copy", None)
        for network in networks:  # (shuffle_keys, when given, for every member)
            network.fit(X, y, **fit_params)
        self.networks_ = networks
        return self

    def partial_fit(self, X: Any, y: Sequence[Any], **fit_params: Any) -> Cloud:
        """One more pass of every member over ``(X, y)``, in order."""
        if "networks_" not in self.__dict__:
            self.networks_ = self._make()
        for network in self.networks_:
            network.partial_fit(X, y, **fit_params)
        return self

    def learn_one(self, x: Any, y: Any, *, width: int | None = None) -> Cloud:
        """Learn one example with every member (see :meth:`snowpy.Network.learn_one`)."""
        if "networks_" not in self.__dict__:
            self.networks_ = self._make()
        for network in self.networks_:
            network.learn_one(x, y, width=width)
        return self

    def prune(self) -> int:
        """Each member's eligibility by percent and ``discard``; the links dropped."""
        self._check_fitted()
        return sum(network.prune() for network in self.networks_)

    def __sklearn_is_fitted__(self) -> bool:
        """Whether the cloud has learned (scikit-learn's ``check_is_fitted`` asks)."""
        return "networks_" in self.__dict__

    # -------------------------------------------------------- what it holds
    @property
    def mistakes_(self) -> list[int]:
        """Per epoch, the members' mistakes added up."""
        return _added(n.mistakes_ for n in self.networks_)

    @property
    def updates_(self) -> list[int]:
        """Per epoch, the members' updates added up."""
        return _added(n.updates_ for n in self.networks_)

    @property
    def n_links_(self) -> int:
        """Links held by all members."""
        self._check_fitted()
        return sum(n.n_links_ for n in self.networks_)

    @property
    def feature_ids_(self) -> np.ndarray:
        """The features any member has seen, sorted."""
        self._check_fitted()
        return np.unique(np.concatenate([n.feature_ids_ for n in self.networks_]))

    def link_counts(self, columns: Any = None) -> np.ndarray:
        """Links per feature over all members (for :attr:`feature_ids_`, or ``columns``)."""
        columns = self.feature_ids_ if columns is None else np.asarray(columns)
        return sum(n.link_counts(columns) for n in self.networks_)

    @property
    def confidence_(self) -> np.ndarray:
        """Per member and label, the confidence normalised within the cloud."""
        return self.engine_.confidence()

    @property  # type: ignore[misc]  # (a cloud's engine is made of its members', not set)
    def engine_(self) -> CloudEngine:
        """What the cloud has learned: its members' engines, as one
        (:class:`CloudEngine`)."""
        self._check_fitted()
        engines = [n.engine_ for n in self.networks_]
        engine = self.__dict__.get("_engine")
        if engine is None or engine.engines != engines:
            engine = self.__dict__["_engine"] = CloudEngine(engines)
        return engine

    @property
    def _learned(self) -> CloudEngine:
        return self.engine_

    # ------------------------------------------------------------ prediction
    def activations(self, X: Any) -> np.ndarray:
        """The cloud's activation of every label, ``float64[n, labels]``, from 0 to 1:
        the confidence-weighted sum of the members' ``1 / (1 + exp(theta - activation))``."""
        self._check_fitted()
        return _vote(self.confidence_, [n.target_scores(X) for n in self.networks_])

    def target_scores(self, X: Any) -> np.ndarray:
        """The log-odds of :meth:`activations` (positive: the label is claimed)."""
        return _logit(self.activations(X))

    def predict_proba(self, X: Any) -> np.ndarray:
        """The confidence-weighted mixture of the calibrated members' probabilities."""
        self._check_fitted()
        if self.calibration_ is None:
            raise NotFittedError("this cloud has no calibration; train it with "
                                 "calibrate='cv' to get probabilities")
        return self.engine_.mixture([n.predict_proba(X) for n in self.networks_])

    # ------------------------------------------------------------ model files
    def to_state(self, inference_only: bool = False) -> tuple[dict, dict]:
        """The cloud as a header and named arrays: each member's, prefixed."""
        self._check_fitted()
        members, arrays = [], {}
        for k, network in enumerate(self.networks_):
            header, member_arrays = network.to_state(inference_only)
            members.append(header["network"])
            arrays.update({f"member{k}.{name}": a for name, a in member_arrays.items()})
        return {"kind": "cloud", "cloud": {"members": members}}, arrays

    @classmethod
    def from_state(cls, header: dict[str, Any], arrays: dict[str, np.ndarray],
                   where: str = "model") -> Cloud:
        """The cloud :meth:`to_state` described, validated."""
        from snowpy.exceptions import ModelFileError
        from snowpy.network.network import Network

        part = header.get("cloud")
        members = part.get("members") if isinstance(part, dict) else None
        if not isinstance(members, list) or len(members) < 2:
            raise ModelFileError(f"{where}: a cloud lists at least two members")
        networks = []
        for k, member in enumerate(members):
            prefix = f"member{k}."
            part = {name[len(prefix):]: a for name, a in arrays.items()
                    if name.startswith(prefix)}
            networks.append(Network.from_state({"kind": "network", "network": member},
                                               part, f"{where} (member {k})"))
        if any(n.classes_.tolist() != networks[0].classes_.tolist() for n in networks):
            raise ModelFileError(f"{where}: the cloud's members have different labels")
        options = {k: v for k, v in (members[0].get("options") or {}).items() if k != "rule"}
        cloud = cls([(n.rule, dict(n.rule_params)) for n in networks], **options)
        cloud.networks_ = networks
        return cloud


class CloudEngine(OneExample):
    """What a cloud has learned: its members' engines, as one, with the one-example
    protocol of every engine (:class:`~snowpy.network.engine.Engine`): an example is
    learned by every member, and scored by their votes, weighted by confidence."""

    def __init__(self, engines: list[Any]) -> None:
        self.engines = engines
        self.labels = engines[0].labels  # (the first member's: every member has the same)
        self.multilabel = bool(engines[0].multilabel)
        #: the last example scored: the cloud's scores and each member's
        self.last: tuple[np.ndarray, list[np.ndarray]] | None = None

    @property
    def indicator(self) -> bool:
        """The labels came as a 0/1 matrix."""
        return bool(self.engines[0].indicator)

    @property
    def calibration(self) -> tuple[Any, ...] | None:
        """The members' calibrations when every member has one, else None."""
        calibrations = tuple(engine.calibration for engine in self.engines)
        return None if any(c is None for c in calibrations) else calibrations

    @property
    def n_features(self) -> int:
        return int(self.engines[0].n_features)

    @property
    def n_examples_seen(self) -> int:
        """Examples processed by training (every member sees each)."""
        return int(self.engines[0].n_examples_seen)

    @property
    def frozen(self) -> bool:
        """A member was loaded from an inference-only model file."""
        return any(engine.frozen for engine in self.engines)

    def confidence(self) -> np.ndarray:
        """Per member and label, the confidence normalised within the cloud."""
        raw = np.stack([confidence(e.promotions + e.demotions) for e in self.engines])
        return raw / raw.sum(axis=0, keepdims=True)

    def mixture(self, probabilities: list[np.ndarray]) -> np.ndarray:
        """The members' probabilities mixed by confidence (rows renormalised for a
        single-label cloud)."""
        mixed = sum(c * p for c, p in zip(self.confidence(), probabilities))
        if not self.multilabel:
            mixed = mixed / mixed.sum(axis=-1, keepdims=True)
        return np.asarray(mixed)

    def forget(self, label: Any) -> None:
        """Forget ``label`` in every member (:meth:`~snowpy.network.engine.Engine.forget`)."""
        first = self.engines[0]
        target = first.labels.find(label)
        first.forget(label)  # (checked there: nothing changes when it is refused)
        for engine in self.engines[1:]:
            if engine.labels is first.labels:
                engine.drop_target(int(target))
            else:
                engine.forget(label)
        self.last = None

    def check_label(self, y: Any) -> None:
        """Every member's :meth:`~snowpy.network.engine.Engine.check_label`."""
        for engine in self.engines:
            engine.check_label(y)

    def score_one(self, ids: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, int]:
        """The cloud's scores of one checked example per target (its members' votes, by
        confidence), and the best target."""
        member_scores = [engine.score_one(ids, vals)[0] for engine in self.engines]
        scores = _logit(_vote(self.confidence(), [s[None, :] for s in member_scores]))[0]
        self.last = (scores, member_scores)
        return scores, int(np.argmax(scores)) if scores.size else -1

    def learn_one(self, ids: np.ndarray, vals: np.ndarray, y: Any) -> None:
        """Learn one checked example with every member."""
        for engine in self.engines:
            engine.learn_one(ids, vals, y)

    def probabilities_of(self, scores: np.ndarray) -> dict[Any, float]:
        """The members' calibrated probabilities of the example last scored, mixed."""
        calibrations = self.calibration
        if self.last is None or self.last[0] is not scores or calibrations is None:
            raise ConfigurationError("cloud probabilities of one example need calibrated "
                                     "members (calibrate='cv') and the example's scores")
        members = [c.probabilities(s[None, :]) for c, s in zip(calibrations, self.last[1])]
        return dict(zip(self.labels.labels, self.mixture(members)[0].tolist()))
