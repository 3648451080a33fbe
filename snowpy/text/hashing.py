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

from snowpy._jit import jit

__all__ = ["DEFAULT_SEED", "feature_seed", "murmur_bytes", "murmurhash3_32"]

#: Base seed of feature hashing; a model records the seed it used.
DEFAULT_SEED = 0

_M32 = 0xFFFFFFFF


@jit(inline="always")
def _rotl(x, r):  # pragma: no cover - compiled
    return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF


@jit(inline="always")
def murmur_bytes(data, start, end, seed):  # pragma: no cover - compiled
    """MurmurHash3 x86_32 of ``data[start:end]`` (uint8 array) as an int in [0, 2**32)."""
    c1 = 0xCC9E2D51
    c2 = 0x1B873593
    h = int(seed) & 0xFFFFFFFF  # Python ints without the JIT: no overflow warnings
    length = int(end) - int(start)
    stop = start + (length // 4) * 4
    i = start
    while i < stop:
        k = (int(data[i]) | (int(data[i + 1]) << 8) | (int(data[i + 2]) << 16)
             | (int(data[i + 3]) << 24))
        k = (k * c1) & 0xFFFFFFFF
        k = _rotl(k, 15)
        k = (k * c2) & 0xFFFFFFFF
        h ^= k
        h = _rotl(h, 13)
        h = (h * 5 + 0xE6546B64) & 0xFFFFFFFF
        i += 4
    tail = length & 3
    if stop + 3 <= data.shape[0]:
        # branch-free tail (token lengths vary, so the branches below mispredict):
        # read three bytes and keep ``tail`` of them; k == 0 leaves h unchanged
        k = (int(data[stop]) | (int(data[stop + 1]) << 8)
             | (int(data[stop + 2]) << 16)) & ((1 << (8 * tail)) - 1)
    else:
        k = 0
        if tail == 3:
            k ^= int(data[stop + 2]) << 16
        if tail >= 2:
            k ^= int(data[stop + 1]) << 8
        if tail >= 1:
            k ^= int(data[stop])
    k = (k * c1) & 0xFFFFFFFF
    k = _rotl(k, 15)
    k = (k * c2) & 0xFFFFFFFF
    h ^= k
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h


def murmurhash3_32(data: bytes | str, seed: int = DEFAULT_SEED) -> int:
    """MurmurHash3 x86_32 of ``data`` (a str is hashed as UTF-8), unsigned.

    Equal to ``sklearn.utils.murmurhash3_32(data, seed, positive=True)``.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    array = np.frombuffer(data, dtype=np.uint8) if data else np.zeros(0, dtype=np.uint8)
    return int(murmur_bytes(array, 0, array.size, seed & _M32))


def feature_seed(kind: str, namespace: str = "", seed: int = DEFAULT_SEED) -> int:
    """The hash seed of one extractor in one namespace.

    ``murmurhash3_32(f"{namespace}\\x1f{kind}", seed)``: features of different
    extractors (the word "ion" and the character trigram "ion") and of
    different namespaces (a subject and a body) hash apart.

    >>> feature_seed("words") != feature_seed("chars") != feature_seed("words", "subject")
    True
    """
    return murmurhash3_32(f"{namespace}\x1f{kind}", seed)


@jit
def _hash_spans(data, offsets, seed, mask, out):  # pragma: no cover - compiled
    for j in range(out.shape[0]):
        out[j] = murmur_bytes(data, offsets[j], offsets[j + 1], seed) & mask


def hash_names(names: list[str], seed: int, mask: int) -> np.ndarray:
    """Hashed ids of feature names (UTF-8), ``murmur3 & mask``, as ``int64``.

    >>> hash_names(["a", "b", "a"], 0, 0xFFFF).tolist() == [murmurhash3_32("a") & 0xFFFF,
    ...     murmurhash3_32("b") & 0xFFFF, murmurhash3_32("a") & 0xFFFF]
    True
    """
    encoded = [name.encode("utf-8", "surrogatepass") for name in names]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8) if encoded else \
        np.zeros(0, np.uint8)
    out = np.empty(len(encoded), dtype=np.int64)
    _hash_spans(data, offsets, int(seed) & 0xFFFFFFFF, np.int64(mask), out)
    return out
