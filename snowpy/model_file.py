"""snowpy's model file: a zip of a JSON header and ``.npy`` arrays, never a pickle.

Layout (format version 2; version 1 files, from before the sparse links, are read too)::

    model.snowpy (zip, members stored uncompressed)
      header.json          orjson: magic, format and snowpy versions, what the
                           model is (rule, parameters, front end, labels,
                           calibration, training figures) and, per array,
                           its dtype, shape, byte size and SHA-256
      arrays/<name>.npy    one NumPy array each, written and read with
                           allow_pickle=False

Loading checks, in order: the file is a zip with a header; the magic; the
format version (a newer one is refused, saying so); every declared array is
present, with the dtype, shape and size the header declares (sizes are
checked before anything is read, so a forged header cannot make snowpy
allocate terabytes); each array's SHA-256; finite values. Any failure raises
:class:`ModelFileError` naming the check. Arrays are uncompressed so that
they can be memory-mapped (``mmap=True``): loading a model then costs the
header and the checksums, not a copy of the weights.

Saving is atomic: the file is written beside its target under a temporary
name, flushed to disk (fsync), then renamed over the target, so a crash or
Ctrl-C never leaves a half-written model in place of the previous one.
"""

from __future__ import annotations

import errno
import io
import math
import os
import struct
import tempfile
import time
import weakref
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from snowpy._atomic import mode_for
from snowpy._lazy import lazy_module
from snowpy._validation import on_threads
from snowpy._version import __version__
from snowpy.exceptions import ModelFileError

__all__ = ["FORMAT_VERSION", "MAGIC", "ModelFileError", "id_set", "ids_of_set", "read_model",
           "write_model"]

# (OpenSSL's library, 3.7 MB of a process, loaded when a file is first written or read:
# a training holds it from then on, not while its networks learn)
hashlib = lazy_module("hashlib")
hmac = lazy_module("hmac")

MAGIC = "snowpy-model"
FORMAT_VERSION = 4
_DTYPES = {"float64", "float32", "int64", "int32", "uint32", "uint16", "uint8", "bool"}
_LIMIT_DIMS = 4


def _sha256(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).data).hexdigest()



def id_set(ids: np.ndarray, width: int) -> np.ndarray | None:
    """Ascending ids below ``width`` as a set of bits (``uint8``, bit ``i % 8`` of byte
    ``i // 8`` set for id ``i``: numpy's ``packbits``, little bit order), or None when the
    ids themselves take no more bytes (their narrowest unsigned type; at a tie, the ids):
    a set over a width of ``2**22`` is 512 KB, whatever the number of ids in it."""
    itemsize = 1 if width <= 1 << 8 else 2 if width <= 1 << 16 else 4 if width <= 1 << 32 \
        else 8
    if width > 1 << 32 or (width + 7) // 8 >= ids.size * itemsize:
        return None
    present = np.zeros(width, bool)
    present[np.asarray(ids, np.int64)] = True
    return np.packbits(present, bitorder="little")


def ids_of_set(bits: np.ndarray, width: int, dtype: Any = np.int64) -> np.ndarray | None:
    """The ascending ids of a set :func:`id_set` made (of ``dtype``), or None when ``bits``
    is not one over ``width`` (its length, or a bit set at or past ``width``). Read a piece
    of the set at a time: no array of a byte per feature."""
    bits = np.asarray(bits)
    if bits.dtype != np.uint8 or bits.ndim != 1 or bits.size != (width + 7) // 8:
        return None
    ids = np.empty(int(np.bitwise_count(bits).sum(dtype=np.int64)), dtype)
    done, step = 0, 1 << 16
    for start in range(0, bits.size, step):
        found = np.flatnonzero(np.unpackbits(bits[start:start + step], bitorder="little"))
        ids[done:done + found.size] = found + 8 * start
        done += found.size
    if ids.size and int(ids[-1]) >= width:
        return None
    return ids


