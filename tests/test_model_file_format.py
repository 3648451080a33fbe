"""The model file format itself (``snowpy.model_file``), written and read directly with
small arrays: the zip's members byte for byte, each refusal's whole line, the paths that
``snowpy.load`` takes only on big or damaged files. (``tests/test_model_files.py`` tests
the models' files; these tests came from mutation testing, docs/testing.md.)"""

from __future__ import annotations

import io
import os
import signal
import struct
import zipfile

import numpy as np
import orjson
import pytest

from snowpy import model_file
from snowpy.exceptions import ModelFileError
from snowpy.model_file import read_model, write_model

ARRAYS = {"w": np.arange(6, dtype=np.float32).reshape(2, 3),
          "ids": np.array([3, 1, 2], dtype=np.int64)}
KEY = b"0123456789abcdef"  # (16 bytes: the shortest key taken)


def _members(path):
    with zipfile.ZipFile(path) as archive:
        return {info.filename: (info, archive.read(info)) for info in archive.infolist()}


def _rewrite(path, out, change):
    """A copy of a model file with its members changed by ``change(members)`` (a dict of
    name -> bytes, in order), the zip written afresh as snowpy writes it."""
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    change(members)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out


def _with_header(path, out, edit, *, key=None):
    """A copy whose header is edited by ``edit(header)``, its checksum (and signature,
    with ``key``) recomputed as a forger holding the key would."""
    def change(members):
        header = orjson.loads(members["header.json"])
        header.pop("header_sha256"), header.pop("header_hmac", None)
        edit(header)
        header["header_sha256"] = model_file._header_digest(header)
        if key is not None:
            header["header_hmac"] = model_file._signature(header, key)
        members["header.json"] = orjson.dumps(header)
    return _rewrite(path, out, change)


def test_a_model_file_is_a_stored_zip_of_fixed_dates_and_modes(tmp_path, monkeypatch):
    """Into a folder made on the way: a temporary file beside the target, named for the
    model and the process (what a later save recognises as its own or a killed one's),
    read through once a piece at a time before it is renamed; members stored, dated
    1980-01-01 and readable by the owner only; the header indented JSON; the arrays in
    zip64 members (their size is not known before they are streamed)."""
    renamed, checked = [], []
    real_replace, real_read = os.replace, model_file._read_array

    def replace(source, target):
        renamed.append((source, target))
        real_replace(source, target)

    def read_array(*args):
        checked.append(args[-1])  # check_only
        return real_read(*args)

    monkeypatch.setattr(model_file.os, "replace", replace)
    monkeypatch.setattr(model_file, "_read_array", read_array)
    target = tmp_path / "new" / "folder" / "m.snowpy"
    assert write_model(target, {"kind": "network"}, ARRAYS) == target
    (source, _), = renamed
    source = os.path.basename(source)
    assert os.path.dirname(renamed[0][0]) == str(target.parent)
    assert source.startswith(f".m.snowpy.{os.getpid()}.") and source.endswith(".tmp")
    assert checked == [True, True]
    members = _members(target)
    assert list(members) == ["header.json", "arrays/w.npy", "arrays/ids.npy"]
    raw = target.read_bytes()
    for name, (info, data) in members.items():
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        assert info.external_attr == 0o600 << 16
        assert info.compress_type == zipfile.ZIP_STORED
        at = info.header_offset
        name_length, extra_length = struct.unpack("<HH", raw[at + 26:at + 30])
        extra = raw[at + 30 + name_length:at + 30 + name_length + extra_length]
        if name != "header.json":  # (the zip64 extra field's id, in the local header)
            assert extra[:2] == b"\x01\x00"
            assert np.array_equal(np.load(io.BytesIO(data)), ARRAYS[name[7:-4]])
    header = members["header.json"][1]
    assert header.startswith(b'{\n  "magic": "snowpy-model",\n  "format_version": 4,')
    manifest = orjson.loads(header)["arrays"]
    assert manifest["w"] == {"dtype": "float32", "shape": [2, 3], "nbytes": 24,
                             "sha256": model_file._sha256(ARRAYS["w"])}
    import hashlib
    assert manifest["ids"]["sha256"] == hashlib.sha256(ARRAYS["ids"].tobytes()).hexdigest()
    with pytest.raises(TypeError) as caught:
        write_model(tmp_path / "c.snowpy", {}, {"c": np.zeros(2, dtype=np.complex64)})
    assert str(caught.value) == "array 'c': dtype complex64 cannot be stored"


