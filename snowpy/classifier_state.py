"""A text classifier as plain data: its network, front end and feature names.

See :mod:`snowpy.network.state` for the network's part. The front end is
stored as its parameters (hashing is stateless, so they rebuild it exactly);
the inverse feature map (``keep_names``), when kept, only for the features
the network holds links for: names of features the model does not use are
not worth their bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy.exceptions import ModelFileError, SnowpyError
from snowpy.network.state import network_state, plain, restore_network

__all__ = ["classifier_state", "restore_classifier"]

_TUPLES = ("ngrams", "char_ngrams", "affixes", "fields")


def classifier_state(classifier: Any, inference_only: bool = False
                     ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and arrays that describe a trained :class:`snowpy.SnowClassifier`."""
    classifier._check_fitted()
    header, arrays = network_state(classifier.network_, inference_only)
    featurizer = classifier.featurizer_
    params = plain(featurizer.get_params())
    params["extractors"] = [list(item) for item in params.get("extractors", [])]
    header = {"kind": "classifier", "network": header, "featurizer": params,
              "classifier": plain(classifier.get_params())}
    arrays = dict(arrays, **_names_arrays(featurizer, arrays["feature_ids"]))
    return header, arrays


def _names_arrays(featurizer: Any, kept_ids: np.ndarray) -> dict[str, np.ndarray]:
    if not featurizer.keep_names or featurizer._name_index() is None:
        return {}
    kept = set(kept_ids.tolist())
    ids, counts, blobs = [], [], []
    for feature_id, strings in featurizer._names.names.items():
        if feature_id not in kept:
            continue
        ids.append(feature_id)
        counts.append(len(strings))
        blobs.extend(s.encode("utf-8", "surrogatepass") for s in strings)
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    blob = np.frombuffer(b"".join(blobs), dtype=np.uint8) if blobs else np.zeros(0, np.uint8)
    return {"names_ids": np.asarray(ids, dtype=np.int64),
            "names_counts": np.asarray(counts, dtype=np.int64),
            "names_lengths": lengths, "names_blob": blob}


def _build_names(arrays: dict[str, np.ndarray], where: str) -> Any:
    from snowpy.text.names import NameIndex

    index = NameIndex()
    if "names_ids" in arrays:
        ids, counts = arrays["names_ids"], arrays["names_counts"]
        lengths, blob = arrays["names_lengths"], arrays["names_blob"].tobytes()
        if counts.shape != ids.shape or counts.sum() != lengths.size \
                or lengths.sum() != len(blob) or np.any(lengths < 0) or np.any(counts < 0):
            raise ModelFileError(f"{where}: the inverse feature map is inconsistent")
        ends = np.cumsum(lengths)
        strings = [blob[e - n:e].decode("utf-8", "surrogatepass") for e, n in zip(ends, lengths)]
        position = 0
        for feature_id, count in zip(ids.tolist(), counts.tolist()):
            index.restore(feature_id, strings[position:position + count])
            position += count
    return index


def _tupled(params: dict[str, Any]) -> dict[str, Any]:
    params = dict(params)
    for name in _TUPLES:
        if isinstance(params.get(name), list):
            params[name] = tuple(params[name])
    params["extractors"] = tuple(tuple(item) for item in params.get("extractors", ()))
    params.pop("storage", None)  # format 1: the network's storage, replaced by links
    return params


def restore_classifier(classifier_class: type, network_class: type, header: dict[str, Any],
                       arrays: dict[str, np.ndarray], where: str) -> Any:
    """A classifier from what :func:`classifier_state` produced."""
    from snowpy.text import Featurizer

    network = restore_network(network_class, header.get("network") or {}, arrays, where)
    try:
        featurizer = Featurizer(**_tupled(dict(header["featurizer"])))
        featurizer._compile()
    except (KeyError, TypeError, ValueError, SnowpyError) as exc:
        raise ModelFileError(f"{where}: the front-end description is invalid ({exc})") from None
    stored = {k: v for k, v in arrays.items() if k.startswith("names_")}
    featurizer._names_loader = lambda: _build_names(stored, where)
    options = _tupled(dict(header.get("classifier") or {}))
    for name in ("links", "precision", "discard"):  # format 1 files predate them
        options.setdefault(name, getattr(network, name))
    try:
        classifier = classifier_class(**options)
    except TypeError as exc:
        raise ModelFileError(f"{where}: the classifier description is invalid ({exc})") from None
    classifier.featurizer_ = featurizer
    classifier.network_ = network
    return classifier
