"""Explanations as a self-contained HTML page: each document's text highlighted word by
word by what it gave each target (green for, red against), as eli5 and LIME draw them,
with the table of terms below. No script, no external file: the page is one string.
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["to_html", "word_shares"]

_WORD = re.compile(r"\w+", re.UNICODE)

_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 60em;
       color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 2em; }
.doc { border: 1px solid #ccc; border-radius: 6px; padding: 1em; margin: 1em 0; }
.text { font-size: 1.1em; line-height: 2; }
.text span { padding: 0.1em 0.15em; border-radius: 3px; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
td, th { border-bottom: 1px solid #eee; padding: 0.15em 0.8em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.pos { color: #1a7f37; } .neg { color: #b42318; } .muted { color: #777; }
"""


def word_shares(text: str, target: dict[str, Any]) -> list[tuple[str, float | None]]:
    """The text cut into words and the stretches between them, each word with its share
    of the target's contributions: a feature's contribution split evenly over the words
    of its name (an n-gram's words share it), given to each occurrence of those words.

    >>> word_shares("Cheap pills!", {"features": [
    ...     {"name": "cheap", "contribution": 0.5},
    ...     {"name": "cheap pills", "contribution": 0.2}]})
    [('Cheap', 0.6), (' ', None), ('pills', 0.1), ('!', None)]
    """
    per_word: dict[str, float] = {}
    for feature in target.get("features", []):
        if feature["name"].startswith("#"):  # (a feature with no name known)
            continue
        words = [w.lower() for w in _WORD.findall(feature["name"])]
        for word in words:
            per_word[word] = per_word.get(word, 0.0) + feature["contribution"] / len(words)
    pieces: list[tuple[str, float | None]] = []
    at = 0
    for match in _WORD.finditer(text):
        if match.start() > at:
            pieces.append((text[at:match.start()], None))
        pieces.append((match.group(), per_word.get(match.group().lower(), 0.0)))
        at = match.end()
    if at < len(text):
        pieces.append((text[at:], None))
    return pieces


def _highlighted(text: str, target: dict[str, Any]) -> str:
    pieces = word_shares(text, target)
    largest = max((abs(v) for _, v in pieces if v), default=0.0) or 1.0
    out = []
    for piece, value in pieces:
        if not value:
            out.append(html.escape(piece))
            continue
        alpha = 0.15 + 0.65 * abs(value) / largest
        colour = f"rgba(26, 127, 55, {alpha:.2f})" if value > 0 else \
            f"rgba(180, 35, 24, {alpha:.2f})"
        out.append(f'<span style="background: {colour}" title="{value:+.4f}">'
                   f"{html.escape(piece)}</span>")
    return "".join(out)


def _terms(target: dict[str, Any]) -> str:
    rows = [f'<tr><td class="muted">bias</td><td></td><td class="n">'
            f'{target["bias"]["contribution"]:+.4f}</td><td></td></tr>'] if "bias" in target \
        else []
    if "theta" in target:
        rows.append(f'<tr><td class="muted">threshold</td><td></td><td class="n">'
                    f'{-target["theta"]:+.4f}</td><td></td></tr>')
    if "evidence" in target:  # (Naive Bayes evidence stacked with the score)
        rows.append(f'<tr><td class="muted">Naive Bayes evidence</td><td></td><td class="n">'
                    f'{target["evidence"]["contribution"]:+.4f}</td><td class="n muted">'
                    f'{target["evidence"]["weight"]:.4f}</td></tr>')
    for feature in target.get("features", []):
        kind = "pos" if feature["contribution"] > 0 else \
            "neg" if feature["contribution"] < 0 else "muted"  # (0: neither for nor against)
        note = " (collides with " + ", ".join(map(html.escape, feature["shared_with"])) \
            + ")" if feature.get("collision") else ""
        rows.append(f"<tr><td>{html.escape(feature['name'])}{note}</td>"
                    f'<td class="n muted">{feature["id"]}</td>'
                    f'<td class="n {kind}">{feature["contribution"]:+.4f}</td>'
                    f'<td class="n muted">{feature["weight"]:.4f}</td></tr>')
    for vector in target.get("support_vectors", []):
        rows.append(f"<tr><td>support vector {vector['support_vector']}</td>"
                    f'<td class="n muted">K {vector["kernel"]:.4f}</td>'
                    f'<td class="n">{vector["contribution"]:+.4f}</td><td></td></tr>')
    others = target.get("others", {})
    if others.get("count"):
        rows.append(f'<tr><td class="muted">{others["count"]} more</td><td></td>'
                    f'<td class="n">{others["contribution"]:+.4f}</td><td></td></tr>')
    return ("<table><tr><th>feature</th><th>id</th><th>contribution</th><th>weight</th></tr>"
            + "".join(rows) + "</table>")


def _document(number: int, explained: dict[str, Any], features: int | None) -> str:
    from snowpy.explanation import shortened

    probability = explained.get("probability")
    head = (f"<h2>Document {number}: {html.escape(str(explained['label']))}"
            + (f" ({probability:.1%})" if probability is not None else "") + "</h2>")
    margin = explained.get("margin")
    if margin is not None:
        head += (f'<p class="muted">margin {margin:.4f} over '
                 f"{html.escape(str(explained['runner_up']))}</p>")
    parts = [head]
    def targets_of(result: dict[str, Any]) -> list[dict[str, Any]]:
        return result["targets"] if result.get("kind") != "cloud" else \
            [t for member in result["members"] for t in member["targets"]]

    listed = targets_of(shortened(explained, features))
    for target, table in zip(targets_of(explained), listed):
        score = f"score {target['score']:+.4f}"
        if target.get("probability") is not None:
            score += f", probability {target['probability']:.1%}"
        parts.append(f'<div class="doc"><p><b>{html.escape(str(target["label"]))}</b> '
                     f'<span class="muted">{score}</span></p>'
                     f'<p class="text">{_highlighted(explained["text"], target)}</p>'
                     f"{_terms(table)}</div>")
    return "".join(parts)


def to_html(explanations: list[dict[str, Any]], title: str = "snowpy explain",
            features: int | None = 20) -> str:
    """One self-contained HTML page of :meth:`snowpy.SnowClassifier.explain` results:
    each word highlighted by every term it has a share of (explain with ``features=None``
    for all of them), the tables listing the ``features`` largest terms.

    >>> page = to_html([{"text": "hi", "label": "a", "probability": None, "margin": None,
    ...                  "kind": "network", "targets": [{"label": "a", "score": 1.0,
    ...                  "bias": {"contribution": 0.0}, "features": [{"name": "hi",
    ...                  "id": 7, "weight": 1.0, "contribution": 1.0}]}]}])
    >>> page.startswith("<!DOCTYPE html>") and 'title="+1.0000">hi</span>' in page
    True
    """
    body = "".join(_document(i + 1, e, features) for i, e in enumerate(explanations))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>{body}</body></html>\n")
