"""The compiled stages of one chunk: encode, tokenise, extract, assemble.

A mixin of :class:`snowpy.Featurizer` (it reads the featurizer's options): a
chunk is encoded to UTF-8 once, tokenised by one compiled pass, handed to each
extractor's compiled kernel, and merged into CSR rows. The stages release
the GIL, so chunks are featurised by several threads at once.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import numpy as np

from snowpy._core.extract import assemble_rows
from snowpy.exceptions import ConfigurationError
from snowpy.text.chunks import Workspace
from snowpy.text.extractors.spec import ExtractorKernel
from snowpy.text.tokenize import (
    TokenStream,
    encode_documents,
    split_documents,
    split_spaces,
    tokenize_bytes,
)
from snowpy.text.weighing import VALUE_MODES

__all__ = ["ChunkStages", "Segment"]


class Segment:
    """One extractor applied to one field."""

    __slots__ = ("field", "kernel", "name", "namespace", "seed")

    def __init__(self, field: int, namespace: str, name: str, kernel: ExtractorKernel,
                 seed: int) -> None:
        self.field = field
        self.namespace = namespace
        self.name = name
        self.kernel = kernel
        self.seed = seed

    def label(self, raw: str) -> str:
        shown = self.kernel.show(raw)
        return f"{self.namespace}/{shown}" if self.namespace else shown


class ChunkStages:
    """Featurising one chunk (the featurizer's options are read from ``self``)."""

    fields: Any
    values: str
    idf: bool
    norm: str | None
    bits: int
    lowercase: bool
    strip_accents: bool
    unicode_form: str | None
    token_pattern: str | None
    _pattern: Any
    errors: str
    _local: Any

    @property
    def assembles_norm(self) -> bool:
        """Whether the compiled assembly of rows divides them by their norm (with
        ``idf`` the norm comes after the weighing: ``Featurizer.weighed``)."""
        return self.norm == "l2" and not self.idf

    def _featurize(self, fields: list, n_docs: int, segments: list[Segment], first_doc: int,
                   values: bool, collect: bool = False):
        """Tokenise, extract and assemble one chunk (compiled stages, no GIL held).

        Without ``values`` binary rows skip their data (all ones).
        """
        workspace = getattr(self._local, "workspace", None)
        if workspace is None:
            workspace = self._local.workspace = Workspace()
        streams = [self._tokens(raw, offsets, items, n_docs, field, first_doc,
                                workspace.view(f"field{field}:"))
                   for field, (raw, offsets, items) in enumerate(fields)]
        invalid = int(sum(int(stream.invalid.sum()) for stream in streams))
        names: list = []
        outputs = [self._extract(number, segment, streams[segment.field], workspace, names,
                                 collect)
                   for number, segment in enumerate(segments)]
        ptrs = np.empty((len(outputs), n_docs + 1), dtype=np.int64)
        offset = 0
        for s, (ids, ptr) in enumerate(outputs):
            ptrs[s] = ptr + offset
            offset += ids.size
        ids = np.concatenate([ids for ids, _ in outputs]) if len(outputs) > 1 else outputs[0][0]
        widest = int((ptrs[:, 1:] - ptrs[:, :-1]).sum(axis=0).max()) if n_docs else 0
        indptr = np.empty(n_docs + 1, dtype=np.int64)
        indices = workspace.get("indices", ids.size, np.int32)
        write = values or self.values != "binary" or self.assembles_norm
        data = workspace.get("data", ids.size, np.float64) if write else np.empty(0)
        scratch = workspace.get("row", max(widest, 1), np.int32)
        nnz = assemble_rows(ids, ptrs, VALUE_MODES.index(self.values), self.assembles_norm,
                            int(self.bits), indptr, indices, data, scratch)
        part = (n_docs, indptr, indices[:nnz].copy(), data[:nnz].copy() if write else None)
        return part, invalid, names

    # ------------------------------------------------------------- tokenising
    def _texts(self, docs: list[Any], field: int, first_doc: int) -> list[Any]:
        if self.fields is None:
            items = docs
        else:
            name = self.fields[field]
            items = []
            for i, doc in enumerate(docs):
                try:
                    items.append(doc[name] if isinstance(doc, dict) else doc[field])
                except (KeyError, IndexError, TypeError):
                    raise ConfigurationError(
                        f"document {first_doc + i} has no field {name!r}"
                    ) from None
        kinds = set(map(type, items))
        if not kinds <= {str, bytes}:
            where = "" if self.fields is None else f" field {self.fields[field]!r}"
            tokenised = [is_tokenised(item) for item in items]
            if all(tokenised):
                return items
            for i, item in enumerate(items):
                if not isinstance(item, (str, bytes)):
                    if tokenised[i]:
                        raise ConfigurationError(
                            f"document {first_doc + i}{where} is a list of tokens among "
                            "texts; give texts only, or token lists only, in one call")
                    raise ConfigurationError(
                        f"document {first_doc + i}{where} is not text (got {type(item).__name__})"
                    )
        return items

    def _normalised(self, items: list[Any], *, as_text: bool = False) -> list[Any]:
        """The items in the Unicode form asked for; a document given as bytes stays bytes,
        its invalid bytes as they were (the tokeniser counts them), unless ``as_text``."""
        form = self.unicode_form
        if form is None and not self.strip_accents and not as_text:
            return items
        out = []
        for item in items:
            raw = isinstance(item, bytes)
            text = item.decode("utf-8", "surrogateescape") if raw else item
            if form is not None:
                text = unicodedata.normalize(form, text)  # type: ignore[arg-type]
            if self.strip_accents:
                text = unicodedata.normalize("NFKD", text)
            out.append(text.encode("utf-8", "surrogateescape") if raw and not as_text else text)
        return out

    def _encode(self, docs: list[Any], field: int, first_doc: int):
        """One field of a chunk as UTF-8 bytes (the part that needs the GIL)."""
        items = self._texts(docs, field, first_doc)
        if items and not isinstance(items[0], (str, bytes)):  # tokens already: no tokenising
            joined = [joined_tokens(item, self.lowercase) for item in items]
            items = Presplit(self._normalised(joined), joined)
        elif self.token_pattern is not None:  # tokens found in Python
            items = Presplit(self._pattern.tokens(self._normalised(items, as_text=True),
                                                  lowercase=bool(self.lowercase),
                                                  first_doc=first_doc), items)
        else:
            items = self._normalised(items)
        raw, offsets = encode_documents(items)
        return raw, offsets, items

    def _tokens(self, raw: np.ndarray, offsets: np.ndarray | None, items: list, n_docs: int,
                field: int, first_doc: int, workspace: Workspace) -> TokenStream:
        data, offsets = split_documents(raw, offsets, n_docs, items)
        if isinstance(items, Presplit):
            stream = split_spaces(data, offsets)
            stream.invalid[:] = items.invalid
        else:
            stream = tokenize_bytes(data, offsets, lowercase=bool(self.lowercase),
                                    strip_marks=bool(self.strip_accents),
                                    workspace=workspace)
        if self.errors == "strict" and stream.invalid.any():
            doc = int(np.flatnonzero(stream.invalid)[0])
            where = "" if self.fields is None else f" (field {self.fields[field]!r})"
            raise ConfigurationError(
                f"document {first_doc + doc}{where} holds {int(stream.invalid[doc])} invalid "
                "UTF-8 byte(s); use errors='replace' to treat them as separators"
            )
        return stream

    def _extract(self, number: int, segment: Segment, stream: TokenStream,
                 workspace: Workspace, names: list, collect: bool
                 ) -> tuple[np.ndarray, np.ndarray]:
        kernel = segment.kernel
        n_docs = stream.n_docs
        capacity = kernel.capacity(stream.starts.size, stream.text.size)
        arena_size = 4 * stream.text.size + 64 if collect else 0
        mask = (1 << self.bits) - 1
        out_ptr = np.empty(n_docs + 1, dtype=np.int64)
        key = f"ids:{segment.name}:{segment.field}"
        while True:
            out_ids = workspace.get(key, capacity, np.int32)
            if collect:
                arena = workspace.get("arena", arena_size, np.uint8)
                spans = workspace.get("spans", (capacity, 2), np.int64)
            else:
                arena = np.empty(0, dtype=np.uint8)
                spans = np.empty((0, 2), dtype=np.int64)
            count = kernel.extract(stream.text, stream.starts, stream.ends, stream.doc_ptr,
                                   kernel.params, segment.seed, mask, out_ids, out_ptr,
                                   collect, arena, spans)
            if count == -1:
                capacity *= 2
            elif count == -2:
                arena_size *= 2
            elif count < 0:
                raise ConfigurationError(f"extractor {segment.name!r} returned {count}")
            else:
                break
        if collect:  # merged in document order by the caller
            names.append((out_ids[:count].copy(), spans[:count].copy(), arena.copy(), number))
        return out_ids[:count], out_ptr



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
