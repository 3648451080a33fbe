"""Driving the engine: epochs, progress chunks, pool growth, and what training reports.

:func:`train` runs :func:`snowpy.network.engine.run` over one call's
examples: in chunks when progress is reported (1, 2, 4, 8... examples, then
every 16,384), resuming where the engine stopped whenever the link pool must
grow, so a model trained in chunks is the model trained at once.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._core import hashing
from snowpy._lazy import lazy_module
from snowpy._rows import Rows
from snowpy.exceptions import NumericalError, PluginError
from snowpy.network.engine import TOUCHED, Options, Outcome, RuleBinding, run
from snowpy.network.options import bias_strength, eligibility_of
from snowpy.network.pruning import keep_top_percent
from snowpy.network.refreshing import refresh_planes

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["NumericalWarning", "TrainingCall", "chunks", "example_keys", "keyed_order",
           "mixed_keys", "run_epochs", "train"]

_NONE_INT = np.empty(0, dtype=np.int64)
_NONE_TARGETS = np.empty(0, dtype=np.int32)
_NO_SCORES = np.empty((0, 0), dtype=np.float64)


class NumericalWarning(RuntimeWarning):
    """Weights reached the largest magnitude kept and were clamped."""


class TrainingCall:
    """The encoded examples of one ``fit`` or ``partial_fit`` call."""

    def __init__(self, X: sp.csr_matrix, rows: np.ndarray, y_indptr: np.ndarray,
                 y_targets: np.ndarray, a_indptr: np.ndarray | None = None,
                 a_targets: np.ndarray | None = None, keys: np.ndarray | None = None) -> None:
        self.X = X
        #: the examples' shuffling keys, when the caller has better ones than the
        #: features give (SnowClassifier: from the texts)
        self.keys = keys
        self.rows = rows
        self.indptr = X.indptr.astype(np.int64, copy=False)
        #: the strengths, None for binary rows (the engine reads 1)
        self.vals = X.strengths if isinstance(X, Rows) else X.data
        self.y_indptr = y_indptr
        self.y_targets = y_targets
        self.a_indptr = _NONE_INT if a_indptr is None else a_indptr
        self.a_targets = _NONE_TARGETS if a_targets is None else a_targets
        self.n = X.shape[0]
        self.max_active = int(np.diff(self.indptr).max()) if self.n else 0


def chunks(n: int, chunked: bool, every: int | None = None) -> list[tuple[int, int]]:
    """Example ranges of one epoch: whole, or cut at 1, 2, 4, 8... and every 16,384, and
    at every multiple of ``every`` (a progress reporter that tests every k examples,
    SNoW's ``-c k``).

    >>> chunks(10, True)
    [(0, 1), (1, 2), (2, 4), (4, 8), (8, 10)]
    >>> chunks(10, True, every=3)
    [(0, 1), (1, 2), (2, 3), (3, 4), (4, 6), (6, 8), (8, 9), (9, 10)]
    """
    if not chunked:
        return [(0, n)]
    bounds = [0]
    mark = 1
    while bounds[-1] < n:
        step = min(mark, bounds[-1] + 16384)
        bounds.append(min(n, max(step, bounds[-1] + 1)))
        if bounds[-1] >= mark:
            mark *= 2
    if every:
        bounds = sorted(set(bounds) | set(range(every, n, every)))
    return list(zip(bounds[:-1], bounds[1:]))


def example_keys(X: Any, y_indptr: np.ndarray, y_targets: np.ndarray) -> np.ndarray:
    """A 64-bit key per example, from its features, strengths and labels only: equal
    examples get equal keys wherever they stand in the data (the sum of splitmix64 of
    each feature, strength and label)."""
    keys = np.empty(X.shape[0], dtype=np.uint64)
    data_bits = np.ascontiguousarray(X.data, dtype=np.float64).view(np.uint64)
    hashing.example_keys(np.asarray(X.indptr), np.asarray(X.indices), data_bits,
                         np.asarray(y_indptr, dtype=np.int64),
                         np.asarray(y_targets, dtype=np.int32), keys)
    return keys


def shuffled(keys: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One epoch's order: the examples sorted by their keys mixed with a salt drawn from
    ``rng``. The order depends on the examples, never on where they stand in the data:
    training is invariant to the order of its input (and an example given weight 2 is
    learned exactly as two copies of it are)."""
    return keyed_order(keys, int(rng.integers(0, 2**63 - 1, dtype=np.int64)))


def mixed_keys(keys: np.ndarray, salt: int) -> np.ndarray:
    """``splitmix64(keys ^ salt)``: keys spread uniformly, a salt apart.

    >>> mixed = mixed_keys(np.array([1, 1, 2], dtype=np.uint64), 7)
    >>> bool(mixed[0] == mixed[1]), bool(mixed[0] == mixed[2])
    (True, False)
    """
    mixed = np.empty(keys.shape[0], dtype=np.uint64)
    hashing.mix_keys(np.ascontiguousarray(keys, dtype=np.uint64),
                     np.uint64(int(salt) & 0xFFFFFFFFFFFFFFFF), mixed)
    return mixed


def keyed_order(keys: np.ndarray, salt: int) -> np.ndarray:
    """The examples sorted by their keys mixed with ``salt`` (a seeded shuffle that
    depends on what the examples are, not on their positions)."""
    return np.argsort(mixed_keys(keys, salt), kind="stable")


def run_epochs(epochs: int, early_stop: bool, one_epoch: Callable[[int], int]) -> int:
    """The epoch driver of every training (a network's, a dual network's, epochs from a
    feature cache): ``one_epoch(epoch)`` runs a pass and returns its updates; with
    ``early_stop``, training stops after a pass without one (SNoW). Returns the passes
    run.

    >>> run_epochs(10, True, lambda epoch: [5, 2, 0, 7][epoch])
    3
    """
    for epoch in range(epochs):
        if one_epoch(epoch) == 0 and early_stop:
            return epoch + 1
    return epochs


def train(net: Any, call: TrainingCall, *, epochs: int, shuffle: bool, progress: Any = None,
          fresh: bool = True, record: np.ndarray | None = None,
          rank_links: bool = False) -> None:
    """Run ``epochs`` passes of ``net`` over ``call``.

    ``fresh`` data is counted for eligibility in its first pass. ``record``
    (``[n, targets]``) receives each example's progressive scores in the
    first pass. With ``rank_links`` (a :meth:`~snowpy.Network.fit`), the links
    are ranked for ``eligibility="percent:p"`` after the first pass. Updates
    ``net``'s training figures; warns once about clamped overflows.
    """
    if not net.kernel_.mistake_driven:
        epochs = min(epochs, 1)  # a counting rule learns each example once (SNoW's -B)
    try:
        with _KERNEL_ERRORS:
            _train(net, call, epochs=epochs, shuffle=shuffle, progress=progress, fresh=fresh,
                   record=record, rank_links=rank_links)
    finally:
        if net.kernel_.refresh is not None:
            net.state_.planes_stale = True  # refreshed by the next prediction, save or view


class _KernelErrors:
    """Exceptions raised inside a rule's compiled kernel. A C callback cannot raise:
    numba hands them to ``sys.unraisablehook`` and training went on (the command exited
    0). While training, they are collected here, and the training stops with a
    PluginError naming the rule (checked after every run of the engine)."""

    def __init__(self) -> None:
        self.caught: list[BaseException] = []
        self.depth = 0
        self.previous: Any = None
        self.persistent = False

    def __enter__(self) -> _KernelErrors:
        if self.depth == 0 and sys.unraisablehook is not self._hook:
            self.caught = []
            self.previous = sys.unraisablehook
            sys.unraisablehook = self._hook
        self.depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1
        if self.depth == 0 and not self.persistent and sys.unraisablehook is self._hook:
            sys.unraisablehook = self.previous

    def watch(self) -> None:
        """Collect from now on (the one-example paths, which check after each example:
        a hook set and reset per example would cost more than the check)."""
        if sys.unraisablehook is not self._hook:
            self.previous = sys.unraisablehook
            sys.unraisablehook = self._hook
        self.persistent = True

    def _hook(self, info: Any) -> None:
        if "CPUContext" in repr(getattr(info, "object", None)) and info.exc_value is not None:
            self.caught.append(info.exc_value)
        else:
            self.previous(info)

    def failure(self, net: Any) -> Exception:
        from snowpy.exceptions import PluginError

        first = self.caught[0]
        count = len(self.caught)
        self.caught = []
        try:
            from snowpy.plugins import list_rules

            provided = list_rules().get(net.rule)
            where = f" (plugin {provided.plugin!r}, {provided.distribution})" if provided \
                else ""
        except Exception:  # noqa: BLE001 - the message must not fail
            where = ""
        return PluginError(f"the update kernel of rule {net.rule!r}{where} raised "
                           f"{type(first).__name__}: {first} ({count} time(s)); training "
                           "stopped")


_KERNEL_ERRORS = _KernelErrors()
KERNEL_ERRORS = _KERNEL_ERRORS  # (for the one-example paths)


def _train(net: Any, call: TrainingCall, *, epochs: int, shuffle: bool, progress: Any,
           fresh: bool, record: np.ndarray | None, rank_links: bool) -> None:
    store = net.state_.store
    counts = net.state_.target_counts()
    net.state_.online = False  # a later learn_one starts an entry of its own in mistakes_
    overflows = 0
    creating = True
    by_percent = eligibility_of(net.eligibility).percent is not None
    keys = (call.keys if call.keys is not None
            else example_keys(call.X, call.y_indptr, call.y_targets)) if shuffle else None

    def one_epoch(epoch: int) -> int:
        nonlocal overflows, creating
        order = shuffled(keys, net.state_.rng) if keys is not None else np.arange(call.n)
        order = order.astype(np.int64)
        mistakes, updates, epoch_overflows = _epoch(
            net, call, epoch, order, counts, progress, counting=fresh and epoch == 0,
            creating=creating, record=record if epoch == 0 else None)
        overflows += epoch_overflows
        net.state_.mistakes.append(mistakes)
        net.state_.updates.append(updates)
        if epoch == 0 and rank_links and by_percent:
            keep_top_percent(net)
        # the same examples cannot call for new links again, unless eligibility let
        # rows in during the pass (or links were dropped by eligibility "percent:p")
        creating = store.policy_code == TOUCHED or (store.min_count > 1 and not by_percent)
        return updates

    try:
        run_epochs(epochs, bool(net.early_stop), one_epoch)
    finally:  # an interrupted training still leaves a consistent network
        net.state_.cache.invalidate()
    if overflows:
        net.state_.overflows += overflows
        warnings.warn(
            f"{overflows} weight updates exceeded the largest magnitude kept "
            f"({store.max_magnitude:g}) and were clamped; use milder promotion/demotion, or a "
            "bias strength closer to the feature strengths",
            NumericalWarning,
            stacklevel=4,
        )


def _epoch(net: Any, call: TrainingCall, epoch: int, order: np.ndarray, counts: np.ndarray,
           progress: Any, *, counting: bool, creating: bool, record: np.ndarray | None
           ) -> tuple[int, int, int]:
    """One pass over ``order`` (in chunks when reporting progress)."""
    store = net.state_.store
    mistakes = updates = overflows = 0
    # a rule that derives its scores (Naive Bayes) predicts each example from the counts
    # refreshed when the examples seen reached 1, 2, 4, 8...: log2(n) refreshes of the
    # links over a stream, however it is cut into calls
    refreshing = net.kernel_.refresh is not None
    if refreshing and progress is None:
        cuts = refresh_points(net.n_examples_seen_, order.size)
        pieces = list(zip([0] + cuts, cuts + [order.size]))
    else:
        pieces = chunks(order.size, progress is not None, getattr(progress, "every", None))
    for start, stop in pieces:
        seen_before = int(net.n_examples_seen_)
        chunk_mistakes = 0
        position = start
        while position < stop:
            scores = _NO_SCORES if record is None else \
                np.empty((stop - position, store.n_targets), dtype=np.float64)
            outcome = _run(net, call, order[position:stop], counts, counting, creating, scores)
            processed, seen, need_room = outcome.processed, outcome.seen, outcome.need_room
            net.state_.n_examples_seen += seen - store.seen
            store.seen = seen
            net.state_.underflows += outcome.underflows
            chunk_mistakes += outcome.mistakes
            updates += outcome.updates
            overflows += outcome.overflows
            if _KERNEL_ERRORS.caught:
                raise _KERNEL_ERRORS.failure(net)
            if outcome.failed:
                raise kernel_failure(net)
            if outcome.nonfinite:
                example = int(order[position + processed])
                raise NumericalError(
                    f"rule {net.rule!r} produced NaN at example {example}; check its "
                    f"parameters {net.kernel_.params.tolist()}"
                )
            if record is not None:
                record[order[position:position + processed]] = scores[:processed]
            position += processed
            if need_room:
                store.reserve_links(need_room)
        if refreshing and int(net.n_examples_seen_).bit_length() > seen_before.bit_length():
            refresh_planes(net)  # (the examples seen reached a power of two)
        mistakes += chunk_mistakes
        if progress is not None:
            net.state_.cache.invalidate()
            progress(epoch, stop, order.size, chunk_mistakes)
    return mistakes, updates, overflows


def refresh_points(seen: int, n: int) -> list[int]:
    """Positions ``0 < p < n`` of a run of ``n`` examples where the examples seen, ``seen``
    before it, reach a power of two.

    >>> refresh_points(0, 10), refresh_points(5, 10)
    ([1, 2, 4, 8], [3])
    """
    points = []
    power = 1
    while power < seen + n:
        if power > seen:
            points.append(power - seen)
        power *= 2
    return [p for p in points if 0 < p < n]


def separator(net: Any) -> tuple[float, float]:
    """The thickness on each side the engine applies: the rule's, or infinite (an update
    on every example) for a rule that is not mistake-driven."""
    if not net.kernel_.mistake_driven:
        return math.inf, math.inf
    params = net.rule_params_
    return float(params["thickness"]), float(params["negative_thickness"])


def checking_kernels() -> bool:
    """Whether rules' steps run on guarded copies of their buffers
    (``SNOWPY_CHECK_KERNELS=1``: ``snowpy plugins --check`` and the conformance suite
    set it): a write outside its arrays stops the training and names the rule."""
    return os.environ.get("SNOWPY_CHECK_KERNELS", "") not in ("", "0")


def rule_binding(net: Any) -> RuleBinding:
    """The rule as the engine applies it to ``net``'s pool (its kernel, numbers, planes,
    initial and absent weights, per-target state)."""
    store = net.state_.store
    return RuleBinding(net.kernel_.compiled, net.kernel_.params,
                       np.asarray(store.planes, dtype=np.float64), store.initial_weights,
                       store.absent_planes, store.S, store.dtype == np.float32,
                       checking_kernels())


def training_options(net: Any) -> Options:
    """How ``net`` trains, as the engine reads it."""
    store = net.state_.store
    return Options(store.policy_code, store.min_count, bool(net.kernel_.multiplicative),
                   store.min_magnitude, store.max_magnitude, float(net.rule_params_["theta"]),
                   *separator(net), bias_strength(net.bias), bool(net.multilabel_),
                   net.multiclass == "constraint")


def kernel_failure(net: Any) -> PluginError:
    """The error of a rule whose step returned non-zero (a Python rule's exception is
    its cause)."""
    kernel = net.kernel_.compiled
    error, kernel.error = kernel.error, None
    try:
        from snowpy.plugins import list_rules

        provided = list_rules().get(net.rule)
        where = f" (plugin {provided.plugin!r}, {provided.distribution})" if provided else ""
    except Exception:  # noqa: BLE001 - the message must not fail
        where = ""
    what = f"raised {type(error).__name__}: {error}" if error is not None else \
        "returned an error"
    failure = PluginError(f"the update kernel of rule {net.rule!r}{where} {what}; "
                          "training stopped")
    failure.__cause__ = error
    return failure


def _run(net: Any, call: TrainingCall, order: np.ndarray, counts: np.ndarray, counting: bool,
         creating: bool, scores: np.ndarray) -> Outcome:
    try:
        rule = rule_binding(net)
    except (TypeError, ValueError) as exc:  # a plugin's planes or weights of the wrong shape
        raise PluginError(f"rule {net.rule!r}: {exc}") from exc
    return run(net.state_.store.links(), rule, training_options(net), call.indptr, call.rows,
               call.vals, order, call.y_indptr, call.y_targets, call.a_indptr,
               call.a_targets, net.state_.store.seen, counts, call.max_active, scores, counting,
               creating)
