"""Tokenisation of UTF-8 bytes into a normalised token stream (compiled).

The rule, applied to each document's code points (:mod:`snowpy.text.unicode`
defines the classes):

* a token starts at a word character (letter, number, underscore) and
  continues over word characters and combining marks;
* a symbol (emoji included) or a CJK ideograph is a token by itself;
* anything else separates tokens;
* with ``lowercase`` every code point takes its simple lower-case mapping;
  with ``strip_marks`` combining marks are dropped (after NFKD this strips
  accents).

Invalid UTF-8 (and lone surrogates) never stops the tokeniser: each bad byte
is a separator and is counted per document, so that the caller can apply
its policy (replace, or an error naming the document).

The output is one normalised buffer per chunk: each document's tokens
written as ``tok1 tok2 tok3`` with single spaces, and the byte span of every
token. Any word n-gram is therefore a contiguous slice of the buffer.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

import snowpy._core.tokenize as _compiled
from snowpy.text.unicode import SEPARATOR, WORD, tables

__all__ = [
    "Presplit",
    "TokenStream",
    "ascii_word",
    "encode_documents",
    "encode_each",
    "is_tokenised",
    "joined_tokens",
    "split_documents",
    "split_spaces",
    "tokenize_bytes",
]


@dataclass(slots=True, eq=False)
class TokenStream:
    """The tokens of a chunk of documents.

    Attributes
    ----------
    text : uint8 array
        Each document's normalised tokens, space-separated, back to back.
    starts, ends : int64 arrays
        Byte span of every token in ``text``.
    doc_ptr : int64 array, shape (n_docs + 1,)
        Tokens of document ``d`` are ``doc_ptr[d]:doc_ptr[d + 1]``.
    invalid : int64 array, shape (n_docs,)
        Invalid UTF-8 bytes met in each document.
    """

    text: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    doc_ptr: np.ndarray
    invalid: np.ndarray

    @property
    def n_docs(self) -> int:
        return self.doc_ptr.size - 1

    def tokens(self, doc: int) -> list[str]:
        """The tokens of one document, decoded (for tests and inspection)."""
        first, last = self.doc_ptr[doc], self.doc_ptr[doc + 1]
        raw = self.text.tobytes()
        return [raw[self.starts[k]:self.ends[k]].decode("utf-8") for k in range(first, last)]


def tokenize_bytes(
    data: np.ndarray,
    offsets: np.ndarray,
    *,
    lowercase: bool = True,
    strip_marks: bool = False,
    workspace: Any = None,
) -> TokenStream:
    """Tokenise documents ``data[offsets[d]:offsets[d + 1]]`` (UTF-8 bytes; ``offsets``
    holds ``n_docs + 1`` positions).

    Examples
    --------
    >>> raw = "Hello, Wörld! 東京 ok😀".encode()
    >>> stream = tokenize_bytes(np.frombuffer(raw, np.uint8), np.array([0, len(raw)]))
    >>> stream.tokens(0)
    ['hello', 'wörld', '東', '京', 'ok', '😀']
    """
    size = int(offsets[-1] - offsets[0])
    n_docs = offsets.size - 1
    # lower-casing can lengthen a code point by one byte (2 -> 3), spaces add one per token;
    # a workspace reuses buffers from chunk to chunk (fresh pages cost more than the work)
    get = workspace.get if workspace is not None else _fresh
    out = get("text", 2 * size + 1, np.uint8)
    starts = get("starts", size + 1, np.int64)
    ends = get("ends", size + 1, np.int64)
    doc_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    invalid = np.zeros(n_docs, dtype=np.int64)
    used, n_tokens = _compiled.tokenize(data, offsets.astype(np.int64, copy=False), tables(),
                                        ascii_word(bool(lowercase)), lowercase,
                                        strip_marks, out, starts, ends, doc_ptr, invalid)
    return TokenStream(out[:used], starts[:n_tokens], ends[:n_tokens], doc_ptr, invalid)


@functools.cache
def ascii_word(lowercase: bool) -> np.ndarray:
    """Per byte: its (lower-cased) value for an ASCII word character, else 0."""
    unicode_tables = tables()  # (the page of the first 256 code points)
    classes = unicode_tables.class_pages.reshape(-1, 256)[unicode_tables.class_index[0]]
    lower = np.arange(256) + unicode_tables.lower_pages.reshape(-1, 256)[
        unicode_tables.lower_index[0]]
    # the tokeniser's ASCII fast path relies on this
    assert np.isin(classes[:128], (WORD, SEPARATOR)).all()
    table = np.zeros(256, dtype=np.uint8)
    for b in range(128):
        if classes[b] == WORD:
            table[b] = lower[b] if lowercase else b
    return table


def _fresh(name: str, size: int, dtype: Any) -> np.ndarray:
    return np.empty(size, dtype=dtype)


def split_spaces(data: np.ndarray, offsets: np.ndarray) -> TokenStream:
    """A token stream from text whose tokens are already separated by spaces.

    Used with a custom ``token_pattern`` (the tokens are found in Python and
    joined by spaces).

    >>> raw = b"don't  stop"
    >>> split_spaces(np.frombuffer(raw, np.uint8), np.array([0, len(raw)])).tokens(0)
    ["don't", 'stop']
    """
    size = int(offsets[-1] - offsets[0])
    n_docs = offsets.size - 1
    out = np.empty(size + 1, dtype=np.uint8)
    starts = np.empty(size + 1, dtype=np.int64)
    ends = np.empty(size + 1, dtype=np.int64)
    doc_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    invalid = np.zeros(n_docs, dtype=np.int64)
    used, n_tokens = _compiled.split_spaces(data, offsets.astype(np.int64, copy=False), out,
                                            starts, ends, doc_ptr)
    return TokenStream(out[:used], starts[:n_tokens], ends[:n_tokens], doc_ptr, invalid)


def encode_documents(items: list) -> tuple[np.ndarray, np.ndarray | None]:
    """The UTF-8 bytes of the documents, ready for :func:`split_documents`.

    Strings are encoded in one call, joined by NUL, when none holds a NUL
    character (offsets ``None``: the compiled split finds them); otherwise
    one by one, with their offsets. Bytes are taken as UTF-8. Lone
    surrogates are kept as (invalid) bytes for the tokeniser's policy. This
    part holds the GIL; the split does not.
    """
    n = len(items)
    try:
        joined = "\x00".join(items)
    except TypeError:  # bytes among the documents
        joined = None
    if joined is not None and n > 0:  # the split checks that there are exactly n - 1 NULs
        return np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8), None
    return encode_each(items)


def encode_each(items: list) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of ``items`` (strings, or bytes as they are) back to back, and
    their offsets."""
    n = len(items)
    encoded = [t.encode("utf-8", "surrogatepass") if isinstance(t, str) else t for t in items]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=n), out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def split_documents(raw: np.ndarray, offsets: np.ndarray | None, n_docs: int,
                    items: list | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Bytes and offsets of each document from :func:`encode_documents`' output.

    NUL-joined documents are not copied: each keeps its trailing NUL, which
    the tokenisers read as a separator.

    >>> items = ["ab", "", "ç"]
    >>> raw, offsets = encode_documents(items)
    >>> data, offsets = split_documents(raw, offsets, 3, items=items)
    >>> data.tobytes(), offsets.tolist()
    (b'ab\\x00\\x00\\xc3\\xa7', [0, 3, 4, 6])
    """
    if offsets is not None:
        return raw, offsets
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    if n_docs and _compiled.nul_offsets(raw, offsets) != n_docs:  # a document holds a NUL
        if items is None:
            raise ValueError("documents hold NUL characters; pass them as items")
        return encode_each(items)
    return raw, offsets


class Presplit(list):
    """A chunk's documents as tokens joined by single spaces (given as tokens, or found
    by a token pattern): split on the spaces only, never tokenised again. ``invalid``:
    the invalid UTF-8 bytes of each document as it was given (``sources``), as the
    tokeniser would have counted them."""

    def __init__(self, joined: list[str], sources: list[Any]) -> None:
        super().__init__(joined)
        self.invalid = np.fromiter(map(invalid_bytes, sources), np.int64, len(sources))


_SURROGATE = re.compile("[\ud800-\udfff]")


def invalid_bytes(text: str | bytes) -> int:
    """The bytes of ``text`` that are not UTF-8: each bad byte of bytes, and the three
    bytes of each lone surrogate in a string (the tokeniser meets it as those)."""
    if isinstance(text, bytes):
        return len(_SURROGATE.findall(text.decode("utf-8", "surrogateescape")))
    return 3 * len(_SURROGATE.findall(text))


def is_tokenised(document: Any) -> bool:
    """A pre-tokenised document: a list or tuple of strings, or a spaCy ``Doc`` (or any
    sequence of tokens with ``.text``)."""
    if isinstance(document, (list, tuple)):
        return all(isinstance(token, str) or hasattr(token, "text") for token in document)
    kind = type(document)  # (on the type: a Doc's .text would build its whole text)
    return hasattr(kind, "vocab") and hasattr(kind, "__iter__") and hasattr(kind, "text")


def joined_tokens(document: Any, lower: bool) -> str:
    """A tokenised document's tokens joined by single spaces (whitespace tokens left
    out). A spaCy ``Doc`` is read from its text and token offsets, without making a
    Token object per token."""
    if hasattr(type(document), "to_array") and hasattr(document, "vocab"):
        from spacy.attrs import ORTH

        strings = document.vocab.strings  # the tokens' strings by their hashes
        # spaCy's whitespace tokens are whitespace only: one split drops them
        joined = " ".join(" ".join([strings[h] for h in document.to_array(ORTH).tolist()])
                          .split())
    else:
        joined = " ".join(word for word in map(token_text, document) if word)
    return joined.lower() if lower else joined


def token_text(token: Any) -> str:
    """One token's text as a single space-free word (inner spaces become ``_``)."""
    return "_".join((token if isinstance(token, str) else token.text).split())
