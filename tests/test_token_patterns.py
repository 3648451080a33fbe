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
from snowpy.exceptions import ConfigurationError

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args, input: str | None = None, **kwargs):
    return runner.invoke(app, [str(a) for a in args], input=input, **kwargs)


#: The issue's patterns, each with a line that makes Python's engine backtrack, and
#: whether it makes regex's too (regex finds the others' tokens at once).
HANGING = [
    (r"(a|aa)+$", "a" * 40 + "!", True), (r"(aa|a)+$", "a" * 40 + "!", True),
    (r"(a?a?)+$", "a" * 40 + "!", False), (r"(?:a{1,2}){1,50}$", "a" * 40 + "!", True),
    (r"(?=(a+a+)+b)", "a" * 40, False), (r"(.*,){12}X", "," * 3000, True),
    (r"a*a*a*a*a*b", "a" * 3000, False), (r"\s*\s*\s*\s*\s*\s*x", " " * 3000, False),
]


def with_pattern(forge, model: Path, out: Path, pattern: str) -> Path:
    """A copy of ``model`` whose front end has ``pattern`` (its checksum recomputed)."""
    def edit(header):
        header["featurizer"]["token_pattern"] = pattern
    return forge(model, out, edit, checksum=True)


@pytest.mark.parametrize("pattern,line,stops", HANGING)
def test_a_model_files_token_pattern_cannot_hang_predict(forge, quick_model, tmp_path,
                                                         monkeypatch, pattern, line, stops):
    """Each pattern loads and either stops at its time budget (here 0.2 s) with one line
    naming the document, or predicts: never a hang, never a traceback."""
    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", "0.2")
    hostile = with_pattern(forge, quick_model, tmp_path / "hostile.snowpy", pattern)
    result = run("predict", hostile, input=line + "\n")
    if not stops:
        assert result.exit_code == 0 and len(result.stdout.splitlines()) == 1, result.output
        return
    assert result.exit_code == 1, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert f"ran past its budget of 0.2 s on document 0 ({len(line):,} characters)" in message


@pytest.mark.parametrize("pattern", [r"a{4294967295}", r"(", 7])
def test_an_invalid_pattern_in_a_file_is_one_line(forge, quick_model, tmp_path, pattern):
    hostile = with_pattern(forge, quick_model, tmp_path / "bad.snowpy", pattern)
    for command in ("predict", "inspect"):
        result = run(command, hostile, input="hello\n")
        assert result.exit_code == 1 and "Traceback" not in result.stderr
        assert "token_pattern" in result.stderr or "front-end" in result.stderr


