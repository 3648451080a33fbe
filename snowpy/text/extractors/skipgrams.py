"""Skip-grams: pairs of tokens with up to ``max_skip`` tokens between them.

A k-skip-bigram pairs token ``i`` with token ``i + g`` for ``2 <= g <= k +
1`` (adjacent pairs are ordinary bigrams, from ``words``). Hashed as the two
tokens joined by a space, under the extractor's own seed; shown as
``"first _ second"`` in the inverse map.
"""

from __future__ import annotations

from snowpy._core.extract import Extractor
from snowpy.hookspecs import hookimpl
from snowpy.text.extractors.spec import ExtractorKernel, ExtractorSpec
from snowpy.params import Param

__all__ = ["SKIPGRAMS"]


def _label(raw: str) -> str:
    first, _, second = raw.partition(" ")
    return f"{first} _ {second}"


def _build(params: dict) -> ExtractorKernel:
    return ExtractorKernel(extract=Extractor("skipgrams"), params=[params["max_skip"]],
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
