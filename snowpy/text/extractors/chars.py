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

from snowpy._core.extract import Extractor
from snowpy.hookspecs import hookimpl
from snowpy.text.extractors.spec import ExtractorKernel, ExtractorSpec, lengths
from snowpy.params import Param

__all__ = ["CHARS"]


def _label(raw: str) -> str:
    return f"chars:{raw!r}"


def _build(params: dict) -> ExtractorKernel:
    width = lengths("chars", params, "min_n", "max_n")
    return ExtractorKernel(
        extract=Extractor("chars"),
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