def test_a_pattern_from_a_file_runs_under_its_budget_in_any_thread(forge, quick_model,
                                                                   tmp_path, monkeypatch):
    """A custom pattern read from a model file loads and predicts in a thread pool's worker
    as in the main thread; a hostile line there stops at the budget with one line naming
    the document (the budget is regex's timeout, not a signal only the main thread gets)."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", "0.2")
    path = with_pattern(forge, quick_model, tmp_path / "custom.snowpy", r"(?:a|aa)+$|[a-z]+")
    texts = ["you won a free prize", "lunch at noon?"]
    expected = snowpy.load(path).predict(texts).tolist()
    with ThreadPoolExecutor(max_workers=2) as pool:
        assert pool.submit(lambda: snowpy.load(path).predict(texts).tolist()).result() \
            == expected
        hostile = pool.submit(lambda: snowpy.load(path).predict(["a" * 40 + "!"]))
        with pytest.raises(ConfigurationError) as caught:
            hostile.result(timeout=60)
    message = str(caught.value)
    assert "\n" not in message
    assert "ran past its budget of 0.2 s on document 0 (41 characters)" in message


def test_a_host_programs_alarm_handler_stays_and_fires(quick_model, forge, tmp_path):
    """Tokenising with a custom pattern neither replaces a program's SIGALRM handler nor
    cancels its timer (a process-wide timer signal was the budget before)."""
    import signal
    import time

    path = with_pattern(forge, quick_model, tmp_path / "custom.snowpy", r"[a-z]+")
    fired = []

    def handler(signum, frame):
        fired.append(signum)

    previous = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        snowpy.load(path).predict(["you won a free prize"] * 50)
        assert signal.getsignal(signal.SIGALRM) is handler
        assert fired or signal.getitimer(signal.ITIMER_REAL)[0] > 0  # (still running)
        for _ in range(200):
            if fired:
                break
            time.sleep(0.01)
        assert fired == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_the_library_sets_no_signal_outside_the_command_line():
    """The budget needs no signal: only the command line (its Ctrl-C) touches them."""
    users = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "snowpy").rglob("*.py")
                   if "import signal" in path.read_text(encoding="utf-8"))
    assert users and all(user.startswith("snowpy/cli/") for user in users), users


def test_the_built_in_patterns_run_on_re_and_others_budgeted_on_regex(monkeypatch):
    import re

    import regex

    from snowpy.text.patterns import BUILT_IN_PATTERNS, TokenPattern

    built_in = TokenPattern(r"(?u)\b\w\w+\b")
    assert built_in.budgeted is False and isinstance(built_in.compiled, re.Pattern)
    assert r"(?u)\b\w\w+\b" in BUILT_IN_PATTERNS
    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", "0.05")
    slow = TokenPattern(r"[a-z]+\d")  # quadratic under findall on a run of letters
    assert slow.budgeted and isinstance(slow.compiled, regex.Pattern)
    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", "0.5")
    with pytest.raises(ConfigurationError) as caught:
        slow.tokens(["ab1", "a" * 200_000], lowercase=False, first_doc=7)
    assert str(caught.value) == (
        "token_pattern '[a-z]+\\\\d' ran past its budget of 0.7 s on document 8 (200,000 "
        "characters): it backtracks; write it so that it cannot (docs/reliability.md) or use "
        "the built-in tokeniser")
    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", "soon")  # (not a number: the default, 1 s)
    with pytest.raises(ConfigurationError, match="budget of 1.2 s on document 0"):
        slow.tokens(["a" * 200_000], lowercase=False)
    assert slow.tokens(["ab1 cd2"], lowercase=False) == ["ab1 cd2"]
    for pattern in (r"[A-Za-z]+", r"\w+"):  # budgeted, then built in: both lowercase alike
        words = TokenPattern(pattern)
        assert words.tokens(["Hello, World"], lowercase=False) == ["Hello World"]
        assert words.tokens(["Hello, World"], lowercase=True) == ["hello world"]


@pytest.mark.parametrize("pattern,message", [
    (7, "token_pattern must be a string, got int"),
    ("(", "token_pattern is not a valid regular expression: missing ), unterminated "
          "subpattern at position 0"),
    ("(a)(b)", "token_pattern '(a)(b)' has 2 capturing groups; a token is the whole match "
               "or its one group: write the others (?:...)"),
])
def test_a_pattern_that_cannot_run_is_refused_in_one_line(pattern, message):
    from snowpy.text.patterns import TokenPattern

    with pytest.raises(ConfigurationError) as caught:
        TokenPattern(pattern)
    assert str(caught.value) == message
    assert TokenPattern("(a)b").tokens(["ab ab"], lowercase=False) == ["a a"]  # one group


@given(st.recursive(
    st.sampled_from(["a", "a?", "a*", "a+", r"\w", r"\s*", ".", "(?:a|aa)", "[ab]"]),
    lambda inner: st.tuples(inner, inner, st.sampled_from(["*", "+", "{1,9}", "?", ""]))
    .map(lambda t: f"(?:{t[0]}{t[1]}){t[2]}"),
    max_leaves=4))
@settings(max_examples=40, deadline=None, derandomize=True)
def test_generated_nested_quantifiers_never_hang(pattern):
    """Any nesting of quantifiers: tokens within the budget, or a one-line budget error;
    nothing else (not compared with re's: re can take hours on these)."""
    import os

    from snowpy.text.patterns import TokenPattern

    os.environ["SNOWPY_PATTERN_BUDGET"] = "0.05"
    texts = ["a" * 30 + "!", " " * 500]
    try:
        found = TokenPattern(pattern + "$").tokens(texts, lowercase=False)
    except ConfigurationError as exc:
        assert "\n" not in str(exc) and "ran past its budget" in str(exc)
    else:
        assert len(found) == 2 and all(set(tokens) <= set("a !") for tokens in found)
    finally:
        del os.environ["SNOWPY_PATTERN_BUDGET"]


def test_a_pattern_that_backtracks_loads_and_stops_only_on_the_line_that_hangs(
        forge, tmp_path, monkeypatch):
    """15.7: `(a+)+$` from a model file made predict on a 41-byte line run for hours. The
    pattern loads (a pattern is no longer refused by its shape) and tokenises ordinary
    text as re does; the hostile line stops at the budget."""
    clf = snowpy.SnowClassifier(calibrate=None, token_pattern=r"\w+").fit(
        ["a b", "c d", "e f", "g h"], ["x", "y", "x", "y"])
    path = with_pattern(forge, clf.save(tmp_path / "m.snowpy"), tmp_path / "forged.snowpy",
                        r"(?:a|aa)+$|\w+")
    loaded = snowpy.load(path)
    names = loaded.featurizer_.names_in("c d aa")
    assert sorted(name for found in names.values() for name in found) == [
        "aa", "c", "c d", "d", "d aa"]  # (the defaults' 1-2 grams)
    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", "0.1")
    with pytest.raises(ConfigurationError, match="ran past its budget of 0.1 s"):
        loaded.predict(["a" * 40 + "!"])


# ----------------------------------------------------------- re's meaning, kept on regex
def _assigned() -> str:
    """Every character Python's Unicode database assigns (regex's may be newer: the
    characters assigned since differ by version, as re's would on a newer Python)."""
    import unicodedata

    return "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF
                   and unicodedata.category(chr(c)) != "Cn")


