"""Token patterns (text/patterns.py): a pattern from a model file or a user cannot hang
featurising; the built-in patterns run unbudgeted."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import snowpy
from snowpy.cli import app
from snowpy.exceptions import ConfigurationError, ModelFileError, SnowpyError

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args, input: str | None = None, **kwargs):
    return runner.invoke(app, [str(a) for a in args], input=input, **kwargs)


#: The issue's patterns, each with a line that makes Python's engine backtrack.
HANGING = [
    (r"(a|aa)+$", "a" * 40 + "!"), (r"(aa|a)+$", "a" * 40 + "!"),
    (r"(a?a?)+$", "a" * 40 + "!"), (r"(?:a{1,2}){1,50}$", "a" * 40 + "!"),
    (r"(?=(a+a+)+b)", "a" * 40), (r"(.*,){12}X", "," * 3000),
    (r"a*a*a*a*a*b", "a" * 3000), (r"\s*\s*\s*\s*\s*\s*x", " " * 3000),
]


def with_pattern(forge, model: Path, out: Path, pattern: str) -> Path:
    """A copy of ``model`` whose front end has ``pattern`` (its checksum recomputed)."""
    def edit(header):
        header["featurizer"]["token_pattern"] = pattern
    return forge(model, out, edit, checksum=True)


@pytest.mark.parametrize("pattern,line", HANGING)
def test_a_model_files_token_pattern_cannot_hang_predict(forge, quick_model, tmp_path,
                                                         monkeypatch, pattern, line):
    """Each pattern is refused when the file loads or stops at its time budget (here
    0.2 s) with one line naming the document: never a hang, never a traceback."""
    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", "0.2")
    hostile = with_pattern(forge, quick_model, tmp_path / "hostile.snowpy", pattern)
    result = run("predict", hostile, input=line + "\n")
    assert result.exit_code == 1, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert ("budget" in message and "document 0" in message) or "token_pattern" in message


@pytest.mark.parametrize("pattern", [r"a{4294967295}", r"(", 7])
def test_an_invalid_pattern_in_a_file_is_one_line(forge, quick_model, tmp_path, pattern):
    hostile = with_pattern(forge, quick_model, tmp_path / "bad.snowpy", pattern)
    for command in ("predict", "inspect"):
        result = run(command, hostile, input="hello\n")
        assert result.exit_code == 1 and "Traceback" not in result.stderr
        assert "token_pattern" in result.stderr or "front-end" in result.stderr


def test_a_pattern_from_a_file_runs_in_another_thread_only_when_trusted(forge, quick_model,
                                                                        tmp_path):
    import threading

    path = with_pattern(forge, quick_model, tmp_path / "custom.snowpy", r"[a-z]+")
    outcome = {}

    def predict(trust):
        try:
            outcome[trust] = snowpy.load(path, trust_pattern=trust).predict(["hello"]).tolist()
        except SnowpyError as exc:
            outcome[trust] = str(exc)

    for trust in (False, True):
        worker = threading.Thread(target=predict, args=(trust,))
        worker.start()
        worker.join()
    assert "trust_pattern=True" in outcome[False]
    assert isinstance(outcome[True], list)
    assert snowpy.load(path).predict(["hello"]).tolist() == outcome[True]  # main thread


def test_the_built_in_patterns_run_unbudgeted_and_others_budgeted(monkeypatch):
    from snowpy.text.patterns import BUILT_IN_PATTERNS, TokenPattern

    assert TokenPattern(r"(?u)\b\w\w+\b").budgeted is False
    assert r"(?u)\b\w\w+\b" in BUILT_IN_PATTERNS
    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", "0.05")
    slow = TokenPattern(r"[a-z]+\d")  # quadratic under findall on a run of letters
    assert slow.budgeted
    with pytest.raises(ConfigurationError, match="document 7 .200,000 characters"):
        slow.tokens(["a" * 200_000], lowercase=False, first_doc=7)
    assert slow.tokens(["ab1 cd2"], lowercase=False) == ["ab1 cd2"]


@given(st.recursive(
    st.sampled_from(["a", "a?", "a*", "a+", r"\w", r"\s*", ".", "(a|aa)", "[ab]"]),
    lambda inner: st.tuples(inner, inner, st.sampled_from(["*", "+", "{1,9}", "?", ""]))
    .map(lambda t: f"(?:{t[0]}{t[1]}){t[2]}"),
    max_leaves=4))
@settings(max_examples=40, deadline=None)
def test_generated_nested_quantifiers_never_hang(pattern):
    """Any nesting of quantifiers: refused when compiled, or tokens within the budget, or
    a one-line budget error; nothing else."""
    import os

    from snowpy.text.patterns import TokenPattern

    os.environ["SNOWPY_PATTERN_BUDGET"] = "0.05"
    try:
        TokenPattern(pattern + "$").tokens(["a" * 30 + "!", " " * 500], lowercase=False)
    except ConfigurationError as exc:
        assert "\n" not in str(exc)
    finally:
        del os.environ["SNOWPY_PATTERN_BUDGET"]


def test_a_token_pattern_that_backtracks_exponentially_is_refused(forge, tmp_path):
    # 15.7: `(a+)+$` from a model file made predict on a 41-byte line run for hours

    for pattern in (r"(a+)+$", r"(?:\w+\s?)*"):
        with pytest.raises(ConfigurationError, match="repeats a repetition"):
            snowpy.Featurizer(token_pattern=pattern).transform(["a" * 40 + "!"])
    # alternatives whose first characters overlap: literals, classes, categories
    for pattern in (r"(a|a)*", r"(xa|xa)+", r"(\w|\d\d)+$", r"(\w|[0-9]x?)+$",
                    r"([a-z]|[aeiou]x)+", r"([^a]|bb)+"):
        with pytest.raises(ConfigurationError, match="repeats overlapping alternatives"):
            snowpy.Featurizer(token_pattern=pattern).transform(["1" * 40 + "!"])
    # single-character alternatives become one class in Python's compiler: no backtracking;
    # disjoint first characters cannot backtrack either
    for pattern in (r"(\w|\d)+", r"(ab|cd)+", r"(ab|ac)+", r"(a|b\d)+", r"(\s|\S\S)*"):
        snowpy.Featurizer(token_pattern=pattern).transform(["1" * 40 + "!"])
    safe = snowpy.Featurizer(token_pattern=r"(?u)\b\w\w+\b")  # scikit-learn's default
    assert safe.transform(["a" * 40 + "!"]).nnz == 1
    # a model file carrying the pattern is refused on load, in one line
    clf = snowpy.SnowClassifier(calibrate=None, token_pattern=r"\w+").fit(
        ["a b", "c d", "e f", "g h"], ["x", "y", "x", "y"])
    path = with_pattern(forge, clf.save(tmp_path / "m.snowpy"), tmp_path / "forged.snowpy",
                        r"(a+)+$")
    with pytest.raises(ModelFileError, match="repeats a repetition"):
        snowpy.load(path)
