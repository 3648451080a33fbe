"""The conformance suite: what every update rule must do to work in snowpy.

Each check takes a rule name (and optional parameters) and raises an
``AssertionError`` that says what went wrong.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any
from unittest import mock

import numpy as np
import scipy.sparse as sp

from snowpy.exceptions import ConfigurationError
from snowpy.network import Network
from snowpy.network.learner import network_for
from snowpy.plugins import get_rule

__all__ = ["check_rule", "conformance_checks"]


def _problem(rule: str, seed: int = 0, n: int = 300, features: int = 80, classes: int = 3,
             noise: float = 0.0):
    """A sparse, linearly separable problem (optionally with flipped labels); for a rule
    declared ``signed``, every feature present as +1 or -1."""
    rng = np.random.default_rng(seed)
    prototypes = rng.random((classes, features)) < 0.15
    y = rng.integers(0, classes, n)
    distortion = rng.random((n, features)) < 0.04
    present = (prototypes[y] ^ distortion).astype(np.float64)
    X = sp.csr_matrix(2.0 * present - 1.0 if get_rule(rule).signed else present)
    if noise:
        flip = rng.random(n) < noise
        y = np.where(flip, rng.integers(0, classes, n), y)
    return X, y


def _state(net: Any) -> np.ndarray:
    """What a network learned, as one array: the effective weights, or the arrays of a
    learner's network's model file (the kernel Perceptron's support vectors and their
    coefficients)."""
    if isinstance(net, Network):
        return net.engine_.effective_weights()
    _, arrays = net.to_state()
    return np.concatenate([arrays[name].astype(np.float64).ravel()
                           for name in sorted(arrays)])


def check_parameters(rule: str, params: Mapping[str, Any] | None = None) -> None:
    """Declared defaults validate; values outside a declared range are refused."""
    spec = get_rule(rule)
    spec.validate(dict(params or {}))
    for param in spec.params:
        for bad, open_bound in ((param.low, param.low_open), (param.high, param.high_open)):
            if bad is None or param.type not in (int, float):
                continue
            outside = bad if open_bound else (bad - 1 if bad == param.low else bad + 1)
            try:
                spec.validate({**dict(params or {}), param.name: outside})
            except ConfigurationError:
                continue
            raise AssertionError(f"{rule}: {param.name}={outside!r} is outside "
                                 f"{param.describe_range()} but was accepted")


def check_deterministic(rule: str, params: Mapping[str, Any] | None = None) -> None:
    """The same seed gives the same weights."""
    X, y = _problem(rule)
    first = _state(network_for(rule, {"epochs": 3, "seed": 7}, params or {}).fit(X, y))
    second = _state(network_for(rule, {"epochs": 3, "seed": 7}, params or {}).fit(X, y))
    assert np.array_equal(first, second), f"{rule}: two fits with seed 7 differ"


def check_compiled_matches_python(rule: str, params: Mapping[str, Any] | None = None) -> None:
    """The compiled step (or a learner's similarity) and its Python reference (the kernel
    record's, or the learner's, ``reference``: the same arithmetic written in Python) train the same network and
    score alike; a rule with no reference is exempt.

    Stored in float64: compiled float64 arithmetic may differ from Python's in the last
    bit (fused multiply-adds), which float32 storage would round either way.
    """
    X, y = _problem(rule, n=60)
    compiled = network_for(rule, {"epochs": 2, "precision": "float64"}, params or {}).fit(X, y)
    kernel = compiled.learner_ if get_rule(rule).learner else compiled.engine_.kernel
    if getattr(kernel, "reference", None) is None:
        return
    abi = type(kernel.compiled)  # (the ABI's kernel class: an update, a similarity)
    as_python = property(lambda record: abi.from_python(record.reference, rule))
    with mock.patch.object(type(kernel), "compiled", as_python):
        python = network_for(rule, {"epochs": 2, "precision": "float64"}, params or {}).fit(X, y)
        python_scores = python.decision_function(X)
    difference = np.max(np.abs(_state(compiled) - _state(python)), initial=0.0)
    assert np.allclose(_state(compiled), _state(python), rtol=1e-12, atol=1e-300), \
        f"{rule}: compiled and pure-Python training differ by {difference:g}"
    assert np.allclose(compiled.decision_function(X), python_scores, rtol=1e-9), \
        f"{rule}: compiled and pure-Python scores differ"


def check_stays_in_its_arrays(rule: str, params: Mapping[str, Any] | None = None) -> None:
    """With its buffers between guard zones (``SNOWPY_CHECK_KERNELS=1``), the step writes
    only its target's weights and state: training, one example at a time too, stops at
    no violation. (A write far outside, beyond the guards, kills the process:
    ``snowpy plugins --check`` runs the suite in a child process for that.)"""
    if get_rule(rule).learner:  # (guard zones are the update ABI's)
        return
    X, y = _problem(rule, n=80)
    with mock.patch.dict(os.environ, {"SNOWPY_CHECK_KERNELS": "1"}):
        net = network_for(rule, {"epochs": 2}, params or {})
        net.fit(X, y)
        online = network_for(rule, {}, params or {})
        for i in range(20):
            online.learn_one(dict(zip(X[i].indices.tolist(), X[i].data.tolist())), y[i])


def check_finite(rule: str, params: Mapping[str, Any] | None = None) -> None:
    """Thirty epochs on noisy labels leave every weight and score finite."""
    import warnings

    X, y = _problem(rule, noise=0.4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = network_for(rule, {"epochs": 30, "early_stop": False}, params or {}).fit(X, y)
    assert np.all(np.isfinite(_state(net))), \
        f"{rule}: non-finite weights after 30 noisy epochs"
    assert np.all(np.isfinite(net.decision_function(X))), f"{rule}: non-finite scores"


def check_learns_separable(rule: str, params: Mapping[str, Any] | None = None) -> None:
    """A separable three-class problem is learned to at least 95% training accuracy."""
    X, y = _problem(rule)
    net = network_for(rule, {"epochs": 20}, params or {}).fit(X, y)
    accuracy = net.score(X, y)
    assert accuracy >= 0.95, f"{rule}: training accuracy {accuracy:.3f} on a separable problem"


def check_no_update_when_correct(rule: str, params: Mapping[str, Any] | None = None) -> None:
    """With zero thickness, a correctly classified example changes no weight (for
    mistake-driven rules; a rule that learns from every example, such as Naive Bayes,
    is exempt: it says so with ``RuleKernel(mistake_driven=False)``)."""
    X, y = _problem(rule)
    zero = {**dict(params or {}), "thickness": 0.0, "negative_thickness": 0.0}
    engine = network_for(rule, {}, zero).fit(X[:10], y[:10]).engine_
    if not getattr(getattr(engine, "kernel", None) or engine.learner, "mistake_driven", True):
        return
    # every link made up front ("all"): with sparse links a right example still links
    net = network_for(rule, {"epochs": 20, "average": False, "links": "all", "discard": None},
                      zero).fit(X, y)
    scores = net.target_scores(X)
    for i in range(X.shape[0]):
        target = np.searchsorted(net.classes_, y[i])
        others = np.delete(scores[i], target)
        if scores[i, target] >= 0 and np.all(others < 0):  # every target right at theta
            before = _state(net)
            net.partial_fit(X[i], [y[i]])
            assert net.updates_[-1] == 0 and np.array_equal(before, _state(net)), \
                f"{rule}: a correctly classified example changed the weights"
            return
    raise AssertionError(f"{rule}: no example ended correctly classified at the threshold")


def check_touches_only_active_rows(rule: str, params: Mapping[str, Any] | None = None) -> None:
    """An update changes only the weights of the example's active features (and the bias);
    a rule whose state is a learner of its own is exempt (the kernel Perceptron's tests
    say what its support vectors hold)."""
    if get_rule(rule).learner:  # (a learner's own tests say what it holds)
        return
    X, y = _problem(rule)
    net = network_for(rule, {"epochs": 1, "average": False, "links": "all"}, params or {}).fit(X, y)
    # a rule that derives its scoring planes (refresh) may move them all: its learned
    # planes are what an update may change only on the active features
    view = _learned_planes if net.engine_.kernel.refresh is not None else \
        (lambda n: n.engine_.effective_weights()[:-1])
    before = view(net)
    example = X[:1]
    net.partial_fit(example, [(y[0] + 1) % 3])  # a wrong label: every rule must update
    assert net.updates_[-1] > 0, f"{rule}: a mislabelled example caused no update"
    after = view(net)
    assert after.shape == before.shape, f"{rule}: an update added feature rows"
    changed = np.flatnonzero(np.any(before != after, axis=1))
    ids = net.feature_ids_
    features = {int(ids[r - 1]) for r in changed if r > 0}
    allowed = set(example.indices.tolist())
    assert features <= allowed, \
        f"{rule}: the update changed the weights of features {sorted(features - allowed)} " \
        "that were not active"


def _learned_planes(net: Network) -> np.ndarray:
    """``float64[rows, targets * learned planes]``: the planes of coefficient 0, row by row."""
    store = net.engine_.store
    layout = store.exact()
    learned = [p for p, c in enumerate(store.planes) if c == 0.0]
    table = np.zeros((store.n_rows, store.n_targets, len(learned)))
    rows = np.repeat(np.arange(store.n_rows), layout["sizes"])
    table[rows, layout["target"]] = layout["W"][:, learned]
    return table.reshape(store.n_rows, -1)


def check_round_trip(rule: str, params: Mapping[str, Any] | None = None) -> None:
    """A saved and loaded network predicts, and continues to learn, exactly like the original."""
    from snowpy.persistence import load, save

    X, y = _problem(rule)
    net = network_for(rule, {"epochs": 3}, params or {}).fit(X[:200], y[:200])
    with TemporaryDirectory() as folder:
        loaded = load(save(net, Path(folder) / "model.snowpy"))
    assert np.array_equal(net.decision_function(X), loaded.decision_function(X)), \
        f"{rule}: a loaded network scores differently"
    net.partial_fit(X[200:], y[200:])
    loaded.partial_fit(X[200:], y[200:])
    assert np.array_equal(net.decision_function(X), loaded.decision_function(X)), \
        f"{rule}: a loaded network learns differently"


_CHECKS: tuple[Callable[..., None], ...] = (
    check_parameters, check_deterministic, check_compiled_matches_python,
    check_stays_in_its_arrays, check_finite, check_learns_separable, check_no_update_when_correct, check_touches_only_active_rows,
    check_round_trip,
)


def conformance_checks() -> tuple[Callable[..., None], ...]:
    """Every check, each ``check(rule, params=None)``."""
    return _CHECKS


def check_rule(rule: str, params: Mapping[str, Any] | None = None) -> None:
    """Run every conformance check on ``rule``; raise at the first failure."""
    for check in _CHECKS:
        check(rule, params)
