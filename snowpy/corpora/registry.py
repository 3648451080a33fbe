"""Named corpora: their records, where their files live, and ``load``.

A corpus plugin returns :class:`CorpusSpec` records from the
``snowpy_corpora`` hook. :func:`load` finds the corpus file in the data
directories (``$SNOWPY_DATA``, several joined by ``os.pathsep``, else
``~/.cache/snowpy``), verifies its SHA-256, and only when no file is there
downloads it (with a progress bar, atomically: a temporary file renamed
into place once complete and verified). Without network, and without the
file, the error names the file to put where.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snowpy.corpora.documents import CorpusError, Document, Problems
from snowpy.exceptions import ConfigurationError
from snowpy.corpora.spec import CorpusFile, CorpusSpec
from snowpy.params import validate_declared

__all__ = ["Corpus", "CorpusFile", "CorpusSpec", "data_dirs", "default_split", "load", "locate",
           "sha256_of"]


def data_dirs() -> list[Path]:
    """Where corpus files are looked for, in order; the first receives downloads."""
    value = os.environ.get("SNOWPY_DATA")
    if value:
        return [Path(p).expanduser() for p in value.split(os.pathsep) if p]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [Path(cache) / "snowpy"]


_verified: dict[tuple[str, int, int], str] = {}


def sha256_of(path: Path) -> str:
    """SHA-256 of a file (remembered per path, size and modification time)."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _verified:
        digest = hashlib.sha256()
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        _verified[key] = digest.hexdigest()
    return _verified[key]


def _check(path: Path, expected: str | None) -> None:
    if expected is None:
        return
    actual = sha256_of(path)
    if actual != expected:
        raise CorpusError(
            f"{path}: SHA-256 is {actual}, expected {expected}; the file is damaged or a "
            "different version (delete it to download again, or pass verify=False)"
        )


def _download(file: CorpusFile, directory: Path, corpus: str) -> Path:
    """Fetch ``file.url`` into ``directory`` atomically; verify; return the path."""
    import urllib.request  # (only here: loading it costs every command 20 ms)

    directory.mkdir(parents=True, exist_ok=True)
    target = directory / file.name
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{file.name}.", suffix=".part")
    digest = hashlib.sha256()
    try:
        with os.fdopen(handle, "wb") as out, \
                urllib.request.urlopen(str(file.url), timeout=30) as response:
            total = int(response.headers.get("Content-Length") or 0) or None
            from rich.progress import Progress

            with Progress(transient=True, disable=not sys.stderr.isatty()) as progress:
                task = progress.add_task(f"downloading {corpus}", total=total)
                for block in iter(lambda: response.read(1 << 16), b""):
                    out.write(block)
                    digest.update(block)
                    progress.advance(task, len(block))
            out.flush()
            os.fsync(out.fileno())
        if file.sha256 is not None and digest.hexdigest() != file.sha256:
            raise CorpusError(
                f"downloaded {file.url}: SHA-256 is {digest.hexdigest()}, expected {file.sha256}"
            )
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def locate(spec: CorpusSpec, *, download: bool = True, verify: bool = True) -> Path:
    """The path of the corpus file: found in a data directory, or downloaded."""
    directories = data_dirs()
    for directory in directories:
        for file in spec.files:
            path = directory / file.name
            if path.exists():
                if verify:
                    _check(path, file.sha256)
                return path
    wanted = " or ".join(
        f"{f.name}" + (f" (sha256 {f.sha256[:12]}...)" if f.sha256 else "") for f in spec.files
    )
    where = directories[0]
    reason = "downloads are off"
    if download:
        for file in spec.files:
            if file.url is None:
                continue
            try:
                return _download(file, where, spec.name)
            except OSError as exc:  # URLError and TimeoutError are OSErrors
                reason = f"downloading {file.url} failed: {getattr(exc, 'reason', exc)}"
        if not any(f.url for f in spec.files):
            reason = "no download location is known for this packaging"
    raise CorpusError(
        f"corpus {spec.name!r} not found: put {wanted} in {where} (or point SNOWPY_DATA at the "
        f"folder that holds it); {reason}. Source: {spec.source}"
    )


