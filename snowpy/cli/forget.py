"""``snowpy forget MODEL LABEL``: a model without a label (one learned by mistake, a class
retired), written atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from snowpy.cli.common import check_output, handles_errors, model_key
from snowpy.exceptions import ConfigurationError


@handles_errors
def forget(
    model: Annotated[Path, typer.Argument(help="model file")],
    labels: Annotated[list[str], typer.Argument(help="labels to forget")],
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="write the model here (default: over MODEL)")] = None,
    force: Annotated[bool, typer.Option(
        help="write through a symbolic link at --output (replacing the link by the file)")
    ] = False,
) -> None:
    """Forget each LABEL in MODEL; what the other labels learned stays.

    Its target node goes, with its links and its sigmoid, and the model predicts the
    labels it has left. The model is written atomically (over MODEL unless -o), or not
    at all."""
    from snowpy import load
    from snowpy.model_kinds import kind_of

    key = model_key()
    classifier = load(model, key=key)
    if kind_of(classifier) != "classifier":
        raise ConfigurationError(f"{model} holds a network without a front end: forget its "
                                 "labels from Python (Network.engine_.forget)")
    for given in labels:
        known = classifier.classes_.tolist()  # (a label of a number: the number)
        label = given if given in known else next(
            (each for each in known if str(each) == given), given)
        classifier.forget(label)
    target = model if output is None else output
    check_output(target, [], force=force, option="MODEL" if output is None else "-o")
    classifier.save(target, key=key)
    left = [str(label) for label in classifier.classes_.tolist()]
    typer.echo(f"forgot {', '.join(labels)}: {target} predicts {len(left)} labels "
               f"({', '.join(left)})")
