"""``snowpy.Featurizer``: raw text to active-feature sets, fast and streaming.

Documents are processed in chunks of about ``chunk_bytes`` of text: each
chunk is encoded to UTF-8 once, tokenised by one compiled pass, handed to
each extractor's compiled kernel, and merged into CSR rows; the buffers are
reused from chunk to chunk, so memory stays bounded and hot in cache.
Chunked and whole-corpus featurisation give identical matrices, because
every row depends on its own document only. One class owns it all: the options, the
chunk's stages (which release the GIL, so chunks are featurised by several threads at
once), the names, the document frequencies and scikit-learn's transformer conventions.
"""

from __future__ import annotations

import itertools
import os
import threading
import unicodedata
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from snowpy._core.extract import WordsRow, assemble_rows
from snowpy._lazy import lazy_module
from snowpy._rows import Rows
from snowpy._validation import threads_of
from snowpy.base import repr_of
from snowpy.declared import FEATURIZER, defaults
from snowpy.exceptions import ConfigurationError, NotFittedError
from snowpy.plugins import get_extractor
from snowpy.text.weighing import VALUE_MODES, DocumentFrequencies, WeighedWhenRead
from snowpy.text.chunks import (
    Inline,
    SequenceChunks,
    Workspace,
    approximate_size,
    grown,
    trimmed,
)
from snowpy.text.extractors.spec import ExtractorKernel
from snowpy.text.hashing import feature_seed, hash_names
from snowpy.text.names import NameIndex
from snowpy.text.patterns import TokenPattern
from snowpy.text.tokenize import (
    Presplit,
    TokenStream,
    ascii_word,
    encode_documents,
    is_tokenised,
    joined_tokens,
    split_documents,
    split_spaces,
    tokenize_bytes,
)
from snowpy.text.unicode import tables

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp
else:
    sp = lazy_module("scipy.sparse")

__all__ = ["Featurizer", "as_documents"]

_DEFAULTS = defaults(FEATURIZER)  # (the signature's defaults: snowpy.declared)

#: Texts :meth:`Featurizer.record_names` keeps before reading their names in one batch.
PENDING_NAMES = 1024

_FORMS = (None, "NFC", "NFKC", "NFD", "NFKD")

#: The largest workspace a thread keeps between calls (a short text's buffers are reused;
#: a chunk of a corpus's, 60 MB for chunks of 1 MB, is let go when its call ends).
_KEPT_WORKSPACE = 4 << 20


def _range(value: Any, name: str) -> tuple[int, int] | None:
    """``None``, ``n`` or ``(min, max)`` as a range of positive integers."""
    if value is None or value is False:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value), int(value)
    try:
        low, high = value
        return int(low), int(high)
    except (TypeError, ValueError):
        raise ConfigurationError(f"{name} must be None, an integer or (min, max), got {value!r}") \
            from None


class _Refolded:
    """A calibration fold's weighing (:meth:`Featurizer.refold`), called on rows of the
    fit, and ``evidence(rows)``: their evidence by label by the fold's ratios
    (:meth:`snowpy.text.weighing.LabelRatios.evidence`)."""

    def __init__(self, weigh: Callable[[Any], Any], ratios: Any) -> None:
        self._weigh = weigh
        self.evidence = ratios.evidence

    def __call__(self, rows: Any) -> Any:
        return self._weigh(rows)


def as_documents(texts: Any) -> Any:
    """``texts`` as a collection of documents, or a clear refusal.

    A bare string would be iterated character by character (15 predictions for
    ``predict("cheap pills now")``), and a DataFrame by its column names: the first is
    refused, the second taken when it has one column (its values), else refused.

    >>> as_documents(["one", "two"])
    ['one', 'two']
    >>> as_documents("cheap pills now")
    Traceback (most recent call last):
    ...
    snowpy.exceptions.ConfigurationError: texts is one string, not a collection of documents; give a list: [text]
    """
    if isinstance(texts, (str, bytes)):
        raise ConfigurationError("texts is one string, not a collection of documents; "
                                 "give a list: [text]")
    columns = getattr(texts, "columns", None)
    if columns is not None and hasattr(texts, "iloc"):  # a pandas (or alike) DataFrame
        if len(columns) != 1:
            raise ConfigurationError(
                f"texts is a table of {len(columns)} columns ({', '.join(map(str, columns))}); "
                "give the column of documents (df['text']), or name fields with fields=")
        return texts.iloc[:, 0].tolist()
    if isinstance(texts, np.ndarray) and texts.ndim == 2:
        if texts.shape[1] != 1:
            raise ConfigurationError(f"texts is a 2-D array of shape {texts.shape}; give one "
                                     "document per entry")
        return texts.ravel()
    if hasattr(texts, "tolist") and hasattr(texts, "iloc"):  # a pandas Series
        return texts.tolist()
    return texts


@dataclass(slots=True, eq=False)
class Segment:
    """One extractor applied to one field."""

    field: int
    namespace: str
    name: str
    kernel: ExtractorKernel
    seed: int

    def label(self, raw: str) -> str:
        shown = self.kernel.show(raw)
        return f"{self.namespace}/{shown}" if self.namespace else shown