def test_infinities_and_nan_in_a_header_are_stored_and_read_back():
    """JSON has none: ``{"$float": "inf"}``, ``"-inf"``, ``"nan"``, in objects and lists."""
    header = {"a": float("inf"), "b": [float("-inf"), 1.5], "c": {"d": float("nan")}}
    encoded = model_file._encode_floats(header)
    assert encoded == {"a": {"$float": "inf"}, "b": [{"$float": "-inf"}, 1.5],
                       "c": {"d": {"$float": "nan"}}}
    decoded = model_file._decode_floats(orjson.loads(orjson.dumps(encoded)))
    assert decoded["a"] == float("inf") and decoded["b"] == [float("-inf"), 1.5]
    assert np.isnan(decoded["c"]["d"])


def test_a_signing_key_is_bytes_at_least_16_of_them(tmp_path):
    write_model(tmp_path / "m.snowpy", {}, ARRAYS, key=KEY)
    for bad in (KEY[:15], KEY.decode()):
        with pytest.raises(ValueError) as caught:
            write_model(tmp_path / "m.snowpy", {}, ARRAYS, key=bad)
        assert str(caught.value) == "a signing key is bytes, at least 16 of them"


def test_stale_files_are_looked_at_one_by_one(tmp_path):
    """A kept temporary file (a save in progress) does not stop the others being looked
    at: every killed save's file goes, whatever order the folder lists them in."""
    import subprocess
    import sys

    gone = [subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True).stdout.strip() for _ in range(2)]
    import time

    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]) as sleeper:
        kept = [f".m.snowpy.{pid}.{i}.tmp" for pid in (os.getpid(), sleeper.pid)
                for i in range(3)] + [f".m.snowpy.young{i}.tmp" for i in range(3)]
        stale = [f".m.snowpy.{pid}.{i}.tmp" for pid in gone for i in range(10)]
        for name in kept + stale:
            (tmp_path / name).write_bytes(b"x")
        for name in kept[-3:]:
            os.utime(tmp_path / name, (time.time() - 3600,) * 2)
        write_model(tmp_path / "m.snowpy", {}, ARRAYS)
        sleeper.kill()
    assert sorted(p.name for p in tmp_path.glob("*.tmp")) == sorted(kept)


def test_arrays_are_read_whole_past_a_piece_and_without_verifying(tmp_path):
    """An array of more than one 8 MiB piece reads back whole; ``verify=False`` reads
    without checksums (and without the finiteness check: a NaN is the caller's)."""
    big = np.random.default_rng(0).random(2_200_000)  # 17.6 MB of float64: three pieces
    path = write_model(tmp_path / "m.snowpy", {}, {"big": big, **ARRAYS})
    for verify in (True, False):
        _, arrays = read_model(path, verify=verify)
        assert np.array_equal(arrays["big"], big) and np.array_equal(arrays["w"], ARRAYS["w"])
        assert not isinstance(arrays["big"], np.memmap)  # (mapped only when asked)
    _, mapped = read_model(path, mmap=True)
    assert isinstance(mapped["big"], np.memmap) and not isinstance(mapped["w"], np.memmap)
    assert np.array_equal(mapped["big"], big)
    nan = np.array([1.0, np.nan, 3.0])
    into = np.empty(3)
    digest = model_file._check_stream(tmp_path, "x", io.BytesIO(nan.tobytes()), 24,
                                      np.dtype(np.float64), False, into)
    assert digest == "" and np.array_equal(into, nan, equal_nan=True)
    with pytest.raises(ModelFileError) as caught:
        model_file._check_stream(tmp_path, "x", io.BytesIO(nan.tobytes()), 24,
                                 np.dtype(np.float64), True, None)
    assert str(caught.value) == f"{tmp_path}: array 'x' holds NaN or infinity"


def _refusal(path, **options):
    with pytest.raises(ModelFileError) as caught:
        read_model(path, **options)
    return str(caught.value)


