"""``snowpy train CORPUS --cache DIR``: several epochs over a corpus larger than memory.

As Vowpal Wabbit's ``--cache_file``: the corpus is read once, as a stream, and
featurised block by block into DIR (``block-00000.npz``...: the rows, the labels and
the documents' shuffling keys, no pickle). Training then reads the blocks back one at
a time (``Network.fit(cache)``), and learns the network that ``fit`` learns
from the whole corpus in memory, to the bit: each epoch goes in the order of the
documents' keys mixed with the epoch's salt, across blocks, the first epoch included.
That order is made in bounded memory by an external shuffle: the blocks are dealt into
buckets by the top bits of each document's mixed key (``shuffle/``, written and read
back once per epoch), and each bucket is sorted in memory; the buckets in turn give
the whole order. The next block (or bucket) is read on a thread of its own while the
network learns this one. Memory holds the model and a few blocks or buckets (the one
learned, at most three read ahead), whatever the corpus.

``MANIFEST.json``, written last, says what the cache holds (the corpus's path, size
and time, the front end's options, the documents, labels and active features); a
later run with the same corpus and options reuses it, any other rebuilds it. A front
end that weighs by document frequency (``idf``) has the blocks' frequencies counted
as they are built, and by label for a ``relevance`` share (``frequencies.npz``: the
relevance factors too); the blocks keep the rows before the weighing,
which is done as each block is read back for learning (:attr:`FeatureCache.weigh`).
``SnowClassifier.fit(cache)`` trains a classifier from the blocks.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from snowpy._atomic import replacing, write_bytes
from snowpy._rows import Rows
from snowpy.exceptions import ConfigurationError
from snowpy.text.weighing import DocumentFrequencies

__all__ = ["BLOCK_DOCS", "FeatureCache"]

#: Documents per block of the cache.
BLOCK_DOCS = 16_384
#: At most this many buckets for an epoch's shuffle (the files open at once).
MAX_BUCKETS = 256
_FORMAT = "snowpy-feature-cache"
_VERSION = 2


class FeatureCache:
    """The folder of one cache (see the module's description): examples that come a
    block at a time (:class:`~snowpy.network.engine.Blocks`: ``n`` documents, ``nnz``
    active features, ``width``, ``labels``, ``multilabel`` and :meth:`epoch`), what
    ``Network.fit(cache)`` learns from."""

    def __init__(self, folder: Path, fingerprint: dict[str, Any]) -> None:
        import orjson

        self.folder = Path(folder)
        self.fingerprint = orjson.loads(orjson.dumps(fingerprint, default=str))
        self.blocks: list[dict[str, Any]] = []
        self.labels: list[Any] = []
        self.multilabel = False
        self.width = self.n = self.nnz = 0
        #: the document frequencies of the documents cached (a front end with ``idf``)
        self.frequencies: DocumentFrequencies | None = None
        #: what each block read back goes through before it is learned (the front end's
        #: ``weighed``), or None
        self.weigh: Callable[[Rows], Rows] | None = None

    def valid(self) -> bool:
        """Whether the folder holds a complete cache of this corpus and front end."""
        import orjson

        manifest = self.folder / "MANIFEST.json"
        if not manifest.is_file():
            return False
        try:
            record = orjson.loads(manifest.read_bytes())
        except orjson.JSONDecodeError:
            return False
        if not isinstance(record, dict) or record.get("format") != _FORMAT or \
                record.get("version") != _VERSION or record.get("of") != self.fingerprint \
                or not isinstance(record.get("blocks"), list):
            return False
        self._describe(record)
        if not all((self.folder / str(b.get("file", ""))).is_file() for b in self.blocks):
            return False
        return record.get("frequencies") is None or self._read_frequencies()

    def _read_frequencies(self) -> bool:
        """The cached documents' frequencies, read back (False: missing or damaged)."""
        try:
            with np.load(self.folder / "frequencies.npz", allow_pickle=False) as arrays:
                ids, counts = arrays["ids"].astype(np.int64), arrays["counts"].astype(np.int64)
                documents = int(arrays["documents"])
                factors = arrays["factors"].astype(np.float64) if "factors" in arrays \
                    else None
        except (OSError, ValueError, KeyError):
            return False
        if ids.shape != counts.shape or documents != self.n or (
                factors is not None and factors.shape != ids.shape):
            return False
        self.frequencies = DocumentFrequencies(self.width, ids, counts, documents, factors)
        return True

    def _describe(self, record: dict[str, Any]) -> None:
        self.blocks = record["blocks"]
        self.labels = [tuple(label) if isinstance(label, list) else label
                       for label in record["labels"]]
        self.multilabel = bool(record["multilabel"])
        self.width, self.n, self.nnz = (int(record[name]) for name in
                                        ("width", "documents", "nnz"))

    def build(self, documents: Iterable[Any], featurizer: Any, *,
              block_docs: int | None = None) -> int:
        """Featurise ``documents`` into the folder, a block at a time; returns how many."""
        import orjson

        from snowpy.network.labels import LabelIndex
        from snowpy.text.keys import document_keys

        if self.folder.exists() and not self.folder.is_dir():
            raise ConfigurationError(f"--cache {self.folder}: not a folder")
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "MANIFEST.json").unlink(missing_ok=True)  # incomplete from here on
        for old in self.folder.glob("block-*.npz"):
            old.unlink()
        shutil.rmtree(self.folder / "shuffle", ignore_errors=True)
        blocks: list[dict[str, Any]] = []
        stream = iter(documents)
        block_docs = BLOCK_DOCS if block_docs is None else block_docs
        seen, multilabel = LabelIndex(), False
        total = nnz = width = 0
        frequencies = DocumentFrequencies(1 << int(featurizer.bits)) if featurizer.idf \
            else None
        while True:
            chunk = list(islice(stream, block_docs))
            if not chunk:
                break
            texts = [d.text for d in chunk]
            labels = [list(d.label) if isinstance(d.label, (tuple, list)) else d.label
                      for d in chunk]
            for label in labels:
                multilabel |= isinstance(label, list)
                for item in label if isinstance(label, list) else (label,):
                    seen.add(item)
            X = featurizer.rows(texts, names=False)  # (before the weighing)
            if frequencies is not None:
                frequencies.count(X, labels=labels if featurizer.relevance else None)
            name = f"block-{len(blocks):05d}.npz"
            with replacing(self.folder / name, suffix=".npz") as temporary:
                arrays = _arrays(X, document_keys(texts, [d.label for d in chunk]),
                                 orjson.dumps(labels))
                np.savez(temporary, **arrays)  # type: ignore[arg-type]
            blocks.append({"file": name, "documents": len(chunk)})
            total += len(chunk)
            nnz += X.nnz
            width = X.shape[1]
        record = {"format": _FORMAT, "version": _VERSION, "of": self.fingerprint,
                  "documents": total, "nnz": nnz, "width": width, "multilabel": multilabel,
                  "labels": [list(label) if isinstance(label, tuple) else label
                             for label in seen.labels],
                  "blocks": blocks, "frequencies": None}
        if frequencies is not None:
            frequencies.relate(float(featurizer.relevance))
            ids, counts = frequencies.to_arrays()
            factors = frequencies.factors_of(ids)
            arrays = {"ids": ids, "counts": counts,
                      "documents": np.array(frequencies.documents, np.int64)}
            if factors is not None:
                arrays["factors"] = factors
            with replacing(self.folder / "frequencies.npz", suffix=".npz") as temporary:
                np.savez(temporary, **arrays)  # type: ignore[arg-type]
            record["frequencies"] = "frequencies.npz"
            self.frequencies = frequencies
        write_bytes(self.folder / "MANIFEST.json",
                    orjson.dumps(record, option=orjson.OPT_INDENT_2))
        self._describe(record)
        return total

    def read(self, number: int) -> tuple[Rows, list[Any], np.ndarray]:
        """Block ``number``: its rows, labels and shuffling keys."""
        import orjson

        path = self.folder / str(self.blocks[number]["file"])
        try:
            with np.load(path, allow_pickle=False) as arrays:
                indptr, indices, width = arrays["indptr"], arrays["indices"], arrays["width"]
                data = arrays["data"] if "data" in arrays else None
                keys = arrays["keys"]
                labels = orjson.loads(arrays["labels"].tobytes())
            X = Rows(indptr, indices, data, int(width))
            if self.weigh is not None:
                X = self.weigh(X)
        except (OSError, ValueError, KeyError, orjson.JSONDecodeError) as exc:
            raise ConfigurationError(f"{path}: the cache is damaged ({exc}); delete "
                                     f"{self.folder} and train again") from None
        if not isinstance(labels, list) or not len(labels) == X.shape[0] == keys.shape[0]:
            raise ConfigurationError(f"{path}: the cache is damaged (labels do not match "
                                     f"the documents); delete {self.folder}")
        return X, [tuple(label) if isinstance(label, list) else label
                   for label in labels], keys

    def epoch(self, salt: int | None) -> Iterator[tuple[Rows, list[Any], np.ndarray | None]]:
        """One pass's blocks ``(X, labels, order)``, each learned in its ``order`` (None:
        as stored). Without a ``salt``, the blocks as stored; with one, every document in
        the order of its key mixed with ``salt`` (:func:`~snowpy.network.driver.
        keyed_order` of all the keys at once), through the buckets of the module's
        description. Each is read while the one before is learned
        (:func:`~snowpy.training.stream.read_ahead`)."""
        from snowpy.training.stream import read_ahead

        return read_ahead(self._epoch(salt), batch=1)

    def _epoch(self, salt: int | None) -> Iterator[tuple[Rows, list[Any], np.ndarray | None]]:
        from snowpy.network.driver import mixed_keys

        if salt is None:
            for number in range(len(self.blocks)):
                X, labels, _ = self.read(number)
                yield X, labels, None
            return
        bits = min((len(self.blocks) - 1).bit_length(), MAX_BUCKETS.bit_length() - 1)
        if bits == 0:  # (one block: its own bucket, sorted in memory)
            X, labels, keys = self.read(0)
            yield X, labels, _sorted(mixed_keys(keys, salt), np.arange(X.shape[0]))
            return
        folder = self.folder / "shuffle"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        try:
            buckets: list[BinaryIO] = [open(folder / f"{j:03d}", "wb")
                                        for j in range(1 << bits)]
            try:
                first = 0
                for number in range(len(self.blocks)):
                    X, labels, keys = self.read(number)
                    _deal(buckets, bits, X, labels, mixed_keys(keys, salt), first)
                    first += X.shape[0]
            finally:
                for bucket in buckets:
                    bucket.close()
            for j in range(1 << bits):
                path = folder / f"{j:03d}"
                with open(path, "rb") as source:
                    X, labels, mixed, index = _gather(source, self.width)
                path.unlink()
                if X.shape[0]:
                    yield X, labels, _sorted(mixed, index)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _arrays(X: Rows, keys: np.ndarray, labels: bytes) -> dict[str, np.ndarray]:
    """A block's arrays in the file: strengths as float32 when that keeps them exactly
    (binary rows keep none)."""
    arrays: dict[str, np.ndarray] = {"indptr": X.indptr.astype(np.int64), "indices": X.indices.astype(np.int32),
              "width": np.array(X.shape[1], np.int64), "keys": keys.astype(np.uint64),
              "labels": np.frombuffer(labels, np.uint8)}
    if X.strengths is not None:
        narrow = X.strengths.astype(np.float32)
        arrays["data"] = narrow if np.array_equal(narrow, X.strengths) else X.strengths
    return arrays


