"""Shared fixtures: where the real corpora are, and small helpers."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the commands the tests start: a suite started in the background of
    a shell (``.ci/run &``) finds SIGINT ignored, and every process it starts would
    ignore it too, so the tests that press Ctrl-C on a training would wait for ever."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def corpora_dir() -> Path | None:
    """The shared corpora: $SNOWPY_DATA, else ../shared/corpora beside the checkout."""
    candidates = [os.environ.get("SNOWPY_DATA"), ROOT.parent / "shared" / "corpora"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "20newsgroups.tar.gz").exists():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def corpora() -> Path:
    found = corpora_dir()
    if found is None:
        pytest.skip("shared corpora not found (set SNOWPY_DATA)")
    return found


@pytest.fixture(scope="session")
def newsgroups(corpora):
    """20 Newsgroups bydate: (train texts, train labels, test texts, test labels)."""
    import tarfile

    splits = {"train": ([], []), "test": ([], [])}
    with tarfile.open(corpora / "20newsgroups.tar.gz") as archive:
        for member in archive:
            parts = member.name.split("/")
            if member.isfile() and len(parts) == 4 and parts[1].startswith("20news-bydate-"):
                texts, labels = splits[parts[1].rsplit("-", 1)[1]]
                texts.append(archive.extractfile(member).read().decode("latin-1"))
                labels.append(parts[2])
    return splits["train"] + splits["test"]


DEMO_TRAIN = ROOT / "corpora" / "demo" / "train.tsv"


def _train(path: Path, *options: str, corpus: Path = DEMO_TRAIN) -> Path:
    from typer.testing import CliRunner

    from snowpy.cli import app

    result = CliRunner().invoke(app, ["train", str(corpus), "-o", str(path), *options])
    assert result.exit_code == 0, result.output
    return path


def _demo_rows() -> list[tuple[str, str]]:
    rows = [line.split("\t", 1) for line in DEMO_TRAIN.read_text().splitlines()
            if line.strip()]
    return [(label, text) for label, text in rows]


@pytest.fixture(scope="session")
def demo_rows() -> tuple[tuple[str, str], ...]:
    """The demo corpus's training documents, as (label, text)."""
    return tuple(_demo_rows())


@pytest.fixture(scope="session")
def quick_model(tmp_path_factory) -> Path:
    """The demo corpus's model of 2 epochs, uncalibrated: read it, do not change it
    (``fresh_model`` is a copy a test may change)."""
    return _train(tmp_path_factory.mktemp("quick") / "quick.snowpy", "--epochs", "2",
                  "--calibrate", "none")


@pytest.fixture(scope="session")
def multilabel_model(tmp_path_factory) -> tuple[Path, Path]:
    """A calibrated multi-label model of the demo corpus and its corpus: each document
    keeps its topic, billing and account documents are also 'money', feedback documents
    carry no label."""
    import json

    root = tmp_path_factory.mktemp("multi")
    corpus = root / "multi.jsonl"
    lines = []
    for label, text in _demo_rows():
        labels = [] if label == "feedback" else [label] + (
            ["money"] if label in ("billing", "account") else [])
        lines.append(json.dumps({"text": text, "label": labels}))
    corpus.write_text("\n".join(lines) + "\n")
    return _train(root / "multi.snowpy", corpus=corpus), corpus


@pytest.fixture
def fresh_model(quick_model, tmp_path) -> Path:
    """A copy of ``quick_model`` of this test's own."""
    import shutil

    return Path(shutil.copy(quick_model, tmp_path / "good.snowpy"))


def _forge(model: Path, out: Path, edit, *, checksum: bool = False, members_edit=None
           ) -> Path:
    """A copy of ``model`` with its members edited by ``members_edit(members)`` first, then
    its header by ``edit`` (and, with ``checksum``, the header checksum recomputed, as a
    forger would)."""
    import zipfile

    import orjson

    from snowpy.model_file import _header_digest

    with zipfile.ZipFile(model) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    if members_edit is not None:
        members_edit(members)
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


@pytest.fixture(scope="session")
def forge():
    """``forge(model, out, edit, checksum=False, members_edit=None)``: a copy of a model
    file with its header edited by ``edit(header)``, as a hostile editor would."""
    return _forge
