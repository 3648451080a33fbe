"""The records an update-rule plugin returns: its spec and its kernel.

An update rule is thin. The training engine (:mod:`snowpy.network.engine`)
owns everything rules have in common: computing each target's activation,
deciding whether an example calls for an update (the threshold ``theta`` and
SNoW's thick separator, ``thickness`` and ``negative_thickness``), averaging,
keeping weights finite and counting mistakes. A rule supplies only

* its declared parameters (:class:`Param`), validated before training;
* how many weight planes it keeps and how they combine into the effective
  weight (one plane for Perceptron and Winnow, two for Balanced Winnow);
* the update step itself, a compiled function (the *kernel*).

The kernel contract
-------------------
The engine calls ``update(w, S, t, y, activation, vals, m, sqnorm, params)``
when target ``t`` must be updated on the current example:

``w``
    ``float64[m, planes]``: target ``t``'s weights on the example's active
    features, gathered by the engine (row ``k`` for the ``k``-th feature,
    the bias first when the network has one). The kernel updates them in
    place; the engine writes them back into the network's links (creating
    a link where the ``"touched"`` policy asks for one).
``S``
    ``float64[targets, state_size]``, per-target state of the rule's own
    (norms, counts); most rules have none.
``t``, ``y``
    The target's number and the example's label for it, ``+1.0`` (the
    example is positive for ``t``: promote) or ``-1.0`` (demote).
``activation``
    The target's activation before the update, bias included, threshold
    not subtracted.
``vals``, ``m``
    The strengths of the ``m`` features in ``w`` (``vals[:m]``); the bias,
    when on, has the bias strength.
``sqnorm``
    ``sum(vals[:m] ** 2)``, the squared norm of those features.
``params``
    ``float64[:]``, the rule's numeric parameters as :meth:`RuleSpec.build`
    packed them.

The kernel may change ``w[:m]`` and ``S[t]``, and nothing else (``snowpy plugins
--check RULE`` runs it with guards around its buffers and tells). It returns
nothing. The engine checks the new weights (clamps magnitudes, refuses NaN)
and keeps averaged weights, so the kernel does neither. The features in
``w`` are those the target may learn from: with the ``"positive"`` link
policy, only those already linked to ``t``; with eligibility, only eligible
ones. Because the kernel sees gathered weights and never the network's
storage, it works whatever the links, precision or layout.

Rules that learn from every example
-----------------------------------
A rule that is not mistake-driven (Naive Bayes counts every example) says so
with ``RuleKernel(mistake_driven=False)``: the engine then calls its kernel on
every example for every target the example is shown to, whatever the
threshold and thickness, and :meth:`~snowpy.Network.fit` makes one pass (SNoW
counts in its first cycle only: more passes would count the examples again).
Such a rule may keep what it learns (counts) in planes of coefficient 0 and
derive the planes that score from them with ``refresh(W, target, bias, S,
params)``, a plain function the network calls when the examples seen reach 1,
2, 4, 8... and before a prediction, save or weight view that follows training
(:meth:`snowpy.network.engine.Engine.refresh_planes`). It receives the live links'
planes ``W`` (``float64[links, planes]``, written back after the call), each
link's ``target``, ``bias`` (``float64[links]``: the bias strength for a link of
the bias row, 0 for every other link) and the per-target state ``S``; it
updates ``W`` in place. This is how a rule
expresses a score that is not a sum of independently updated weights (a
count divided by its target's total, which every example of the target
changes).

The update is a C function of one ABI, whatever it is written in: the built-in
rules are compiled into snowpy; a plugin gives a ``PyCapsule`` of its own C or Cython
function, a numba ``@cfunc`` (or a ``@numba.njit`` function of the array contract
above, compiled to one on first use: :mod:`snowpy.numba_kernels`), or, slowly, a plain
Python function of the array contract (:mod:`snowpy.rules.kernels`). The engine
calls it through a pointer: one compiled loop serves every rule at the same speed,
with no Python call per example (but for a Python rule's trampoline). The ABI, for a
rule written in C::

    int update(double *w, int64_t m, int64_t n_planes,
               double *state, int64_t n_targets, int64_t state_size,
               int64_t target, double y, double activation,
               const double *vals, double sqnorm,
               const double *params, int64_t n_params, void *user_data);

``w + k * n_planes`` is row ``k`` of the array contract's ``w``, ``state + t *
state_size`` target ``t``'s state; it returns 0, or non-zero to stop the training
with an error.
"""

