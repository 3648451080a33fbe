"""Conjunctions: pairs of distinct tokens active together (SNoW's ``-g +``).

SNoW could add the pairwise conjunctions of an example's active features, so that a
linear network sees ``"not" and "good"`` as one feature of its own. Here a
conjunction pairs two distinct tokens of a document, in either order (``good & not``
and ``not & good`` are one feature): within ``window`` tokens of each other, or
anywhere in the document with ``window=0`` (SNoW's choice, quadratic in the document's
length: fit for short texts). Hashed as the two tokens, sorted, joined by a unit
separator, under the extractor's own seed; shown as ``"first & second"``.
"""

from __future__ import annotations

import numpy as np

from snowpy._jit import jit
from snowpy.hookspecs import hookimpl
from snowpy.records.extractors import ExtractorKernel, ExtractorSpec
from snowpy.records.params import Param
from snowpy.text.extractors.kernels import hash_span, max_token_bytes, record, room

__all__ = ["CONJUNCTIONS", "conjunctions_extract"]

_SEPARATOR = 31  # the unit separator: never inside a token


@jit
def _before(text, a_start, a_end, b_start, b_end):  # pragma: no cover - compiled
    """-1, 0 or 1 as token a sorts before, equal to, or after token b (bytewise)."""
    n = min(a_end - a_start, b_end - b_start)
    for q in range(n):
        x = text[a_start + q]
        y = text[b_start + q]
        if x != y:
            return -1 if x < y else 1
    la = a_end - a_start
    lb = b_end - b_start
    return 0 if la == lb else (-1 if la < lb else 1)


@jit
def conjunctions_extract(text, starts, ends, doc_ptr, params, seed, mask, out_ids, out_ptr,
                         names, arena, spans):  # pragma: no cover - compiled
    """Token pairs, ``params = [window]`` (0: the whole document)."""
    window = int(params[0])
    scratch = np.empty(2 * max_token_bytes(starts, ends) + 1, np.uint8)
    count = 0
    used = 0
    n_docs = doc_ptr.shape[0] - 1
    for d in range(n_docs):
        out_ptr[d] = count
        first = doc_ptr[d]
        last = doc_ptr[d + 1]
        n = last - first
        pairs = n * (n - 1) // 2 if window == 0 else n * window
        if not room(out_ids, spans, names, count, pairs):
            return -1
        for i in range(first, last):
            stop = last if window == 0 else min(last, i + window + 1)
            for j in range(i + 1, stop):
                order = _before(text, starts[i], ends[i], starts[j], ends[j])
                if order == 0:
                    continue  # a token with itself is the token
                a, b = (i, j) if order < 0 else (j, i)
                length = 0
                for q in range(starts[a], ends[a]):
                    scratch[length] = text[q]
                    length += 1
                scratch[length] = _SEPARATOR
                length += 1
                for q in range(starts[b], ends[b]):
                    scratch[length] = text[q]
                    length += 1
                out_ids[count] = hash_span(scratch, 0, length, seed, mask)
                if names:
                    used = record(scratch, 0, length, arena, spans, count, used)
                    if used < 0:
                        return used
                count += 1
    out_ptr[n_docs] = count
    return count


def _label(raw: str) -> str:
    first, _, second = raw.partition("\x1f")
    return f"{first} & {second}"


def _build(params: dict) -> ExtractorKernel:
    window = params["window"]
    return ExtractorKernel(extract=conjunctions_extract, params=[window], kind="conjunctions",
                           per_token=window if window else 32, label=_label)


CONJUNCTIONS = ExtractorSpec(
    name="conjunctions",
    build=_build,
    params=(Param("window", 0, "pair tokens at most this far apart; 0: the whole document "
                  "(SNoW -g +)", type=int, low=0, high=1000),),
    summary="pairwise conjunctions of a document's tokens, order-free (SNoW -g +)",
)


@hookimpl
def snowpy_feature_extractors() -> list[ExtractorSpec]:
    """Conjunctions."""
    return [CONJUNCTIONS]
