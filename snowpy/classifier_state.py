"""A text classifier as plain data: its network, front end and feature names.

See :mod:`snowpy.network.state` for the network's part. The front end is
stored as its parameters (hashing is stateless, so they rebuild it exactly),
with the document frequencies it counted (``idf``: every feature counted,
``frequency_ids`` and ``frequency_counts``, and the documents in the header's
``frequencies``: a feature the network does not link still weighs in a
row's norm); the inverse feature map (``keep_names``), when kept, only for
the features the network holds links for: names of features the model does
not use are not worth their bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy import model_kinds
from snowpy.declared import learned
from snowpy.exceptions import ModelFileError, SnowpyError
from snowpy.network.options import upgraded
from snowpy.network.state import narrowest, plain
from snowpy.text.weighing import DocumentFrequencies
from snowpy.text.names import NameIndex

__all__ = ["classifier_state", "restore_classifier"]

_TUPLES = ("ngrams", "char_ngrams", "affixes", "fields")


def classifier_state(classifier: Any, inference_only: bool = False
                     ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and arrays that describe a trained :class:`snowpy.SnowClassifier`."""
    network = classifier.network_
    header, arrays = network.to_state(inference_only)
    if header["kind"] == "network":  # (its own part only: the file format of 0.1)
        header = header["network"]
    # the features a network's file keeps (a row whose links were all dropped is not)
    kept = arrays["feature_ids"] if "feature_ids" in arrays else network.feature_ids_
    featurizer = classifier.featurizer_
    params = plain(learned(featurizer.get_params()))
    params["extractors"] = [list(item) for item in params.get("extractors", [])]
    header = {"kind": "classifier", "network": header, "featurizer": params,
              "classifier": plain(learned(classifier.get_params()))}
    names = featurizer.packed_names(kept)
    if names is not None:
        packed, header["names"] = names
        arrays = dict(arrays, names_packed=packed)
    frequencies = featurizer.__dict__.get("frequencies_") if featurizer.idf else None
    if frequencies is not None:
        ids, counts = frequencies.to_arrays()
        header["frequencies"] = {"documents": frequencies.documents}
        arrays = dict(arrays, frequency_ids=narrowest(ids, frequencies.width),
                      frequency_counts=narrowest(counts, frequencies.documents + 1))
        factors = frequencies.factors_of(ids)
        if factors is not None:  # (float32 numbers: DocumentFrequencies.relate)
            arrays["frequency_factors"] = factors.astype(np.float32)
    return header, arrays


def _frequencies(header: dict[str, Any], arrays: dict[str, np.ndarray], width: int,
                 where: str) -> DocumentFrequencies | None:
    """The document frequencies a file stores, checked: ascending ids below the front
    end's width, each counted in 1 to ``documents`` documents, and their relevance
    factors when it has them (finite, positive)."""
    ids, counts = arrays.get("frequency_ids"), arrays.get("frequency_counts")
    factors = arrays.get("frequency_factors")
    described = header.get("frequencies")
    if ids is None and counts is None and described is None:
        return None
    documents = described.get("documents") if isinstance(described, dict) else None
    if ids is None or counts is None or not isinstance(documents, int) \
            or isinstance(documents, bool) or documents < 0:
        raise ModelFileError(f"{where}: the document frequencies need 'frequency_ids', "
                             "'frequency_counts' and the header's frequencies.documents")
    ids, counts = np.asarray(ids).astype(np.int64), np.asarray(counts).astype(np.int64)
    if ids.shape != counts.shape or ids.ndim != 1:
        raise ModelFileError(f"{where}: 'frequency_ids' and 'frequency_counts' differ in shape")
    if ids.size and (ids[0] < 0 or ids[-1] >= width or np.any(np.diff(ids) <= 0)):
        raise ModelFileError(f"{where}: 'frequency_ids' must ascend, each below 2**bits")
    if counts.size and (counts.min() < 1 or counts.max() > documents):
        raise ModelFileError(f"{where}: 'frequency_counts' must lie from 1 to the "
                             f"{documents} documents counted")
    if factors is not None:
        factors = np.asarray(factors, np.float64)
        if factors.shape != ids.shape or not np.all(np.isfinite(factors)) \
                or (factors.size and factors.min() < 0):
            raise ModelFileError(f"{where}: 'frequency_factors' must hold a finite, "
                                 "non-negative factor for each of 'frequency_ids'")
    return DocumentFrequencies(width, ids, counts, documents, factors)


def _tupled(params: dict[str, Any]) -> dict[str, Any]:
    params = upgraded(params)  # (the names of snowpy 0.1's files)
    for name in _TUPLES:
        if isinstance(params.get(name), list):
            params[name] = tuple(params[name])
    params["extractors"] = tuple(tuple(item) for item in params.get("extractors", ()))
    params.pop("storage", None)  # format 1: the network's storage, replaced by links
    return params


def restore_classifier(classifier_class: type, header: dict[str, Any],
                       arrays: dict[str, np.ndarray], where: str) -> Any:
    """A classifier from what :func:`classifier_state` produced."""
    from snowpy.text import Featurizer

    described = header.get("network") or {}
    if not isinstance(described, dict):
        raise ModelFileError(f"{where}: the network description is invalid")
    if "kind" not in described:  # a network's own part
        described = {"kind": "network", "network": described}
    network = model_kinds.restore(described, arrays, where)
    try:
        featurizer = Featurizer(**_tupled(dict(header["featurizer"])))
        featurizer.segments()
    except (KeyError, TypeError, ValueError, SnowpyError) as exc:
        raise ModelFileError(f"{where}: the front-end description is invalid ({exc})") from None
    stored = {k: v for k, v in arrays.items() if k.startswith("names_")}
    labels = [segment.label for segment in featurizer.segments()]
    info = header.get("names")

    def names() -> NameIndex:  # on first use: loading stays fast
        unpacked = NameIndex.unpack(stored["names_packed"], info or {}, where) \
            if "names_packed" in stored else stored
        return NameIndex.from_arrays(unpacked, labels, where)

    featurizer.load_names_later(names)
    frequencies = _frequencies(header, arrays, 1 << int(featurizer.bits), where)
    if frequencies is not None and not featurizer.idf:
        raise ModelFileError(f"{where}: the file holds document frequencies for a front "
                             "end that does not weigh by them (idf is false)")
    if frequencies is not None:
        featurizer.fit(frequencies=frequencies)
    elif featurizer.idf:
        raise ModelFileError(f"{where}: the front end weighs by document frequency (idf) "
                             "but the file holds no frequencies")
    options = _tupled(dict(header.get("classifier") or {}))
    for name in ("links", "precision", "discard"):  # format 1 files predate them
        if hasattr(network, name):  # (a dual network has no links)
            options.setdefault(name, getattr(network, name))
    options.setdefault("relevance", featurizer.relevance)  # (files before it: none)
    try:
        classifier = classifier_class(**options)
    except TypeError as exc:
        raise ModelFileError(f"{where}: the classifier description is invalid ({exc})") from None
    classifier.featurizer_ = featurizer
    classifier.network_ = network
    classifier.read_with_ = dict(header.get("read_with") or {})
    # (how it runs is the loading classifier's: the running parameters no file holds)
    return classifier.set_params(n_jobs=classifier.n_jobs)
