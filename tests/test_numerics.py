"""Weights stay finite; bad kernels are named; compiled rules and their Python
references agree."""

from __future__ import annotations

import types
import warnings

import numba
import numpy as np
import pytest
import scipy.sparse as sp

import snowpy
from snowpy.exceptions import NumericalError, PluginError
from snowpy.network.links import PRECISIONS
from snowpy.plugins import temporary_plugin
from snowpy.rules import Param, RuleKernel, RuleSpec, theta_param


_, MIN_MAGNITUDE, MAX_MAGNITUDE = PRECISIONS["float64"]


def link_weights(net):
    """Every link's weight planes, ``[links, planes]``."""
    store = net.engine_.store
    return store.W[store.live_slots()]


def noisy_problem(seed=0, n=300, F=200, T=5):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((rng.random((n, F)) < 0.1).astype(float))
    return X, rng.integers(0, T, n)  # labels independent of X: endless mistakes


def test_overflow_is_clamped_and_warned():
    X, _ = noisy_problem()
    y = np.array(["a"] * X.shape[0])  # one target, every example promotes it
    with pytest.warns(snowpy.NumericalWarning, match="exceeded the largest magnitude kept"):
        # an infinite thickness promotes on every example: 10x each time, past 1e100
        net = snowpy.Network("winnow", alpha=10, theta=1.0, thickness=float("inf"),
                             initial_weight=1, epochs=5, precision="float64").fit(X, y)
    W = link_weights(net)
    assert net.engine_.overflows > 0 and np.all(np.isfinite(W)) and W.max() == MAX_MAGNITUDE
    assert np.all(np.isfinite(net.decision_function(X)))


def test_underflow_is_floored_and_counted():
    X, _ = noisy_problem()
    y = np.array(["a", "b"])[np.arange(X.shape[0]) % 2]  # each example demotes the other target
    net = snowpy.Network("winnow", beta=0.01, theta=1e-150, epochs=20, early_stop=False,
                         precision="float64", discard=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", snowpy.NumericalWarning)
        net.fit(X, y)
    W = link_weights(net)
    assert net.engine_.underflows > 0 and W.min() == MIN_MAGNITUDE
    assert np.all(W > 0)  # never zero


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_multiplicative_weights_never_die_at_zero(precision):
    """A demotion factor ``beta ** v`` that underflows to 0 (strength 2,000) must not leave
    a weight at exactly 0, where no promotion could revive it: it is floored and counted."""
    X = sp.csr_matrix(np.array([[2000.0, 1.0], [0.0, 1.0]]))
    net = snowpy.Network("winnow", beta=0.5, theta=1.0, initial_weight=1.0, epochs=3,
                         bias=False, average=False, links="all", precision=precision)
    net.fit(X, ["a", "b"])
    W = link_weights(net)
    floor = np.dtype(precision).type(PRECISIONS[precision][1])
    assert net.engine_.underflows > 0
    assert np.all(W > 0) and W.min() == floor


def test_initial_weight_beyond_the_range_is_refused():
    with pytest.raises(snowpy.exceptions.ConfigurationError,
                       match="initial weight 1e\\+31 exceeds the largest magnitude kept"):
        snowpy.Network("winnow", initial_weight=1e31).fit(*noisy_problem())
    with pytest.raises(snowpy.exceptions.ConfigurationError,  # a theta beyond it, up front
                       match="theta=1e\\+150 is beyond the largest weight magnitude"):
        snowpy.Network("winnow", theta=1e150).fit(*noisy_problem())


def test_long_noisy_runs_stay_finite():
    X, y = noisy_problem(seed=1)
    for rule, params in (("balanced-winnow", {"alpha": 3, "beta": 0.2}),
                         ("winnow", {"alpha": 50, "beta": 0.01})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", snowpy.NumericalWarning)
            net = snowpy.Network(rule, epochs=100, early_stop=False, **params).fit(X, y)
        assert np.all(np.isfinite(link_weights(net)))
        assert np.all(np.abs(link_weights(net)) >= MIN_MAGNITUDE)
        assert np.all(np.isfinite(net.decision_function(X)))


@numba.njit
def _nan_update(w, S, t, y, activation, vals, m, sqnorm, params):
    for k in range(m):
        w[k, 0] = np.nan


@numba.njit
def _dividing_update(w, S, t, y, activation, vals, m, sqnorm, params):
    for k in range(m):
        w[k, 0] /= w[k, 0] - w[k, 0]


@numba.njit
def _wrong_contract(w, t, y):
    w[0, 0] += y


def rule_plugin(name, update):
    spec = RuleSpec(name=name, build=lambda p, c: RuleKernel(update=update, params=[]),
                    params=(theta_param(0.5),), summary="test")
    return types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [spec]))