def write_model(path: str | os.PathLike, header: Mapping[str, Any],
                arrays: Mapping[str, np.ndarray], *, key: bytes | None = None,
                threads: int = 1) -> Path:
    """Write a model file atomically; returns its path.

    ``header`` must be JSON-serialisable (orjson); the array manifest,
    magic and versions are added here. ``key`` signs the file: an HMAC-SHA256 of the
    header (which holds every array's SHA-256), checked by ``read_model(..., key=key)``.
    ``threads``: the arrays' checksums are taken that many at once (as they are again
    when the file is read back before it replaces a model).
    """
    target = Path(path)
    directory = target.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:  # (a file where a folder of the path should be)
        raise NotADirectoryError(errno.ENOTDIR, f"{exc.filename} is a file, not a folder",
                                 str(target)) from None
    prepared = {}
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        if array.dtype.name not in _DTYPES:
            raise TypeError(f"array {name!r}: dtype {array.dtype} cannot be stored")
        prepared[name] = array
    digests = on_threads(_sha256, prepared.values(), threads)
    manifest = {name: {"dtype": array.dtype.name, "shape": list(array.shape),
                       "nbytes": int(array.nbytes), "sha256": digest}
                for (name, array), digest in zip(prepared.items(), digests)}
    full = _encode_floats({"magic": MAGIC, "format_version": FORMAT_VERSION,
                           "snowpy_version": __version__, **header, "arrays": manifest})
    full["header_sha256"] = _header_digest(full)
    if key is not None:
        full["header_hmac"] = _signature(full, key)
    payload = orjson.dumps(full, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_INDENT_2)
    _remove_stale(directory, target.name)
    try:
        handle, temporary = tempfile.mkstemp(dir=directory,
                                             prefix=f".{target.name}.{os.getpid()}.",
                                             suffix=".tmp")
    except OSError as exc:  # (a folder that takes no file: say the model's path)
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as archive:
                archive.writestr(_member("header.json"), payload)
                for name, array in prepared.items():  # streamed: no copy of an array
                    with archive.open(_member(f"arrays/{name}.npy"), "w",
                                      force_zip64=True) as member:
                        np.lib.format.write_array(member, array, allow_pickle=False)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode_for(target))
        # what replaces a model must load back: read the new file whole (checksums
        # included, a piece at a time) before the rename; a failure leaves the old
        # model where it was
        read_model(temporary, check_only=True, threads=threads)
        os.replace(temporary, target)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)  # (gone if an interrupt hit the rename)
        if isinstance(exc, OSError) and exc.filename in (None, temporary):  # (a full disk,
            # a folder in the model's place: the model's path, not the temporary one's)
            raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None
        raise
    try:  # make the rename itself durable
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass
    return target


def _remove_stale(directory: Path, name: str) -> None:
    """Remove the temporary files of earlier saves of ``name`` whose process is gone (a
    kill -9 during a save left them beside the model for ever). A save names its
    temporary file with its process id; one without (older snowpy) is stale after a day."""
    for candidate in directory.glob(f".{name}.*.tmp"):
        middle = candidate.name[len(name) + 2:-4].split(".", 1)[0]
        try:
            if middle.isdigit():
                if int(middle) == os.getpid():
                    continue
                try:
                    os.kill(int(middle), 0)
                    continue  # a save in progress in another process
                except ProcessLookupError:
                    pass
                except PermissionError:
                    continue
            elif time.time() - candidate.stat().st_mtime < 86400:
                continue
            candidate.unlink()
        except OSError:
            pass


_NON_FINITE = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


def _encode_floats(value: Any) -> Any:
    """JSON has no infinity (orjson writes null): ``inf`` is stored as
    ``{"$float": "inf"}`` (an infinite thickness is a legitimate rule parameter)."""
    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, dict):
        return {key: _encode_floats(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode_floats(item) for item in value]
    return value


def _decode_floats(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and "$float" in value and value["$float"] in _NON_FINITE:
            return _NON_FINITE[value["$float"]]
        return {key: _decode_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decode_floats(item) for item in value]
    return value


_UNSIGNED = ("header_sha256", "header_hmac")


def _canonical(header: Mapping[str, Any]) -> bytes:
    """The header's canonical JSON (sorted keys), its own checksum and signature left out."""
    return orjson.dumps({key: item for key, item in header.items() if key not in _UNSIGNED},
                        option=orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY)


def _header_digest(header: Mapping[str, Any]) -> str:
    """SHA-256 of the header's canonical JSON: the arrays have theirs, and this one covers
    labels, parameters and the front end. It detects damage, not tampering: whoever edits
    a file can recompute it (a signature, ``key``, detects that)."""
    return hashlib.sha256(_canonical(header)).hexdigest()


def _signature(header: Mapping[str, Any], key: bytes) -> str:
    """HMAC-SHA256 of the header's canonical JSON under ``key``. The header holds every
    array's SHA-256, so the signature covers the arrays too once they are verified."""
    if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
        raise ValueError("a signing key is bytes, at least 16 of them")
    return hmac.new(bytes(key), _canonical(header), hashlib.sha256).hexdigest()


def _member(name: str) -> zipfile.ZipInfo:
    """A member of a model file, dated 1980-01-01 as every member is: the same model is
    the same bytes, whenever it was saved (the file system keeps when). (zipfile makes
    each member readable and writable by its owner only.)"""
    return zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))


