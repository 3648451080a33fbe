"""Token patterns that cannot hang the process.

A ``token_pattern`` with a repetition inside a repetition (``(a+)+``, ``(\\w*\\s?)*``)
makes Python's backtracking engine take time exponential in the line: a 41-byte line
ran for hours. Patterns come from users and from model files, which may be
untrusted; both are checked here before compiling. The check refuses an unbounded
repetition whose body can itself repeat without bound (star height above one), and an
unbounded repetition of an alternation whose branches are the same or can start with
the same character (``(a|a)*``, ``(\\w|\\d\\d)+``, ``([a-z]|[aeiou]x)+``: literals,
classes and categories compared on a sample of characters): the common shapes of
catastrophic backtracking. Python's compiler factors common prefixes out first
(``(ab|ac)+`` becomes ``(a[bc])+``) and merges alternatives of single characters into
one class (``(\\w|\\d)+``): those never backtrack and are allowed, as are the
possessive and atomic forms (``(?>...)``, ``a++``).

A static check cannot find every pattern that backtracks: ``(.*,){12}X`` is polynomial,
``(?=(a+a+)+b)`` hides its nesting in a lookahead, and ``a+b`` alone is quadratic under
``findall`` on a long run of ``a``. The guarantee is therefore structural
(:class:`TokenPattern`): snowpy's own patterns (:data:`BUILT_IN_PATTERNS`, each linear
under ``findall``) run as they are; any other runs under a time budget per document,
``1 s + 1 s per million characters`` (``SNOWPY_PATTERN_BUDGET`` changes the first
term), past which tokenising stops with a one-line error naming the document. Python's
engine checks for signals as it matches, so the budget is a timer signal, which only
the main thread receives: in another thread a pattern runs unbudgeted when the user gave
it, and is refused when it came from a model file not loaded with
``trust_pattern=True``.
"""

from __future__ import annotations

import importlib
import os
import re
import signal
import threading
from typing import Any

from snowpy.exceptions import ConfigurationError

# the standard library's regular-expression parser (re._parser since Python 3.11)
_p: Any = importlib.import_module("re._parser")
_c: Any = importlib.import_module("re._constants")

__all__ = ["BUILT_IN_PATTERNS", "TokenPattern", "compile_token_pattern"]

#: Patterns that run in time linear in a document under ``findall`` (each attempt either
#: fails on its first character or consumes what it examined): scikit-learn's default,
#: words, non-space runs, words and punctuation. They run without a budget.
BUILT_IN_PATTERNS = frozenset({
    r"(?u)\b\w\w+\b", r"\b\w\w+\b", r"\w\w+", r"\w+", r"\b\w+\b", r"(?u)\b\w+\b",
    r"\S+", r"[^\s]+", r"\w+|[^\w\s]", r"\w+|[^\w\s]+", r"[^\W\d_]+", r"\d+",
})

_UNBOUNDED = (_c.MAX_REPEAT, _c.MIN_REPEAT)


def compile_token_pattern(pattern: str, *, where: str = "token_pattern") -> re.Pattern[str]:
    """Compile ``pattern`` after refusing the shapes that backtrack exponentially.

    >>> compile_token_pattern(r"\\b\\w\\w+\\b").pattern
    '\\\\b\\\\w\\\\w+\\\\b'
    >>> compile_token_pattern(r"(a+)+$")
    Traceback (most recent call last):
    ...
    snowpy.exceptions.ConfigurationError: token_pattern '(a+)+$' repeats a repetition ('(a+)+'): it can take time exponential in the length of a line; write it without the nesting (a+ for (a+)+)
    """
    if not isinstance(pattern, str):
        raise ConfigurationError(f"{where} must be a string, got {type(pattern).__name__}")
    try:
        parsed = _p.parse(pattern)
    except (re.error, OverflowError, RecursionError, ValueError) as exc:
        raise ConfigurationError(f"{where} is not a valid regular expression: {exc}") from None
    problem = _nested(list(parsed))
    if problem is not None:
        raise ConfigurationError(
            f"{where} {pattern!r} {problem}: it can take time exponential in the length of "
            "a line; write it without the nesting (a+ for (a+)+)")
    try:
        compiled = re.compile(pattern)
    except (re.error, OverflowError, RecursionError, ValueError) as exc:
        raise ConfigurationError(f"{where} is not a valid regular expression: {exc}") from None
    if compiled.groups > 1:  # (scikit-learn's rule: one group is the token)
        raise ConfigurationError(f"{where} {pattern!r} has {compiled.groups} capturing groups; "
                                 "a token is the whole match or its one group: write the "
                                 "others (?:...)")
    return compiled