def _sorted(mixed: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Positions by mixed key, ties by the documents' places in the corpus (as
    ``keyed_order``'s stable sort of them all)."""
    return np.lexsort((index, mixed))


def _deal(buckets: list[BinaryIO], bits: int, X: Rows, labels: list[Any],
          mixed: np.ndarray, first: int) -> None:
    """Append each document of a block to the bucket of its mixed key's top bits."""
    import orjson

    bucket_of = (mixed >> np.uint64(64 - bits)).astype(np.int64)
    order = np.argsort(bucket_of, kind="stable")
    bounds = np.searchsorted(bucket_of[order], np.arange((1 << bits) + 1))
    for j, bucket in enumerate(buckets):
        rows = order[bounds[j]:bounds[j + 1]]
        if not rows.size:
            continue
        part = X[rows]
        data = part.strengths
        text = orjson.dumps([list(labels[i]) if isinstance(labels[i], tuple) else labels[i]
                             for i in rows])
        head = np.array([rows.size, part.nnz, len(text), 0 if data is None else 1], np.int64)
        for array in (head, np.diff(part.indptr).astype(np.int64),
                      part.indices.astype(np.int32), mixed[rows], rows.astype(np.int64) + first):
            bucket.write(array.tobytes())
        if data is not None:
            bucket.write(np.asarray(data, np.float64).tobytes())
        bucket.write(text)


def _gather(bucket: BinaryIO, width: int) -> tuple[Rows, list[Any], np.ndarray, np.ndarray]:
    """A bucket's documents, read back: rows, labels, mixed keys, places in the corpus."""
    import orjson

    sizes: list[np.ndarray] = []
    indices: list[np.ndarray] = []
    data: list[np.ndarray] = []
    mixed: list[np.ndarray] = []
    index: list[np.ndarray] = []
    labels: list[Any] = []
    binary = True
    def take(dtype: Any, count: int) -> np.ndarray:
        return np.frombuffer(bucket.read(count * np.dtype(dtype).itemsize), dtype)

    while head := bucket.read(32):
        n, nnz, text, strengths = np.frombuffer(head, np.int64).tolist()
        sizes.append(take(np.int64, n))
        indices.append(take(np.int32, nnz))
        mixed.append(take(np.uint64, n))
        index.append(take(np.int64, n))
        if strengths:
            binary = False
            data.append(take(np.float64, nnz))
        labels += [tuple(label) if isinstance(label, list) else label
                   for label in orjson.loads(bucket.read(text))]
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(sizes or [np.zeros(0, np.int64)]))])
    strengths = None if binary or not data else np.concatenate(data)
    X = Rows(indptr, np.concatenate(indices or [np.zeros(0, np.int32)]), strengths, width)
    return (X, labels, np.concatenate(mixed or [np.zeros(0, np.uint64)]),
            np.concatenate(index or [np.zeros(0, np.int64)]))
