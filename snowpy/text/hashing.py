"""MurmurHash3 x86_32, compiled: the stable hash of feature strings.

A feature's id is ``murmurhash3_32(utf8_bytes, seed) & (2**bits - 1)`` where
the seed identifies the extractor and the namespace (see
:func:`feature_seed`). MurmurHash3 (Austin Appleby, public domain) is the hash
scikit-learn's HashingVectorizer and Vowpal Wabbit use; it depends only on the
bytes, so ids are identical across processes, machines and PYTHONHASHSEED.

>>> murmurhash3_32(b"hello")
613153351
>>> hex(murmurhash3_32(b"", seed=1))
'0x514e28b7'
"""

from __future__ import annotations

import numpy as np

from snowpy._core import hashing
from snowpy.declared import FEATURIZER
from snowpy.text.tokenize import encode_each

__all__ = ["DEFAULT_SEED", "feature_seed", "hash_names", "murmurhash3_32"]

#: Base seed of feature hashing (the front end's ``hash_seed``); a model records the
#: seed it used.
DEFAULT_SEED: int = FEATURIZER["hash_seed"].default

_M32 = 0xFFFFFFFF


def murmurhash3_32(data: bytes | str, seed: int = DEFAULT_SEED) -> int:
    """MurmurHash3 x86_32 of ``data`` (a str is hashed as UTF-8), unsigned.

    Equal to ``sklearn.utils.murmurhash3_32(data, seed, positive=True)``.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return int(hashing.murmurhash3_32(data, seed & _M32))


def feature_seed(kind: str, namespace: str = "", seed: int = DEFAULT_SEED) -> int:
    """The hash seed of one extractor in one namespace.

    ``murmurhash3_32(f"{namespace}\\x1f{kind}", seed)``: features of different
    extractors (the word "ion" and the character trigram "ion") and of
    different namespaces (a subject and a body) hash apart.

    >>> feature_seed("words") != feature_seed("chars") != feature_seed("words", "subject")
    True
    """
    return murmurhash3_32(f"{namespace}\x1f{kind}", seed)


def hash_names(names: list[str], seed: int, mask: int) -> np.ndarray:
    """Hashed ids of feature names (UTF-8), ``murmur3 & mask``, as ``int64``.

    >>> hash_names(["a", "b", "a"], 0, 0xFFFF).tolist() == [murmurhash3_32("a") & 0xFFFF,
    ...     murmurhash3_32("b") & 0xFFFF, murmurhash3_32("a") & 0xFFFF]
    True
    """
    data, offsets = encode_each(names)
    out = np.empty(len(names), dtype=np.int64)
    hashing.hash_spans(data, offsets, int(seed) & _M32, int(mask), out)
    return out