class _OverBudget(BaseException):
    """Raised by the timer signal inside a match (a BaseException: no ``except
    Exception`` between the signal and the loop swallows it)."""


def _budget_base() -> float:
    try:
        return max(float(os.environ.get("SNOWPY_PATTERN_BUDGET", "1.0")), 0.001)
    except ValueError:
        return 1.0


class TokenPattern:
    """A user's ``token_pattern``, run so that no document can hang the process.

    Parameters
    ----------
    pattern : str
        The regular expression; checked by :func:`compile_token_pattern`.
    trusted : bool, default True
        False for a pattern read from a model file not loaded with
        ``trust_pattern=True``: it never runs without its budget.

    Examples
    --------
    >>> TokenPattern(r"[a-z]+").tokens(["Hello, world"], lowercase=True)
    ['hello world']
    """

    def __init__(self, pattern: str, *, trusted: bool = True) -> None:
        self.pattern = pattern
        self.trusted = trusted
        self.compiled = compile_token_pattern(pattern)
        self.budgeted = pattern not in BUILT_IN_PATTERNS

    def tokens(self, texts: list[str], *, lowercase: bool, first_doc: int = 0) -> list[str]:
        """Each text's tokens, joined by single spaces."""
        findall = self.compiled.findall
        texts = [t.lower() for t in texts] if lowercase else texts
        if not self.budgeted:
            return [" ".join(findall(t)) for t in texts]
        if threading.current_thread() is not threading.main_thread() \
                or signal.getitimer(signal.ITIMER_REAL)[0] > 0:  # (the caller's own timer)
            if not self.trusted:
                raise ConfigurationError(
                    f"token_pattern {self.pattern!r} came from a model file and can run only "
                    "in the main thread, under its time budget; load the model with "
                    "trust_pattern=True if you trust the pattern")
            return [" ".join(findall(t)) for t in texts]
        return self._budgeted(texts, first_doc)

    def _budgeted(self, texts: list[str], first_doc: int) -> list[str]:
        findall, base = self.compiled.findall, _budget_base()

        def expire(signum: int, frame: Any) -> None:
            raise _OverBudget

        previous = signal.signal(signal.SIGALRM, expire)
        out, number = [], 0
        try:
            for number, text in enumerate(texts):
                signal.setitimer(signal.ITIMER_REAL, base + len(text) * 1e-6)
                out.append(" ".join(findall(text)))
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _OverBudget:
            text = texts[number]
            raise ConfigurationError(
                f"token_pattern {self.pattern!r} ran past its budget of "
                f"{base + len(text) * 1e-6:.1f} s on document {first_doc + number} "
                f"({len(text):,} characters): it backtracks; write it so that it cannot "
                "(docs/reliability.md) or use the built-in tokeniser") from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return out


def _nested(items: list[Any], inside: bool = False) -> str | None:
    for op, argument in items:
        if op in _UNBOUNDED:
            low, high, body = argument
            body = list(body)
            if high == _c.MAXREPEAT:
                if inside or _repeats(body):
                    return f"repeats a repetition ({_show(op, argument)!r})"
                if _overlapping_branches(body):
                    return f"repeats overlapping alternatives ({_show(op, argument)!r})"
            found = _nested(body, inside or high == _c.MAXREPEAT)
            if found:
                return found
        elif op is _c.SUBPATTERN:
            found = _nested(list(argument[-1]), inside)
            if found:
                return found
        elif op is _c.BRANCH:
            for branch in argument[1]:
                found = _nested(list(branch), inside)
                if found:
                    return found
    return None


def _repeats(items: list[Any]) -> bool:
    """Whether ``items`` hold an unbounded repetition (at any depth)."""
    for op, argument in items:
        if op in _UNBOUNDED and argument[1] == _c.MAXREPEAT:
            return True
        if op in _UNBOUNDED and _repeats(list(argument[2])):
            return True
        if op is _c.SUBPATTERN and _repeats(list(argument[-1])):
            return True
        if op is _c.BRANCH and any(_repeats(list(branch)) for branch in argument[1]):
            return True
    return False


