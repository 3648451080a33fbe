"""Directory-per-class corpora: ``<label>/<file>``, optionally under split folders.

A document is a file in a *class* folder: a leaf folder (one without
subfolders), or a sibling of one, whose subfolders' files belong to it
(:class:`_ClassFolders`); the folder's name is its label. So
``20news-bydate-train/alt.atheism/49960``
is a document of ``alt.atheism`` in the ``train`` split, while
``README`` files next to the class folders, or ``enron1/Summary.txt`` beside
``enron1/ham/``, are not documents. A split matches a folder named after it,
or ending in ``-<split>`` or ``_<split>`` (``20news-bydate-train``).
Works on folders, ``.tar.gz`` and ``.zip`` alike (:mod:`snowpy.corpora.sources`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterator
from typing import Any

from snowpy.corpora.documents import Document, Problems
from snowpy.corpora.sources import Files, decode

__all__ = ["SPLIT_NAMES", "read_directory", "split_matches", "splits_of"]


def split_matches(folder: str, split: str) -> bool:
    """Whether a folder name designates ``split``.

    >>> split_matches("20news-bydate-train", "train"), split_matches("test", "train")
    (True, False)
    """
    return folder == split or folder.endswith(f"-{split}") or folder.endswith(f"_{split}")


#: Folder names (or their ``-name``/``_name`` endings) that designate a split.
SPLIT_NAMES = ("train", "test", "dev", "validation", "valid")


def splits_of(source: str | os.PathLike) -> list[str]:
    """The splits of a directory corpus: the :data:`SPLIT_NAMES` its class folders lie
    under (``20news-bydate-train/alt.atheism/...``: ``train``), in that order.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for split in ("train", "test"):
    ...     (root / split / "ham").mkdir(parents=True)
    ...     _ = (root / split / "ham" / "1.txt").write_text("hello")
    >>> splits_of(root)
    ['train', 'test']
    """
    found: set[str] = set()
    for name in Files(source).names:
        for part in name.split("/")[:-2]:  # the folders above a document's class folder
            found.update(split for split in SPLIT_NAMES if split_matches(part, split))
    return [split for split in SPLIT_NAMES if split in found]


#: Files that describe a corpus rather than belong to it: not read, and not worth a note.
_METADATA = re.compile(r"(?i)^(readme|license|licence|copying|notice|changes|provenance|(sha\d*|md5)sums"
                       r"|\.ds_store|thumbs\.db)(\.\w+)?$|.*\.(md|rst)$|^\._")


def read_directory(
    source: str | os.PathLike,
    *,
    split: str | None = None,
    labels: Collection[str] | None = None,
    label_of: Callable[[str, str], Any] | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
    problems: Problems | None = None,
) -> Iterator[Document]:
    """Stream the documents of a directory-per-class corpus.

    Parameters
    ----------
    source : path
        A folder, a ``.tar.gz``/``.tgz``/``.tar`` or a ``.zip``.
    split : str, optional
        Keep documents under a folder designating this split.
    labels : collection of str, optional
        Keep only these class folders (others, like IMDB's ``unsup``, are
        not read).
    label_of : callable, optional
        ``label_of(folder, file_name) -> label`` when the label is not the
        folder name (Ling-Spam names spam files ``spmsg*``).
    encoding, errors :
        How file bytes become text: ``errors`` is ``"strict"`` (a
        :class:`CorpusError` naming the file and byte), ``"replace"`` or
        ``"skip"`` (counted in ``problems``).
    """
    problems = problems or Problems()
    files = Files(source)
    if files.links:
        problems.note(f"{source}: {files.links:,} symbolic or hard link member(s) not read "
                      "(a link in an archive may point anywhere)")
    folders = {name.rpartition("/")[0] for name in files.names}
    inner = {folder.rpartition("/")[0] for folder in folders}
    ancestors = set()
    for folder in inner:
        while folder:
            ancestors.add(folder)
            folder = folder.rpartition("/")[0]
    leaves = {folder for folder in folders if folder and folder not in ancestors}
    class_of = _ClassFolders(leaves)
    outside: list[str] = []
    for name, where, content in files:
        within, _, base = name.rpartition("/")
        found = class_of(within)
        if found is None:
            if not _METADATA.match(base):
                outside.append(where)
            continue
        parts = found.split("/")
        label = parts[-1]
        if split is not None and not any(split_matches(part, split) for part in parts[:-1]):
            continue
        if labels is not None and label not in labels:
            continue
        text = decode(content, encoding, errors, where)
        if text is None:
            problems.report(where, f"not valid {encoding}; skipped")
            continue
        yield Document(text, label_of(label, base) if label_of else label, where)
    if class_of.nested:
        first = min(class_of.nested)
        problems.note(f"{len(class_of.nested):,} class folder(s) hold subfolders, whose "
                      f"files belong to the class (first: {first})")
    if outside:  # files beside the class folders, or above them: not documents of a class
        problems.note(f"{len(outside):,} file(s) not in a class folder were not read "
                      f"(first: {outside[0]}); a class is a folder of documents")


class _ClassFolders:
    """The class folder of a file's folder. The class folders are the folders beside a
    leaf folder (one without subfolders): the leaves themselves, and a sibling of a leaf
    that has subfolders, whose files, however deep, then belong to it (``a/1.txt``,
    ``a/sub/x.txt`` and ``b/2.txt``: the classes ``a`` and ``b``, as Keras's
    ``text_dataset_from_directory`` reads them). A folder named for a split (``train``)
    that is not a leaf holds classes rather than being one. Files above every class
    folder (``enron1/Summary.txt`` beside ``enron1/ham/``) belong to none."""

    def __init__(self, leaves: set[str]) -> None:
        self.leaves = leaves
        self.parents = {leaf.rpartition("/")[0] for leaf in leaves}
        self.nested: set[str] = set()  # class folders found to hold subfolders
        self._known: dict[str, str | None] = {}

    def __call__(self, folder: str) -> str | None:
        if folder not in self._known:
            self._known[folder] = self._find(folder)
        return self._known[folder]

    def _find(self, folder: str) -> str | None:
        if not folder:
            return None
        parts = folder.split("/")
        for depth in range(1, len(parts) + 1):
            candidate = "/".join(parts[:depth])
            if "/".join(parts[:depth - 1]) not in self.parents:
                continue
            if candidate in self.leaves:
                return candidate
            if not any(split_matches(parts[depth - 1], split) for split in SPLIT_NAMES):
                self.nested.add(candidate)
                return candidate
        return None
