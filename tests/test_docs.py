"""The documentation keeps up with the code."""

from __future__ import annotations

import re
from pathlib import Path

from snowpy.plugins import list_rules

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_every_builtin_rule_and_parameter_is_documented():
    text = (DOCS / "rules.md").read_text()
    for name, provided in list_rules().items():
        if not provided.plugin.startswith("snowpy."):
            continue
        assert f"`{name}`" in text, name
        for param in provided.record.params:
            assert f"`{param.name}`" in text, (name, param.name)


def test_every_hook_is_documented():
    import inspect

    from snowpy import hookspecs

    hooks = [name for name, value in inspect.getmembers(hookspecs, inspect.isfunction)
             if name.startswith("snowpy_")]
    assert hooks == sorted(["snowpy_corpora", "snowpy_corpus_formats",
                            "snowpy_feature_extractors", "snowpy_update_rules"])
    text = (DOCS / "reference" / "hooks.md").read_text()
    for hook in hooks:
        assert f"### `{hook}`" in text, f"{hook} is not documented in docs/reference/hooks.md"
        assert getattr(hookspecs, hook).__doc__.strip(), f"{hook} has no docstring"


def test_the_abi_the_docs_give_is_the_one_loaded():
    """The update step's C signature, as the plugin tutorial and the reference give it,
    is the one a capsule must be named by (snowpy.rules.UPDATE_SIGNATURE)."""
    import re

    from snowpy.rules import UPDATE_SIGNATURE

    for page in (DOCS / "plugins.md", DOCS / "reference" / "hooks.md"):
        block = re.search(r"```c\n(int update\(.*?\);)\n```", page.read_text(), re.S)[1]
        arguments = re.sub(r"\s+", " ", block[len("int update("):-2]).split(", ")
        types = [re.sub(r"\s*\w+$", "", argument).replace("*", " *").replace("  ", " ")
                 for argument in arguments]
        assert f"int ({', '.join(types)})" == UPDATE_SIGNATURE, page.name


def test_readme_commands_match_ci():
    readme = (DOCS.parent / "README.md").read_text()
    ci = (DOCS.parent / ".ci" / "run").read_text()
    # (the plugins in a second pip call: pip 23 cannot resolve their dependency on
    # snowpy-learn against the editable ".[test]" named with its extra in the same call)
    # (--upgrade --upgrade-strategy eager: the newest versions the constraints allow, so
    # that CI meets a new release of a dependency before a user's fresh install does)
    test_command = ('python -m pip install --upgrade --upgrade-strategy eager -e ".[test]" '
                    '&& python -m pip install '
                    './plugins/snowpy-arow ./plugins/snowpy-kernel-perceptron && '
                    'python -m pytest')
    assert test_command in readme and test_command in ci
    assert "snowpy train corpora/demo/train.tsv -o demo.snowpy" in readme


