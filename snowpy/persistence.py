"""Saving and loading networks and classifiers (see :mod:`snowpy.model_file`).

Everything needed to reproduce predictions and to continue training exactly
is stored: rule and parameters (derived values included), network options,
labels in target order, weights, averaging sums and clock, per-target state,
the compact feature map in row order, front-end configuration, the inverse
feature map when kept, calibration, and training figures. A loaded model
predicts bit for bit like the saved one, and ``partial_fit`` continues where
the saved model would have.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from snowpy.exceptions import ConfigurationError, SnowpyError
from snowpy.model_file import ModelFileError, read_model, write_model

__all__ = ["save", "load", "ModelFileError"]


def _plain(value: Any) -> Any:
    """A JSON-safe copy of labels and parameters (numpy scalars to Python)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


# ------------------------------------------------------------------ network
def _network_state(net: Any, inference_only: bool = False
                   ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    net._check_fitted()
    if getattr(net, "_progressive", None) is not None and net._progressive_stale:
        net._fit_progressive()
    table = net._table
    inference_only = inference_only or table.frozen
    header = {
        "options": _plain({name: getattr(net, name) for name in net._option_names}),
        "params": _plain(net.get_params()),
        "rule_params": _plain(net.rule_params_),
        "labels": _plain(list(net._labels.labels)),
        "multilabel": bool(net.multilabel_),
        "n_features": int(net.n_features_in_),
        "seen": int(table.seen),
        "stats": {"mistakes": net.mistakes_, "updates": net.updates_,
                  "n_examples_seen": int(net.n_examples_seen_),
                  "overflows": int(net.overflows_), "underflows": int(net.underflows_)},
        "calibration": getattr(net, "calibration_", None) and net.calibration_.header(),
        "inference_only": inference_only,
    }
    # inference only: the prediction weights alone, as one plane, without averaging sums
    weights = np.ascontiguousarray(net.effective_weights()[:table.n_rows, None, :]) \
        if inference_only else table.W
    arrays = {"weights": weights, "state": table.S,
              "promotions": net.promotions_, "demotions": net.demotions_}
    if table._U is not None and not inference_only:
        arrays["averaging"] = table.U
    if table.storage == "compact":
        arrays["feature_ids"] = table.feature_ids
    if getattr(net, "calibration_", None) is not None:
        arrays.update(net.calibration_.arrays())
    if getattr(net, "_progressive", None) is not None and not inference_only:
        arrays["progressive_scores"] = net._progressive[0]
        arrays["progressive_positives"] = net._progressive[1].astype(np.uint8)
    return header, arrays


def _restore_network(header: dict[str, Any], arrays: dict[str, np.ndarray], where: str) -> Any:
    from snowpy.calibration import Calibration
    from snowpy.network import Network
    from snowpy.network.labels import LabelIndex
    from snowpy.network.storage import WeightTable
    from snowpy.plugins import get_rule
    from snowpy.rules.spec import BuildContext

    try:
        options = dict(header["options"])
        rule = options.pop("rule")
        params = dict(header["rule_params"])
        labels = header["labels"]
        weights = arrays["weights"]
        n_features = int(header["n_features"])
        stats = header["stats"]
    except (KeyError, TypeError) as exc:
        raise ModelFileError(f"{where}: the network description lacks {exc}") from None
    try:
        spec = get_rule(rule)
    except SnowpyError as exc:
        raise ModelFileError(f"{where}: the model was trained with rule {rule!r}: {exc}") from None
    user = dict(header.get("params") or {"rule": rule, **options, **params})
    user.pop("rule", None)
    net = Network(rule, **user)
    try:
        validated = spec.validate(params)
        net._check_options()
    except ConfigurationError as exc:
        raise ModelFileError(f"{where}: stored parameters are invalid: {exc}") from None
    kernel = spec.make_kernel(validated, BuildContext(mean_active_features=1.0,
                                                      n_features=n_features))
    n_targets = len(labels)
    frozen = header.get("inference_only", False)
    if not isinstance(frozen, bool) or (frozen and "averaging" in arrays):
        raise ModelFileError(f"{where}: the inference-only flag is invalid")
    n_planes = 1 if frozen else len(kernel.planes)
    if weights.ndim != 3 or weights.shape[1] != n_planes or weights.shape[2] != n_targets:
        raise ModelFileError(
            f"{where}: weights of shape {weights.shape} do not fit {n_targets} targets and "
            f"{n_planes} plane(s) of rule {rule!r}"
        )
    table = WeightTable(kernel, n_targets, n_features, storage=net.storage,
                        average="averaging" in arrays)
    table.frozen = frozen
    if net.storage == "compact":
        ids = arrays.get("feature_ids")
        if ids is None or ids.shape != (weights.shape[0] - 1,):
            raise ModelFileError(f"{where}: the compact feature map does not match the weights")
        table._map.rows(ids, insert=True)
        table.n_rows = weights.shape[0]
    elif weights.shape[0] != n_features + 1:
        raise ModelFileError(f"{where}: a dense table needs {n_features + 1} rows, "
                             f"has {weights.shape[0]}")
    table._W = weights
    if "averaging" in arrays:
        if arrays["averaging"].shape != weights.shape:
            raise ModelFileError(f"{where}: averaging sums and weights differ in shape")
        table._U = arrays["averaging"]
    table.S = arrays.get("state", table.S)
    table.seen = int(header.get("seen", 0))
    net.rule_spec_ = spec
    net.rule_params_ = validated
    net.kernel_ = kernel
    net.multilabel_ = bool(header.get("multilabel", False))
    net.n_features_in_ = n_features
    net._labels = LabelIndex(labels)
    net._table = table
    net._rng = np.random.default_rng(net.seed)
    net.mistakes_ = list(stats.get("mistakes", []))
    net.updates_ = list(stats.get("updates", []))
    net.n_examples_seen_ = int(stats.get("n_examples_seen", 0))
    net.overflows_ = int(stats.get("overflows", 0))
    net.underflows_ = int(stats.get("underflows", 0))
    net.promotions_ = np.asarray(arrays.get("promotions", np.zeros(n_targets, np.int64)))
    net.demotions_ = np.asarray(arrays.get("demotions", np.zeros(n_targets, np.int64)))
    net._effective_cache = {}
    net.calibration_ = None  # an uncalibrated model says so, as a trained one does
    if header.get("calibration"):
        net.calibration_ = Calibration.from_file(header["calibration"], arrays, where)
    if "progressive_scores" in arrays:
        scores, positives = arrays["progressive_scores"], arrays.get("progressive_positives")
        if positives is None or positives.shape != scores.shape or scores.ndim != 2:
            raise ModelFileError(f"{where}: the progressive calibration window is inconsistent")
        net._progressive = (np.array(scores), positives.astype(bool))
        net._progressive_stale = False
    return net


# -------------------------------------------------------------- classifier
def _names_arrays(featurizer: Any) -> dict[str, np.ndarray]:
    if not featurizer.keep_names or featurizer._name_index() is None:
        return {}
    names = featurizer._names.names
    ids, counts, blobs = [], [], []
    for feature_id, strings in names.items():
        ids.append(feature_id)
        counts.append(len(strings))
        blobs.extend(s.encode("utf-8", "surrogatepass") for s in strings)
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    blob = np.frombuffer(b"".join(blobs), dtype=np.uint8) if blobs else np.zeros(0, np.uint8)
    return {"names_ids": np.asarray(ids, dtype=np.int64),
            "names_counts": np.asarray(counts, dtype=np.int64),
            "names_lengths": lengths, "names_blob": blob,
            "names_keys": featurizer._names._pairs.row_ids.copy()}


def _restore_names(featurizer: Any, arrays: dict[str, np.ndarray], where: str) -> None:
    """Attach the stored inverse map; it is rebuilt on first use (loading stays fast)."""
    stored = {k: v for k, v in arrays.items() if k.startswith("names_")}
    featurizer._names_loader = lambda: _build_names(stored, where)


def _build_names(arrays: dict[str, np.ndarray], where: str) -> Any:
    from snowpy.text.names import NameIndex

    index = NameIndex()
    if "names_ids" in arrays:
        ids, counts = arrays["names_ids"], arrays["names_counts"]
        lengths, blob = arrays["names_lengths"], arrays["names_blob"].tobytes()
        if counts.sum() != lengths.size or lengths.sum() != len(blob):
            raise ModelFileError(f"{where}: the inverse feature map is inconsistent")
        ends = np.cumsum(lengths)
        strings = [blob[e - n:e].decode("utf-8", "surrogatepass") for e, n in zip(ends, lengths)]
        position = 0
        for feature_id, count in zip(ids.tolist(), counts.tolist()):
            index.names[feature_id] = strings[position:position + count]
            position += count
        index._pairs.rows(arrays["names_keys"], insert=True)
    return index


# ------------------------------------------------------------------- public
def save(model: Any, path: str | os.PathLike, *, inference_only: bool = False) -> Path:
    """Save a trained :class:`Network` or :class:`SnowClassifier` atomically.

    With ``inference_only`` the file keeps only what prediction needs: the
    effective weights (averaged, planes combined: one number per feature and
    target, a quarter of an averaged Balanced Winnow's training state) and
    no averaging sums or progressive-calibration window. Its predictions and
    probabilities are bit-identical to the full model's; it cannot continue
    training (``partial_fit`` refuses; ``fit`` starts afresh).

    >>> import snowpy, tempfile, os
    >>> clf = snowpy.SnowClassifier(epochs=2).fit(["a b", "c d"], ["x", "y"])
    >>> path = snowpy.save(clf, os.path.join(tempfile.mkdtemp(), "m.snowpy"))
    >>> snowpy.load(path).predict(["a"]).tolist()
    ['x']
    """
    from snowpy.classifier import SnowClassifier
    from snowpy.network import Network

    if isinstance(model, SnowClassifier):
        model._check_fitted()
        header, arrays = _network_state(model.network_, inference_only)
        featurizer = model.featurizer_
        params = _plain(featurizer.get_params())
        params["extractors"] = [list(item) for item in params.get("extractors", [])]
        header = {"kind": "classifier", "network": header, "featurizer": params,
                  "classifier": _plain(model.get_params())}
        arrays = dict(arrays, **_names_arrays(featurizer))
    elif isinstance(model, Network):
        header, arrays = _network_state(model, inference_only)
        header = {"kind": "network", "network": header}
    else:
        raise ConfigurationError(f"cannot save a {type(model).__name__}; save a Network or a "
                                 "SnowClassifier")
    return write_model(path, header, arrays)


def load(path: str | os.PathLike, *, mmap: bool = False, verify: bool = True) -> Any:
    """Load a model file written by :func:`save`, validating it.

    ``mmap=True`` maps the weights from the file (copy-on-write) instead of
    reading them: fast to load, memory shared between processes.
    ``verify=False`` skips the arrays' checksums (for a trusted file): with
    ``mmap=True``, loading then costs the header only.

    Raises
    ------
    ModelFileError
        The file is not a valid snowpy model; the message says why.
    """
    from snowpy.classifier import SnowClassifier
    from snowpy.text import Featurizer

    header, arrays = read_model(path, mmap=mmap, verify=verify)
    if mmap:  # training a loaded model must never write into the file
        arrays = {name: np.memmap(a.filename, dtype=a.dtype, mode="c", offset=a.offset,
                                  shape=a.shape) if isinstance(a, np.memmap) else a
                  for name, a in arrays.items()}
    where = str(path)
    kind = header.get("kind")
    if kind == "network":
        return _restore_network(header.get("network") or {}, arrays, where)
    if kind != "classifier":
        raise ModelFileError(f"{where}: unknown model kind {kind!r}")
    network = _restore_network(header.get("network") or {}, arrays, where)
    try:
        params = dict(header["featurizer"])
        params["extractors"] = tuple(tuple(item) for item in params.get("extractors", []))
        for name in ("ngrams", "char_ngrams", "affixes", "fields"):
            if isinstance(params.get(name), list):
                params[name] = tuple(params[name])
        featurizer = Featurizer(**params)
        featurizer._compile()
    except (KeyError, TypeError, SnowpyError) as exc:
        raise ModelFileError(f"{where}: the front-end description is invalid ({exc})") from None
    _restore_names(featurizer, arrays, where)
    stored = dict(header.get("classifier") or {})
    for name in ("ngrams", "char_ngrams", "affixes", "fields"):
        if isinstance(stored.get(name), list):
            stored[name] = tuple(stored[name])
    stored["extractors"] = tuple(tuple(item) for item in stored.get("extractors", ()))
    try:
        classifier = SnowClassifier(**stored)
    except TypeError as exc:
        raise ModelFileError(f"{where}: the classifier description is invalid ({exc})") from None
    classifier.featurizer_ = featurizer
    classifier.network_ = network
    return classifier