from __future__ import annotations

import abc
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snowpy.exceptions import ConfigurationError, PluginError
from snowpy.rules.kernels import (UPDATE_SIGNATURE, Kernel, UpdateKernel, implementation_of,
                                  kernel_of)
from snowpy.params import Param, check_record, validate_declared

__all__ = [
    "UNIVERSAL_PARAMS",
    "UPDATE_SIGNATURE",
    "BuildContext",
    "Examples",
    "Learner",
    "RuleKernel",
    "RuleSpec",
    "UpdateKernel",
    "theta_param",
    "thickness_params",
]

#: Parameters every rule accepts: the engine applies them, not the kernel.
UNIVERSAL_PARAMS = ("theta", "thickness", "negative_thickness")


def theta_param(default: float) -> Param:
    """The threshold parameter every rule declares, with the rule's default."""
    return Param("theta", default,
                 "threshold: a target claims an example when its activation >= theta")


def thickness_params(default: float = 0.0, negative: float | None = None
                     ) -> tuple[Param, Param]:
    """SNoW's thick separator (``-S p,n``), shared by every rule.

    A positive example counts as correct only if its activation is at least
    ``theta + thickness``; a negative one only if it is below
    ``theta - negative_thickness``. ``negative_thickness`` defaults to ``negative``,
    or when that is None to ``thickness``. Zero thickness is the plain mistake-driven
    rule; an infinite thickness updates on every example.
    """
    return (
        Param(
            "thickness",
            default,
            "positive thickness p of the separator (SNoW -S p,n)",
            low=0.0,
            allow_inf=True,
        ),
        Param(
            "negative_thickness",
            negative,
            "negative thickness n of the separator; None means the same as thickness",
            low=0.0,
            allow_inf=True,
        ),
    )


@dataclass(frozen=True)
class BuildContext:
    """What a rule may know about the data when it builds its kernel.

    Attributes
    ----------
    mean_active_features : float
        Average number of active features per training example, the bias
        included (SNoW's rho, used for its default initial weight
        ``3 * theta / rho``).
    n_features : int
        Width of the feature space.
    """

    mean_active_features: float
    n_features: int


