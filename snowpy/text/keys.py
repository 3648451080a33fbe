"""A stable 64-bit key per (document, labels): what a shuffled epoch sorts by.

Training shuffles examples by these keys mixed with a seed (never by where they
stand), so the same corpus in another order trains the same model, whether its
documents are featurised from Python strings or read from a file by the compiled
reader (which computes the text part as it reads: :mod:`snowpy._core.reader`). The key
of a document is ``splitmix64(text + labels)``, ``text`` the first 64 bits of
MurmurHash3 x64_128 of its UTF-8 bytes (seed :data:`TEXT_SEED`) and ``labels`` the
sum, wrapping, of ``splitmix64`` of each label's hash (:func:`label_parts`).

>>> keys = document_keys(["a b", "a b", "c"], ["x", "x", "x"])
>>> bool(keys[0] == keys[1]), bool(keys[0] == keys[2])
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from snowpy._core.hashing import hash_documents, mix_keys, murmurhash3_64
from snowpy.text.tokenize import encode_documents, split_documents

__all__ = ["LABEL_SEED", "TEXT_SEED", "document_keys", "keys_of", "label_parts"]

#: Seeds of the text and label hashes.
TEXT_SEED = 0x5EED
LABEL_SEED = 0x1ABE1

_COLLECTIONS = (list, tuple, set, frozenset)


def _label_bytes(label: Any) -> bytes:
    if isinstance(label, str):
        return b"s" + label.encode("utf-8", "surrogatepass")
    return b"r" + repr(label).encode("utf-8", "surrogatepass")


def label_parts(labels: Sequence[Any]) -> np.ndarray:
    """The label part of each document's key (a collection of labels: the sum of
    theirs, so their order does not matter)."""
    cache: dict[Any, int] = {}
    out = np.zeros(len(labels), dtype=np.uint64)
    one = np.empty(1, dtype=np.uint64)
    for i, label in enumerate(labels):
        group = label if isinstance(label, _COLLECTIONS) else (label,)
        total = 0
        for item in group:
            try:
                part = cache.get(item)
            except TypeError:  # unhashable: computed each time
                part = None
            if part is None:
                one[0] = murmurhash3_64(_label_bytes(item), LABEL_SEED)
                mix_keys(one, 0, one)
                part = int(one[0])
                try:
                    cache[item] = part
                except TypeError:
                    pass
            total = (total + part) & 0xFFFFFFFFFFFFFFFF
        out[i] = total
    return out


def keys_of(text_hashes: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """``splitmix64(text + labels)`` of each document (wrapping sums)."""
    summed = np.add(text_hashes.astype(np.uint64, copy=False), parts, dtype=np.uint64)
    keys = np.empty(summed.shape[0], dtype=np.uint64)
    mix_keys(summed, 0, keys)
    return keys


def text_hashes(texts: Sequence[Any] | np.ndarray) -> np.ndarray:
    """The text part of each document's key: strings hashed as UTF-8, other documents
    (records, token lists) as their sorted JSON."""
    n = len(texts)
    out = np.empty(n, dtype=np.uint64)
    if n and all(type(t) is str for t in texts):
        items = list(texts)
        raw, offsets = encode_documents(items)
        data, offsets = split_documents(raw, offsets, n, items)
        hash_documents(data, offsets, TEXT_SEED, out, data is raw)
        return out
    import orjson

    for i, text in enumerate(texts):
        raw_text = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else \
            orjson.dumps(text, default=str, option=orjson.OPT_SORT_KEYS)
        out[i] = murmurhash3_64(raw_text, TEXT_SEED)
    return out


def document_keys(texts: Sequence[Any] | np.ndarray, labels: Sequence[Any]) -> np.ndarray:
    """The key of each (document, labels) pair (see the module)."""
    return keys_of(text_hashes(texts), label_parts(labels))
