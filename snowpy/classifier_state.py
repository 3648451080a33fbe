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
from snowpy.network import Cloud, DualNetwork, Network
from snowpy.network.state import network_state, plain, restore_network
from snowpy.text.names import NameIndex

__all__ = ["classifier_state", "restore_classifier", "restore_kind"]

#: The networks that describe themselves in a part of the header named by their kind.
_KINDS: dict[str, Any] = {"cloud": Cloud, "dual": DualNetwork}


def restore_kind(kind: str, part: Any, arrays: dict[str, np.ndarray], where: str) -> Any:
    """A cloud or a dual network from its part of a model header (``kind`` "cloud" or
    "dual")."""
    return _KINDS[kind]._restore(part if isinstance(part, dict) else {}, arrays, where)

_TUPLES = ("ngrams", "char_ngrams", "affixes", "fields")


def classifier_state(classifier: Any, inference_only: bool = False
                     ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and arrays that describe a trained :class:`snowpy.SnowClassifier`."""
    classifier._check_fitted()
    network = classifier.network_
    if not isinstance(network, Network):
        # a cloud (its members' headers and arrays) or a dual network (support vectors)
        header, arrays = network._model_state(inference_only)
        kept = network.feature_ids_
    else:
        header, arrays = network_state(network, inference_only)
        kept = arrays["feature_ids"]
    featurizer = classifier.featurizer_
    params = plain(featurizer.get_params())
    params["extractors"] = [list(item) for item in params.get("extractors", [])]
    header = {"kind": "classifier", "network": header, "featurizer": params,
              "classifier": plain(classifier.get_params())}
    if featurizer.keep_names and featurizer._name_index() is not None:
        packed, header["names"] = featurizer._names.pack(keep_ids=kept)
        arrays = dict(arrays, names_packed=packed)
    return header, arrays


def _tupled(params: dict[str, Any]) -> dict[str, Any]:
    params = dict(params)
    for name in _TUPLES:
        if isinstance(params.get(name), list):
            params[name] = tuple(params[name])
    params["extractors"] = tuple(tuple(item) for item in params.get("extractors", ()))
    params.pop("storage", None)  # format 1: the network's storage, replaced by links
    return params


def restore_classifier(classifier_class: type, network_class: type, header: dict[str, Any],
                       arrays: dict[str, np.ndarray], where: str, *,
                       trust_pattern: bool = False) -> Any:
    """A classifier from what :func:`classifier_state` produced."""
    from snowpy.text import Featurizer

    described = header.get("network") or {}
    kind = described.get("kind") if isinstance(described, dict) else None
    if kind in _KINDS:
        network = restore_kind(kind, described.get(kind), arrays, where)
    else:
        network = restore_network(network_class, described, arrays, where)
    try:
        featurizer = Featurizer(**_tupled(dict(header["featurizer"])))
        if not trust_pattern:
            featurizer.distrust_pattern()
        featurizer._compile()
    except (KeyError, TypeError, ValueError, SnowpyError) as exc:
        raise ModelFileError(f"{where}: the front-end description is invalid ({exc})") from None
    stored = {k: v for k, v in arrays.items() if k.startswith("names_")}
    labels = [segment.label for segment in featurizer._compile()]
    info = header.get("names")

    def names() -> NameIndex:  # on first use: loading stays fast
        unpacked = NameIndex.unpack(stored["names_packed"], info or {}, where) \
            if "names_packed" in stored else stored
        return NameIndex.from_arrays(unpacked, labels, where)

    featurizer._names_loader = names  # type: ignore[attr-defined]
    options = _tupled(dict(header.get("classifier") or {}))
    for name in ("links", "precision", "discard"):  # format 1 files predate them
        if hasattr(network, name):  # (a dual network has no links)
            options.setdefault(name, getattr(network, name))
    try:
        classifier = classifier_class(**options)
    except TypeError as exc:
        raise ModelFileError(f"{where}: the classifier description is invalid ({exc})") from None
    classifier.featurizer_ = featurizer
    classifier.network_ = network
    classifier.read_with_ = dict(header.get("read_with") or {})
    return classifier