ASSIGNED = _assigned()
#: the characters where regex's Unicode classes and Python's differ, among ordinary text
TRICKY = ("X x² ½ ① ٣ ⅷ 一二 e\u0301 é \x1c\x1d\x1e\x1f\t\n\x0b\x0c \u00a0\u2009\u3000 ſ K k "
          "ß ǅ İı Iiİı _-'.,!? don't 3½ naïve café x_y z9 😀")

EQUIVALENT = [
    r"\w+", r"\W+", r"\s+", r"\S+", r"\d+", r"\D+", r"\b\w[\w']*\b", r"\B\w", r"\w\B",
    r"[\w']+", r"[^\w\s]+", r"[\W\d]+", r"[^\W\d_]+", r"[^\S\n]+", r"[\s\d]+", r"[\w-]+",
    r"[]\w]+", r"[^]\w]+", r"(\w)\w*", r"[\b]", r"[[:alpha:]]", r"(?:\w|-)+",
    r"(?<=\s)\w+", r"(?i)[a-z]+", r"(?i)[^a-h]+", r"(?i)\bk\w*", r"(?i)ſ|s", r"(?i:i+)|x",
    r"(?i)\w+İ", r"(?i)[\w-]+", r"(?a)\w+", r"(?a:\w+)|\s", r"(?x) \w+ # a comment [",
    r"(?#[c)\w", r"(?s:.)\w",
    # (found by mutation testing: each kills a change of for_regex that the others pass)
    r"(?a)\s+", r"(?a)[\s,]+", r"(?a)[^\S,]+", r"(?a:\S+)|x", r"(x)(?#[c)\w", r"(?#c)(\w)",
    "(?x)# (?a:\n\\w+", "(?x)\\w # c\n \\w+ # d\n \\w", "(?x)\\w+ # end", r"(?i)[ajz]+",
    r"(?i)[a-\x7a]+", r"(?i)\x69", r"(?i)\u0131", r"(?i)[\u0131]", r"(?i)\N{LATIN SMALL LETTER I}",
    r"(?i)[^a-z]+", r"(?i)[^\W\d]+", r"(?i)[]i]+", r"(?i)[^]h-j]+", r"(?i).\D", r"(?i)(?-i:i)I", r"(?i:[h-j])|\x69",
    r"(?#c[)\w+", r"(?ai)[hi]+|i", r"[[x]+",
]


@pytest.mark.parametrize("pattern", EQUIVALENT)
def test_a_pattern_means_on_regex_what_it_means_on_re(pattern):
    """Over every assigned character and the characters where the two engines' classes
    differ (Python's \\w holds ² and ½ and not the combining accents, its \\s holds
    \\x1c-\\x1f, its (?i) holds the dotted and dotless i equal): the same tokens."""
    import re
    import warnings

    import regex

    from snowpy.text.patterns import for_regex

    text = TRICKY + ASSIGNED[::7] + TRICKY + ASSIGNED[3::7]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # ([[ in re: a set one day)
        expected = re.findall(pattern, text)
        assert regex.findall(for_regex(pattern), text) == expected


