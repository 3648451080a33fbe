"""snowpy's own demo corpus: 400 training and 120 test support tickets in 5 classes.

The files live in ``corpora/demo/`` of the source tree; an installed snowpy has them in
``<prefix>/share/snowpy/demo/`` (the wheel's data files), so the demo works after a plain
``pip install snowpy`` as well as from a checkout.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

from snowpy.corpora.documents import CorpusError

__all__ = ["demo_path"]

SPLITS = ("train", "test")


def _candidates() -> list[Path]:
    here = Path(__file__).resolve().parents[2] / "corpora" / "demo"  # a checkout
    installed = [Path(sysconfig.get_path("data", scheme)) / "share" / "snowpy" / "demo"
                 for scheme in dict.fromkeys((sysconfig.get_default_scheme(),
                                              sysconfig.get_preferred_scheme("user")))]
    return [here, *installed]


def demo_path(split: str = "train") -> Path:
    """The path of a split of the demo corpus (a ``label<TAB>text`` file).

    >>> demo_path("test").name
    'test.tsv'
    """
    if split not in SPLITS:
        raise CorpusError(f"the demo corpus has the splits {', '.join(SPLITS)}, not {split!r}")
    for folder in _candidates():
        if (folder / f"{split}.tsv").is_file():
            return folder / f"{split}.tsv"
    raise CorpusError("the demo corpus is not installed (looked in "
                      + ", ".join(map(str, _candidates())) + "); reinstall snowpy")