def test_each_refusal_is_one_whole_line(tmp_path):
    good = write_model(tmp_path / "good.snowpy", {"snowpy_version": "9.9"}, ARRAYS)
    out = tmp_path / "bad.snowpy"

    def header_as(data):
        return _rewrite(good, out, lambda members: members.update({"header.json": data}))

    not_json = b"{not json"
    try:
        orjson.loads(not_json)
    except orjson.JSONDecodeError as exc:
        why = str(exc)
    assert _refusal(header_as(not_json)) == f"{out}: the header is not valid JSON ({why})"
    text = orjson.loads(_members(good)["header.json"][1])
    for version in (2, 3):
        edited = {**text, "format_version": version}
        del edited["header_sha256"]
        assert _refusal(header_as(orjson.dumps(edited))) == (
            f"{out}: the header's checksum (header_sha256) is missing; every "
            f"format-{version} file has one")
    altered = {**text, "snowpy_version": "1.0"}
    assert _refusal(header_as(orjson.dumps(altered))) == (
        f"{out}: the header was altered after saving (its checksum does not match): "
        "labels, parameters or the front end cannot be trusted")
    newer = _with_header(good, out, lambda h: h.update(format_version=99))
    assert _refusal(newer) == (
        f"{out}: written by snowpy 9.9 in model format 99; this snowpy "
        f"({model_file.__version__}) reads up to format 4: upgrade snowpy")
    _with_header(good, out, lambda h: (h.update(format_version=99), h.pop("snowpy_version")))
    assert f"{out}: written by snowpy ? in model format 99;" in _refusal(out)
    _with_header(good, out, lambda h: h.pop("arrays"))
    assert _refusal(out) == f"{out}: the header lists no arrays"
    _with_header(good, out, lambda h: h["arrays"].update(w=[1]))
    assert _refusal(out) == f"{out}: the header's array list is malformed"
    signed = write_model(tmp_path / "signed.snowpy", {}, ARRAYS, key=KEY)
    assert _refusal(signed, key=KEY[::-1]) == (
        f"{signed}: its signature does not match the key given: refused (the file may have "
        "been altered)")
    out.write_bytes(b"not a zip at all")
    assert _refusal(out) == (f"{out}: not a readable snowpy model (BadZipFile: File is not a "
                             "zip file)")


def test_a_key_makes_the_arrays_verified(tmp_path):
    """Given a key, the arrays are checked against their SHA-256 even with
    ``verify=False``: the signature covers them only through those checksums."""
    signed = write_model(tmp_path / "signed.snowpy", {}, ARRAYS, key=KEY)
    out = _with_header(signed, tmp_path / "forged.snowpy",
                       lambda h: h["arrays"]["w"].update(sha256="0" * 64), key=KEY)
    read_model(out, verify=False)  # (without a key: not verified, as asked)
    assert _refusal(out, key=KEY, verify=False) == (
        f"{out}: array 'w' fails its SHA-256 check (tampered or damaged)")


def _with_size(path, out, member, size):
    """A copy whose central directory says ``member`` holds ``size`` bytes."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        offset = archive.getinfo(member).header_offset
    at = 0
    while True:
        at = data.index(b"PK\x01\x02", at)
        if struct.unpack("<I", data[at + 42:at + 46])[0] == offset:
            break
        at += 4
    data[at + 24:at + 28] = struct.pack("<I", size)
    out.write_bytes(bytes(data))
    return out


def test_a_header_of_more_than_64_mib_is_refused_unread(tmp_path):
    good = write_model(tmp_path / "good.snowpy", {}, ARRAYS)
    out = tmp_path / "bad.snowpy"
    _with_size(good, out, "header.json", (64 << 20) + 1)
    assert _refusal(out) == f"{out}: header of {(64 << 20) + 1} bytes is implausible"
    _with_size(good, out, "header.json", 64 << 20)  # (taken: zip reads what is there)
    assert read_model(out)[0]["arrays"]["w"]["shape"] == [2, 3]


@pytest.mark.parametrize("edit", [
    {"shape": [1, 1, 1, 1, 1]}, {"shape": [2, -3]}, {"shape": [2, 3.0]}, {"shape": "2,3"},
    {"nbytes": 24.0}, {"dtype": "float16"}])
def test_an_invalid_array_description_is_refused(tmp_path, edit):
    good = write_model(tmp_path / "good.snowpy", {}, ARRAYS)
    out = _with_header(good, tmp_path / "bad.snowpy", lambda h: h["arrays"]["w"].update(edit))
    assert _refusal(out) == f"{out}: the header's description of array 'w' is invalid"


def test_an_array_of_another_size_or_shape_than_declared_is_refused(tmp_path):
    """Four dimensions are taken; the size the shape implies, and the member's size,
    must agree with the declared bytes; the file's own shape must be the declared one."""
    four = np.zeros((1, 2, 1, 3), dtype=np.float32)
    good = write_model(tmp_path / "good.snowpy", {}, {**ARRAYS, "four": four})
    assert read_model(good)[1]["four"].shape == (1, 2, 1, 3)
    out = tmp_path / "bad.snowpy"
    _with_header(good, out, lambda h: h["arrays"]["w"].update(nbytes=20))
    member = _members(good)["arrays/w.npy"][0].file_size
    assert _refusal(out) == (f"{out}: array 'w' should hold 20 bytes as float32(2, 3), but "
                             f"its member has {member}")
    _with_header(good, out, lambda h: h["arrays"]["w"].update(shape=[3, 2]))
    assert _refusal(out) == f"{out}: array 'w' is float32(2, 3), the header says float32(3, 2)"
    wide = np.zeros(2000, dtype=np.float32)  # 8,000 bytes declared as 8: 4,096 at most over
    small = write_model(tmp_path / "small.snowpy", {}, {"w": wide})
    _with_header(small, out, lambda h: h["arrays"]["w"].update(shape=[2], nbytes=8))
    assert _refusal(out).startswith(f"{out}: array 'w' should hold 8 bytes as float32(2,), ")


