"""Named corpora: their records and where their files live.

A corpus plugin returns :class:`CorpusSpec` records from the
``snowpy_corpora`` hook. :func:`locate` (what :func:`snowpy.corpora.load`
calls) finds the corpus file in the data
directories (``$SNOWPY_DATA``, several joined by ``os.pathsep``, else
``~/.cache/snowpy``), verifies its SHA-256, and only when no file is there
downloads it (with a progress bar, atomically: a temporary file renamed
into place once complete and verified). Without network, and without the
file, the error names the file to put where.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from snowpy._atomic import replacing
from snowpy._lazy import lazy_module
from snowpy.corpora.documents import CorpusError
from snowpy.exceptions import ConfigurationError
from snowpy.corpora.spec import CorpusFile, CorpusSpec

__all__ = ["CorpusFile", "CorpusSpec", "check_file", "data_dirs", "default_split", "locate",
           "sha256_of"]

hashlib = lazy_module("hashlib")  # (OpenSSL's library: loaded when a file is checked)


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


def check_file(path: Path, expected: str | None) -> None:
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

    from rich.progress import Progress

    directory.mkdir(parents=True, exist_ok=True)
    target = directory / file.name
    digest = hashlib.sha256()
    with replacing(target, suffix=".part") as temporary, open(temporary, "wb") as out, \
            urllib.request.urlopen(str(file.url), timeout=30) as response:
        total = int(response.headers.get("Content-Length") or 0) or None
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
    return target


def present(spec: CorpusSpec) -> tuple[Path, CorpusFile] | None:
    """The corpus file found in a data directory (the first there, in their order), and
    its record; None when none is."""
    for directory in data_dirs():
        for file in spec.files:
            if (directory / file.name).exists():
                return directory / file.name, file
    return None


def locate(spec: CorpusSpec, *, download: bool = True, verify: bool = True) -> Path:
    """The path of the corpus file: found in a data directory, or downloaded."""
    found = present(spec)
    if found is not None:
        if verify:
            check_file(found[0], found[1].sha256)
        return found[0]
    wanted = " or ".join(
        f"{f.name}" + (f" (sha256 {f.sha256[:12]}...)" if f.sha256 else "") for f in spec.files
    )
    where = data_dirs()[0]
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
