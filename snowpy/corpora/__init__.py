"""Corpora: streaming readers for published formats, and named corpora.

Readers (each streams :class:`Document` records and reports a malformed
record with its file and line, or archive member):

* :func:`read_directory`: one folder per class, from a folder, ``.tar.gz``
  or ``.zip``, with split folders;
* :func:`read_tsv`, :func:`read_csv`, :func:`read_fasttext`: line formats, and
  :func:`read_stream` for them as they arrive (standard input);
* :func:`read_jsonl`: JSON Lines with chosen fields (multi-label lists);
* :func:`read_snow`: SNoW's example format (features, not text);
* :func:`read`: any of them, chosen from the path.

:func:`open` opens whatever a user names (a file, a folder, a glob, standard input, a
named corpus) as a :class:`Corpus`; :func:`load` a named corpus (``snowpy corpus list``).
"""

from __future__ import annotations

from snowpy.corpora.corpus import Corpus, Layout, load, open
from snowpy.corpora.delimited import read_csv, read_fasttext, read_stream, read_tsv
from snowpy.corpora.demo import demo_path
from snowpy.corpora.directory import read_directory, splits_of
from snowpy.corpora.documents import CorpusError, Document, Problems
from snowpy.corpora.formats import FORMATS, corpus_formats, detect_format, read
from snowpy.corpora.jsonl import read_jsonl
from snowpy.corpora.registry import (
    CorpusFile,
    CorpusSpec,
    data_dirs,
    default_split,
)
from snowpy.corpora.snow import SnowExamples, read_snow

__all__ = [
    "FORMATS",
    "Corpus",
    "CorpusError",
    "CorpusFile",
    "CorpusSpec",
    "Document",
    "Layout",
    "Problems",
    "corpus_formats",
    "SnowExamples",
    "data_dirs",
    "default_split",
    "demo_path",
    "detect_format",
    "load",
    "open",
    "read",
    "read_csv",
    "read_directory",
    "read_fasttext",
    "read_stream",
    "read_jsonl",
    "read_snow",
    "read_tsv",
    "splits_of",
]
