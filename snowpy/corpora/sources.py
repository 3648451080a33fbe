"""Files of a corpus, from a folder, a ``.tar.gz``/``.tgz``/``.tar`` or a ``.zip``.

:class:`Files` lists any of them, then streams the contents: a ``.tar.gz``
is read member by member, never extracted. Each file is named by its path
relative to the root; when an archive (or folder) holds a single top folder,
paths are relative to it. A file inside an archive can be named
``archive.tar.gz::path/inside``.
"""

from __future__ import annotations

import codecs
import io
import os
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from snowpy.corpora.documents import CorpusError, max_member_bytes

__all__ = ["Files", "advice", "bounded_lines", "decode", "is_archive", "iter_lines", "marked",
           "read_file", "recoded"]

_TAR = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")


def is_archive(path: str | os.PathLike) -> bool:
    """True for the archive formats snowpy reads without extracting."""
    name = str(path).lower()
    return name.endswith(_TAR) or name.endswith(".zip")


def _strip_top(names: list[str]) -> str:
    """The single top folder of an archive's paths, when every path goes two folders deeper.

    (A lone class folder, ``ham/1.txt``, is a label, not a wrapper.)
    """
    tops = {name.split("/", 1)[0] for name in names if name}
    if len(tops) == 1 and all(name.count("/") >= 2 for name in names):
        return tops.pop() + "/"
    return ""


class Files:
    """The files of a folder or an archive, listed once, their contents streamed.

    Paths are relative to the root, and to the single top folder when there
    is one (``20newsgroups/20news-bydate-train/...`` becomes
    ``20news-bydate-train/...``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "ham").mkdir(); _ = (root / "ham" / "1.txt").write_text("hello")
    >>> files = Files(root)
    >>> files.names
    ['ham/1.txt']
    >>> [(name, content) for name, _, content in files]
    [('ham/1.txt', b'hello')]
    """

    def __init__(self, source: str | os.PathLike) -> None:
        self.path = Path(source)
        #: symbolic and hard links in a tar archive: not read (a link may point anywhere)
        self.links = 0
        if not self.path.exists():
            raise CorpusError(f"{self.path}: no such file or folder")
        if not self.path.is_dir() and not self.path.is_file():  # (/dev/zero has no end)
            raise CorpusError(f"{self.path}: not a regular file (a pipe, a device or a "
                              "socket); give - to read standard input")
        self.kind = ("folder" if self.path.is_dir() else "zip" if self.path.name.lower()
                     .endswith(".zip") else "tar" if self.path.name.lower().endswith(_TAR)
                     else "file")
        raw = self._raw_names()
        self._top = _strip_top(raw) if self.kind != "file" else ""
        self.names = sorted(name[len(self._top):] for name in raw)

    def _raw_names(self) -> list[str]:
        try:
            if self.kind == "folder":
                return _walk(self.path)
            if self.kind == "zip":
                with zipfile.ZipFile(self.path) as archive:
                    return self._contained([i.filename for i in archive.infolist()
                                            if not i.is_dir()])
            if self.kind == "tar":
                with tarfile.open(self.path) as archive:
                    members = list(archive)
                self.links = sum(1 for m in members if m.issym() or m.islnk())
                return self._contained([m.name for m in members if m.isfile()])
        except zipfile.BadZipFile as exc:
            raise CorpusError(f"{self.path}: not a readable zip archive ({exc})") from None
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise CorpusError(f"{self.path}: not a readable tar archive ({exc})") from None
        return [self.path.name]

    def _contained(self, names: list[str]) -> list[str]:
        """Refuse member paths that leave the archive (``..``, absolute): they are not
        documents of a class folder, and such paths dropped whole classes unsaid."""
        for name in names:
            if name.startswith("/") or ".." in name.split("/"):
                raise CorpusError(f"{self.path}::{name}: a member path that leaves the "
                                  "archive ('..' or absolute); repack the corpus without it")
        return names

    def __iter__(self) -> Iterator[tuple[str, str, bytes]]:
        """``(relative path, where, content)`` of each file, in archive order."""
        top = self._top
        if self.kind == "folder":
            for name in self.names:
                file = self.path / (top + name)
                yield name, str(file), file.read_bytes()
        elif self.kind == "zip":
            with zipfile.ZipFile(self.path) as archive:
                for name in self.names:
                    yield name, f"{self.path}::{top + name}", _member(archive, top + name,
                                                                       self.path)
        elif self.kind == "tar":
            try:
                with tarfile.open(self.path) as archive:
                    for member in archive:
                        if member.isfile():
                            _bounded(member.size, f"{self.path}::{member.name}")
                            handle = archive.extractfile(member)
                            content = handle.read() if handle is not None else b""
                            yield member.name[len(top):], f"{self.path}::{member.name}", content
            except (tarfile.TarError, EOFError, OSError) as exc:
                raise CorpusError(f"{self.path}: archive is damaged ({exc})") from None
        else:
            yield self.path.name, str(self.path), self.path.read_bytes()

    def read(self, name: str) -> tuple[str, bytes]:
        """``(where, content)`` of one file, by relative path (or full archive name)."""
        candidates = [self._top + name, name] if self._top else [name]
        if self.kind == "folder":
            for candidate in candidates:
                file = self.path / candidate
                if file.is_file():
                    return str(file), file.read_bytes()
        elif self.kind == "zip":
            with zipfile.ZipFile(self.path) as archive:
                present = set(archive.namelist())
                for candidate in candidates:
                    if candidate in present:
                        return f"{self.path}::{candidate}", _member(archive, candidate,
                                                                     self.path)
        elif self.kind == "tar":
            with tarfile.open(self.path) as archive:
                for candidate in candidates:
                    try:
                        member = archive.getmember(candidate)
                    except KeyError:
                        continue
                    if member.isfile():
                        _bounded(member.size, f"{self.path}::{member.name}")
                        handle = archive.extractfile(member)
                        return f"{self.path}::{member.name}", handle.read() if handle else b""
        elif name == self.path.name:
            return str(self.path), self.path.read_bytes()
        raise CorpusError(f"{self.path}: no file {name!r} in it")