def test_kernel_producing_nan_is_refused():
    with temporary_plugin(rule_plugin("nan-rule", _nan_update), "nan-plugin"):
        with pytest.raises(NumericalError, match="rule 'nan-rule' produced NaN at example 0"):
            snowpy.Network("nan-rule").fit([[1.0, 0.0]], ["a"])


def test_kernel_dividing_by_zero_is_named():
    """Compiled kernels follow numpy's error model (0/0 is NaN), and so does the same
    step as a Python function on numpy arrays: the engine refuses NaN, naming the rule."""
    with temporary_plugin(rule_plugin("div-rule", _dividing_update), "div-plugin"):
        with pytest.raises(NumericalError, match="rule 'div-rule' produced NaN"):
            snowpy.Network("div-rule").fit([[1.0, 0.0]], ["a"])
    python = rule_plugin("div-python", _dividing_update.py_func)
    with temporary_plugin(python, "div-python-plugin"), np.errstate(all="ignore"):
        with pytest.raises(NumericalError, match="rule 'div-python' produced NaN"):
            snowpy.Network("div-python").fit([[1.0, 0.0]], ["a"])


def test_kernel_breaking_the_contract_is_named():
    with temporary_plugin(rule_plugin("bad-rule", _wrong_contract), "bad-plugin"):
        with pytest.raises(PluginError, match="rule 'bad-rule': the update kernel "
                                              "'_wrong_contract' does not compile against "
                                              "the kernel contract"):
            snowpy.Network("bad-rule").fit([[1.0, 0.0]], ["a"])


def test_a_plain_function_is_a_slow_python_kernel_and_anything_else_is_refused():
    def additive(w, S, t, y, activation, vals, m, sqnorm, params):
        for k in range(m):
            w[k, 0] += y * vals[k]

    kernel = RuleKernel(update=additive, params=[])
    assert kernel.implementation == "python" and kernel.reference is additive
    assert kernel.compiled.implementation == "python"
    with pytest.raises(PluginError, match="must be callable|is not a kernel"):
        RuleKernel(update=3, params=[])
    with temporary_plugin(rule_plugin("additive", additive), "additive-plugin"):
        net = snowpy.Network("additive", average=False, links="all", discard=None,
                             theta=0.0).fit(np.eye(2), ["a", "b"])
        assert net.predict(np.eye(2)).tolist() == ["a", "b"]
        assert net.engine_.effective_weights()[1:3].tolist() == [[1.0, -1.0], [-1.0, 1.0]]


def test_invalid_parameter_declaration_is_refused():
    with pytest.raises(PluginError, match="parameter 'alpha' has an invalid default"):
        Param("alpha", 0.5, "promotion", low=1.0, low_open=True)
    with pytest.raises(PluginError, match="must declare theta"):
        RuleSpec(name="no-theta", build=lambda p, c: None, params=(), summary="x")
    with pytest.raises(PluginError, match="lower-case"):
        RuleSpec(name="Bad Name", build=lambda p, c: None, params=(theta_param(0),), summary="x")


#: Every built-in rule at its defaults, then along its other branches (a floor, a threshold
#: relative to the activation, the variants, thresholds and thicknesses away from 0,
#: negative margins): each branch of a compiled step is compared with its reference.
PARITY_SETTINGS = [
    ("perceptron", {}), ("perceptron", {"theta": 0.3, "learning_rate": 0.25,
                                        "initial_weight": 0.05, "negative_thickness": 0.2}),
    ("winnow", {}), ("winnow", {"floor": 0.05, "threshold_relative": True, "alpha": 1.6,
                                "beta": 0.6}),
    ("winnow", {"initial_weight": 0.5, "theta": 2.0, "negative_thickness": 0.5}),
    ("balanced-winnow", {}), ("balanced-winnow", {"alpha": 1.3, "beta": 0.7, "theta": 0.5,
                                                  "initial_weight": 1.5,
                                                  "negative_initial_weight": 0.5}),
    ("thick-separator", {}), ("thick-separator", {"thickness": 0.5, "theta": -0.2}),
    ("aggressive", {}), ("aggressive", {"margin": 0.5, "theta": 0.1, "thickness": 0.3}),
    ("passive-aggressive", {}), ("passive-aggressive", {"variant": "pa"}),
    ("passive-aggressive", {"variant": "pa-ii", "C": 0.3, "negative_thickness": 0.2}),
    ("naive-bayes", {}), ("naive-bayes", {"smoothing": -8.0, "theta": 0.5}),
    ("normalised-winnow", {}), ("normalised-winnow", {"eta": 0.9, "theta": 0.1,
                                                      "thickness": 0.05}),
]


