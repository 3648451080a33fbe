"""What a training will need in memory, estimated before the corpus is read.

``--char-ngrams 1-32 --ngrams 1-16 --bits 31`` once peaked at 5.4 GB with no word
of warning: every character of the corpus begins 32 character n-grams. The estimate
is an upper bound on the features of the corpus, from its size on disk and the front
end's n-gram orders, at about 12 bytes a feature while training (a 4-byte id, its
hash and the link it reaches). Beyond the memory the machine has free, training is
refused in one line naming the options; beyond half of it, a warning.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from snowpy.exceptions import ConfigurationError

__all__ = ["available_bytes", "corpus_bytes", "estimate_bytes", "check_memory"]

#: Bytes per active feature while training (an id, its hash, its share of the links).
BYTES_PER_FEATURE = 12
#: Characters per word, separator included, in English text.
CHARS_PER_WORD = 6
#: What a compressed archive holds per byte, roughly (text compresses 3 to 5 times).
ARCHIVE_RATIO = 4


def available_bytes() -> int | None:
    """The memory the machine has free (``MemAvailable``), or None when unknown."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def corpus_bytes(corpus: str) -> int | None:
    """The text a corpus holds, about: a file, a folder, a glob of files, or a registered
    corpus's file (None: standard input, or a corpus not found)."""
    import glob

    if glob.has_magic(corpus) and not Path(corpus).exists():
        sizes = [corpus_bytes(name) for name in glob.glob(corpus)]
        return sum(size for size in sizes if size) if sizes else None
    path = Path(corpus)
    if not path.exists() and corpus != "-" and "/" not in corpus and "." not in path.name:
        try:  # a registered corpus, where it is on disk (never downloaded for this)
            from snowpy.corpora.registry import locate
            from snowpy.plugins import get_corpus

            path = locate(get_corpus(corpus), download=False, verify=False)
        except Exception:  # (an unknown name is refused later, with its own message)
            return None
    try:
        if path.is_file():
            size = path.stat().st_size
            compressed = path.name.lower().endswith((".zip", ".gz", ".tgz", ".bz2", ".xz"))
            return size * ARCHIVE_RATIO if compressed else size
        if path.is_dir():
            return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    except OSError:
        return None
    return None


def _orders(value: Any) -> int:
    if not value:
        return 0
    low, high = (value, value) if isinstance(value, int) else value
    return max(int(high) - int(low) + 1, 0)


def estimate_bytes(text_bytes: int, featurizer: Any) -> int:
    """An upper bound of the training's working memory for ``text_bytes`` of text."""
    words = text_bytes / CHARS_PER_WORD
    features = words * _orders(featurizer.ngrams) + text_bytes * _orders(
        featurizer.char_ngrams)
    features += words * (int(featurizer.skipgrams or 0) + _orders(featurizer.affixes))
    return int(features * BYTES_PER_FEATURE)


def check_memory(corpus: str, featurizer: Any) -> str | None:
    """Refuse a training that cannot fit; a warning (returned) when it takes over half
    the free memory; None otherwise or when the sizes are unknown."""
    text = corpus_bytes(corpus)
    free = available_bytes()
    if text is None or free is None or os.environ.get("SNOWPY_NO_MEMORY_CHECK") == "1":
        return None
    need = estimate_bytes(text, featurizer)
    shown = (f"--ngrams {featurizer.ngrams}, --char-ngrams {featurizer.char_ngrams} over "
             f"{_amount(text)} of text need up to {_amount(need)}")
    if need > free:
        raise ConfigurationError(f"{shown}; this machine has {_amount(free)} free: use "
                                 "fewer n-gram orders (SNOWPY_NO_MEMORY_CHECK=1 tries anyway)")
    if need > free / 2:
        return f"warning: {shown}, more than half the {_amount(free)} free"
    return None


def _amount(size: float) -> str:
    return f"{size / 1e9:,.1f} GB" if size >= 1e9 else f"{size / 1e6:,.1f} MB"