def _data_offset(handle: Any, info: zipfile.ZipInfo) -> int:
    """Byte offset in the open file where a stored member's data begins."""
    handle.seek(info.header_offset + 26)  # (zipfile has checked the local header)
    name_length, extra_length = struct.unpack("<HH", handle.read(4))
    return info.header_offset + 30 + name_length + extra_length


#: Arrays smaller than this are read into memory even when the model is memory-mapped:
#: a file rewritten in place (by ``cp``) cannot take the calibration or the labels away
#: (SIGBUS) from a serving process; the large ones are mapped.
MMAP_MIN_BYTES = 1 << 20


def _check_stream(path: Path, name: str, stream: Any, nbytes: int, dtype: np.dtype,
                  verify: bool, into: np.ndarray | None = None) -> str:
    """Read an array's bytes in pieces, holding one piece at a time: (``verify``) their
    SHA-256 (else "") and whether floats are finite; ``into``, the array of those bytes to
    fill (no second copy of it is ever held)."""
    digest = hashlib.sha256() if verify else None
    remaining = nbytes
    carry = b""
    floats = verify and dtype.kind == "f"
    out = None if into is None else into.reshape(-1).view(np.uint8)
    done = 0
    while remaining:
        piece = stream.read(min(remaining, 8 << 20))
        if not piece:
            raise ModelFileError(f"{path}: array {name!r} is truncated")
        remaining -= len(piece)
        if digest is not None:
            digest.update(piece)
        if out is not None:
            out[done:done + len(piece)] = np.frombuffer(piece, dtype=np.uint8)
            done += len(piece)
        if floats:
            piece = carry + piece
            whole = len(piece) - len(piece) % dtype.itemsize
            carry = piece[whole:]
            if not np.all(np.isfinite(np.frombuffer(piece[:whole], dtype=dtype))):
                raise ModelFileError(f"{path}: array {name!r} holds NaN or infinity")
    return "" if digest is None else digest.hexdigest()


