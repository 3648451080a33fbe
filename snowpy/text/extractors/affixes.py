"""Prefixes and suffixes of tokens (morphology without a stemmer).

For each token longer than ``k`` characters and each ``k`` in
``min_len..max_len``: its first ``k`` characters followed by a space and a
space followed by its last ``k``, so prefixes, suffixes and words never share
a hashed string. Shown as ``"pre-"`` and ``"-ing"``.
"""

from __future__ import annotations

from snowpy._core.extract import Extractor
from snowpy.hookspecs import hookimpl
from snowpy.text.extractors.spec import ExtractorKernel, ExtractorSpec, lengths
from snowpy.params import Param

__all__ = ["AFFIXES"]


def _label(raw: str) -> str:
    return f"-{raw[1:]}" if raw.startswith(" ") else f"{raw[:-1]}-"


def _build(params: dict) -> ExtractorKernel:
    return ExtractorKernel(
        extract=Extractor("affixes"),
        params=[params["min_len"], params["max_len"]],
        kind="affixes",
        per_token=2 * lengths("affixes", params, "min_len", "max_len"),
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
