"""A network as plain data: a JSON-able header and named numpy arrays.

This is what a model file stores (:mod:`snowpy.model_file` writes and reads
the file; :mod:`snowpy.persistence` puts estimators in it): everything needed
to reproduce predictions and to continue training exactly. The network
knows its engine, not its file format.

Arrays of a full network (format 2)
-----------------------------------
``feature_ids``
    The feature (column of ``X``) of each row from 1 on; row 0 is the bias.
``row_sizes``
    Links per row (``int32``); the links of row ``r`` follow those of rows
    ``0 .. r - 1``, in the order they were made.
``row_counts``
    Activity count of each row (eligibility), when ``eligibility > 1``.
``link_targets``, ``link_weights``, ``link_averaging``, ``link_counts``
    Per link, in row order: its target, its weight planes, its averaging
    sums (when averaging) and its count (with ``eligibility="percent:p"``).
``state``, ``promotions``, ``demotions``
    Per target: the rule's state and the updates made.

Rows that hold no link (and no count) are left out. An inference-only
network keeps one plane, the effective weights, and no averaging sums or
counts. Format 1 files (a full table of rows x planes x targets) are
converted on loading: each weight that differs from the rule's initial one
becomes a link of the ``"all"`` policy, so the network predicts exactly as
it did.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy._core.links import distinct_links
from snowpy._validation import threads_of
from snowpy.declared import NETWORK, learned
from snowpy.exceptions import ConfigurationError, ModelFileError, SnowpyError
from snowpy.network.labels import LabelIndex
from snowpy.network.links import ONLINE_WIDTH, LinkStore
from snowpy.network.calibrating import calibration_from_file, calibration_to_file
from snowpy.network.engine import Engine
from snowpy.network.options import eligibility_of, engine_settings, upgraded
from snowpy.plugins import get_rule
from snowpy.rules.spec import BuildContext, RuleSpec

__all__ = ["narrowest", "network_state", "plain", "restore_network"]


def plain(value: Any) -> Any:
    """A JSON-safe copy of labels and parameters (numpy scalars to Python; a rule given as
    an object, by its name: a model file names the rule it was trained with)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, RuleSpec):
        return value.name
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def narrowest(values: np.ndarray, bound: int) -> np.ndarray:
    """``values``, all in ``0 .. bound - 1``, in the narrowest unsigned integer type that
    holds that range (by the bound, not the values: a model's types follow its shape).

    >>> narrowest(np.array([3, 7]), 20).dtype, narrowest(np.array([3]), 2**20).dtype
    (dtype('uint8'), dtype('uint32'))

    A value out of that range is refused before anything is written: the arrays are not
    what the network declares (memory written over by a plugin's kernel), and the file
    would replace a good model.
    """
    low, high = (int(values.min()), int(values.max())) if values.size else (0, 0)
    if low < 0 or high >= bound:
        raise SnowpyError(f"the network's arrays are inconsistent (a value "
                          f"{high if high >= bound else low} where 0 to {bound - 1} are "
                          "declared): its memory was written over, and it is not saved")
    for dtype in (np.uint8, np.uint16, np.uint32):
        if bound - 1 <= np.iinfo(dtype).max:
            return values.astype(dtype, copy=False)
    return values