class FileRows:
    """The rows of a mapped array read from its file (``pread``), its mapping untouched.

    A few documents read a few rows of a large model's links. Read through the mapping,
    each row brings in the page cache's folio it lies in, which this kernel maps whole
    (up to 2 MiB for a row of a few links: a line of 20 Newsgroups brought 30 of a
    file of 46 MB into memory); read from the file, only its bytes are copied. The file
    is the one mapped (a descriptor of its own, shared by the file's arrays and closed
    with the last): a model saved over the path meanwhile cannot mix in."""

    def __init__(self, file: io.FileIO, path: Path, offset: int, array: np.ndarray) -> None:
        self.file, self.path, self.offset, self.dtype = file, path, offset, array.dtype
        self.inner = array.shape[1:]
        self.row_bytes = array.dtype.itemsize * math.prod(self.inner)

    def __deepcopy__(self, memo: dict) -> FileRows:
        return self  # (read only: copies share the file)

    def take(self, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Rows ``starts[i]`` to ``starts[i] + counts[i]``, one after another."""
        size = self.row_bytes
        fd = self.file.fileno()
        data = b"".join(os.pread(fd, count * size, self.offset + start * size)
                        for start, count in zip(starts.tolist(), counts.tolist()) if count)
        if len(data) != int(counts.sum()) * size:
            raise OSError(f"{self.path}: the model file ended inside its links (changed "
                          "in place since it was loaded)")
        return np.frombuffer(data, self.dtype).reshape(-1, *self.inner)


def _reopened(handle: Any) -> io.FileIO:
    """The open file ``handle`` on a descriptor of its own, closed when the last holder
    of it is gone (quietly: no holder closes it), for :class:`FileRows`."""
    fd = os.dup(handle.fileno())
    file = io.FileIO(fd, "rb", closefd=False)
    weakref.finalize(file, os.close, fd)
    return file


def _read_array(path: Path, archive: zipfile.ZipFile, name: str, spec: Mapping[str, Any],
                mmap: bool, verify: bool, handle: Any, rows_from: io.FileIO | None,
                check_only: bool) -> np.ndarray:
    member = f"arrays/{name}.npy"
    try:
        info = archive.getinfo(member)
    except KeyError:
        raise ModelFileError(f"{path}: array {name!r} is declared in the header but missing") \
            from None
    dtype, shape, nbytes = spec.get("dtype"), spec.get("shape"), spec.get("nbytes")
    if dtype not in _DTYPES or not isinstance(shape, list) or len(shape) > _LIMIT_DIMS \
            or not all(isinstance(d, int) and d >= 0 for d in shape) \
            or not isinstance(nbytes, int):
        raise ModelFileError(f"{path}: the header's description of array {name!r} is invalid")
    expected = int(np.prod(shape, dtype=np.float64)) * np.dtype(dtype).itemsize
    if expected != nbytes or info.file_size < nbytes or info.file_size > nbytes + 4096:
        raise ModelFileError(
            f"{path}: array {name!r} should hold {nbytes} bytes as {dtype}{tuple(shape)}, but "
            f"its member has {info.file_size}"
        )
    if nbytes > path.stat().st_size:  # a directory claiming more than the file holds
        raise ModelFileError(f"{path}: array {name!r} claims {nbytes:,} bytes, more than the "
                             f"whole file ({path.stat().st_size:,})")
    if info.compress_type != zipfile.ZIP_STORED:
        raise ModelFileError(f"{path}: array {name!r} is compressed; snowpy writes them stored")
    try:
        with archive.open(member) as stream:
            version = np.lib.format.read_magic(stream)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            file_shape, fortran, file_dtype = read_header(stream)
            header_length = stream.tell()
            if file_dtype.hasobject:
                raise ModelFileError(f"{path}: array {name!r} holds Python objects; refused")
            if fortran:
                raise ModelFileError(f"{path}: array {name!r} is in Fortran order; snowpy "
                                     "writes C order")
            if tuple(file_shape) != tuple(shape) or file_dtype != np.dtype(dtype):
                raise ModelFileError(
                    f"{path}: array {name!r} is {file_dtype}{tuple(file_shape)}, the header "
                    f"says {dtype}{tuple(shape)}"
                )
            mapped = mmap and nbytes >= MMAP_MIN_BYTES
            into = None if check_only or mapped else np.empty(tuple(shape), np.dtype(dtype))
            # every byte read through the stream once, a piece at a time: checked, and
            # copied into the array (or, mapped, left in the file: a mapped array's pages
            # come into memory only as they are read)
            digest = _check_stream(path, name, stream, nbytes, np.dtype(dtype), verify, into) \
                if verify or into is not None else None
            if verify and digest != spec.get("sha256"):
                raise ModelFileError(f"{path}: array {name!r} fails its SHA-256 check "
                                     "(tampered or damaged)")
            if check_only:  # read through, keep nothing (a file just written)
                return np.empty(0, dtype=np.dtype(dtype))
            if mapped:
                # mapped from the file already open: a model saved over this path
                # meanwhile (a new file, renamed in) cannot mix into what is read;
                # copy-on-write, so training a loaded model never writes into the file
                offset = _data_offset(handle, info) + header_length
                array: np.ndarray = np.memmap(handle, dtype=np.dtype(dtype), mode="c",
                                              offset=offset, shape=tuple(shape))
                if rows_from is not None:  # (its rows also read from the file: FileRows)
                    array.rows_read = FileRows(  # type: ignore[attr-defined]
                        rows_from, path, offset, array)
            else:
                assert into is not None
                array = into
    except ModelFileError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, struct.error,
            NotImplementedError, RuntimeError) as exc:  # (zipfile: RuntimeError, "encrypted")
        raise ModelFileError(f"{path}: array {name!r} cannot be read ({exc})") from None
    return array


def _check_apart(path: Path, name: str, spec: Mapping[str, Any], verify: bool) -> np.ndarray:
    """One array of a file no one else writes (a save's own temporary file) read through
    and checked on a handle of its own: the arrays of a file checked at once."""
    with open(path, "rb") as handle, zipfile.ZipFile(handle) as archive:
        return _read_array(path, archive, name, spec, False, verify, handle, None, True)


def read_model(path: str | os.PathLike, *, mmap: bool = False, verify: bool = True,
               check_only: bool = False, key: bytes | None = None, threads: int = 1
               ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read and validate a model file: ``(header, arrays)``.

    ``verify=False`` skips the SHA-256 and finiteness checks of the arrays
    (every structural check remains): with ``mmap=True`` loading then reads
    only the header, whatever the size of the weights. ``check_only`` reads
    every array through, a piece at a time, for every check, and keeps none
    (the arrays returned are empty): a saved file is checked in little memory.
    ``key``: the file must carry a signature made with it (``write_model(..., key=)``);
    the arrays are then always verified. ``threads`` (with ``check_only``, for a file no
    one else writes: a save's own): the arrays checked that many at once, each on a
    handle of its own.

    Raises
    ------
    ModelFileError
        Naming the check that failed: not a snowpy model, newer format,
        missing or malformed array, checksum, non-finite values.
    """
    source = Path(path)
    if key is not None:
        verify = True
    if not source.is_file():
        raise ModelFileError(f"{source}: no such model file")
    try:
        with open(source, "rb") as handle, zipfile.ZipFile(handle) as archive:
            try:
                info = archive.getinfo("header.json")
            except KeyError:
                raise ModelFileError(f"{source}: not a snowpy model (no header)") from None
            if info.file_size > 64 << 20:
                raise ModelFileError(f"{source}: header of {info.file_size} bytes is implausible")
            try:
                header = orjson.loads(archive.read(info))
            except orjson.JSONDecodeError as exc:
                raise ModelFileError(f"{source}: the header is not valid JSON ({exc})") from None
            if not isinstance(header, dict) or header.get("magic") != MAGIC:
                raise ModelFileError(f"{source}: not a snowpy model (wrong magic)")
            version = header.get("format_version")
            if not isinstance(version, int) or isinstance(version, bool) or version < 1:
                raise ModelFileError(f"{source}: the header has no valid format version "
                                     f"({version!r})")
            digest = header.pop("header_sha256", None)
            signature = header.pop("header_hmac", None)
            if digest is None and version >= 2:  # format 1 predates the header checksum
                raise ModelFileError(f"{source}: the header's checksum (header_sha256) is "
                                     f"missing; every format-{version} file has one")
            if digest is not None and digest != _header_digest(header):
                raise ModelFileError(f"{source}: the header was altered after saving (its "
                                     "checksum does not match): labels, parameters or the "
                                     "front end cannot be trusted")
            if key is not None and (not isinstance(signature, str) or not hmac.compare_digest(
                    signature, _signature(header, key))):
                raise ModelFileError(f"{source}: " + ("not signed" if signature is None else
                                     "its signature does not match the key given") +
                                     ": refused (the file may have been altered)")
            header = _decode_floats(header)
            if version > FORMAT_VERSION:
                raise ModelFileError(
                    f"{source}: written by snowpy {header.get('snowpy_version', '?')} in model "
                    f"format {version}; this snowpy ({__version__}) reads up to format "
                    f"{FORMAT_VERSION}: upgrade snowpy"
                )
            manifest = header.get("arrays")
            if not isinstance(manifest, dict):
                raise ModelFileError(f"{source}: the header lists no arrays")
            listed = [(name, spec) for name, spec in manifest.items()
                      if isinstance(spec, dict)]
            if threads > 1 and check_only:
                checked = on_threads(lambda item: _check_apart(source, item[0], item[1],
                                                               verify), listed, threads)
                arrays = dict(zip((name for name, _ in listed), checked))
            else:
                rows_from = _reopened(handle) if mmap and hasattr(os, "pread") else None
                arrays = {name: _read_array(source, archive, name, spec, mmap, verify, handle,
                                            rows_from, check_only) for name, spec in listed}
            if len(arrays) != len(manifest):
                raise ModelFileError(f"{source}: the header's array list is malformed")
    except ModelFileError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, KeyError,
            ValueError, NotImplementedError, RuntimeError, struct.error) as exc:
        raise ModelFileError(f"{source}: not a readable snowpy model ({type(exc).__name__}: "
                             f"{exc})") from None
    return header, arrays
