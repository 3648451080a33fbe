"""Token patterns that cannot hang the process.

A ``token_pattern`` with a repetition inside a repetition (``(a+)+``, ``(\\w*\\s?)*``)
makes Python's backtracking engine take time exponential in the line: a 41-byte line
ran for hours. Patterns come from users and from model files, which may be
untrusted; both are checked here before compiling. The check refuses an unbounded
repetition whose body can itself repeat without bound (star height above one), and an
unbounded repetition of an alternation whose branches start with the same literal or
are the same (``(a|a)*``, ``(ab|ac)+``): the common shapes of catastrophic
backtracking (overlapping character classes, ``(\\w|\\d)+``, are not detected). Possessive
and atomic forms (``(?>...)``, ``a++``) never backtrack and are allowed.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from snowpy.exceptions import ConfigurationError

# the standard library's regular-expression parser (re._parser since Python 3.11)
_p: Any = importlib.import_module("re._parser")
_c: Any = importlib.import_module("re._constants")

__all__ = ["compile_token_pattern"]

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
    try:
        parsed = _p.parse(pattern)
    except re.error as exc:
        raise ConfigurationError(f"{where} is not a valid regular expression: {exc}") from None
    problem = _nested(list(parsed))
    if problem is not None:
        raise ConfigurationError(
            f"{where} {pattern!r} {problem}: it can take time exponential in the length of "
            "a line; write it without the nesting (a+ for (a+)+)")
    return re.compile(pattern)


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
    """An alternation (at the top of a repeated body) whose branches can start alike."""
    for op, argument in items:
        if op is _c.SUBPATTERN:
            return _overlapping_branches(list(argument[-1]))
        if op is _c.BRANCH:
            branches = [list(branch) for branch in argument[1]]
            firsts = [_first(branch) for branch in branches]
            for i, a in enumerate(firsts):
                for j in range(i + 1, len(firsts)):
                    b = firsts[j]
                    if branches[i] == branches[j] or (a is not None and b is not None
                                                      and a & b):
                        return True
        return False
    return False


def _first(items: list[Any]) -> set[str] | None:
    """Literal characters a branch can start with; None when it could start with many."""
    if not items:
        return None
    op, argument = items[0]
    if op is _c.LITERAL:
        return {chr(argument)}
    if op is _c.SUBPATTERN:
        return _first(list(argument[-1]))
    return None


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