@dataclass(frozen=True)
class RuleKernel:
    """A rule made ready for the engine: compiled update and packed numbers.

    Parameters
    ----------
    update : UpdateKernel, capsule, numba function or Python function
        The rule's step (module docstring; :func:`snowpy.rules.kernels.kernel_of`).
    params : sequence of float
        The numbers the kernel reads, in the order it reads them.
    initial_weights : tuple of float
        Initial value of each weight plane.
    planes : tuple of float
        Coefficient of each plane in the effective weight; ``(1.0,)`` for a
        single plane, ``(1.0, -1.0)`` for Balanced Winnow's ``w+ - w-``.
        Planes with coefficient 0 hold rule state per weight (a variance, an
        accumulator) that does not enter the activation.
    initial_state : tuple of float
        The initial value of each number of the per-target state ``S[t]`` (the
        state's size: the kernel's ``state_size``); empty for a rule without one.
    resolved : mapping
        Values the rule derived from the data for parameters left at ``None``
        (for example Winnow's initial weight); recorded with the model so a
        reloaded model rebuilds the same kernel.
    multiplicative : bool
        The rule only multiplies positive weights (Winnow): a weight can never
        reach zero, so one that does has underflowed, and the engine raises it
        to the smallest magnitude kept (and counts it).
    mistake_driven : bool
        ``False`` for a rule that learns from every example (Naive Bayes): its
        kernel is called on every example for every target shown, whatever the
        threshold and thickness, and ``fit`` makes a single pass.
    refresh : callable or None
        ``refresh(W, target, bias, S, params)``: derive the scoring planes
        from the learned ones after training (module docstring); ``None`` for
        rules whose planes are their weights.
    absent_initial : bool
        A missing link weighs the rule's initial weights whatever the link
        policy (Naive Bayes: a feature never seen with a target has the
        smoothing log-probability, not 0); links are still made as the
        policy says.
    relative_scores : bool
        Only the differences between targets' scores mean something (Naive
        Bayes' log-likelihoods, whose level follows the document's length):
        a single-label network calibrates them as a softmax with a fitted
        temperature, not with sigmoids of each score.
    reference : callable or None
        The same step written in Python (the array contract), which the
        conformance suite trains beside the compiled one; defaults to
        ``update`` itself when that is a Python or numba function.
    """

    update: Callable[..., Any]
    params: Sequence[float] | np.ndarray
    initial_weights: tuple[float, ...] = (0.0,)
    planes: tuple[float, ...] = (1.0,)
    initial_state: tuple[float, ...] = ()
    resolved: Mapping[str, Any] = field(default_factory=dict)
    multiplicative: bool = False
    mistake_driven: bool = True
    refresh: Callable[..., None] | None = None
    absent_initial: bool = False
    relative_scores: bool = False
    reference: Callable[..., Any] | None = None

    def normalisation(self, multilabel: bool) -> str:
        """How calibrated probabilities are combined across targets."""
        if multilabel:
            return "none"
        return "softmax" if self.relative_scores else "sum"

    def __post_init__(self) -> None:
        if self.refresh is not None and not callable(self.refresh):
            raise PluginError("refresh must be a function (W, target, bias, S, params)")
        kind = implementation_of(self.update)
        if isinstance(self.update, Kernel) and not isinstance(self.update, UpdateKernel):
            raise PluginError(f"the update kernel {self.update!r} is not a kernel")
        if kind == "python" and not callable(self.update):
            raise PluginError(f"the update kernel {self.update!r} must be callable")
        if self.reference is None and kind in ("python", "numba"):
            object.__setattr__(self, "reference", getattr(self.update, "py_func", None)
                               or (self.update if kind == "python" else None))
        packed = np.ascontiguousarray(np.asarray(self.params, dtype=np.float64).reshape(-1))
        if not np.all(np.isfinite(packed)):
            raise PluginError(f"kernel parameters must be finite, got {packed.tolist()}")
        object.__setattr__(self, "params", packed)
        planes = tuple(float(c) for c in self.planes)
        init = tuple(float(w) for w in self.initial_weights)
        if not planes or len(planes) != len(init):
            raise PluginError("a kernel needs one initial weight per plane and at least one plane")
        if not all(math.isfinite(v) for v in planes + init):
            raise PluginError("plane coefficients and initial weights must be finite")
        object.__setattr__(self, "planes", planes)
        object.__setattr__(self, "initial_weights", init)
        state = tuple(float(v) for v in self.initial_state)
        if not all(math.isfinite(v) for v in state):
            raise PluginError("the initial state must be finite")
        object.__setattr__(self, "initial_state", state)
        object.__setattr__(self, "resolved", dict(self.resolved))

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its compiled kernel (made again on use: a capsule or a
        cfunc cannot be pickled)."""
        return {k: v for k, v in self.__dict__.items() if k != "compiled"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    @functools.cached_property
    def compiled(self) -> UpdateKernel:
        """The update as the engine calls it: an :class:`UpdateKernel` (compiled on first
        use for a numba function)."""
        return kernel_of(self.update, UpdateKernel, getattr(self.update, "__name__", ""))

    @property
    def implementation(self) -> str:
        """``"builtin"``, ``"c"``, ``"numba"`` or ``"python"`` (slow: for prototyping)."""
        return implementation_of(self.update)

    @property
    def initial_effective_weight(self) -> float:
        """The effective weight of a feature that was never updated."""
        return float(sum(c * w for c, w in zip(self.planes, self.initial_weights)))


@dataclass(frozen=True)
class Examples:
    """Examples as a :class:`Learner` reads them: ``indptr``, ``ids`` and ``vals``, the
    rows of a CSR matrix (``int64[n + 1]``; ``int64`` feature ids, sorted and unique in
    each row; ``float64`` strengths), and for learning the targets each example is
    positive for, ``y_targets[y_indptr[i]:y_indptr[i + 1]]`` (``int64[n + 1]``,
    ``int32``; None to score), among ``n_targets`` targets (one per label, in the labels' order);
    ``multilabel``: an example is right when the targets at or above the threshold are
    its set (else when its best target is its label)."""

    indptr: np.ndarray
    ids: np.ndarray
    vals: np.ndarray
    n_targets: int
    y_indptr: np.ndarray | None = None
    y_targets: np.ndarray | None = None
    multilabel: bool = False

    @property
    def n(self) -> int:
        """How many examples."""
        return int(self.indptr.shape[0]) - 1


class Learner(abc.ABC):
    """What a rule whose state is no weight table learns in, and keeps: the *learner*
    its ``build`` returns when its record says ``RuleSpec(learner=True)`` (the kernel
    Perceptron's support vectors, in the ``snowpy-kernel-perceptron`` plugin).

    snowpy hosts it in a network of one target per label
    (:class:`~snowpy.SnowClassifier` and ``snowpy train`` choose that network by the
    rule): the network keeps the labels, runs the epochs (the shuffle, the early stop,
    the progress), calibrates the scores into probabilities (by cross-fitting, or
    progressively), learns one example at a time and writes the model file around the
    learner's own state. A learner supplies four methods; the three that say what it
    learned (:meth:`describe`, :meth:`explain`, :meth:`features`) are optional.
    Targets appear as labels are met: an :class:`Examples` may name more targets than
    the learner has seen, which start untrained.

    Attributes a learner may set: ``mistake_driven`` (False for a rule that learns from
    every example: the conformance suite then expects updates on right examples too)
    and ``reference`` with ``compiled`` (its compiled function, as a class-level
    property, and the same arithmetic in Python, which the conformance suite trains
    with in its place and compares).
    """

    mistake_driven = True

    @abc.abstractmethod
    def learn(self, examples: Examples, order: np.ndarray,
              before: np.ndarray | None = None) -> tuple[int, int]:
        """Learn the examples ``order`` (``int64`` rows of ``examples``), in that order;
        when ``before`` is given (``float64[order.size, n_targets]``), write in its row
        ``i`` the scores of example ``order[i]`` just before learning it (progressive
        calibration fits on them). Returns the mistakes and the updates made."""

    @abc.abstractmethod
    def scores(self, examples: Examples) -> np.ndarray:
        """Each target's score of each example, ``float64[n, n_targets]``: a target
        claims an example when its score is >= 0 (the threshold subtracted)."""

    @abc.abstractmethod
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """What the learner learned as plain data: a dict of JSON values and named
        arrays, written into the model file beside the network's own (whose names it
        may not take: the network refuses a clash)."""

    @abc.abstractmethod
    def restore(self, header: dict[str, Any], arrays: dict[str, np.ndarray], *,
                n_features: int, n_targets: int, where: str) -> None:
        """Take back what :meth:`to_state` gave (a fresh learner of the same parameters),
        every part checked first against itself, ``n_features`` and ``n_targets``: a
        :class:`~snowpy.exceptions.ModelFileError` naming ``where`` for one that does
        not fit."""

    def describe(self, labels: Sequence[Any]) -> dict[str, Any]:
        """What ``snowpy inspect`` shows of the learner (names to plain values; ``labels``:
        the targets', in target order)."""
        return {}

    def explain(self, examples: Examples, targets: Sequence[int],
                scores: np.ndarray) -> list[dict[str, Any]]:
        """Per target of ``targets``, the terms its score on the one example of
        ``examples`` adds up from (``scores``: of every target), for
        :meth:`snowpy.SnowClassifier.explain`."""
        raise ConfigurationError(f"a {type(self).__name__} does not explain its scores")

    def features(self) -> np.ndarray:
        """The feature id of each link the learner holds (an id once per link: the
        features a target's score reads), which names the kept features."""
        return np.zeros(0, np.int64)


@dataclass(frozen=True)
class RuleSpec:
    """An update rule as a plugin declares it.

    Parameters
    ----------
    name : str
        Lower-case name, words joined by ``-`` (``"balanced-winnow"``).
    build : callable
        ``build(params, context) -> RuleKernel``; ``params`` is a dict of
        validated values for every declared parameter (defaults filled in),
        ``context`` a :class:`BuildContext`.
    params : tuple of Param
        The rule's parameters. ``theta`` is required; ``thickness`` and
        ``negative_thickness`` are added with default 0 when not declared.
    summary : str
        One line for listings.
    reference : str
        Where the rule comes from (paper, lecture notes, SNoW option).
    nonnegative : bool
        The rule assumes feature strengths of 0 or more (Winnow: a multiplicative
        promotion by ``alpha ** v`` demotes for ``v < 0``); a network refuses
        negative strengths, and tells scikit-learn (``positive_only``).
    signed : bool
        The rule is meant for features of either sign, each present as +1 or -1
        (normalised Winnow predicts ``sgn(w . x)`` with positive weights: on
        nonnegative strengths every target claims every example); the
        conformance suite tests it on such a problem.
    learner : bool
        The rule's state is no weight table: ``build`` returns a fresh :class:`Learner`
        (the kernel Perceptron's support vectors), which a network of snowpy's hosts.
        False: ``build`` returns a :class:`RuleKernel` for :class:`snowpy.Network`'s links.
    """

    name: str
    build: Callable[[dict[str, Any], BuildContext], Any]
    params: tuple[Param, ...]
    summary: str
    reference: str = ""
    nonnegative: bool = False
    signed: bool = False
    learner: bool = False

    def __post_init__(self) -> None:
        params = tuple(self.params)
        check_record("rule", self.name, self.build, params)
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise PluginError(f"rule {self.name!r} declares a parameter twice: {names}")
        if "theta" not in names:
            raise PluginError(f"rule {self.name!r} must declare theta (use theta_param)")
        present = set(names)
        params += tuple(p for p in thickness_params() if p.name not in present)
        object.__setattr__(self, "params", params)

    @property
    def param_names(self) -> tuple[str, ...]:
        """The names of all parameters, in declaration order."""
        return tuple(p.name for p in self.params)

    def validate(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Check user values and fill in defaults.

        Raises
        ------
        ConfigurationError
            An unknown parameter (the message lists the rule's parameters) or
            an invalid value.
        """
        values = dict(values)
        # (None, given or declared: the same as the thickness, whatever the rule declares)
        same = "negative_thickness" in values and values["negative_thickness"] is None
        if same:
            del values["negative_thickness"]
        result = validate_declared(self.params, values, kind="rule", name=self.name)
        if same or result.get("negative_thickness") is None:
            result["negative_thickness"] = result["thickness"]
        return result

    def make_kernel(self, params: Mapping[str, Any], context: BuildContext, *,
                    compile: bool = True) -> Any:
        """Call ``build`` on validated parameters and check what it returns.

        ``compile=False`` leaves the kernel's compilation to its first use in
        training (a model loaded to predict never compiles it).
        """
        try:
            kernel = self.build(dict(params), context)
        except ConfigurationError:
            raise
        except PluginError as exc:
            raise PluginError(f"rule {self.name!r}: {exc}") from exc
        except Exception as exc:  # a plugin bug: name the rule, keep the cause
            raise PluginError(f"rule {self.name!r}: build failed: {exc!r}") from exc
        if self.learner:
            if not isinstance(kernel, Learner):
                raise PluginError(f"rule {self.name!r}: build must return a Learner, got "
                                  f"{type(kernel).__name__}")
            return kernel
        if not isinstance(kernel, RuleKernel):
            raise PluginError(
                f"rule {self.name!r}: build must return a RuleKernel, got {type(kernel).__name__}"
            )
        if compile:
            try:
                kernel.compiled  # a kernel that does not fit the ABI fails here
            except PluginError as exc:
                raise PluginError(f"rule {self.name!r}: {exc}") from exc
        return kernel
