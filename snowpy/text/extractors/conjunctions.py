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

from snowpy._core.extract import Extractor
from snowpy.hookspecs import hookimpl
from snowpy.text.extractors.spec import ExtractorKernel, ExtractorSpec
from snowpy.params import Param

__all__ = ["CONJUNCTIONS"]


def _label(raw: str) -> str:
    first, _, second = raw.partition("\x1f")
    return f"{first} & {second}"


def _build(params: dict) -> ExtractorKernel:
    window = params["window"]
    return ExtractorKernel(extract=Extractor("conjunctions"), params=[window], kind="conjunctions",
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
