"""Hostile inputs (issue 33): each test builds the input an attacker or an unlucky user
would give and checks the one-line outcome."""

from __future__ import annotations

import zipfile
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

import snowpy
from snowpy.cli import app
from snowpy.exceptions import ModelFileError
from snowpy.model_file import _header_digest

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "good.snowpy"
    assert run("train", TRAIN, "-o", path, "--epochs", "2", "--calibrate", "none").exit_code == 0
    return path


def rewrite(model: Path, out: Path, edit, *, checksum: bool = False) -> Path:
    """A copy of ``model`` with its header edited by ``edit`` (and, with ``checksum``,
    the header checksum recomputed, as a forger would)."""
    with zipfile.ZipFile(model) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    header = orjson.loads(members["header.json"])
    edit(header)
    if checksum:
        header.pop("header_sha256", None)
        header["header_sha256"] = _header_digest(header)
    members["header.json"] = orjson.dumps(header)
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out


def swap_labels(header: dict) -> None:
    labels = header["network"]["labels"]
    labels[0], labels[1] = labels[1], labels[0]


# 33.2: deleting header_sha256 switched the header check off ------------------------------

def test_a_header_without_its_checksum_is_refused(model, tmp_path):
    def strip(header):
        swap_labels(header)
        del header["header_sha256"]

    edited = rewrite(model, tmp_path / "stripped.snowpy", strip)
    with pytest.raises(ModelFileError, match="checksum .header_sha256. is missing"):
        snowpy.load(edited)
    result = run("predict", edited, input="hello\n")
    assert result.exit_code == 1 and "header_sha256" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("version", [-1, 0, True, "3", None])
def test_an_invalid_format_version_is_refused(model, tmp_path, version):
    edited = rewrite(model, tmp_path / "v.snowpy",
                     lambda header: header.update(format_version=version), checksum=True)
    with pytest.raises(ModelFileError, match="format version"):
        snowpy.load(edited)


def test_a_signed_model_loads_only_with_its_key(model, tmp_path):
    key, other = b"k" * 32, b"o" * 32
    classifier = snowpy.load(model)
    signed = classifier.save(tmp_path / "signed.snowpy", key=key)
    assert snowpy.load(signed, key=key).predict(["hello"]).tolist() == \
        classifier.predict(["hello"]).tolist()
    assert snowpy.load(signed) is not None  # no key given: checked for damage only
    with pytest.raises(ModelFileError, match="does not match the key"):
        snowpy.load(signed, key=other)
    with pytest.raises(ModelFileError, match="not signed"):
        snowpy.load(model, key=key)
    # a forger who edits the labels and recomputes the checksum passes the checksum,
    # not the signature
    forged = rewrite(signed, tmp_path / "forged.snowpy", swap_labels, checksum=True)
    assert snowpy.load(forged).classes_.tolist() != classifier.classes_.tolist()
    with pytest.raises(ModelFileError, match="does not match the key"):
        snowpy.load(forged, key=key)
    with pytest.raises(ValueError, match="at least 16"):
        classifier.save(tmp_path / "short.snowpy", key=b"short")


def test_the_command_line_signs_and_checks_with_the_key_file(tmp_path, monkeypatch):
    key_file, other = tmp_path / "key", tmp_path / "other"
    key_file.write_bytes(b"s" * 32)
    other.write_bytes(b"t" * 32)
    out = tmp_path / "m.snowpy"
    monkeypatch.setenv("SNOWPY_MODEL_KEY_FILE", str(key_file))
    assert run("train", TRAIN, "-o", out, "--epochs", "1", "--calibrate", "none").exit_code == 0
    assert run("predict", out, input="hello\n").exit_code == 0
    monkeypatch.setenv("SNOWPY_MODEL_KEY_FILE", str(other))
    result = run("predict", out, input="hello\n")
    assert result.exit_code == 1 and "does not match the key" in result.stderr
    monkeypatch.setenv("SNOWPY_MODEL_KEY_FILE", str(tmp_path / "absent"))
    result = run("predict", out, input="hello\n")
    assert result.exit_code == 1 and "SNOWPY_MODEL_KEY_FILE" in result.stderr