@dataclass
class Corpus:
    """Documents of one split of a corpus, streamed from its file.

    Iterate for :class:`Document` records; ``texts`` and ``labels`` read the
    split once and keep the lists. Malformed records skipped with
    ``on_error="skip"`` are counted in ``problems``.
    """

    spec: CorpusSpec
    split: str
    path: Path
    options: dict[str, Any]
    problems: Problems = field(default_factory=Problems)
    _cache: list[Document] | None = None

    def __iter__(self) -> Iterator[Document]:
        if self._cache is not None:
            return iter(self._cache)
        return self.spec.read(self.path, self.split, self.problems, **self.options)

    def __repr__(self) -> str:
        read = (f"{len(self._cache):,} documents" if self._cache is not None
                else "not read yet")
        skipped = f", {self.problems.skipped} skipped" if self.problems.skipped else ""
        return f"Corpus({self.spec.name!r}, split={self.split!r}, path='{self.path}', " \
               f"{read}{skipped})"

    def documents(self) -> list[Document]:
        """All documents of the split (read once)."""
        if self._cache is None:
            self._cache = list(self.__iter__())
        return self._cache

    def __len__(self) -> int:
        return len(self.documents())

    @property
    def texts(self) -> list[Any]:
        return [d.text for d in self.documents()]

    @property
    def labels(self) -> list[Any]:
        return [d.label for d in self.documents()]


def load(name: str, split: str | None = None, *, path: str | os.PathLike | None = None,
         download: bool = True, verify: bool = True, on_error: str = "raise",
         **options: Any) -> Corpus:
    """A split of a registered corpus.

    Parameters
    ----------
    name : str
        A registered corpus (``snowpy corpus list``).
    split : str, optional
        One of the corpus's splits; its first (usually ``train``) by default.
    path : path, optional
        Read this file instead of looking in the data directories (its
        checksum is still verified when it has a known file name).
    download : bool
        Download the file when absent and a download location is known.
    verify : bool
        Check the file's SHA-256.
    on_error : {"raise", "skip"}
        A malformed record stops reading with an error naming it, or is
        skipped and counted in ``corpus.problems``.
    **options
        Corpus options (``labels="fine"`` for TREC).

    Examples
    --------
    >>> corpus = load("sms-spam", split="train")  # doctest: +SKIP
    >>> len(corpus), corpus.labels[:3]  # doctest: +SKIP
    (4459, ['ham', 'ham', 'spam'])
    """
    from snowpy.plugins import get_corpus

    spec = get_corpus(name)
    split = spec.splits[0] if split is None else split
    if split not in spec.splits:
        raise ConfigurationError(
            f"corpus {name!r} has no split {split!r}; its splits are: {', '.join(spec.splits)}"
        )
    values = validate_declared(spec.options, options, kind="corpus", name=name, word="option")
    if path is not None:
        found = Path(path)
        if not found.exists():
            raise CorpusError(f"{found}: no such file or folder")
        if verify:
            for file in spec.files:
                if file.name == found.name:
                    _check(found, file.sha256)
    else:
        found = locate(spec, download=download, verify=verify)
    return Corpus(spec, split, found, values, Problems(on_error))


def default_split(corpus: str, splits: list[str], prefer: str | None) -> str | None:
    """The split to read of a corpus with ``splits`` when none was asked for: ``prefer``
    when the corpus has it, the only split of a one-split corpus, else a refusal naming
    the splits (reading them together would mix training and test documents).

    >>> default_split("c", ["train", "test"], "train"), default_split("c", [], "train")
    ('train', None)
    >>> default_split("c", ["train", "dev"], "test")
    Traceback (most recent call last):
    ...
    snowpy.exceptions.ConfigurationError: c has the splits train, dev; choose one with split='NAME' (reading them together would mix training and test documents)
    """
    if not splits or (len(splits) == 1 and splits[0] == "all"):
        return None if not splits else splits[0]
    if prefer in splits:
        return prefer
    if len(splits) == 1:
        return splits[0]
    raise ConfigurationError(f"{corpus} has the splits {', '.join(splits)}; choose one with "
                             "split='NAME' (reading them together would mix training and test "
                             "documents)")