def test_arrays_stored_otherwise_than_snowpy_writes_them_are_refused(tmp_path):
    """A compressed member, an array of Python objects, one in Fortran order, a NaN, a
    size claimed past the whole file: each refused in one line naming the array."""
    good = write_model(tmp_path / "good.snowpy", {}, ARRAYS)
    out = tmp_path / "bad.snowpy"
    with zipfile.ZipFile(good) as archive, zipfile.ZipFile(out, "w") as copy:
        for info in archive.infolist():
            copy.writestr(info.filename, archive.read(info), compress_type=(
                zipfile.ZIP_DEFLATED if info.filename == "arrays/ids.npy" else
                zipfile.ZIP_STORED))
    assert _refusal(out) == f"{out}: array 'ids' is compressed; snowpy writes them stored"

    def member(array, **options):
        buffer = io.BytesIO()
        np.save(buffer, array, **options)
        return buffer.getvalue()

    for array, why in [
            (np.array([1.0, "x"], dtype=object).repeat(3)[:6].reshape(2, 3),
             "holds Python objects; refused"),
            (np.asfortranarray(ARRAYS["w"]), "is in Fortran order; snowpy writes C order"),
            (np.array([[0, 1, 2], [3, np.nan, 5]], dtype=np.float32), "holds NaN or infinity")]:
        _rewrite(good, out, lambda members: members.update(
            {"arrays/w.npy": member(array, allow_pickle=True)}))
        assert _refusal(out) == f"{out}: array 'w' {why}"
    claimed = 1 << 20  # (the member says as much, the file is a few hundred bytes)
    _with_header(good, out, lambda h: h["arrays"]["w"].update(shape=[claimed // 4, 1],
                                                              nbytes=claimed))
    _with_size(out, out, "arrays/w.npy", claimed + 128)
    assert _refusal(out) == (f"{out}: array 'w' claims {claimed:,} bytes, more than the whole "
                             f"file ({out.stat().st_size:,})")


def test_a_save_is_synced_renamed_over_its_target_and_its_folder_synced(tmp_path,
                                                                       monkeypatch):
    """The order that makes a save durable (docs/model-files.md, "Atomic saves"): the
    temporary file's bytes synced, then renamed over the target (a model already there
    replaced, never removed first), then the folder synced, so that the rename itself
    survives a power cut."""
    import stat

    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        mode = os.fstat(fd).st_mode
        events.append(("fsync folder", os.fstat(fd).st_ino) if stat.S_ISDIR(mode)
                      else ("fsync file", None))
        real_fsync(fd)

    def replace(source, target):
        events.append(("replace", os.path.basename(target)))
        real_replace(source, target)

    target = tmp_path / "m.snowpy"
    target.write_bytes(b"the previous model")
    monkeypatch.setattr(model_file.os, "fsync", fsync)
    monkeypatch.setattr(model_file.os, "replace", replace)
    write_model(target, {"kind": "network"}, ARRAYS)
    assert events == [("fsync file", None), ("replace", "m.snowpy"),
                      ("fsync folder", os.stat(tmp_path).st_ino)]
    assert read_model(target)[1]["w"].tolist() == ARRAYS["w"].tolist()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.snowpy"]


@pytest.mark.skipif(not hasattr(os, "pread"), reason="rows read from the file need pread")
def test_a_mapped_arrays_rows_are_read_from_its_file_and_a_file_cut_short_is_named(
        tmp_path, monkeypatch):
    """A mapped array's rows are read from the file it was loaded from (``FileRows``):
    those asked for, one run after another; a file cut short in place since (``cp`` over
    it) is an ``OSError`` naming the file, in one line."""
    monkeypatch.setattr(model_file, "MMAP_MIN_BYTES", 1)  # (every array mapped)
    w = np.arange(40, dtype=np.float32).reshape(10, 4)
    path = write_model(tmp_path / "m.snowpy", {}, {"w": w, "ids": ARRAYS["ids"]})
    _, arrays = read_model(path, mmap=True)
    rows = arrays["w"].rows_read
    assert rows.path == path and rows.row_bytes == 16
    taken = rows.take(np.array([8, 0, 5]), np.array([2, 0, 1]))
    assert taken.dtype == np.float32 and taken.tolist() == w[[8, 9, 5]].tolist()
    os.truncate(path, rows.offset + 9 * 16)  # (the last row gone; the mapping left unread)
    with pytest.raises(OSError) as caught:
        rows.take(np.array([8]), np.array([2]))
    assert str(caught.value) == (f"{path}: the model file ended inside its links (changed "
                                 "in place since it was loaded)")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_a_mapped_files_descriptors_are_closed_with_its_last_array(tmp_path, monkeypatch):
    """A mapped load holds the file open while an array of it is alive (its rows are
    read from it), and closes it once the last is gone."""
    import gc

    monkeypatch.setattr(model_file, "MMAP_MIN_BYTES", 1)
    path = write_model(tmp_path / "m.snowpy", {}, ARRAYS)
    gc.collect()
    before = len(os.listdir("/proc/self/fd"))
    _, arrays = read_model(path, mmap=True)
    assert len(os.listdir("/proc/self/fd")) > before
    del arrays
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before


def test_an_array_is_mapped_from_the_size_the_threshold_names(tmp_path):
    """``mmap=True`` maps an array of :data:`MMAP_MIN_BYTES` or more and reads a smaller
    one into memory."""
    limit = model_file.MMAP_MIN_BYTES
    path = write_model(tmp_path / "m.snowpy", {}, {
        "at": np.ones(limit // 8), "below": np.ones(limit // 8 - 1)})
    _, arrays = read_model(path, mmap=True)
    assert isinstance(arrays["at"], np.memmap) and not isinstance(arrays["below"], np.memmap)
    assert arrays["at"].sum() == limit // 8 and arrays["below"].sum() == limit // 8 - 1


def test_a_checked_file_gives_back_empty_arrays_and_a_read_on_threads_whole_ones(tmp_path):
    """``check_only`` reads every array through and keeps none (each comes back empty,
    of its type), on one thread or several; without it, ``threads`` changes nothing of
    what is read."""
    path = write_model(tmp_path / "m.snowpy", {}, ARRAYS)
    for threads in (1, 2):
        _, checked = read_model(path, check_only=True, threads=threads)
        assert {name: (a.shape, a.dtype) for name, a in checked.items()} == {
            name: ((0,), a.dtype) for name, a in ARRAYS.items()}
        _, read = read_model(path, threads=threads)
        for name, array in ARRAYS.items():
            assert read[name].tolist() == array.tolist() and read[name].dtype == array.dtype


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="a POSIX signal")
def test_a_save_looks_at_another_saves_process_without_signalling_it(tmp_path):
    """The temporary file of a save in progress in another process is kept, and that
    process is only asked whether it is alive (signal 0), never sent a signal."""
    import subprocess
    import sys

    child = ("import signal, sys\n"
             "signal.signal(signal.SIGHUP, lambda *a: print('signalled', flush=True))\n"
             "print('ready', flush=True)\n"
             "sys.stdin.readline()\n"
             "print('done', flush=True)\n")
    with subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as saving:
        assert saving.stdout.readline() == "ready\n"
        kept = tmp_path / f".m.snowpy.{saving.pid}.abc.tmp"
        kept.write_bytes(b"half a model")
        write_model(tmp_path / "m.snowpy", {}, ARRAYS)
        out, _ = saving.communicate("go\n")
    assert out == "done\n" and kept.exists()