def _parity_run():
    """Every built-in rule's weights, mistakes and online answers on one problem."""
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((80, 40)) < 0.2) * rng.uniform(0.5, 2, (80, 40)))
    y = rng.integers(0, 3, 80)
    out = {}
    for rule, params in PARITY_SETTINGS:
        name = f"{rule} {params}"
        net = snowpy.Network(rule, epochs=3, early_stop=False, precision="float64",
                             **params).fit(X, y)
        out[name] = [net.engine_.effective_weights().tolist(), net.mistakes_,
                     net.engine_.store.S.tolist()]  # (and the rule's state per target)
        online = snowpy.Network(rule, precision="float64", calibrate="progressive", **params)
        for i in range(X.shape[0]):  # the one-example path, and its predictions
            online.learn_one(X[i], int(y[i]))
        out[name + " online"] = [online.engine_.effective_weights().tolist(), online.mistakes_,
                                 online.engine_.store.S.tolist(),
                                 [online.predict_one(X[i]) for i in range(10)],
                                 online.predict_proba_one(X[0])]
    clf = snowpy.SnowClassifier(ngrams=1, precision="float64", calibrate="progressive")
    for i, text in enumerate(["cheap pills now", "lunch at noon", "cheap offer today",
                              "see you at lunch"] * 10):  # text learned in one call
        clf.learn_one(text, "ab"[i % 2])
    out["text online"] = [clf.network_.engine_.effective_weights().tolist(),
                          clf.predict_proba_one("cheap lunch")]
    return out


def test_compiled_rules_and_their_python_references_agree_exactly():
    """Each built-in rule's C step and its Python reference (``RuleKernel.reference``),
    run by the same engine, batch and one example at a time: the same numbers."""
    from unittest import mock

    from snowpy.rules.kernels import UpdateKernel

    compiled = _parity_run()
    as_python = property(lambda kernel: UpdateKernel.from_python(kernel.reference))
    with mock.patch.object(RuleKernel, "compiled", as_python):
        python = _parity_run()
    assert compiled.keys() == python.keys()
    for rule in compiled:
        assert compiled[rule] == python[rule], rule


def test_kernel_errors_are_collected_while_training_and_the_hook_before_is_restored(
        monkeypatch):
    """``KERNEL_ERRORS``: while a training runs, the exceptions of compiled kernels (a
    numba ``CPUContext``'s) are collected, any other unraisable exception goes to the
    hook installed before, which is restored when the training ends, nested or not,
    each time; ``watch`` collects from then on. (The hook, a bound method, had been
    compared with ``is``: it was never restored, and a second training made it its own
    "hook before", so that any other unraisable exception recursed without end.)"""
    import sys

    from snowpy.network.engine import _KernelErrors

    forwarded = []

    def before(info):
        forwarded.append(info)

    class CPUContext:
        pass

    monkeypatch.setattr(sys, "unraisablehook", before)
    errors = _KernelErrors()
    kernel = types.SimpleNamespace(object=CPUContext(), exc_value=ValueError("gave up"))
    idle = types.SimpleNamespace(object=CPUContext(), exc_value=None)
    other = types.SimpleNamespace(object="a __del__", exc_value=KeyError("k"))
    bare = types.SimpleNamespace(exc_value=RuntimeError("no object"))
    for _ in range(2):  # (a second training as the first)
        with errors:
            assert sys.unraisablehook == errors._hook
            with errors:  # (nested: the outer one restores)
                sys.unraisablehook(kernel)
            assert sys.unraisablehook == errors._hook
            for info in (other, bare, idle, kernel):
                sys.unraisablehook(info)
        assert sys.unraisablehook is before
        first, count = errors.take()
        assert first is kernel.exc_value and count == 2 and errors.caught == []
    assert forwarded == [other, bare, idle] * 2
    errors.watch()
    assert sys.unraisablehook == errors._hook
    sys.unraisablehook(kernel)
    with errors:  # (a training starts with none collected)
        assert errors.caught == []
    assert sys.unraisablehook == errors._hook  # (watched: collecting from now on)
    sys.unraisablehook(other)
    assert forwarded[-1] is other and len(forwarded) == 7
    watched = _KernelErrors()  # (the one-example path: watched before any training)
    watched.watch()
    sys.unraisablehook(kernel)
    assert watched.take() == (kernel.exc_value, 1)


@pytest.mark.parametrize("value,checking", [(None, False), ("", False), ("0", False),
                                            ("1", True), ("yes", True)])
def test_kernels_are_checked_when_snowpy_check_kernels_is_set_and_not_0(
        monkeypatch, value, checking):
    from snowpy.network.engine import checking_kernels

    if value is None:
        monkeypatch.delenv("SNOWPY_CHECK_KERNELS", raising=False)
    else:
        monkeypatch.setenv("SNOWPY_CHECK_KERNELS", value)
    assert checking_kernels() is checking