def network_state(net: Any, inference_only: bool = False, *, by_id: bool = True
                  ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and arrays that describe a trained network: its rows in the order of
    their features' ids (a model file's), or with ``by_id=False`` in the order they were
    met (a cluster's shard hands its round back so: the round's start's rows first)."""
    engine = net.engine_
    engine.ensure_fresh()
    calibration = net.calibration_  # (progressive sigmoids a stream left due: fitted)
    store = engine.store
    inference_only = inference_only or store.frozen
    threads = threads_of(net.n_jobs)
    # (the slots: an inference-only file's; the rows by their features' ids, however
    # they came)
    order = store.by_id() if by_id else np.arange(store.n_rows, dtype=np.int64)
    layout = store.exact(slots=inference_only, threads=threads, order=order)
    keep_rows = layout["sizes"] > 0
    keep_rows[0] = True
    counts = store.count[: store.n_rows][order] \
        if store.count.shape[0] and not inference_only else None
    if counts is not None:
        keep_rows |= counts > 0
    header = {
        "options": plain(learned({name: getattr(net, name) for name in NETWORK})),
        "params": plain(learned(net.get_params())),
        "rule_params": plain(engine.params),
        "labels": plain(list(engine.labels.labels)),
        "multilabel": bool(engine.multilabel),
        "indicator": bool(engine.indicator),
        "n_features": int(engine.n_features),
        "open_features": bool(engine.open_features),
        "seen": int(store.seen),
        "stats": {"mistakes": engine.mistakes, "updates": engine.updates,
                  "n_examples_seen": int(engine.n_examples_seen),
                  "overflows": int(engine.overflows), "underflows": int(engine.underflows)},
        "calibration": calibration.header() if calibration is not None else None,
        "inference_only": inference_only,
        "links": {"policy": store.policy, "precision": store.precision,
                  "absent": float(store.absent)},
    }
    if inference_only:
        effective = net.engine_.effective_delta(bool(net.average), threads)[layout["slots"]] \
            + store.absent
        weights = effective.astype(store.dtype)[:, None]
    else:
        weights = layout["W"]
    n_targets = store.n_targets
    arrays = {  # (each integer array in the narrowest type its bound allows: format 3)
        "feature_ids": narrowest(store.feature_ids[order[1:] - 1][keep_rows[1:]],
                                 store.n_features),
        "row_sizes": narrowest(layout["sizes"][keep_rows], n_targets + 1),
        "link_targets": narrowest(layout["target"], n_targets),
        "link_weights": np.ascontiguousarray(weights),
        "state": store.S, "promotions": net.engine_.promotions, "demotions": net.engine_.demotions,
    }
    if not inference_only:
        if layout["U"].shape[0] or store.U.shape[0] or store.average:  # (even with no link)
            arrays["link_averaging"] = layout["U"]
        if layout["lcount"].shape[0] or store.lcount.shape[0]:
            arrays["link_counts"] = layout["lcount"]
        if counts is not None:
            arrays["row_counts"] = counts[keep_rows]
    calibration_to_file(calibration, None if inference_only else engine.progressive, header,
                        arrays)
    return header, arrays


def restore_network(network_class: type, header: dict[str, Any],
                    arrays: dict[str, np.ndarray], where: str, *, trusted: bool = False) -> Any:
    """A network from what :func:`network_state` produced (or a format 1 file).

    ``trusted``: the arrays were made by snowpy in this run (a distributed round's
    mixed network, about to learn), not read from a file: the check that no link is
    stored twice (a sort of every link) is skipped, every other check stays, and the
    links are copied into the network's own memory, which grows in place as it learns
    (the arrays may be read-only buffers a worker received).
    """
    try:
        options = dict(header["options"])
        rule = options.pop("rule")
        params = dict(header["rule_params"])
        labels = header["labels"]
        n_features = int(header["n_features"])
        stats = header["stats"]
        if not isinstance(labels, list) or not isinstance(stats, dict):
            raise TypeError("labels and stats must be a list and a mapping")
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{where}: the network description is invalid "
                             f"({type(exc).__name__}: {exc})") from None
    try:
        spec = get_rule(rule)
    except SnowpyError as exc:
        raise ModelFileError(f"{where}: the model was trained with rule {rule!r}: {exc}") \
            from None
    user = upgraded(header.get("params") or {"rule": rule, **options, **params})
    user.pop("rule", None)
    legacy = "links" not in header
    storage = user.pop("storage", None)
    if legacy:  # format 1: a full float64 table, kept whole
        user.update(links="all", precision="float64", discard=None)
    try:
        net = network_class(rule, **user)
        validated = spec.validate(params)
        net.check_options()
    except (ConfigurationError, TypeError) as exc:
        raise ModelFileError(f"{where}: stored parameters are invalid: {exc}") from None
    open_features = header.get("open_features", False)
    if not isinstance(open_features, bool) or n_features < 0 or \
            (open_features and n_features > ONLINE_WIDTH):
        raise ModelFileError(f"{where}: the feature space ({n_features} features, open: "
                             f"{open_features!r}) is invalid")
    space = ONLINE_WIDTH if open_features else n_features
    kernel = spec.make_kernel(validated, BuildContext(mean_active_features=1.0,
                                                      n_features=space), compile=False)
    store = _store(net, kernel, space, header, arrays, len(labels), where,
                   legacy=legacy, storage=storage, trusted=trusted)
    multilabel = bool(header.get("multilabel", False))
    try:
        index = LabelIndex(labels)
    except ConfigurationError as exc:
        raise ModelFileError(f"{where}: a label is invalid: {exc}") from None
    if len(index) != len(labels):
        raise ModelFileError(f"{where}: the labels are not distinct")
    engine = Engine(spec, validated, kernel, store, index, multilabel=multilabel,
                    n_features=n_features, open_features=open_features,
                    indicator=bool(header.get("indicator", False)) and multilabel,
                    **engine_settings(net.get_params()))
    _adopt_figures(engine, stats, arrays, where)
    calibration_from_file(engine, net.calibrate, header, arrays, where)
    net.engine_ = engine
    return net


