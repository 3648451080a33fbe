"""``snowpy explain MODEL TEXT``: why the model answers what it does, feature by feature
(Vowpal Wabbit's ``--audit``, eli5's ``show_prediction``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from snowpy.cli.common import err, handles_errors, model_key
from snowpy.exceptions import ConfigurationError


@handles_errors
def explain(
    model: Annotated[Path, typer.Argument(help="model file")],
    texts: Annotated[list[str] | None, typer.Argument(
        help="documents to explain (or --file; neither, or -: each line of standard "
             "input, as predict reads it)")] = None,
    file: Annotated[str | None, typer.Option(
        "--file", "-f", help="explain each line of this file (- for standard input)")] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="targets explained")] = 2,
    features: Annotated[int, typer.Option(
        help="features listed per target, the largest contributions first (the rest are "
             "summed); 0 for all")] = 10,
    json_output: Annotated[bool, typer.Option(
        "--json", help="one JSON object per document (JSON Lines)")] = False,
    html: Annotated[Path | None, typer.Option(
        help="also write a self-contained HTML page, the text highlighted by contribution")
    ] = None,
    encoding: Annotated[str | None, typer.Option(help="text encoding of --file")] = None,
) -> None:
    """Explain MODEL's answer for each document, feature by feature.

    The predicted label, its probability, the margin to the runner-up, and each active
    feature's contribution (strength x link weight) to the top targets, with its name,
    hashed id and weight; the terms add up to the target's score."""
    from snowpy import load
    from snowpy.cli.reading import read_lines
    from snowpy.model_kinds import kind_of

    if top_k < 1 or features < 0:
        raise ConfigurationError("--top-k must be at least 1 and --features at least 0")
    if texts and file:
        raise ConfigurationError("give the documents as arguments, or --file FILE (one per "
                                 "line; - for standard input), not both")
    classifier = load(model, key=model_key())
    if kind_of(classifier) != "classifier":
        raise ConfigurationError(f"{model} holds a network without a front end: explain it "
                                 "from Python (Network.engine_.link_weights)")
    if texts == ["-"]:  # (standard input, as predict's - is)
        texts, file = None, "-"
    documents = texts if texts else read_lines(file or "-", encoding)
    from snowpy.explanation import shortened

    explained = []
    for text in documents:
        full = classifier.explain(text, top_k=top_k, features=None)
        result = shortened(full, features or None)
        if json_output:
            import orjson

            typer.echo(orjson.dumps(result).decode())
        else:
            _print(result)
        if html is not None:
            explained.append(full)  # (every term highlights the text)
    if html is not None:
        from snowpy._atomic import write_bytes
        from snowpy.explanation_html import to_html

        write_bytes(html, to_html(explained, f"snowpy explain: {model.name}",
                                  features or None).encode())
        if not json_output:
            err(f"wrote {html}")


def _print(result: dict[str, Any]) -> None:
    """One document's explanation as terminal tables, a table per target."""
    from snowpy.cli.common import table as Table

    from snowpy.cli.common import console as make_console

    console = make_console()
    probability = result.get("probability")
    head = f"[bold]{result['label']}[/bold]" + (
        f" ({probability:.1%})" if probability is not None else "")
    if result.get("margin") is not None:
        head += f", margin {result['margin']:.4f} over {result['runner_up']}"
    console.print(f"{_cut(result['text'])}\n  -> {head}")
    targets = result["targets"] if result["kind"] != "cloud" else \
        [dict(t, label=f"{t['label']} ({member['rule']})") for member in result["members"]
         for t in member["targets"]]
    for target in targets:
        table = Table("feature", "id", "strength", "weight", "contribution",
                      title=f"{target['label']}: score {target['score']:+.4f}",
                      title_justify="left")
        if "bias" in target:
            table.add_row("(bias)", "", f"{target['bias']['strength']:g}",
                          f"{target['bias']['weight']:.4f}",
                          f"{target['bias']['contribution']:+.4f}")
            table.add_row("(threshold)", "", "", "", f"{-target['theta']:+.4f}")
        if "evidence" in target:  # (Naive Bayes evidence stacked with the score)
            evidence = target["evidence"]
            table.add_row("(Naive Bayes evidence)", "", f"{evidence['value']:.4f}",
                          f"{evidence['weight']:.4f}", f"{evidence['contribution']:+.4f}")
        for feature in target.get("features", []):
            name = feature["name"] + (" [collides: " + ", ".join(feature["shared_with"])
                                      + "]" if feature.get("collision") else "")
            table.add_row(name, str(feature["id"]), f"{feature['strength']:g}",
                          f"{feature['weight']:.4f}" + ("" if feature["linked"] else "*"),
                          f"{feature['contribution']:+.4f}")
        for vector in target.get("support_vectors", []):
            table.add_row(f"support vector {vector['support_vector']}", "",
                          f"K {vector['kernel']:.4f}", f"{vector['coefficient']:.4f}",
                          f"{vector['contribution']:+.4f}")
        if target["others"]["count"]:
            table.add_row(f"({target['others']['count']} more)", "", "", "",
                          f"{target['others']['contribution']:+.4f}")
        console.print(table)
    if any(not f["linked"] for t in targets for f in t.get("features", [])):
        console.print("[dim]* a missing link: the weight every target gives an unlinked "
                      "feature[/dim]")


def _cut(text: str, width: int = 200) -> str:
    from rich.markup import escape

    return escape(text if len(text) <= width else text[:width - 3] + "...")