class Featurizer:
    """Turn documents into sparse active-feature sets (hashed CSR rows).

    Parameters
    ----------
    ngrams : int, (int, int) or None, default 1
        Word n-grams: ``1`` for unigrams, ``(1, 2)`` for unigrams and bigrams.
    char_ngrams : int, (int, int) or None, default None
        Character n-grams, e.g. ``(3, 5)``.
    char_boundaries : {"within", "across"}, default "within"
        Character n-grams inside padded tokens (scikit-learn's ``char_wb``)
        or across token boundaries (``char``).
    skipgrams : int or None, default None
        k-skip-bigrams: token pairs with 1..k tokens between them.
    affixes : int, (int, int) or None, default None
        Prefixes and suffixes of these lengths.
    extractors : sequence of (name, dict), default ()
        More extractors by name (any installed plugin's), with parameters.
    bits : int, default 20
        Feature ids are hashes masked to ``bits`` bits (``2**bits`` columns).
    lowercase : bool, default True
        Map every character to its simple lower case.
    unicode_form : {None, "NFC", "NFKC", "NFD", "NFKD"}, default None
        Unicode normalisation applied first (``"NFKC"`` folds ligatures,
        full-width forms and the like).
    strip_accents : bool, default False
        Decompose (NFKD) and drop combining marks: "café" becomes "cafe".
    token_pattern : str or None, default None
        A regular expression whose matches are the tokens, instead of the
        built-in rule (slower: the regex runs in Python's engine).
    values : {"binary", "count", "log"}, default "binary"
        Feature strength: presence (SNoW's default), occurrences, or
        ``1 + ln(count)``.
    idf : bool, default False
        Multiply each strength by its feature's inverse document frequency,
        ``ln((1 + n) / (1 + df)) + 1`` over the ``n`` documents counted
        (scikit-learn's smoothed idf), before the norm. :meth:`fit` counts the
        documents (``values="log", idf=True, norm="l2"`` is scikit-learn's
        ``TfidfVectorizer(sublinear_tf=True)``); features never counted are
        left out, as a vocabulary leaves out words it has not seen.
    relevance : float, default 0.0
        With ``idf``, the share of each feature's relevance to the labels in its
        strength: each strength is also multiplied by ``(1 - relevance) +
        relevance * r / mean r``, ``r`` the feature's largest absolute Naive
        Bayes log-count ratio over the labels it is seen with (NBSVM's scaling,
        Wang and Manning 2012). :meth:`fit` with labels counts it, once; later
        documents do not move it (``docs/front-end.md``).
    evidence : bool, default False
        With ``idf``, also keep each feature's Naive Bayes log-count ratio for every
        label (:class:`~snowpy.text.weighing.LabelRatios`, counted once by :meth:`fit`
        with labels), and give each document weighed for prediction its evidence by
        label (the ratios of its features summed, over the square root of their
        number), which a classifier's calibration stacks with its network's scores
        (``docs/front-end.md``).
    norm : {None, "l2"}, default None
        Divide each row by its Euclidean norm.
    fields : sequence of str, optional
        When documents are records (dicts, or tuples in this order), the
        fields to featurise; each hashes into its own namespace.
    keep_names : bool, default False
        Keep the inverse map from feature id to feature strings (``names_``):
        collected as :meth:`transform` goes, or afterwards for chosen features
        only (:meth:`collect_names`, what :class:`snowpy.SnowClassifier` does
        for the features its network keeps).
    hash_seed : int, default 0
        Base seed of the hash.
    errors : {"replace", "strict"}, default "replace"
        Invalid UTF-8 (or lone surrogates): treated as separators and counted
        in ``invalid_bytes_``, or an error naming the document.
    chunk_bytes : int, default 1 MiB
        Text processed per chunk.
    n_jobs : int, default -1
        Threads featurising chunks at once (-1: one per core). The compiled
        stages release the GIL; results are identical for any value.

    Examples
    --------
    >>> X = Featurizer(ngrams=(1, 2), bits=18).transform(["New York, new ideas"])
    >>> X.shape, X.nnz
    ((1, 262144), 6)
    """

    _OMIT_FROM_STATE = ("_local", "_compiled", "_single_path", "_pattern")

    def __init__(
        self,
        *,
        ngrams: Any = _DEFAULTS["ngrams"],
        char_ngrams: Any = _DEFAULTS["char_ngrams"],
        char_boundaries: str = _DEFAULTS["char_boundaries"],
        skipgrams: int | None = _DEFAULTS["skipgrams"],
        affixes: Any = _DEFAULTS["affixes"],
        extractors: Sequence[tuple[str, dict]] = _DEFAULTS["extractors"],
        bits: int = _DEFAULTS["bits"],
        lowercase: bool = _DEFAULTS["lowercase"],
        unicode_form: str | None = _DEFAULTS["unicode_form"],
        strip_accents: bool = _DEFAULTS["strip_accents"],
        token_pattern: str | None = _DEFAULTS["token_pattern"],
        values: str = _DEFAULTS["values"],
        idf: bool = _DEFAULTS["idf"],
        relevance: float = _DEFAULTS["relevance"],
        evidence: bool = _DEFAULTS["evidence"],
        norm: str | None = _DEFAULTS["norm"],
        fields: Sequence[str] | None = _DEFAULTS["fields"],
        keep_names: bool = _DEFAULTS["keep_names"],
        hash_seed: int = _DEFAULTS["hash_seed"],
        errors: str = _DEFAULTS["errors"],
        chunk_bytes: int = _DEFAULTS["chunk_bytes"],
        n_jobs: int = _DEFAULTS["n_jobs"],
    ) -> None:
        self.ngrams = ngrams
        self.char_ngrams = char_ngrams
        self.char_boundaries = char_boundaries
        self.skipgrams = skipgrams
        self.affixes = affixes
        self.extractors = extractors
        self.bits = bits
        self.lowercase = lowercase
        self.unicode_form = unicode_form
        self.strip_accents = strip_accents
        self.token_pattern = token_pattern
        self.values = values
        self.idf = idf
        self.relevance = relevance
        self.evidence = evidence
        self.norm = norm
        self.fields = fields
        self.keep_names = keep_names
        self.hash_seed = hash_seed
        self.errors = errors
        self.chunk_bytes = chunk_bytes
        self.n_jobs = n_jobs

    # ------------------------------------------------------------ parameters
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's arguments (scikit-learn convention)."""
        return {name: getattr(self, name) for name in FEATURIZER}

    def set_params(self, **params: Any) -> Featurizer:
        """Set constructor arguments; returns self."""
        for name, value in params.items():
            if name not in FEATURIZER:
                raise ConfigurationError(f"Featurizer has no parameter {name!r}")
            setattr(self, name, value)
        self.__dict__.pop("_compiled", None)
        return self

    __repr__ = repr_of

    def __sklearn_tags__(self) -> Any:
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type="transformer", target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(preserves_dtype=[]),
                    input_tags=InputTags(one_d_array=True, two_d_array=False, string=True),
                    requires_fit=False)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the ``2**bits`` output columns: ``hash0``, ``hash1``... (a hashed
        column has no single name; with ``keep_names`` the strings seen in it,
        ``word:cheap|word:pills``, are given where known)."""
        width = 1 << int(self.bits)
        names = np.array([f"hash{i}" for i in range(width)], dtype=object)
        if getattr(self, "keep_names", False) and getattr(self, "_names", None) is not None:
            for column, strings in getattr(self, "names_").items():  # noqa: B009
                names[column] = "|".join(strings)
        return names

    def set_output(self, *, transform: str | None = None) -> Any:
        """scikit-learn's output container: the output is a sparse matrix, so only
        ``"default"`` (or None) is possible; a DataFrame of ``2**bits`` columns is
        refused."""
        if transform not in (None, "default"):
            raise ConfigurationError(
                f"set_output(transform={transform!r}): the Featurizer's output is a sparse "
                f"matrix of 2**{self.bits} columns; only 'default' is possible")
        return self

    def __getstate__(self) -> dict[str, Any]:
        """In-memory pickling (joblib, multiprocessing, deepcopy): the configuration and
        the names; thread workspaces and compiled plans are rebuilt on first use. Model
        files never use pickle (:func:`snowpy.save`)."""
        return {k: v for k, v in self.__dict__.items() if k not in self._OMIT_FROM_STATE}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def extractor_config(self) -> list[tuple[str, dict[str, Any]]]:
        """The extractors this configuration runs, as ``(name, params)``."""
        config: list[tuple[str, dict[str, Any]]] = []
        words = _range(self.ngrams, "ngrams")
        if isinstance(self.ngrams, (int, np.integer)) and not isinstance(self.ngrams, bool) \
                and self.ngrams > 1:  # (scikit-learn's readers think of ngram_range=(1, n))
            warnings.warn(f"ngrams={self.ngrams} means {self.ngrams}-grams only; for every "
                          f"length up to {self.ngrams}, give ngrams=(1, {self.ngrams})",
                          UserWarning, stacklevel=3)
        if words:
            config.append(("words", {"min_n": words[0], "max_n": words[1]}))
        chars = _range(self.char_ngrams, "char_ngrams")
        if chars:
            config.append(("chars", {"min_n": chars[0], "max_n": chars[1],
                                     "boundaries": self.char_boundaries}))
        if self.skipgrams:
            config.append(("skipgrams", {"max_skip": int(self.skipgrams)}))
        affixes = _range(self.affixes, "affixes")
        if affixes:
            config.append(("affixes", {"min_len": affixes[0], "max_len": affixes[1]}))
        for item in self.extractors:
            try:
                name, params = item
            except (TypeError, ValueError):
                raise ConfigurationError(
                    f"extractors must hold (name, params) pairs, got {item!r}"
                ) from None
            config.append((str(name), dict(params)))
        if not config:
            raise ConfigurationError("no feature extractor configured (ngrams=None and no other)")
        return config

    def segments(self) -> list[Segment]:
        """The front end's compiled extractors, one segment each (built once)."""
        compiled = self.__dict__.get("_compiled")
        if compiled is not None:
            return compiled
        if isinstance(self.bits, bool) or not isinstance(self.bits, (int, np.integer)) \
                or not 1 <= self.bits <= 31:
            raise ConfigurationError(f"bits must be an integer from 1 to 31, got {self.bits!r}")
        if self.values not in VALUE_MODES:
            raise ConfigurationError(
                f"values must be one of {', '.join(VALUE_MODES)}, got {self.values!r}"
            )
        if self.norm not in (None, "l2"):
            raise ConfigurationError(f"norm must be None or 'l2', got {self.norm!r}")
        if not isinstance(self.idf, (bool, np.bool_)):
            raise ConfigurationError(f"idf must be true or false, got {self.idf!r}")
        if isinstance(self.relevance, bool) or not isinstance(
                self.relevance, (int, float, np.integer, np.floating)) \
                or not 0.0 <= float(self.relevance) <= 1.0:
            raise ConfigurationError(
                f"relevance must be a number from 0 to 1, got {self.relevance!r}")
        if not isinstance(self.evidence, (bool, np.bool_)):
            raise ConfigurationError(f"evidence must be true or false, got {self.evidence!r}")
        if self.evidence and not self.idf:
            raise ConfigurationError("evidence=True needs idf=True: the log-count ratios are "
                                     "counted with the document frequencies")
        if self.unicode_form not in _FORMS:
            raise ConfigurationError(
                f"unicode_form must be one of None, NFC, NFKC, NFD, NFKD, got {self.unicode_form!r}"
            )
        if self.errors not in ("replace", "strict"):
            raise ConfigurationError(f"errors must be 'replace' or 'strict', got {self.errors!r}")
        if self.token_pattern is not None:
            self._pattern = TokenPattern(self.token_pattern)
        fields = [""] if self.fields is None else [str(f) for f in self.fields]
        segments = []
        for name, params in self.extractor_config():
            kernel = get_extractor(name).make_kernel(params)
            for index, namespace in enumerate(fields):
                seed = feature_seed(kernel.kind, namespace, int(self.hash_seed))
                segments.append(Segment(index, namespace, name, kernel, seed))
        self._compiled = segments
        self._local = threading.local()
        if self.keep_names and self.name_index() is None:
            self._names = NameIndex([segment.label for segment in segments])
        return segments

    def load_names_later(self, loader: Any) -> None:
        """The inverse map comes from ``loader()`` on first use (a model file's names:
        loading stays fast)."""
        self._names_loader = loader

    def packed_names(self, keep_ids: Any) -> tuple[np.ndarray, dict[str, Any]] | None:
        """The inverse map of ``keep_ids`` packed for a model file (array, header), or
        None when no names are kept."""
        if not self.keep_names or self.name_index() is None:
            return None
        return self._names.pack(keep_ids=keep_ids)

    def name_index(self) -> NameIndex | None:
        """The inverse map, rebuilt on first use when it came from a model file."""
        loader = self.__dict__.pop("_names_loader", None)
        if loader is not None:
            self._names = loader()
        if "_pending_names" in self.__dict__:  # texts waiting for record_names
            self._record_pending()
        return getattr(self, "_names", None)

    # -------------------------------------------------------------- transform
    def fit(self, texts: Any = None, y: Any = None, *,
            frequencies: DocumentFrequencies | list[DocumentFrequencies] | None = None
            ) -> Featurizer:
        """Check the configuration; with ``idf``, count the documents' frequencies
        (those counted before are forgotten), and with labels ``y`` and a ``relevance``
        share, their relevance; or take ``frequencies`` counted elsewhere (a feature
        cache's, a model file's), or the counts of the documents' parts
        (:meth:`counted`: a cluster's shards'), added up and related here. Returns
        self."""
        self.segments()
        if frequencies is not None:
            frequencies = self.related(frequencies)
            if not self.idf or frequencies.width != 1 << int(self.bits):
                raise ConfigurationError(
                    f"document frequencies over {frequencies.width} features are for a "
                    f"front end with idf and 2**bits features (idf={self.idf!r}, "
                    f"bits={self.bits})")
            self.frequencies_ = frequencies
        elif self.idf:
            self.frequencies_ = self.related(self.counted(self.rows(texts, names=False), y))
        return self

    def counted(self, rows: Any, labels: Any = None) -> DocumentFrequencies:
        """The document frequencies of ``rows``, and by their ``labels`` for a
        ``relevance`` share, not related yet: what a fit counts of its documents, or a
        cluster's worker of its shard's (:meth:`related` adds such counts up)."""
        frequencies = DocumentFrequencies(1 << int(self.bits))
        frequencies.count(rows, labels=labels if self._by_label else None,
                          threads=threads_of(self.n_jobs))
        return frequencies

    def related(self, counts: DocumentFrequencies | list[DocumentFrequencies]
                ) -> DocumentFrequencies:
        """A count (:meth:`counted`), or the counts of parts of the documents (a
        cluster's shards') added up as one, each feature given its relevance factor at
        this front end's share (a count related already, or counted without labels,
        stays as it is)."""
        if isinstance(counts, list):
            total = DocumentFrequencies(1 << int(self.bits))
            for count in counts:
                total.add(count)
            counts = total
        counts.relate(float(self.relevance), bool(self.evidence))
        return counts

    def transform(self, texts: Iterable[Any], *, names: bool | None = None) -> sp.csr_matrix:
        """Featurise documents into a CSR matrix ``(n_docs, 2**bits)``.

        Blocks are copied into the result as they arrive, while the threads
        featurise the next chunks. ``names`` (default ``keep_names``) says whether
        this pass records feature names.
        """
        return self.weighed(self.rows(texts, names=names)).tocsr()

    def fit_transform(self, texts: Iterable[Any], y: Any = None) -> sp.csr_matrix:
        self.segments()
        if self.idf:
            self._frequencies(afresh=True)
        return self.weighed(self.rows(texts), count="all", labels=y).tocsr()

    def _frequencies(self, afresh: bool = False, fitted: bool = False
                     ) -> DocumentFrequencies:
        """The document frequencies counted (none yet: an empty count, refused when the
        front end must be ``fitted``; ``afresh``: the ones counted before forgotten)."""
        frequencies = None if afresh else self.__dict__.get("frequencies_")
        if frequencies is None:
            frequencies = self.frequencies_ = DocumentFrequencies(1 << int(self.bits))
        if fitted and frequencies.documents == 0:
            raise NotFittedError("this Featurizer's document frequencies (idf=True) are not "
                                 "counted yet; call fit first")
        return frequencies

    def weighed(self, rows: Any, *, count: str | None = None, weights: Any = None,
                labels: Any = None, copy: bool = True) -> Any:
        """The rows :meth:`rows` made (or :func:`snowpy.files.read_rows` read) as the
        front end hands them on: with ``idf``, each strength times its feature's inverse
        document frequency, then the norm. ``count`` says which documents are counted
        first: ``"all"`` (a fit: every document of ``rows``, then the weighing),
        ``"each"`` (``partial_fit``, ``learn_one``, a stream: each document before it is
        weighed, in order), or None (prediction); ``weights``, how many times each
        document counts; ``labels`` (with ``"all"`` and a ``relevance`` share), the
        documents' labels, which the relevance (and the ratios of ``evidence``) are
        counted from; ``copy=False`` weighs the strengths of ``rows`` where they lie.
        Rows weighed for prediction (``count=None``) carry their evidence by label
        (``Rows.evidence``) when the front end keeps the ratios.
        Without ``idf``, ``rows`` as they are."""
        if not self.idf:
            return rows
        frequencies = self._frequencies(fitted=count is None)
        norm = self.norm == "l2"
        if count == "each":
            return frequencies.weigh(rows, norm=norm, each=True, weights=weights)
        numbers = None
        if count == "all":
            numbers = frequencies.count(rows, weights,
                                        labels=labels if self._by_label else None,
                                        threads=threads_of(self.n_jobs))
            frequencies.relate(float(self.relevance), bool(self.evidence))
            if not copy and isinstance(rows, Rows) and rows.code():  # (the fit's own:
                del numbers  # held coded until read, weighed as they are read)
                frequencies.pack()
                return WeighedWhenRead(rows, frequencies, norm)
        ratios = frequencies.ratios if count is None else None
        evidence = None if ratios is None else ratios.evidence(rows)  # (before the weighing)
        weighed = frequencies.weigh(rows, norm=norm, numbers=numbers, copy=copy)
        weighed.evidence = evidence
        if count == "all":  # (networks learn from them next)
            frequencies.pack()
        return weighed

    def refold(self, rows: Any, labels: Any = None) -> Callable[[Any], Any]:
        """How a calibration fold weighs its rows (``Network.fit``'s ``refold``): from
        rows this front end weighed in a fit, ``rows`` of the fold's training documents
        and their ``labels`` (or their document frequencies, :meth:`related`: a
        cluster's shards' counts added up), a function that weighs rows of the fit as
        they would be had the fit counted those documents alone (their document
        frequencies and relevance; the features they do not hold left out), then the
        norm: no label of the held-out documents reaches the strengths their scores are
        made of; with ``evidence``, the function's ``evidence(rows)`` gives rows' evidence
        by the fold's own ratios (the held-out documents'). The rows it gives name their
        features by the fit's numbers for them, not their ids (the fold's network, as
        wide as the fit's features and one, looks them up in a table of 4 bytes a
        feature counted, not of ``2**bits`` ids: 20 Newsgroups peaked 12.7 MB lower; the
        same network, its features named otherwise)."""
        fold = rows if isinstance(rows, DocumentFrequencies) else \
            self.related(self.counted(rows, labels))
        weigh = self._frequencies().rescaled(fold, self.norm == "l2", numbered=True)
        return weigh if fold.ratios is None else _Refolded(weigh, fold.ratios)

    @property
    def _by_label(self) -> bool:
        """Whether a fit counts the documents by label (for the relevance, the ratios)."""
        return bool(self.relevance) or bool(self.evidence)

    def evidence_one(self, ids: np.ndarray) -> Any:
        """One document's evidence by label (:class:`snowpy._rows.Evidence`), from its
        features' ids before weighing (:meth:`features_one`); None when the front end
        keeps no ratios."""
        frequencies = self.__dict__.get("frequencies_")
        ratios = None if frequencies is None else frequencies.ratios
        if ratios is None:
            return None
        return ratios.evidence(Rows(np.array([0, ids.shape[0]], np.int64), ids, None,
                                    1 << int(self.bits)))

    def weighed_one(self, ids: np.ndarray, vals: np.ndarray, *, learn: bool = False
                    ) -> tuple[np.ndarray, np.ndarray]:
        """One document's features (from :meth:`features_one`) as :meth:`weighed` hands a
        row of one document on (counted first when ``learn``)."""
        if not self.idf:
            return ids, vals
        return self._frequencies(fitted=not learn).weigh_one(ids, vals,
                                                              norm=self.norm == "l2",
                                                              learn=learn)

    def rows(self, texts: Iterable[Any], *, names: bool | None = None) -> Rows:
        """The rows of ``texts`` as plain arrays (:class:`snowpy._rows.Rows`, the CSR
        layout without scipy), before the document frequencies (:meth:`weighed`);
        without ``idf`` what :meth:`transform` gives. Binary rows without a norm carry
        no strengths array (every strength is 1)."""
        texts = as_documents(texts)
        binary = self.values == "binary" and not self.assembles_norm
        expected = len(texts) if hasattr(texts, "__len__") else None  # type: ignore[arg-type]
        indices: Any = None
        data: Any = None
        indptr_parts = [np.zeros(1, dtype=np.int64)]
        nnz = rows = 0
        for n_docs, indptr, block_indices, block_data in self._parts(texts, None, not binary,
                                                                     names):
            need = nnz + block_indices.size
            if indices is None or need > indices.size:
                # first block: size from its density and the number of documents
                estimate = int(need * 1.1 * max(expected or 0, rows + n_docs)
                               / max(rows + n_docs, 1)) if indices is None else 0
                capacity = max(estimate, need, 2 * (indices.size if indices is not None else 0))
                indices = grown(indices, capacity, np.int32, nnz)
                if not binary:
                    data = grown(data, capacity, np.float64, nnz)
            indices[nnz:need] = block_indices
            if not binary:
                data[nnz:need] = block_data
            indptr_parts.append(indptr[1:] + nnz)
            nnz = need
            rows += n_docs
        if indices is None:
            return Rows(np.zeros(rows + 1, dtype=np.int64), np.zeros(0, np.int32), None,
                        1 << self.bits)
        # give back the room grown beyond the documents (in place: realloc, no copy)
        indices = trimmed(indices, nnz)
        data = None if binary else trimmed(data, nnz)
        return Rows(np.concatenate(indptr_parts), indices, data, 1 << self.bits)

    def iter_blocks(self, texts: Iterable[Any], chunk_docs: int | None = None, *,
                    names: bool | None = None) -> Iterator[sp.csr_matrix]:
        """Featurise a stream of documents, yielding one CSR block per chunk.

        Memory stays bounded by the chunk size (times the threads at work):
        corpora larger than memory can be trained on block by block
        (``Network.partial_fit``). Blocks come in the order of the documents.
        ``names`` as in :meth:`transform`.
        """
        for n_docs, indptr, indices, data in self._parts(texts, chunk_docs, True, names):
            rows = self.weighed(Rows(indptr, indices, data, 1 << self.bits))
            block = sp.csr_matrix((rows.data, rows.indices, rows.indptr),
                                  shape=(n_docs, 1 << self.bits))
            block.has_canonical_format = True
            yield block

    def features_one(self, doc: Any) -> tuple[np.ndarray, np.ndarray]:
        """The active features of one document: sorted ids and their strengths.

        The same row as ``transform([doc])`` (a test checks it), with none of
        the batch path's set-up: no thread, no chunking, no matrix. ``doc`` may
        also be a dict of feature name -> strength (River's feature dicts):
        the names are hashed, strings as UTF-8, in a namespace of their own.
        """
        if isinstance(doc, dict) and self.fields is None:
            return self._features_of_dict(doc)
        single = self.words_only()
        if single is not None and isinstance(doc, str):
            text = self._normalised([doc])[0] if self.unicode_form or self.strip_accents \
                else doc
            ids, vals, invalid = single.row(np.frombuffer(
                text.encode("utf-8", "surrogatepass"), dtype=np.uint8))
            self.invalid_bytes_ = invalid
            if invalid and self.errors == "strict":
                raise ConfigurationError(
                    f"the document holds {invalid} invalid UTF-8 byte(s); use errors='replace' "
                    "to treat them as separators")
            return ids, vals
        segments = self.segments()
        n_fields = 1 if self.fields is None else len(self.fields)
        fields = [self._encode([doc], field, 0) for field in range(n_fields)]
        (_, _, indices, data), invalid, _ = self._featurize(fields, 1, segments, 0, True)
        self.invalid_bytes_ = invalid
        return indices.astype(np.int64), data

    def one_document(self) -> tuple[Any, Any] | None:
        """The compiled path of one text, when this front end has one: ``(its row maker
        (:class:`~snowpy._core.extract.WordsRow`), its count of document frequencies
        bound for one document (:meth:`DocumentFrequencies.bound`; None without idf))``;
        None otherwise (a front end of other extractors, normalised Unicode, or document
        frequencies not counted in a table yet): :meth:`features_one` then. What the
        count counted is taken back with :meth:`DocumentFrequencies.counted_by`."""
        single = self.words_only()
        if single is None or self.unicode_form or self.strip_accents:
            return None
        if not self.idf:
            return single, None
        frequencies = self.__dict__.get("frequencies_")
        weigher = None if frequencies is None or frequencies.documents == 0 \
            else frequencies.bound(self.norm == "l2")
        return None if weigher is None else (single, weigher)

    def words_only(self) -> WordsRow | None:
        """The one-call path for one document, when the front end is word n-grams only:
        the compiled stages of the chunk pipeline (the tokeniser, the word n-grams, the
        row assembly) in one call, the row ``transform`` gives (a test checks it), its
        buffers grown to the longest document seen."""
        if "_single_path" not in self.__dict__:
            segments = self.segments()
            plain = self.fields is None and self.token_pattern is None and \
                all(segment.name == "words" for segment in segments)
            self._single_path = WordsRow(*self.word_settings()) if plain else None
        return self._single_path

    def word_settings(self) -> tuple[Any, ...]:
        """A front end of word n-grams as its compiled readers take it (a text's row:
        :meth:`words_only`; a corpus file's lines: :mod:`snowpy.files`): the Unicode
        tables, the ASCII word bytes, the case and accent foldings, each segment's n-gram
        lengths and seed, the strengths, the norm and the bits."""
        return (tables(), ascii_word(bool(self.lowercase)), bool(self.lowercase),
                bool(self.strip_accents),
                [(int(segment.kernel.params[0]), int(segment.kernel.params[1]),
                  int(segment.seed)) for segment in self.segments()],
                VALUE_MODES.index(self.values), bool(self.assembles_norm), int(self.bits))

    def _features_of_dict(self, features: dict) -> tuple[np.ndarray, np.ndarray]:
        names = [name if isinstance(name, str) else str(name) for name in features]
        try:
            vals = np.fromiter(features.values(), dtype=np.float64, count=len(features))
        except (TypeError, ValueError):
            raise ConfigurationError("a feature dict maps names to numbers") from None
        seed = self.__dict__.get("_dict_seed")
        if seed is None:
            seed = self._dict_seed = feature_seed("dict", "", int(self.hash_seed))
        ids = hash_names(names, seed, (1 << self.bits) - 1)
        order = np.argsort(ids, kind="stable")
        ids, vals = ids[order], vals[order]
        if ids.size > 1 and np.any(ids[1:] == ids[:-1]):  # colliding names: one feature
            unique, first = np.unique(ids, return_index=True)
            vals = np.add.reduceat(vals, first)
            ids = unique
        return ids, vals

    def collect_names(self, texts: Iterable[Any], ids: Any) -> None:
        """Record the strings behind the feature ``ids`` as they occur in ``texts``.

        A pass of its own over the documents (featurised again, the features
        themselves dropped), keeping the strings of the given ids only: the
        inverse map of the features a model kept costs what they are, not
        every feature seen. Needs ``keep_names=True``.

        >>> f = Featurizer(keep_names=True)
        >>> f.collect_names(["red apple", "green apple"], f.transform(["apple"], names=False).indices)
        >>> sorted(sum(f.names_.values(), []))
        ['apple']
        """
        if not self.keep_names:
            raise ConfigurationError("names are kept only with keep_names=True")
        self.segments()
        self._record_pending()
        self._names.collect_for(np.asarray(ids, dtype=np.int64))
        try:
            for _ in self._parts(texts, None, False, True):
                pass
        finally:
            self._names.seal()  # what deduplicates names: rebuilt when needed

    def recover_names(self, texts: Iterable[Any], ids: Any) -> None:
        """The strings of feature ``ids`` recovered from ``texts`` featurised again: for
        a model trained without ``keep_names``, from its corpus (or any text in its
        domain), when someone asks (``snowpy inspect MODEL --corpus CORPUS``).

        >>> f = Featurizer()
        >>> f.recover_names(["red apple"], f.transform(["apple"], names=False).indices)
        >>> f.names_
        {607550: ['apple']}
        """
        if not self.keep_names:
            self.keep_names = True
            if self.name_index() is None:
                self._names = NameIndex([segment.label for segment in self.segments()])
        self.collect_names(texts, ids)

    def names_in(self, doc: Any) -> dict[int, list[str]]:
        """The strings behind each feature of one document (the word or n-gram as it
        appeared in it), by feature id; read by a front end of the same parameters, so
        this one's names stay as they were. More than one string for an id is a
        collision of the hash within the document.

        >>> sorted(Featurizer(ngrams=(1, 2)).names_in("red apple").values())
        [['apple'], ['red'], ['red apple']]
        """
        sibling = Featurizer(**{**self.get_params(), "keep_names": True})
        ids, _ = self.features_one(doc)
        sibling.recover_names([doc], ids)
        return sibling.names_of(ids.tolist())

    def record_names(self, texts: Iterable[Any]) -> None:
        """Record the strings behind every feature of ``texts`` (for a model learning
        one document at a time, whose kept features are known only when it is saved:
        a model file keeps the names of its linked features only). Each string is
        stored once. The texts wait in a small buffer (:data:`PENDING_NAMES`
        documents) and are read in one batch: reading names costs a document what
        featurising it in a batch costs. Needs ``keep_names``.
        """
        if not self.keep_names:
            raise ConfigurationError("names are kept only with keep_names=True")
        pending = self.__dict__.setdefault("_pending_names", [])
        pending.extend(texts)
        if len(pending) >= PENDING_NAMES:
            self._record_pending()

    def _record_pending(self) -> None:
        pending = self.__dict__.pop("_pending_names", None)
        if not pending:
            return
        self.segments()
        if self._names.collecting:  # (a collect_names interrupted)
            self._names.seal()
        for _ in self._parts(pending, None, False, True):
            pass

    def _parts(self, texts: Iterable[Any], chunk_docs: int | None, values: bool,
               names: bool | None = None
               ) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray | None]]:
        """``(n_docs, indptr, indices, data)`` per chunk (``data`` None unless ``values``);
        names recorded when ``names`` (default ``keep_names``)."""
        collect = bool(self.keep_names if names is None else names)
        if collect and not self.keep_names:
            raise ConfigurationError("names are kept only with keep_names=True")
        texts = as_documents(texts)
        segments = self.segments()
        self.invalid_bytes_ = 0
        jobs = threads_of(self.n_jobs)
        n_fields = 1 if self.fields is None else len(self.fields)
        sequence: Any = texts
        iterator = SequenceChunks(sequence, self.chunk_bytes) \
            if chunk_docs is None and isinstance(texts, (list, tuple, np.ndarray)) else iter(texts)
        first_doc = 0
        pending: deque = deque()
        # the first chunk is featurised where it is read: the threads start with a second
        # (a mini-batch of partial_fit, one chunk, starts none)
        pool: Any = Inline()
        try:
            while True:
                while len(pending) < 2 * jobs:
                    docs, fields = self._encoded_chunk(iterator, chunk_docs, n_fields, first_doc)
                    if not docs:
                        break
                    if first_doc and jobs > 1 and isinstance(pool, Inline):
                        pool = ThreadPoolExecutor(max_workers=jobs)
                    pending.append(pool.submit(self._featurize, fields, len(docs), segments,
                                               first_doc, values, collect))
                    first_doc += len(docs)
                if not pending:
                    return
                part, invalid, found = pending.popleft().result()
                self.invalid_bytes_ += invalid
                for ids, spans, arena, number in found:
                    self._names.add(ids, spans, arena, number)
                yield part
        finally:
            pool.shutdown()
            # a chunk's buffers are kept for the next call only when small (the
            # one-document path's): a corpus's (tens of MB for chunks of 1 MB) would stay
            # held by the thread through all of training
            workspace = getattr(self._local, "workspace", None)
            if workspace is not None and workspace.nbytes > _KEPT_WORKSPACE:
                del self._local.workspace

    def _encoded_chunk(self, iterator: Any, chunk_docs: int | None, n_fields: int,
                       first_doc: int) -> tuple[list[Any], list[Any]]:
        """The next chunk's documents and their encoded fields (empty at the end)."""
        docs = self._next_chunk(iterator, chunk_docs)
        while True:
            fields = [self._encode(docs, field, first_doc) for field in range(n_fields)] \
                if docs else []
            if not docs or not isinstance(iterator, SequenceChunks):
                return docs, fields
            keep = iterator.encoded(len(docs), sum(raw.size for raw, _, _ in fields))
            if keep == len(docs):
                return docs, fields
            docs = docs[:keep]

    def _next_chunk(self, iterator: Iterator[Any], chunk_docs: int | None) -> list[Any]:
        """The next documents, about ``chunk_bytes`` of text unless ``chunk_docs`` is set."""
        if isinstance(iterator, SequenceChunks):
            return iterator.next()
        if chunk_docs is not None:
            return list(itertools.islice(iterator, chunk_docs))
        docs: list[Any] = []
        size = 0
        for doc in iterator:
            docs.append(doc)
            size += approximate_size(doc)
            if size >= self.chunk_bytes:
                break
        return docs

    # -------------------------------------------------------------- names
    @property
    def names_(self) -> dict[int, list[str]]:
        """Feature id -> the feature strings seen with it (``keep_names=True``).

        Decodes every name; :meth:`names_of` decodes only the ids asked for.
        """
        return self._kept_names().names

    def names_of(self, ids: Iterable[int]) -> dict[int, list[str]]:
        """The strings of the given feature ids (those that have any)."""
        return self._kept_names().names_of(ids)

    def _kept_names(self) -> NameIndex:
        index = self.name_index() if self.keep_names else None
        if index is None:
            raise ConfigurationError("the inverse map is kept only with keep_names=True")
        return index

    def feature_names(self, ids: Iterable[int]) -> list[str]:
        """A readable name per id: its strings joined by `` | `` (or ``#id``)."""
        ids = list(ids)
        names = self.names_of(ids)
        return [" | ".join(names[i]) if i in names else f"#{i}" for i in ids]

    def collisions(self) -> dict[int, int]:
        """Ids shared by more than one feature string, with the count of extra strings."""
        return self._kept_names().collisions()

    # ------------------------------------------------------- a chunk's stages
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