def test_the_site_builds_strictly(tmp_path):
    """``mkdocs build --strict``: a broken link, a page left out of the navigation, a
    reference to a name the API does not have or a docstring the API reference cannot
    read fails the suite (and so CI, which runs the suite). The command-line reference
    is written from the typer app at build time (docs/hooks.py)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]), "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                            str(tmp_path / "site")], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    from snowpy.cli import COMMANDS

    for command in COMMANDS:  # (a section each, its heading the command)
        assert re.search(rf"<h\d[^>]*><code>snowpy {command}</code>", cli), command
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert "snowpy.SnowClassifier" in api and "partial_fit" in api


def test_every_parity_row_names_a_test_that_exists():
    """docs/snow-parity.md: every row names its test file (``tests/...py``, a path in the
    source tree), and every test it names (``path::name``, or a bare ``test_...`` after a
    path in the same cell) is defined."""
    import re

    root = DOCS.parent
    rows = [line for line in (DOCS / "snow-parity.md").read_text().splitlines()
            if line.startswith("|") and not line.startswith("|---")]
    checked = 0
    for line in rows:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0] == "SNoW / LBJava":
            continue
        last = cells[-1]
        links = re.findall(r"`((?:tests|plugins)/[^`:]+\.py)(?:::\w+)?`", last)
        assert links, f"a parity row names no test file: {line[:80]}"
        for target in links:
            assert (root / target).is_file(), f"{target} does not exist"
        current = None
        for path, name in re.findall(r"`(?:((?:tests|plugins)/[^`:]+\.py)::)?(test_\w+)`", last):
            current = path or current
            assert current is not None, f"{name} names no file: {line[:80]}"
            source = (root / current).read_text()
            assert re.search(rf"^def {name}\(", source, re.M), f"{current}::{name} is missing"
            checked += 1
    assert checked >= 40


def test_figures_the_docs_give_of_behaviour_are_what_it_does(tmp_path):
    # the demo's accuracy at the defaults, as docs/corpora.md gives it (it once said 0.93), and
    # when a rule's parameter is refused (docs/plugins.md said the constructor refuses
    # r=-1; scikit-learn's estimators, and ours, check at fit)
    import json
    import re

    import numpy as np
    import scipy.sparse as sp
    from typer.testing import CliRunner

    import snowpy
    from snowpy.cli import app
    from snowpy.exceptions import ConfigurationError

    runner = CliRunner()
    demo = ROOT / "corpora" / "demo"
    model = tmp_path / "m.snowpy"
    assert runner.invoke(app, ["train", str(demo / "train.tsv"), "-o", str(model)]).exit_code == 0
    report = json.loads(runner.invoke(app, ["evaluate", str(model), str(demo / "test.tsv"),
                                            "--json"]).stdout)
    corpora = (ROOT / "docs" / "corpora.md").read_text()
    said = re.search(r"the default model scores (\d\.\d+)", corpora)[1]
    assert f"{report['accuracy']:.4f}" == said
    plugins = (ROOT / "docs" / "plugins.md").read_text()
    message = re.search(r'`Network\("arow", r=-1\)\.fit\(X, y\)` raises `([^`]+)`', plugins)[1]
    network = snowpy.Network("arow", r=-1)  # (built: the parameters are checked at fit)
    import pytest

    with pytest.raises(ConfigurationError, match=re.escape(message)):
        network.fit(sp.csr_matrix(np.eye(2)), ["a", "b"])


def test_every_promise_row_names_a_test_that_exists():
    """docs/testing.md's map of promises: every row names the tests that hold it
    (``path::name``, or a bare ``test_...`` after a path in the same cell), each defined
    in its file, or says that it has no test yet; at least 40 rows."""
    import re

    root = DOCS.parent
    text = (DOCS / "testing.md").read_text()
    section = text.split("## The map of promises", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines()
            if line.startswith("|") and not line.startswith("|---")][1:]  # (the heading)
    assert len(rows) >= 40, len(rows)
    named = 0
    for line in rows:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert len(cells) == 3 and cells[0] and cells[1], line[:80]
        last = cells[-1]
        found = re.findall(r"`(?:((?:tests|plugins)/[^`:]+\.py)::)?(test_\w+)`", last)
        if not found:
            assert last.startswith("no test yet"), f"a promise names no test: {line[:80]}"
            continue
        current = None
        for path, name in found:
            current = path or current
            assert current is not None, f"{name} names no file: {line[:80]}"
            source = (root / current).read_text()
            assert re.search(rf"^def {name}\(", source, re.M), f"{current}::{name} is missing"
            named += 1
    assert named >= 40


def test_the_benchmark_tables_are_their_results_files():
    """Each marked table of docs/benchmarks.md is what benchmarks/report.py writes from
    benchmarks/results/ (a rerun rewrites both; neither can drift alone), and says on
    which machine, when and by which command it was measured."""
    import importlib
    import re
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        report = importlib.import_module("report")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    page = (DOCS / "benchmarks.md").read_text()
    for marker, write in report.SECTIONS.items():
        found = re.search(rf"<!-- {marker} -->\n(.*?)\n<!-- /{marker} -->", page, re.S)
        assert found, f"docs/benchmarks.md has no <!-- {marker} --> section"
        assert found[1] == write(), f"docs/benchmarks.md's {marker} section is not its results' " \
            "(python benchmarks/report.py)"
    assert page.count("Measured on ") >= 5


#: What a reader cannot follow: course notes by number ("seed 000 section 6.2"), issue
#: and session numbers of the project's own history, paths outside the repository.
POINTER = re.compile(r"[Ss]eeds? 0\d\d|[Ss]eed notes|[Ii]ssues? \d+|[Ss]ession \d+|\.\./shared")


def test_nothing_points_where_a_reader_cannot_follow():
    files = [ROOT / "README.md", *DOCS.rglob("*.md"),
             *(path for suffix in ("py", "pyx", "pxd", "pyi")
               for path in (ROOT / "snowpy").rglob(f"*.{suffix}"))]
    found = []
    for path in files:
        name = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if POINTER.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