def _bounded(size: int, where: str) -> None:
    """Refuse a member larger than :func:`max_member_bytes` before reading it."""
    if size > max_member_bytes():
        raise CorpusError(f"{where}: a member of {size:,} bytes, more than the "
                          f"{max_member_bytes():,} read whole (SNOWPY_MAX_MEMBER_BYTES)")


#: The most a zip member may expand: deflate's limit is about 1,032 to 1; text
#: compresses 3 to 10 times, a repeated line a few hundred.
MAX_RATIO = 1000


def _member(archive: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """A zip member's bytes, its declared size and ratio checked first (zipfile stops
    at the declared size, so the check bounds what is read)."""
    info = archive.getinfo(name)
    where = f"{path}::{name}"
    _bounded(info.file_size, where)
    if info.file_size > 10_000_000 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise CorpusError(f"{where}: expands {info.file_size // max(info.compress_size, 1):,} "
                          f"times ({info.compress_size:,} to {info.file_size:,} bytes): "
                          "refused as a zip bomb")
    return archive.read(name)


def _walk(root: Path) -> list[str]:
    """Every file under ``root``, relative; a folder that cannot be read is an error
    naming it (never a class silently missing)."""
    def refuse(error: OSError) -> None:
        raise CorpusError(f"{error.filename}: cannot be read ({error.strerror}); its documents "
                          "would be missing") from None

    names = []
    for folder, _, files in os.walk(root, onerror=refuse, followlinks=True):
        for name in files:
            path = Path(folder) / name
            if path.is_file():
                names.append(path.relative_to(root).as_posix())
    return names


#: Byte-order marks and the encoding each says, UTF-32's first (its little-endian mark
#: begins as UTF-16's).
MARKS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


def marked(head: bytes) -> str | None:
    """The encoding the byte-order mark at the start of ``head`` says, or None: a file
    with a mark is read as what the mark says, whatever encoding was declared.

    >>> marked("a".encode("utf-16")), marked(b"plain")
    ('utf-16', None)
    """
    return next((encoding for mark, encoding in MARKS if head.startswith(mark)), None)


def _wide(encoding: str) -> bool:
    """Whether ``encoding`` spends two or four bytes on a newline (UTF-16, UTF-32): its
    text cannot be cut into lines at the byte 10."""
    try:
        return codecs.lookup(encoding).name.startswith(("utf-16", "utf-32"))
    except LookupError:
        return False


def decode(content: bytes, encoding: str, errors: str, where: str) -> str | None:
    """Decode a file's bytes; a bad byte raises a CorpusError naming ``where``. A
    byte-order mark says the encoding (:func:`marked`) and is not text (it made an
    extra class).

    ``errors`` is ``"strict"`` (an error with the byte offset), ``"replace"``
    (U+FFFD) or ``"skip"`` (return None: the caller skips and counts it).
    """
    encoding = marked(content[:4]) or encoding
    try:
        return content.decode(encoding, "strict" if errors == "skip" else errors)
    except UnicodeDecodeError as exc:
        if errors == "skip":
            return None
        raise CorpusError(f"{where}: the byte 0x{content[exc.start]:02x} at offset "
                          f"{exc.start} is not valid {encoding} ({exc.reason}); "
                          f"{advice(content)}") from None
    except LookupError:
        raise CorpusError(f"unknown encoding {encoding!r}") from None


def advice(content: bytes) -> str:
    """What to do about bytes that are not valid in the encoding declared, from what they
    look like: UTF-16 without a byte-order mark (a zero byte every other one), a binary
    file (zero bytes elsewhere), else text in another encoding.

    >>> advice("text".encode("utf-16-le"))
    "it looks like UTF-16 without a byte-order mark: encoding='utf-16-le'"
    >>> advice("café".encode("latin-1"))
    "declare the corpus encoding (encoding='latin-1' reads any byte, as Western European text), or use errors='replace'"
    """
    sample = content[:4096]
    odd, even = sample[1::2].count(0), sample[0::2].count(0)
    if sample and max(odd, even) >= len(sample) // 4 and min(odd, even) <= max(odd, even) // 8:
        return ("it looks like UTF-16 without a byte-order mark: "
                f"encoding='utf-16-{'le' if odd > even else 'be'}'")
    if 0 in sample:
        return "it looks like a binary file, not text: is it the corpus?"
    return ("declare the corpus encoding (encoding='latin-1' reads any byte, as Western "
            "European text), or use errors='replace'")


def iter_lines(content: bytes, where: str, encoding: str = "utf-8", errors: str = "strict"
               ) -> Iterator[tuple[str, str | None]]:
    """``(where:line, text)`` of each line of a file's content (``None`` when undecodable
    and ``errors="skip"``). Text in UTF-16 or UTF-32 (declared, or said by a byte-order
    mark) is decoded whole, then cut into lines (a bad byte is then an error naming the
    file and the byte, or replaced)."""
    encoding = marked(content[:4]) or encoding
    if encoding == "utf-8-sig":  # (the mark is no text: the lines are UTF-8's)
        content, encoding = content[len(codecs.BOM_UTF8):], "utf-8"
    if _wide(encoding):
        text = decode(content, encoding, "strict" if errors == "skip" else errors, where)
        lines = (text or "").split("\n")
        for number, line in enumerate(lines[:-1] if lines[-1] == "" else lines, start=1):
            yield f"{where}:{number}", line.rstrip("\r")
        return
    for number, raw in enumerate(io.BytesIO(content), start=1):
        decoded = decode(raw, encoding, errors, f"{where}:{number}")
        yield f"{where}:{number}", decoded if decoded is None else decoded.rstrip("\r\n")


def recoded(stream: BinaryIO, encoding: str, errors: str) -> tuple[BinaryIO, str]:
    """A stream of text in UTF-16 or UTF-32 (declared, or said by a byte-order mark) as
    a stream of its UTF-8 bytes, to be cut into lines and decoded as UTF-8: ``(stream,
    "utf-8")``; any other, as it is: ``(stream, encoding)``. A byte that is not valid
    raises ``UnicodeDecodeError`` as the lines are read (``errors="strict"``)."""
    peeking: Any = stream  # (one that cannot peek, a BytesIO say, is buffered)
    if not hasattr(stream, "peek"):
        peeking = io.BufferedReader(peeking)
    said = marked(peeking.peek(4)[:4]) or encoding
    if not _wide(said) and said != "utf-8-sig":
        return peeking, encoding
    recoder: Any = codecs.EncodedFile(peeking, "utf-8", said, errors)
    return recoder, "utf-8"


def read_file(source: str | os.PathLike) -> tuple[str, bytes]:
    """``(where, content)`` of a plain file, or of ``archive::member``."""
    text = str(source)
    if "::" in text:
        archive, member = text.split("::", 1)
        return Files(archive).read(member)
    path = Path(text)
    if not path.is_file():
        raise CorpusError(f"{path}: " + ("not a regular file (a pipe, a device or a socket); "
                                         "give - to read standard input" if path.exists()
                                         else "no such file"))
    return str(path), path.read_bytes()


def bounded_lines(stream: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """The stream's lines, each read with a bound: a line longer than ``limit`` bytes is
    read through and dropped (None), never held whole (``/dev/zero`` is one endless
    line)."""
    while True:
        raw = stream.readline(limit + 1)
        if not raw:
            return
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):  # the rest of the long line
            raw = stream.readline(1 << 20)
        yield None