@pytest.mark.parametrize("escape", ["w", "W", "s", "S", "d", "D"])
def test_each_class_holds_on_regex_the_characters_it_holds_on_re(escape):
    import re

    import regex

    from snowpy.text.patterns import for_regex

    for pattern in (f"\\{escape}", f"[\\{escape}]", f"[^\\{escape}]", f"[x\\{escape}]",
                    f"[^x\\{escape}]"):
        assert regex.findall(for_regex(pattern), ASSIGNED) == re.findall(pattern, ASSIGNED), \
            pattern


@pytest.mark.parametrize("pattern", [r"(a|)+", r"(a*)", r"(b?)a*", r"(\w*)", r"x*(y|)"])
def test_a_one_group_patterns_empty_matches_are_the_tokens_re_gives(pattern):
    """A one-group pattern whose group can match nothing: a document's tokens are the
    group's matches as re gives them, empty ones included, as strings."""
    import re

    from snowpy.text.patterns import TokenPattern

    texts = ["ab aab x", "a", "bab", "", "xy yx"]
    assert TokenPattern(pattern).tokens(texts, lowercase=False) == \
        [" ".join(re.findall(pattern, t)) for t in texts]


def test_a_one_group_patterns_empty_matches_given_as_1_tuples_are_mended():
    """regex before 2026 (pyproject allows 2024.5 on) gave a one-group pattern's empty
    match as a 1-tuple among the strings; the tokens are the same as re gives: its
    first item, in its place, joined by single spaces."""
    import re

    from snowpy.text.patterns import TokenPattern

    words = TokenPattern(r"(a*)")

    class Older:  # (the regex of those versions, as far as findall goes)
        def findall(self, text, timeout=None, concurrent=None):
            return {"bab": [("",), "a", ("",), ("",)], "aa b": ["aa", ("",), ("",), ("",)]}[text]

    words.compiled = Older()
    assert words.tokens(["bab", "aa b"], lowercase=False) == [" a  ", "aa   "] == \
        [" ".join(re.findall(r"(a*)", text)) for text in ("bab", "aa b")]

@pytest.mark.parametrize("setting, base", [
    ("0", 0.001), ("-3", 0.001), ("1e-9", 0.001), ("soon", 1.0), ("", 1.0), ("nan", 1.0),
    ("inf", 1.0), ("-inf", 1.0), ("0.25", 0.25)])
def test_any_pattern_budget_setting_leaves_every_custom_pattern_bounded(monkeypatch, setting,
                                                                       base):
    """SNOWPY_PATTERN_BUDGET of 0, a negative number, garbage or a number that is not
    finite: every match of a custom pattern still runs under a finite, positive timeout
    (regex takes a negative timeout and nan as none at all): at least a millisecond,
    the default 1 s for what is not a finite number; each document's budget grows by
    its length (1 s per million characters)."""
    from snowpy.text.patterns import TokenPattern

    pattern = TokenPattern(r"[a-z]+")
    asked = []

    class Compiled:
        @staticmethod
        def findall(text, timeout, concurrent):
            asked.append(timeout)
            return text.split()

    pattern.compiled = Compiled
    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", setting)
    assert pattern.tokens(["ab cd", "x" * 500_000], lowercase=False)[0] == "ab cd"
    assert asked == [base + 5e-6, base + 0.5]


@pytest.mark.parametrize("setting", ["0", "-1"])
def test_a_budget_of_nothing_still_stops_a_backtracking_pattern(monkeypatch, setting):
    """The real engine: a line on which `(?:a|aa)+$` backtracks for a good part of a
    second stops at the budget with the one-line error, whatever the setting (never a
    match left to run unbounded)."""
    from snowpy.text.patterns import TokenPattern

    monkeypatch.setenv("SNOWPY_PATTERN_BUDGET", setting)
    with pytest.raises(ConfigurationError) as caught:
        TokenPattern(r"(?:a|aa)+$").tokens(["a" * 30 + "!"], lowercase=False)
    assert "\n" not in str(caught.value) and "ran past its budget of" in str(caught.value)
