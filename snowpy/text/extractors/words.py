"""Word n-grams: unigrams (``min_n = max_n = 1``) up to n-grams of any length.

The n-gram of tokens ``a..b`` of a document is hashed as its normalised text,
the tokens joined by single spaces (``"new york"``), as scikit-learn's
HashingVectorizer does.
"""

from __future__ import annotations

from snowpy._jit import jit
from snowpy.exceptions import ConfigurationError
from snowpy.hookspecs import hookimpl
from snowpy.records.extractors import ExtractorKernel, ExtractorSpec
from snowpy.records.params import Param
from snowpy.text.extractors.kernels import hash_span, record, room

__all__ = ["WORDS", "words_extract"]


@jit
def words_extract(text, starts, ends, doc_ptr, params, seed, mask, out_ids, out_ptr, names,
                  arena, spans):  # pragma: no cover - compiled
    """Word n-grams, ``params = [min_n, max_n]``."""
    min_n = int(params[0])
    max_n = int(params[1])
    count = 0
    used = 0
    n_docs = doc_ptr.shape[0] - 1
    if min_n == 1 and max_n == 1 and not names:  # unigrams: feature k is token k
        n_tokens = starts.shape[0]
        if n_tokens > out_ids.shape[0]:
            return -1
        for k in range(n_tokens):
            out_ids[k] = hash_span(text, starts[k], ends[k], seed, mask)
        for d in range(n_docs + 1):
            out_ptr[d] = doc_ptr[d]
        return n_tokens
    for d in range(n_docs):
        out_ptr[d] = count
        first = doc_ptr[d]
        last = doc_ptr[d + 1]
        if not room(out_ids, spans, names, count, (last - first) * (max_n - min_n + 1)):
            return -1
        for i in range(first, last):
            for n in range(min_n, max_n + 1):
                j = i + n - 1
                if j >= last:
                    break
                out_ids[count] = hash_span(text, starts[i], ends[j], seed, mask)
                if names:
                    used = record(text, starts[i], ends[j], arena, spans, count, used)
                    if used < 0:
                        return used
                count += 1
    out_ptr[n_docs] = count
    return count


def _build(params: dict) -> ExtractorKernel:
    if params["min_n"] > params["max_n"]:
        raise ConfigurationError(
            f"words: min_n ({params['min_n']}) must not exceed max_n ({params['max_n']})"
        )
    return ExtractorKernel(
        extract=words_extract,
        params=[params["min_n"], params["max_n"]],
        kind="words",
        per_token=params["max_n"] - params["min_n"] + 1,
    )


WORDS = ExtractorSpec(
    name="words",
    build=_build,
    params=(
        Param("min_n", 1, "shortest n-gram, in tokens", type=int, low=1),
        Param("max_n", 1, "longest n-gram, in tokens", type=int, low=1, high=16),
    ),
    summary="word n-grams (unigrams by default), tokens joined by spaces",
)


@hookimpl
def snowpy_feature_extractors() -> list[ExtractorSpec]:
    """Word n-grams."""
    return [WORDS]
