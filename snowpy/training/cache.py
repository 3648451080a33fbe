"""``snowpy train CORPUS --cache DIR``: several epochs over a corpus larger than memory.

As Vowpal Wabbit's ``--cache_file``: the corpus is read once, as a stream,
and featurised block by block into DIR (``block-00000.npz``...: the CSR
arrays and the labels, no pickle), then every epoch reads the blocks back one
at a time: memory holds the model and one block, whatever the corpus. The
first epoch goes in the corpus's order (its mistakes are progressive: made
before learning each document), the later ones in a seeded random order of
blocks and of documents within each. ``MANIFEST.json``, written last, says
what the cache holds (the corpus's path, size and time, the front end's
options); a later run with the same corpus and options reuses it, any other
rebuilds it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from snowpy._atomic import replacing, write_bytes
from snowpy.exceptions import ConfigurationError

__all__ = ["BLOCK_DOCS", "FeatureCache"]

#: Documents per block of the cache.
BLOCK_DOCS = 16_384
_FORMAT = "snowpy-feature-cache"


class FeatureCache:
    """The folder of one cache (see the module's description)."""

    def __init__(self, folder: Path, fingerprint: dict[str, Any]) -> None:
        import orjson

        self.folder = Path(folder)
        self.fingerprint = orjson.loads(orjson.dumps(fingerprint, default=str))
        self.blocks: list[dict[str, Any]] = []

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
                record.get("of") != self.fingerprint or not isinstance(record.get("blocks"), list):
            return False
        self.blocks = record["blocks"]
        return all((self.folder / str(b.get("file", ""))).is_file() for b in self.blocks)

    def build(self, documents: Iterable[Any], featurizer: Any, *,
              block_docs: int | None = None) -> int:
        """Featurise ``documents`` into the folder, a block at a time; returns how many."""
        import numpy as np
        import orjson

        if self.folder.exists() and not self.folder.is_dir():
            raise ConfigurationError(f"--cache {self.folder}: not a folder")
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "MANIFEST.json").unlink(missing_ok=True)  # incomplete from here on
        for old in self.folder.glob("block-*.npz"):
            old.unlink()
        self.blocks = []
        stream = iter(documents)
        block_docs = BLOCK_DOCS if block_docs is None else block_docs
        total = 0
        while True:
            chunk = list(islice(stream, block_docs))
            if not chunk:
                break
            X = featurizer.transform([d.text for d in chunk], names=False)
            labels = orjson.dumps([list(d.label) if isinstance(d.label, (tuple, list))
                                   else d.label for d in chunk])
            name = f"block-{len(self.blocks):05d}.npz"
            with replacing(self.folder / name, suffix=".npz") as temporary:
                np.savez(temporary, indptr=X.indptr.astype(np.int64),
                         indices=X.indices.astype(np.int32), data=X.data.astype(np.float32),
                         width=np.int64(X.shape[1]), labels=np.frombuffer(labels, np.uint8))
            self.blocks.append({"file": name, "documents": len(chunk)})
            total += len(chunk)
        record = {"format": _FORMAT, "version": 1, "of": self.fingerprint,
                  "documents": total, "blocks": self.blocks}
        write_bytes(self.folder / "MANIFEST.json",
                    orjson.dumps(record, option=orjson.OPT_INDENT_2))
        return total

    def read(self, order: Iterable[int], rng: Any = None) -> Iterator[tuple[Any, list[Any]]]:
        """The blocks in ``order``, each ``(X, labels)``; rows shuffled by ``rng`` if given."""
        import numpy as np
        import orjson
        import scipy.sparse as sp

        for number in order:
            path = self.folder / str(self.blocks[number]["file"])
            try:
                with np.load(path, allow_pickle=False) as arrays:
                    indptr, indices = arrays["indptr"], arrays["indices"]
                    data, width = arrays["data"], int(arrays["width"])
                    labels = orjson.loads(arrays["labels"].tobytes())
                X = sp.csr_matrix((data.astype(np.float64), indices, indptr),
                                  shape=(indptr.size - 1, width))
            except (OSError, ValueError, KeyError, orjson.JSONDecodeError) as exc:
                raise ConfigurationError(f"{path}: the cache is damaged ({exc}); delete "
                                         f"{self.folder} and train again") from None
            if not isinstance(labels, list) or len(labels) != X.shape[0]:
                raise ConfigurationError(f"{path}: the cache is damaged (labels do not match "
                                         f"the documents); delete {self.folder}")
            labels = [tuple(label) if isinstance(label, list) else label for label in labels]
            if rng is not None:
                rows = rng.permutation(X.shape[0])
                X, labels = X[rows], [labels[i] for i in rows]
            yield X, labels
