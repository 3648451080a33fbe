"""Feature extractors: the records a plugin provides, and the built-in ones.

Built-in extractors register through the ``snowpy_feature_extractors`` hook
like any plugin's: :mod:`~snowpy.text.extractors.words`,
:mod:`~snowpy.text.extractors.skipgrams`, :mod:`~snowpy.text.extractors.chars`
and :mod:`~snowpy.text.extractors.affixes`.
"""

from __future__ import annotations

from snowpy.text.extractors.spec import ExtractorKernel, ExtractorSpec

__all__ = ["ExtractorKernel", "ExtractorSpec"]