def _store(net: Any, kernel: Any, space: int, header: dict[str, Any],
           arrays: dict[str, np.ndarray], n_targets: int, where: str, *, legacy: bool,
           storage: Any, trusted: bool) -> LinkStore:
    """The link store a file describes, checked."""
    frozen = header.get("inference_only", False)
    if not isinstance(frozen, bool) or (frozen and ("link_averaging" in arrays
                                                    or "averaging" in arrays)):
        raise ModelFileError(f"{where}: the inference-only flag is invalid (an inference-only "
                             "file holds no averaging sums)")
    eligible = eligibility_of(net.eligibility)
    store = LinkStore(kernel, space, policy=net.links, average=bool(net.average),
                      precision=net.precision, min_count=eligible.times,
                      link_counts=eligible.percent is not None)
    store.frozen = frozen
    store.add_targets(n_targets)
    try:
        if legacy:
            _adopt_legacy(store, arrays, storage, n_targets, frozen, where)
        else:
            _adopt(store, header, arrays, n_targets, frozen, where, trusted)
    except ModelFileError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{where}: the links are inconsistent ({exc})") from None
    per_target = arrays.get("state")
    if per_target is not None:
        if per_target.shape != store.S.shape:
            raise ModelFileError(f"{where}: the per-target state has shape "
                                 f"{per_target.shape}, expected {store.S.shape}")
        store.S = np.array(per_target)
        store.replaced()
    store.seen = int(header.get("seen", 0))
    return store


def _adopt_figures(engine: Any, stats: dict[str, Any],
                   arrays: dict[str, np.ndarray], where: str) -> None:
    """What training reported: mistakes and updates per epoch, examples seen, clamped
    updates, promotions and demotions per target."""
    n_targets = len(engine.labels)
    engine.mistakes = list(stats.get("mistakes", []))
    engine.updates = list(stats.get("updates", []))
    engine.n_examples_seen = int(stats.get("n_examples_seen", 0))
    engine.overflows = int(stats.get("overflows", 0))
    engine.underflows = int(stats.get("underflows", 0))
    engine.counts = np.stack([_per_target(arrays, "promotions", n_targets, where),
                             _per_target(arrays, "demotions", n_targets, where)], axis=1)


def _per_target(arrays: dict[str, np.ndarray], name: str, n_targets: int, where: str
                ) -> np.ndarray:
    values = np.asarray(arrays.get(name, np.zeros(n_targets, np.int64)))
    if values.shape != (n_targets,):
        raise ModelFileError(f"{where}: {name} has shape {values.shape}, expected ({n_targets},)")
    return values.astype(np.int64)


