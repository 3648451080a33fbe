"""The hooks through which plugins extend snowpy.

A plugin is a module (or any object) with functions decorated by
:data:`snowpy.hookimpl` whose names are the hooks below. A plugin package
declares it under the entry-point group ``snowpy``::

    [project.entry-points.snowpy]
    my-rule = "snowpy_my_rule.plugin"

Every hook returns small frozen records (never classes or mutations of
snowpy's state). snowpy's own rules register through these same hooks; see
:mod:`snowpy.rules.perceptron` for a complete built-in example.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from snowpy.corpora.spec import CorpusSpec
    from snowpy.text.extractors.spec import ExtractorSpec
    from snowpy.corpora.spec import FormatSpec
    from snowpy.rules.spec import RuleSpec

__all__ = [
    "hookimpl",
    "hookspec",
    "snowpy_corpora",
    "snowpy_corpus_formats",
    "snowpy_feature_extractors",
    "snowpy_update_rules",
]

hookspec = pluggy.HookspecMarker("snowpy")
hookimpl = pluggy.HookimplMarker("snowpy")


@hookspec
def snowpy_update_rules() -> Iterable[RuleSpec]:  # type: ignore[empty-body]
    """Return the update rules this plugin provides.

    Each item is a :class:`snowpy.rules.RuleSpec`: a name, the rule's
    declared parameters and a ``build`` function that turns validated
    parameter values into a :class:`snowpy.rules.RuleKernel` (the update
    step, a C function of one ABI, and its packed parameters). The training
    loop calls that function directly; no hook is called while training.
    The step may be written in C or Cython, with numba, or (slowly, to try
    an idea) in plain Python, as here; ``docs/plugins.md`` shows each.

    Example
    -------
    >>> from snowpy import hookimpl
    >>> from snowpy.rules import Param, RuleKernel, RuleSpec, theta_param
    >>> def _halving(w, S, t, y, activation, vals, m, sqnorm, params):
    ...     for k in range(m):
    ...         w[k, 0] *= 2.0 ** (y * vals[k])
    >>> def _build(params, context):
    ...     return RuleKernel(update=_halving, params=[],
    ...                       initial_weights=(1.0,))
    >>> @hookimpl
    ... def snowpy_update_rules():
    ...     return [RuleSpec(name="halving-winnow", build=_build,
    ...                      params=(theta_param(16.0),),
    ...                      summary="Winnow with alpha = 2, beta = 1/2")]
    """


@hookspec
def snowpy_feature_extractors() -> Iterable[ExtractorSpec]:  # type: ignore[empty-body]
    """Return the feature extractors this plugin provides.

    Each item is a :class:`snowpy.text.extractors.ExtractorSpec`: a name, its
    declared parameters and a ``build`` function returning an
    :class:`~snowpy.text.extractors.ExtractorKernel`, the function (compiled,
    or Python) that turns a chunk's token stream into hashed feature ids (the
    contract is in :mod:`snowpy.text.extractors.spec`). Built-in extractors:
    ``words`` (word n-grams), ``skipgrams``, ``chars`` (character n-grams)
    and ``affixes`` (prefixes and suffixes).

    Example
    -------
    >>> from snowpy import hookimpl
    >>> from snowpy.text.extractors.words import WORDS
    >>> import dataclasses
    >>> @hookimpl
    ... def snowpy_feature_extractors():
    ...     return [dataclasses.replace(WORDS, name="tokens", summary="words, renamed")]
    """


@hookspec
def snowpy_corpus_formats() -> Iterable[FormatSpec]:  # type: ignore[empty-body]
    """Return the corpus file formats this plugin provides.

    Each item is a :class:`snowpy.corpora.spec.FormatSpec`: a name (what
    ``--format`` takes), how a file of the format is recognised (its name's
    ending, or its first bytes), the layout options it takes and its reader.
    ``snowpy.corpora.read``, ``detect_format`` and every command read it then.

    Example
    -------
    >>> from snowpy import hookimpl
    >>> from snowpy.corpora import Document
    >>> from snowpy.corpora.spec import FormatSpec
    >>> def read_pipes(path, *, problems=None, encoding="utf-8"):
    ...     with open(path, encoding=encoding) as lines:
    ...         for number, line in enumerate(lines, 1):
    ...             label, _, text = line.rstrip("\\n").partition("|")
    ...             yield Document(text, label, f"{path}:{number}")
    >>> @hookimpl
    ... def snowpy_corpus_formats():
    ...     return [FormatSpec("pipes", "label|text lines", read_pipes,
    ...                        extensions=(".pipes",), options=("encoding",),
    ...                        layout=lambda given: {"encoding": given["encoding"]}
    ...                        if given.get("encoding") else {})]
    """


@hookspec
def snowpy_corpora() -> Iterable[CorpusSpec]:  # type: ignore[empty-body]
    """Return the named corpora this plugin provides.

    Each item is a :class:`snowpy.corpora.CorpusSpec`: a name, the accepted
    files (name, SHA-256, download location), a ``read`` function streaming
    :class:`snowpy.corpora.Document` records for a split, the splits and
    their documented counts, source, license and citation.
    :func:`snowpy.corpora.load` finds the file, verifies and reads it.

    Example
    -------
    >>> from snowpy import hookimpl
    >>> from snowpy.corpora import CorpusFile, CorpusSpec, read_tsv
    >>> @hookimpl
    ... def snowpy_corpora():
    ...     return [CorpusSpec(
    ...         name="my-tickets", summary="support tickets by queue",
    ...         files=(CorpusFile("tickets.tsv"),),
    ...         read=lambda path, split, problems: read_tsv(path, problems=problems),
    ...         splits=("all",), counts={"all": 1200}, source="our helpdesk",
    ...         license="internal", citation="-")]
    """
