"""The report of a search (``snowpy tune --report FILE``): a self-contained HTML page with
the best setting, the score of every trial against the time it finished (a figure drawn
by matplotlib where it is installed, inline SVG), and the table of trials."""

from __future__ import annotations

import html
import io
from typing import Any

__all__ = ["report_html"]


def _figure(trials: list[dict[str, Any]], metric: str) -> str:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "<p>(the figure needs matplotlib: pip install '.[plot]' in snowpy's source folder)</p>"
    from snowpy.plots import drawn

    done = [t for t in trials if t["state"] == "complete" and t.get("finished_at")]
    out = io.StringIO()
    with drawn(out, figsize=(7, 3.5), format="svg") as (_, axes):
        axes.scatter([t["finished_at"] for t in done], [t["score"] for t in done], s=14,
                     color="#4c72b0", label="trial")
        best, line = float("-inf"), []
        for t in sorted(done, key=lambda t: t["finished_at"]):
            best = max(best, t["score"])
            line.append((t["finished_at"], best))
        if line:
            axes.step(*zip(*line), where="post", color="#dd8452", label="best so far")
        axes.set_xlabel("seconds")
        axes.set_ylabel(f"validation {metric}")
        axes.legend(loc="lower right")
    svg = out.getvalue()
    return svg[svg.index("<svg"):]


def report_html(result: Any, title: str) -> str:
    """The page (``result``: a :class:`snowpy.tuning.TuneResult`)."""
    from snowpy.tuning.space import described

    def row(t: dict[str, Any]) -> str:
        score = "" if t["score"] is None else f"{t['score']:.4f}"
        seconds = "" if t["seconds"] is None else f"{t['seconds']:.1f}"
        return (f"<tr><td>{t['number']}</td><td>{t['state']}</td><td>{score}</td>"
                f"<td>{seconds}</td><td>{html.escape(described(t['params']))}</td></tr>")

    rows = "".join(row(t) for t in result.trials)
    baseline = "" if result.baseline_score is None else \
        f" (the defaults: {result.baseline_score:.4f})"
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>body {{ font: 14px system-ui, "
            "sans-serif; margin: 2em auto; max-width: 70em; } td, th { padding: 0.1em 0.6em;"
            " border-bottom: 1px solid #eee; text-align: left; }</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p>best validation {result.metric} "
            f"{result.best_score:.4f}{baseline}, {len(result.trials)} trials in "
            f"{result.seconds:.0f} s:<br><code>{html.escape(described(result.best_params))}"
            f"</code></p>{_figure(result.trials, result.metric)}<table><tr><th>trial</th>"
            "<th>state</th><th>score</th><th>seconds</th><th>setting</th></tr>"
            f"{rows}</table></body></html>\n")
