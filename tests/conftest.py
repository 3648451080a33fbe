"""Shared fixtures: where the real corpora are, and small helpers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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