def _adopt(store: LinkStore, header: dict[str, Any], arrays: dict[str, np.ndarray],
           n_targets: int, frozen: bool, where: str, trusted: bool = False) -> None:
    ids = arrays["feature_ids"]
    sizes = arrays["row_sizes"]
    targets = arrays["link_targets"]
    weights = arrays["link_weights"]
    n_planes = 1 if frozen else store.n_planes
    if any(a.dtype.kind not in "iu" for a in (ids, sizes, targets)):
        raise ModelFileError(f"{where}: feature ids, row sizes and link targets must be "
                             "integers")
    if sizes.ndim != 1 or ids.shape != (sizes.shape[0] - 1,) or targets.ndim != 1:
        raise ModelFileError(f"{where}: feature ids and rows do not match")
    if int(sizes.sum(dtype=np.int64)) != targets.shape[0] or np.any(sizes < 0) \
            or (sizes.size and int(sizes.max()) > n_targets):
        raise ModelFileError(f"{where}: the row sizes do not add up to the links")
    sizes = sizes.astype(np.int32)
    if weights.shape != (targets.shape[0], n_planes):
        raise ModelFileError(f"{where}: link weights of shape {weights.shape} do not fit "
                             f"{targets.shape[0]} links of {n_planes} plane(s)")
    if weights.dtype != store.dtype:
        raise ModelFileError(f"{where}: link weights are {weights.dtype}, the header says "
                             f"{store.precision}")
    if targets.size and (targets.min() < 0 or targets.max() >= n_targets):
        raise ModelFileError(f"{where}: a link names a target outside 0..{n_targets - 1}")
    targets = targets.astype(np.int32, copy=False)
    averaging = arrays.get("link_averaging")
    if averaging is not None and (frozen or averaging.shape != weights.shape
                                  or averaging.dtype != weights.dtype):
        raise ModelFileError(f"{where}: averaging sums and link weights differ in shape "
                             "or type")
    if not frozen and store.average and averaging is None:
        raise ModelFileError(f"{where}: an averaged network's file lacks its averaging sums")
    counts = arrays.get("link_counts")
    if store.lcount.shape[0] and not frozen and (counts is None
                                                 or counts.shape != targets.shape):
        raise ModelFileError(f"{where}: the link counts are missing or do not fit")
    if not trusted and not distinct_links(sizes, targets, n_targets):
        raise ModelFileError(f"{where}: a feature is linked twice to the same target")
    if frozen:
        store.n_planes = 1
        store.W = np.zeros((0, 1), store.dtype)
        store.replaced()
        store.freeze(float(header["links"]["absent"]))
    if ids.dtype.itemsize <= 4 and (ids.size == 0 or int(ids.max()) < 2**31):
        ids = ids.astype(np.int32, copy=False)  # (the map's own key type: no int64 copy)
    try:
        distinct = store.feature_map.adopt(ids)
    except ValueError as exc:
        raise ModelFileError(f"{where}: {exc}") from None
    if not distinct:
        raise ModelFileError(f"{where}: a feature id appears twice")
    store.adopt({"sizes": sizes, "target": targets,
                 "W": weights, "U": averaging if averaging is not None else
                 np.zeros((0, n_planes), store.dtype),
                 "lcount": counts if (counts is not None and not frozen) else
                 np.zeros(0, np.int32)}, copy=trusted)
    row_counts = arrays.get("row_counts")
    if store.count.shape[0] and not frozen:
        if row_counts is None or row_counts.shape != sizes.shape:
            raise ModelFileError(f"{where}: the row counts are missing or do not fit")
        store.count[: sizes.shape[0]] = row_counts
    store.reserve_rows(sizes.shape[0] + 1, exact=True)


def _adopt_legacy(store: LinkStore, arrays: dict[str, np.ndarray], storage: Any,
                  n_targets: int, frozen: bool, where: str) -> None:
    """Links from a format 1 table of ``rows x planes x targets`` (policy ``"all"``)."""
    weights = arrays["weights"]
    n_planes = 1 if frozen else store.n_planes
    if weights.ndim != 3 or weights.shape[1] != n_planes or weights.shape[2] != n_targets:
        raise ModelFileError(
            f"{where}: weights of shape {weights.shape} do not fit {n_targets} targets and "
            f"{n_planes} plane(s)")
    averaging = arrays.get("averaging")
    if averaging is not None and averaging.shape != weights.shape:
        raise ModelFileError(f"{where}: averaging sums and weights differ in shape")
    if storage == "dense":
        if weights.shape[0] != store.n_features + 1:
            raise ModelFileError(f"{where}: a dense table needs {store.n_features + 1} rows, "
                                 f"has {weights.shape[0]}")
        ids = np.arange(store.n_features, dtype=np.int64)
    else:
        found = arrays.get("feature_ids")
        if found is None or found.shape != (weights.shape[0] - 1,):
            raise ModelFileError(f"{where}: the compact feature map does not match the weights")
        ids = found
    if frozen:
        initial = np.array([store.kernel.initial_effective_weight])
        store.freeze(float(initial[0]))
    else:
        initial = store.initial_weights
    differs = np.any(weights != initial[None, :, None], axis=1)
    if averaging is not None:
        differs |= np.any(averaging != 0, axis=1)
    differs[0] = True  # the bias row is linked to every target
    rows_used = np.flatnonzero(differs.any(axis=1) | (np.arange(len(differs)) == 0))
    differs = differs[rows_used]
    row_index, target_index = np.nonzero(differs)
    sizes = np.bincount(row_index, minlength=rows_used.size).astype(np.int32)
    source_rows = rows_used[row_index]
    W = np.ascontiguousarray(weights[source_rows, :, target_index].astype(store.dtype))
    U = np.ascontiguousarray(averaging[source_rows, :, target_index].astype(store.dtype)) \
        if averaging is not None and not frozen else np.zeros((0, n_planes), store.dtype)
    if frozen:
        store.n_planes = 1
    store.feature_map.rows(ids[rows_used[1:] - 1], insert=True)
    store.adopt({"sizes": sizes, "target": target_index.astype(np.int32), "W": W, "U": U,
                 "lcount": np.zeros(0, np.int32)})
    store.reserve_rows(sizes.shape[0] + 1, exact=True)
