"""Token patterns that cannot hang the process, in any thread.

A ``token_pattern`` with a repetition inside a repetition (``(a|aa)+$``) makes a
backtracking engine take time exponential in the line: a 41-byte line ran for hours.
Patterns come from users and from model files, which may be untrusted. Python's ``re``
can be stopped only by a signal, which only the main thread receives; the ``regex``
package takes a timeout on each match, in any thread, and installs no handler. So
snowpy's own patterns (:data:`BUILT_IN_PATTERNS`, each linear under ``findall``) run on
``re`` as they are, and any other pattern runs on ``regex`` under a time budget per
document, ``1 s + 1 s per million characters`` (``SNOWPY_PATTERN_BUDGET`` changes the
first term), past which tokenising stops with a one-line error naming the document.

``regex`` follows Unicode where ``re`` follows Python's string methods, so a pattern is
first written so that it means on ``regex`` what it means on ``re`` (:func:`for_regex`):
``\\w`` is Python's (letters, numbers and ``_``: ``²`` and ``½`` are word characters,
combining accents are not), ``\\s`` holds ``\\x1c-\\x1f``, ``\\b`` and ``\\B`` are built on
that ``\\w``, and under ``(?i)`` the dotted and dotless i are one letter, as in ``re``.
``re`` decides which patterns are valid.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from snowpy.exceptions import ConfigurationError

__all__ = ["BUILT_IN_PATTERNS", "TokenPattern", "for_regex"]

#: Patterns that run in time linear in a document under ``findall`` (each attempt either
#: fails on its first character or consumes what it examined): scikit-learn's default,
#: words, non-space runs, words and punctuation. They run on ``re``, without a budget.
BUILT_IN_PATTERNS = frozenset({
    r"(?u)\b\w\w+\b", r"\b\w\w+\b", r"\w\w+", r"\w+", r"\b\w+\b", r"(?u)\b\w+\b",
    r"\S+", r"[^\s]+", r"\w+|[^\w\s]", r"\w+|[^\w\s]+", r"[^\W\d_]+", r"\d+",
})


def _budget_base() -> float:
    """``SNOWPY_PATTERN_BUDGET`` in seconds: at least a millisecond (0 and negative
    numbers, which ``regex`` would take as no timeout at all, are 1 ms); what is not a
    finite number (garbage, ``nan``, which ``regex`` also takes as none, ``inf``) the
    default 1 s."""
    try:
        base = float(os.environ.get("SNOWPY_PATTERN_BUDGET", "1.0"))
    except ValueError:
        return 1.0
    return max(base, 0.001) if math.isfinite(base) else 1.0


class TokenPattern:
    """A ``token_pattern``, run so that no document can hang the process.

    Parameters
    ----------
    pattern : str
        The regular expression, as Python's ``re`` reads it; a token is its whole match,
        or its one group (scikit-learn's rule).

    Examples
    --------
    >>> TokenPattern(r"[a-z]+").tokens(["Hello, world"], lowercase=True)
    ['hello world']
    >>> TokenPattern(r"\\w+").tokens(["x² ½"], lowercase=False)  # Python's \\w, on regex too
    ['x² ½']
    """

    def __init__(self, pattern: str, *, where: str = "token_pattern") -> None:
        if not isinstance(pattern, str):
            raise ConfigurationError(f"{where} must be a string, got {type(pattern).__name__}")
        try:
            compiled = re.compile(pattern)
        except (re.error, OverflowError, RecursionError, ValueError) as exc:
            raise ConfigurationError(
                f"{where} is not a valid regular expression: {exc}") from None
        if compiled.groups > 1:
            raise ConfigurationError(
                f"{where} {pattern!r} has {compiled.groups} capturing groups; a token is the "
                "whole match or its one group: write the others (?:...)")
        self.pattern = pattern
        self.budgeted = pattern not in BUILT_IN_PATTERNS
        if self.budgeted:
            import regex

            self.compiled: Any = regex.compile(for_regex(pattern))
        else:
            self.compiled = compiled

    def tokens(self, texts: list[str], *, lowercase: bool, first_doc: int = 0) -> list[str]:
        """Each text's tokens, joined by single spaces."""
        findall = self.compiled.findall
        texts = [t.lower() for t in texts] if lowercase else texts
        if not self.budgeted:
            return [" ".join(findall(t)) for t in texts]
        base, out = _budget_base(), []
        for number, text in enumerate(texts):
            budget = base + len(text) * 1e-6
            try:
                found = findall(text, timeout=budget, concurrent=True)
            except TimeoutError:
                raise ConfigurationError(
                    f"token_pattern {self.pattern!r} ran past its budget of {budget:.1f} s "
                    f"on document {first_doc + number} ({len(text):,} characters): it "
                    "backtracks; write it so that it cannot (docs/reliability.md) or use the "
                    "built-in tokeniser") from None
            try:
                out.append(" ".join(found))
            except TypeError:  # (regex gives a one-group pattern's empty match as a
                out.append(" ".join(t if isinstance(t, str) else t[0] for t in found))  # tuple)
        return out


# ------------------------------------------------------------------ re's meaning on regex
_WORD = r"\p{L}\p{N}_"  # Python's str.isalnum() or "_"
_SPACE = r"\s\x1c-\x1f"  # Python's str.isspace()
_W = f"[{_WORD}]"
_ESCAPES = {
    "w": _W, "W": f"[^{_WORD}]", "s": f"[{_SPACE}]", "S": f"[^{_SPACE}]",
    "b": f"(?:(?<={_W})(?!{_W})|(?<!{_W})(?={_W}))",
    "B": f"(?:(?<={_W})(?={_W})|(?<!{_W})(?!{_W}))",
}
_IN_CLASS = {"w": _WORD, "s": _SPACE}
_COMPLEMENTS = {"W": _WORD, "S": _SPACE}
#: the letters re's case-insensitive matching holds equal and regex's case folding splits
#: in two (every other cased character compares alike: tests/test_token_patterns.py)
_DOTTED = "Iiİı"
#: an escape, whole: a code point by number or name (which may be a dotted i), else one
#: character (a class, an anchor, a backreference's first digit)
_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}"
                     r"|0[0-7]{0,2}|[0-7]{3}|.)", re.S)
