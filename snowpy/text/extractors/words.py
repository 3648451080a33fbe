"""Word n-grams: unigrams (``min_n = max_n = 1``) up to n-grams of any length.

The n-gram of tokens ``a..b`` of a document is hashed as its normalised text,
the tokens joined by single spaces (``"new york"``), as scikit-learn's
HashingVectorizer does.
"""

from __future__ import annotations

from snowpy._core.extract import Extractor
from snowpy.hookspecs import hookimpl
from snowpy.text.extractors.spec import ExtractorKernel, ExtractorSpec, lengths
from snowpy.params import Param

__all__ = ["WORDS"]


def _build(params: dict) -> ExtractorKernel:
    return ExtractorKernel(
        extract=Extractor("words"),
        params=[params["min_n"], params["max_n"]],
        kind="words",
        per_token=lengths("words", params, "min_n", "max_n"),
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
