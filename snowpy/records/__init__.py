"""The records plugins provide, and the declared parameters they share.

The plugin host's own floor (:mod:`snowpy.hookspecs` and :mod:`snowpy.plugins`
stand on it): nothing here imports the rest of snowpy.

* :mod:`snowpy.records.params`: :class:`Param`, declared parameters;
* :mod:`snowpy.records.rules`: :class:`RuleSpec`, :class:`RuleKernel` (the
  update kernel's contract) and :mod:`snowpy.records.kernels` (its C ABI);
* :mod:`snowpy.records.extractors`: :class:`ExtractorSpec`,
  :class:`ExtractorKernel` (the feature extractor's contract);
* :mod:`snowpy.records.corpora`: :class:`CorpusSpec`, :class:`CorpusFile`.
"""

from __future__ import annotations

from snowpy.records.corpora import CorpusFile, CorpusSpec
from snowpy.records.extractors import ExtractorKernel, ExtractorSpec
from snowpy.records.kernels import UPDATE_SIGNATURE, UpdateKernel
from snowpy.records.params import Param, validate_declared
from snowpy.records.rules import (
    UNIVERSAL_PARAMS,
    BuildContext,
    RuleKernel,
    RuleSpec,
    theta_param,
    thickness_params,
)

__all__ = [
    "UNIVERSAL_PARAMS",
    "UPDATE_SIGNATURE",
    "BuildContext",
    "CorpusFile",
    "CorpusSpec",
    "ExtractorKernel",
    "ExtractorSpec",
    "Param",
    "RuleKernel",
    "RuleSpec",
    "UpdateKernel",
    "theta_param",
    "thickness_params",
    "validate_declared",
]

