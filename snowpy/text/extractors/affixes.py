"""Prefixes and suffixes of tokens (morphology without a stemmer).

For each token longer than ``k`` characters and each ``k`` in
``min_len..max_len``: its first ``k`` characters followed by a space and a
space followed by its last ``k``, so prefixes, suffixes and words never share
a hashed string. Shown as ``"pre-"`` and ``"-ing"``.
"""

from __future__ import annotations

import numpy as np

from snowpy._jit import jit
from snowpy.exceptions import ConfigurationError
from snowpy.hookspecs import hookimpl
from snowpy.records.extractors import ExtractorKernel, ExtractorSpec
from snowpy.records.params import Param
from snowpy.text.extractors.kernels import (
    char_starts,
    hash_span,
    max_token_bytes,
    record,
    room,
)

__all__ = ["AFFIXES", "affixes_extract"]


@jit
def affixes_extract(text, starts, ends, doc_ptr, params, seed, mask, out_ids, out_ptr, names,
                    arena, spans):  # pragma: no cover - compiled
    """Prefixes and suffixes, ``params = [min_len, max_len]``."""
    min_len = int(params[0])
    max_len = int(params[1])
    longest = max_token_bytes(starts, ends)
    scratch = np.empty(longest + 2, np.uint8)
    cps = np.empty(longest + 2, np.int64)
    count = 0
    used = 0
    n_docs = doc_ptr.shape[0] - 1
    for d in range(n_docs):
        out_ptr[d] = count
        needed = 2 * (max_len - min_len + 1) * (doc_ptr[d + 1] - doc_ptr[d])
        if not room(out_ids, spans, names, count, needed):
            return -1
        for k in range(doc_ptr[d], doc_ptr[d + 1]):
            n_chars = char_starts(text, starts[k], ends[k], cps)
            for length in range(min_len, max_len + 1):
                if n_chars <= length:
                    break
                size = cps[length] - starts[k]
                for q in range(size):
                    scratch[q] = text[starts[k] + q]
                scratch[size] = 32
                out_ids[count] = hash_span(scratch, 0, size + 1, seed, mask)
                if names:
                    used = record(scratch, 0, size + 1, arena, spans, count, used)
                    if used < 0:
                        return used
                count += 1
                begin = cps[n_chars - length]
                size = ends[k] - begin
                scratch[0] = 32
                for q in range(size):
                    scratch[q + 1] = text[begin + q]
                out_ids[count] = hash_span(scratch, 0, size + 1, seed, mask)
                if names:
                    used = record(scratch, 0, size + 1, arena, spans, count, used)
                    if used < 0:
                        return used
                count += 1
    out_ptr[n_docs] = count
    return count


def _label(raw: str) -> str:
    return f"-{raw[1:]}" if raw.startswith(" ") else f"{raw[:-1]}-"


def _build(params: dict) -> ExtractorKernel:
    if params["min_len"] > params["max_len"]:
        raise ConfigurationError(
            f"affixes: min_len ({params['min_len']}) must not exceed max_len ({params['max_len']})"
        )
    return ExtractorKernel(
        extract=affixes_extract,
        params=[params["min_len"], params["max_len"]],
        kind="affixes",
        per_token=2 * (params["max_len"] - params["min_len"] + 1),
        label=_label,
    )


AFFIXES = ExtractorSpec(
    name="affixes",
    build=_build,
    params=(
        Param("min_len", 2, "shortest prefix and suffix, in characters", type=int, low=1),
        Param("max_len", 4, "longest prefix and suffix, in characters", type=int, low=1,
              high=32),
    ),
    summary="prefixes and suffixes of tokens",
)


@hookimpl
def snowpy_feature_extractors() -> list[ExtractorSpec]:
    """Prefixes and suffixes."""
    return [AFFIXES]