def _overlapping_branches(items: list[Any]) -> bool:
    """An alternation in a repeated body (outside nested repetitions) whose branches are
    the same or can start with the same character."""
    for op, argument in items:
        if op is _c.SUBPATTERN and _overlapping_branches(list(argument[-1])):
            return True
        if op is _c.BRANCH:
            branches = [list(branch) for branch in argument[1]]
            firsts = [_first(branch) for branch in branches]
            for i, a in enumerate(firsts):
                for j in range(i + 1, len(firsts)):
                    b = firsts[j]
                    if branches[i] == branches[j] or (a is not None and b is not None
                                                      and a & b):
                        return True
            if any(_overlapping_branches(branch) for branch in branches):
                return True
    return False


#: The characters the first-character sets are compared on: Latin, Greek, Cyrillic,
#: digits of several scripts, spaces, punctuation, a few CJK and symbols.
_SAMPLE = "".join(chr(c) for c in range(0x250)) + "".join(
    chr(c) for c in (*range(0x370, 0x400, 3), *range(0x400, 0x460, 3), 0x660, 0x669, 0x966,
                     0x2000, 0x2009, 0x3000, 0x4E00, 0x4E8C, 0x65E5, 0xFF10, 0x1F600))
_CATEGORIES = {
    "CATEGORY_DIGIT": str.isdecimal, "CATEGORY_SPACE": str.isspace,
    "CATEGORY_WORD": lambda ch: ch.isalnum() or ch == "_",
    "CATEGORY_LINEBREAK": lambda ch: ch == "\n",
}


def _category(name: str) -> Any:
    base = name.replace("_NOT", "").replace("UNI_", "").replace("LOC_", "")
    test = _CATEGORIES.get(base)
    if test is None:
        return None
    return (lambda ch: not test(ch)) if "_NOT_" in name else test


def _matches(op: Any, argument: Any) -> frozenset[str] | None:
    """The sample characters one element matches, or None when it is not one character."""
    if op is _c.LITERAL:
        return frozenset(chr(argument))
    if op is _c.NOT_LITERAL:
        return frozenset(ch for ch in _SAMPLE if ord(ch) != argument)
    if op is _c.ANY:
        return frozenset(ch for ch in _SAMPLE if ch != "\n")
    if op is _c.CATEGORY:
        test = _category(str(argument))
        return None if test is None else frozenset(ch for ch in _SAMPLE if test(ch))
    if op is _c.IN:
        negate, found = False, set()
        for kind, value in argument:
            if kind is _c.NEGATE:
                negate = True
            elif kind is _c.LITERAL:
                found.add(chr(value))
            elif kind is _c.RANGE:
                found.update(ch for ch in _SAMPLE if value[0] <= ord(ch) <= value[1])
            elif kind is _c.CATEGORY:
                test = _category(str(value))
                if test is None:
                    return None
                found.update(ch for ch in _SAMPLE if test(ch))
            else:
                return None
        return frozenset(ch for ch in _SAMPLE if ch not in found) if negate \
            else frozenset(found)
    return None


def _first(items: list[Any]) -> frozenset[str] | None:
    """The characters a branch can start with (on the sample); None when unknown."""
    if not items:
        return None
    op, argument = items[0]
    if op is _c.SUBPATTERN:
        return _first(list(argument[-1]))
    if op in _UNBOUNDED or op is _c.MAX_REPEAT:
        low, _, body = argument
        return _first(list(body)) if low >= 1 else None
    return _matches(op, argument)


def _show(op: Any, argument: Any) -> str:
    low, high, body = argument
    inner = "".join(_render(list(body)))
    quantifier = "+" if low == 1 else "*" if low == 0 else f"{{{low},}}"
    return f"({inner}){quantifier}" if len(list(body)) > 1 or _is_group(list(body)) \
        else f"{inner}{quantifier}"


def _is_group(items: list[Any]) -> bool:
    return len(items) == 1 and items[0][0] is _c.SUBPATTERN


def _render(items: list[Any]) -> list[str]:
    out = []
    for op, argument in items:
        if op is _c.LITERAL:
            out.append(re.escape(chr(argument)))
        elif op is _c.SUBPATTERN:
            out.append("".join(_render(list(argument[-1]))))
        elif op in _UNBOUNDED:
            out.append(_show(op, argument))
        else:
            out.append("...")
    return out