_FLAGS = re.compile(r"\(\?([aiLmsux]*)(?:-([imsx]*))?(:|\))")


def for_regex(pattern: str) -> str:
    """``pattern``, which ``re`` accepts, written to match on ``regex`` what it matches on
    ``re`` (the module's docstring says where the two differ).

    >>> for_regex(r"[\\w']+")
    "[\\\\p{L}\\\\p{N}_']+"
    >>> for_regex(r"(?a)\\w+")  # under the ASCII flag both mean [a-zA-Z0-9_]
    '(?a)\\\\w+'
    """
    compiled = re.compile(pattern)
    outer = {flag for flag, bit in (("a", re.ASCII), ("i", re.IGNORECASE), ("x", re.VERBOSE))
             if compiled.flags & bit}
    out: list[str] = []
    groups: list[set[str]] = []  # the flags in effect inside each open group
    i, n = 0, len(pattern)
    while i < n:
        flags, ch = (groups[-1] if groups else outer), pattern[i]
        step = 1
        if ch == "\\":
            token = _ESCAPE.match(pattern, i).group()  # type: ignore[union-attr]
            step = len(token)
            if token[1] in _ESCAPES and "a" not in flags:
                out.append(_ESCAPES[token[1]])
            else:
                # (a code point by number or name may be a dotted i; a letter's escape not)
                out.append(f"[{_DOTTED}]" if len(token) > 2 and _dotted(token, flags)
                           else token)
        elif ch == "[":
            step = _class(pattern, i, out, flags) - i
        elif pattern.startswith("(?#", i):
            step = pattern.index(")", i) + 1 - i
            out.append(pattern[i:i + step])
        elif ch == "(":
            group = _FLAGS.match(pattern, i)
            step = group.end() - i if group else 1
            out.append(pattern[i:i + step])
            if not group or group.group(3) == ":":  # ((?i) alone is a global flag: `outer`)
                inner = set(flags) | set(group.group(1) if group else "")
                groups.append(inner - set(group.group(2) or "" if group else ""))
        elif ch == ")":
            if groups:
                groups.pop()
            out.append(ch)
        elif ch == "#" and "x" in flags:  # a verbose pattern's comment, to the line's end
            end = pattern.find("\n", i)
            step = (n if end < 0 else end) - i
            out.append(pattern[i:i + step])
        else:
            out.append(f"[{_DOTTED}]" if ch in _DOTTED and _dotted(ch, flags) else ch)
        i += step
    return "".join(out)


def _dotted(piece: str, flags: set[str]) -> bool:
    """Whether ``piece`` (a letter, a code point's escape, a class) matches a dotted or dotless i
    under the case-insensitive flags in effect: then it matches all four, as in ``re``."""
    if "i" not in flags or "a" in flags:
        return False
    compiled = re.compile(piece, re.IGNORECASE)
    return any(compiled.fullmatch(letter) for letter in _DOTTED)


def _class(pattern: str, i: int, out: list[str], flags: set[str]) -> int:
    """Write the class that opens at ``i`` into ``out``; the index after it."""
    j = i + 1
    negate = pattern.startswith("^", j)
    j = start = j + negate
    items: list[str] = []
    complements: list[str] = []
    while pattern[j] != "]" or j == start:  # (re read the pattern: its classes close)
        ch = pattern[j]
        if ch == "\\":
            code = pattern[j + 1]
            if code in _IN_CLASS and "a" not in flags:
                items.append(_IN_CLASS[code])
            elif code in _COMPLEMENTS and "a" not in flags:
                complements.append(_COMPLEMENTS[code])
            else:
                items.append(pattern[j:j + 2])
            j += 2
            continue
        items.append("\\[" if ch == "[" else ch)  # (a literal [ in re; a nested set in regex)
        j += 1
    body = "".join(items)
    if _dotted(f"[{pattern[start:j]}]", flags):  # (first: a trailing - stays a literal)
        body = _DOTTED + ("\\]" + body[1:] if body.startswith("]") else body)
    if not complements:
        out.append(f"[{'^' if negate else ''}{body}]")
    else:  # a class holding \W or \S: the union of its parts (negated: what none holds)
        union = "|".join(([f"[{body}]"] if body else []) + [f"[^{c}]" for c in complements])
        out.append(f"(?:(?!{union})(?s:.))" if negate else f"(?:{union})")
    return j + 1
