"""The records plugins provide, and the declared parameters they share.

The plugin host's own floor (:mod:`snowpy.hookspecs` and :mod:`snowpy.plugins`
stand on it): nothing here imports the rest of snowpy.

* :mod:`snowpy.records.params`: :class:`Param`, declared parameters;
* :mod:`snowpy.records.rules`: :class:`RuleSpec`, :class:`RuleKernel` (the
  update kernel's contract) and :mod:`snowpy.records.kernels` (its compiled
  signature);
* :mod:`snowpy.records.extractors`: :class:`ExtractorSpec`,
  :class:`ExtractorKernel` (the feature extractor's contract);
* :mod:`snowpy.records.corpora`: :class:`CorpusSpec`, :class:`CorpusFile`.
"""

from __future__ import annotations

from snowpy.records.corpora import CorpusFile, CorpusSpec
from snowpy.records.extractors import ExtractorKernel, ExtractorSpec
from snowpy.records.kernels import signature_attribute
from snowpy.records.params import Param, validate_declared
from snowpy.records.rules import (
    UNIVERSAL_PARAMS,
    BuildContext,
    RuleKernel,
    RuleSpec,
    compile_kernel,
    theta_param,
    thickness_params,
)

__all__ = [
    "KERNEL_SIGNATURE",
    "UNIVERSAL_PARAMS",
    "BuildContext",
    "CorpusFile",
    "CorpusSpec",
    "ExtractorKernel",
    "ExtractorSpec",
    "Param",
    "RuleKernel",
    "RuleSpec",
    "compile_kernel",
    "theta_param",
    "thickness_params",
    "validate_declared",
]


__getattr__ = signature_attribute(__name__)
