"""Every ``python`` block of the README and of ``docs/*.md`` runs as written (issue 32):
a snippet cannot break again unseen. The prose around a snippet names its data
(``texts``, ``labels``, a ``stream``...); they are given here, from the demo corpus.
What a snippet shows it prints (``print(x)  # True``) is what it prints, as doctest
checks a docstring's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from snowpy import corpora

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [(path, number, block) for path in FILES for number, block in
          enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), re.S))]


#: ``print(...)  # what it prints``: a line whose shown output is checked.
SHOWN = re.compile(r"^(\s*)print\((.*)\)\s+#\s+(.+?)\s*$", re.M)


def checked(block: str) -> str:
    """The block with each shown print made a check of what it prints."""
    return SHOWN.sub(lambda m: f"{m[1]}__shown({m[2]}, shown={m[3]!r})", block)


def shown(*values, shown: str) -> None:
    printed = " ".join(map(str, values))
    assert printed == shown, f"the docs show {shown!r}; it prints {printed!r}"


def test_a_shown_output_is_checked():
    namespace = {"__shown": shown}
    exec(checked("x = 2\nprint(x + 1)  # 3\n"), namespace)
    with pytest.raises(AssertionError, match="the docs show '4'; it prints '3'"):
        exec(checked("print(1 + 2)  # 4\n"), namespace)


def data(block: str) -> dict:
    """The names the prose gives a snippet: the demo corpus as texts and labels, more of
    them with a new label, a stream of (text, label) pairs (River's (x, y) records when
    the snippet runs River), spaCy's (text, cats) pairs."""
    documents = list(corpora.read(ROOT / "corpora" / "demo" / "train.tsv"))
    texts = [d.text for d in documents]
    labels = [d.label for d in documents]
    classes = sorted(set(labels))
    stream = [({"body": t}, y) for t, y in zip(texts, labels)] \
        if "progressive_val_score" in block else list(zip(texts, labels))
    return {"texts": texts, "labels": labels, "more_texts": texts[:20] + ["a new kind"],
            "more_labels": labels[:20] + ["other"], "stream": stream,
            "data": [(t, {c: c == y for c in classes}) for t, y in zip(texts, labels)]}


@pytest.mark.parametrize("path", sorted({p for p, _, _ in BLOCKS}), ids=lambda p: p.name)
def test_the_snippets_run_as_written(path, tmp_path, monkeypatch):
    """A document's blocks run in reading order in one namespace, as a reader types
    them (a later block uses what an earlier one made)."""
    blocks = [(number, block) for p, number, block in BLOCKS if p == path]
    whole = "".join(block for _, block in blocks)
    if "spacy" in whole:
        import spacy  # noqa: F401  (a test extra: missing, the test fails)
    if "river" in whole:
        import river  # noqa: F401  (a test extra: missing, the test fails)
    monkeypatch.chdir(tmp_path)  # (snippets save files where they stand)
    (tmp_path / "corpora").symlink_to(ROOT / "corpora")  # (and read the demo as a reader does)
    namespace = data(whole)
    namespace["__shown"] = shown
    for number, block in blocks:
        if "progressive_val_score" in block:
            namespace["stream"] = data(block)["stream"]
        elif "stream" in block:
            namespace["stream"] = data("")["stream"]
        exec(compile(checked(block), f"{path.name}[{number}]", "exec"), namespace)


def test_every_file_with_snippets_is_read():
    assert len(BLOCKS) >= 14 and {p.name for p, _, _ in BLOCKS} >= {"README.md", "online.md"}
    assert sum(len(SHOWN.findall(block)) for _, _, block in BLOCKS) >= 3
