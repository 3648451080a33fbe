"""Helpers shared by the benchmarks: where the corpora are, timing, the machine."""

from __future__ import annotations

import os
import platform
import statistics
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def corpora_dir(explicit: str | None = None) -> Path:
    """The shared corpora: an explicit path, $SNOWPY_DATA, or ../shared/corpora."""
    for candidate in (explicit, os.environ.get("SNOWPY_DATA"), ROOT.parent / "shared" / "corpora"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    raise SystemExit("corpora not found: pass --corpora DIR or set SNOWPY_DATA")


def load_20newsgroups(corpora: Path, split: str) -> tuple[list[str], list[str]]:
    """20 Newsgroups bydate, one split, straight from the archive (latin-1)."""
    prefix = f"20newsgroups/20news-bydate-{split}/"
    texts, labels = [], []
    with tarfile.open(corpora / "20newsgroups.tar.gz") as archive:
        for member in archive:
            if member.isfile() and member.name.startswith(prefix):
                group = member.name[len(prefix):].split("/")[0]
                texts.append(archive.extractfile(member).read().decode("latin-1"))
                labels.append(group)
    return texts, labels


def best_of(repeat: int, function: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of ``repeat`` runs (seconds) and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def median_of(repeat: int, function: Callable[[], Any]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def machine() -> str:
    """One line describing this machine."""
    try:
        model = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor() or "unknown CPU"
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"
