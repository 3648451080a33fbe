"""Character n-grams, inside word boundaries or across them.

``boundaries="within"`` is scikit-learn's ``char_wb``: each token padded
with one space on each side, and its n-grams for ``n`` in ``min_n..max_n``
(a padded token shorter than ``n`` counts once, whole).
``boundaries="across"`` is scikit-learn's ``char`` over the document's
normalised token stream (tokens joined by single spaces; punctuation is
already gone), so n-grams span word boundaries.

n counts code points, not bytes: an accented letter or a CJK character is one
character.
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

__all__ = ["CHARS", "chars_extract"]


@jit
def chars_extract(text, starts, ends, doc_ptr, params, seed, mask, out_ids, out_ptr, names,
                  arena, spans):  # pragma: no cover - compiled
    """Character n-grams, ``params = [min_n, max_n, across]``."""
    min_n = int(params[0])
    max_n = int(params[1])
    across = params[2] > 0.0
    n_docs = doc_ptr.shape[0] - 1
    longest = max_token_bytes(starts, ends) + 2
    if across:
        for d in range(n_docs):
            if doc_ptr[d + 1] > doc_ptr[d]:
                span = ends[doc_ptr[d + 1] - 1] - starts[doc_ptr[d]]
                longest = max(longest, span)
    scratch = np.empty(longest + 2, np.uint8)
    cps = np.empty(longest + 3, np.int64)
    count = 0
    used = 0
    for d in range(n_docs):
        out_ptr[d] = count
        first = doc_ptr[d]
        last = doc_ptr[d + 1]
        if last == first:
            continue
        # at most one n-gram per n per byte, plus the two pads of every token
        doc_bytes = ends[last - 1] - starts[first] + 2 * (last - first)
        if not room(out_ids, spans, names, count, doc_bytes * (max_n - min_n + 1)):
            return -1
        if across:
            n_chars = char_starts(text, starts[first], ends[last - 1], cps)
            for n in range(min_n, min(max_n, n_chars) + 1):
                for i in range(n_chars - n + 1):
                    out_ids[count] = hash_span(text, cps[i], cps[i + n], seed, mask)
                    if names:
                        used = record(text, cps[i], cps[i + n], arena, spans, count, used)
                        if used < 0:
                            return used
                    count += 1
            continue
        for k in range(first, last):
            length = ends[k] - starts[k]
            scratch[0] = 32
            for q in range(length):
                scratch[q + 1] = text[starts[k] + q]
            scratch[length + 1] = 32
            n_chars = char_starts(scratch, 0, length + 2, cps)
            for n in range(min_n, max_n + 1):
                offset = 0
                stop = min(n_chars, n)
                out_ids[count] = hash_span(scratch, cps[0], cps[stop], seed, mask)
                if names:
                    used = record(scratch, cps[0], cps[stop], arena, spans, count, used)
                    if used < 0:
                        return used
                count += 1
                while offset + n < n_chars:
                    offset += 1
                    out_ids[count] = hash_span(scratch, cps[offset], cps[offset + n], seed, mask)
                    if names:
                        used = record(scratch, cps[offset], cps[offset + n], arena, spans,
                                      count, used)
                        if used < 0:
                            return used
                    count += 1
                if offset == 0:
                    break
    out_ptr[n_docs] = count
    return count


def _label(raw: str) -> str:
    return f"chars:{raw!r}"


def _build(params: dict) -> ExtractorKernel:
    if params["min_n"] > params["max_n"]:
        raise ConfigurationError(
            f"chars: min_n ({params['min_n']}) must not exceed max_n ({params['max_n']})"
        )
    width = params["max_n"] - params["min_n"] + 1
    return ExtractorKernel(
        extract=chars_extract,
        params=[params["min_n"], params["max_n"], params["boundaries"] == "across"],
        kind="chars",
        per_token=2 * width,
        per_byte=width,
        label=_label,
    )


CHARS = ExtractorSpec(
    name="chars",
    build=_build,
    params=(
        Param("min_n", 3, "shortest n-gram, in characters", type=int, low=1),
        Param("max_n", 5, "longest n-gram, in characters", type=int, low=1, high=32),
        Param("boundaries", "within", "n-grams inside padded tokens, or across them",
              type=str, choices=("within", "across")),
    ),
    summary="character n-grams inside word boundaries (char_wb) or across them (char)",
)


@hookimpl
def snowpy_feature_extractors() -> list[ExtractorSpec]:
    """Character n-grams."""
    return [CHARS]
