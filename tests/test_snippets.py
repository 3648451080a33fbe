"""Every code block of the README and of the site (``docs/``) runs as written: a snippet
cannot break again unseen.

- ``python`` blocks run in the suite. The prose around a snippet names its data
  (``texts``, ``labels``, a ``stream``...); they are given here, from the demo corpus.
  What a snippet shows it prints (``print(x)  # True``) is what it prints, as doctest
  checks a docstring's.
- ``bash`` blocks run too, in a temporary folder whose ``corpora/`` is the repository's
  (so the demo corpus is where a reader in the source folder finds it); a command's
  trailing comment is (part of) what it prints.
- A block meant as an illustration says so in its title (``title="Illustration: needs a
  Dask cluster"``, shown above the block on the site): it is only parsed (``compile``,
  ``bash -n``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from snowpy import corpora

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: a fenced block: its language, its fence's other words (a title), its text
FENCE = re.compile(r"^[ \t]*```(\w+)([^\n]*)\n(.*?)^[ \t]*```[ \t]*$", re.S | re.M)
ILLUSTRATION = re.compile(r'title="Illustration\b')


def fenced(language: str) -> list[tuple[Path, int, str, bool]]:
    """Every block in ``language``: its file, number, text and whether it is an
    illustration only (indented blocks, in a list, lose their indentation)."""
    found = []
    for path in FILES:
        for number, match in enumerate(m for m in FENCE.finditer(path.read_text())
                                       if m[1] == language):
            found.append((path, number, textwrap.dedent(match[3]),
                          bool(ILLUSTRATION.search(match[2]))))
    return found


BLOCKS = [(path, number, block) for path, number, block, illustration in fenced("python")
          if not illustration]
ILLUSTRATIONS = [(path, number, block) for path, number, block, illustration
                 in fenced("python") if illustration]
COMMANDS = fenced("bash")


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


def test_the_illustrations_parse():
    for path, number, block in ILLUSTRATIONS:
        compile(block, f"{path.name}[{number}]", "exec")


def test_an_illustration_is_marked_by_its_title():
    text = ('```python title="Illustration: needs a cluster"\nfit(\n```\n'
            '```python\nx = 1\n```\n')
    blocks = [(m[1], bool(ILLUSTRATION.search(m[2]))) for m in FENCE.finditer(text)]
    assert blocks == [("python", True), ("python", False)]


#: a command's trailing comment: what it prints (a part of it)
PRINTS = re.compile(r"^(.*?)\s+#\s+(.+?)\s*$")


def _commands(block: str) -> list[tuple[str, str | None]]:
    """A block's commands (continued lines joined), each with what it says it prints."""
    commands = []
    for line in block.replace("\\\n", " ").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        said = PRINTS.match(line)
        commands.append((said[1], said[2]) if said else (line, None))
    return commands


@pytest.mark.parametrize("path", sorted({p for p, _, _, _ in COMMANDS}),
                         ids=lambda p: p.name)
def test_the_command_lines_run_as_written(path, tmp_path):
    """A document's command-line blocks run in reading order in one folder, as a reader
    types them in snowpy's source folder; an illustration's are parsed only."""
    (tmp_path / "corpora").symlink_to(ROOT / "corpora")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    for _, number, block, illustration in [c for c in COMMANDS if c[0] == path]:
        parsed = subprocess.run(["bash", "-n", "-c", block], capture_output=True, text=True)
        assert parsed.returncode == 0, f"{path.name}[{number}]: {parsed.stderr}"
        if illustration:
            continue
        for command, said in _commands(block):
            ran = subprocess.run(["bash", "-eo", "pipefail", "-c", command], cwd=tmp_path,
                                 env=env, capture_output=True, text=True, timeout=120)
            where = f"{path.name}[{number}] {command}"
            assert ran.returncode == 0, f"{where}: {ran.stderr[-2000:]}"
            if said is not None:
                assert said in ran.stdout + ran.stderr, f"{where}: the docs show {said!r}"


def test_every_command_line_block_is_run_or_marked():
    run = [(p.name, n) for p, n, _, illustration in COMMANDS if not illustration]
    assert ("getting-started.md", 1) in run, run
