"""Skip-grams: pairs of tokens with up to ``max_skip`` tokens between them.

A k-skip-bigram pairs token ``i`` with token ``i + g`` for ``2 <= g <= k +
1`` (adjacent pairs are ordinary bigrams, from ``words``). Hashed as the two
tokens joined by a space, under the extractor's own seed; shown as
``"first _ second"`` in the inverse map.
"""

from __future__ import annotations

import numpy as np

from snowpy._jit import jit
from snowpy.hookspecs import hookimpl
from snowpy.records.extractors import ExtractorKernel, ExtractorSpec
from snowpy.records.params import Param
from snowpy.text.extractors.kernels import hash_span, max_token_bytes, record, room

__all__ = ["SKIPGRAMS", "skipgrams_extract"]


@jit
def skipgrams_extract(text, starts, ends, doc_ptr, params, seed, mask, out_ids, out_ptr, names,
                      arena, spans):  # pragma: no cover - compiled
    """k-skip-bigrams, ``params = [max_skip]``."""
    max_skip = int(params[0])
    scratch = np.empty(2 * max_token_bytes(starts, ends) + 1, np.uint8)
    count = 0
    used = 0
    n_docs = doc_ptr.shape[0] - 1
    for d in range(n_docs):
        out_ptr[d] = count
        first = doc_ptr[d]
        last = doc_ptr[d + 1]
        if not room(out_ids, spans, names, count, (last - first) * max_skip):
            return -1
        for i in range(first, last):
            first_length = ends[i] - starts[i]
            for q in range(first_length):
                scratch[q] = text[starts[i] + q]
            scratch[first_length] = 32
            for gap in range(2, max_skip + 2):
                j = i + gap
                if j >= last:
                    break
                length = first_length + 1
                for q in range(ends[j] - starts[j]):
                    scratch[length] = text[starts[j] + q]
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
    first, _, second = raw.partition(" ")
    return f"{first} _ {second}"


def _build(params: dict) -> ExtractorKernel:
    return ExtractorKernel(extract=skipgrams_extract, params=[params["max_skip"]],
                           kind="skipgrams", per_token=params["max_skip"], label=_label)


SKIPGRAMS = ExtractorSpec(
    name="skipgrams",
    build=_build,
    params=(Param("max_skip", 2, "most tokens skipped between the two", type=int, low=1,
                  high=16),),
    summary="k-skip-bigrams: token pairs with 1..k tokens between them",
)


@hookimpl
def snowpy_feature_extractors() -> list[ExtractorSpec]:
    """Skip-grams."""
    return [SKIPGRAMS]
