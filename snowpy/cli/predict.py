"""``snowpy predict MODEL [INPUT]``: a label (or the top k) per document or line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import numpy as np
import orjson
import typer

from snowpy.cli.common import handles_errors, read_lines


@handles_errors
def predict(
    model: Annotated[Path, typer.Argument(help="model file")],
    input: Annotated[str | None, typer.Argument(help="text file, one document per line; "
                                                      "standard input when absent or -")] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="labels per document")] = 1,
    jsonl: Annotated[bool, typer.Option("--jsonl", help="JSON Lines output")] = False,
    batch: Annotated[int, typer.Option(help="documents per batch")] = 10000,
) -> None:
    """Predict a label for each line of INPUT (or standard input), to standard output.

    With --top-k K, the K most likely labels and their probabilities (scores
    when the model is not calibrated).
    """
    from snowpy import load
    from snowpy.classifier import SnowClassifier

    if top_k < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--top-k")
    classifier = load(model)
    if not isinstance(classifier, SnowClassifier):
        raise typer.BadParameter("this model has no text front end", param_hint="MODEL")
    lines = list(read_lines(input))
    network = classifier.network_
    classes = network.classes_.tolist()
    calibrated = network.calibration_ is not None
    for start in range(0, len(lines), batch):
        chunk = lines[start:start + batch]
        if network.multilabel_:
            for labels in classifier.predict(chunk):
                typer.echo(orjson.dumps({"labels": list(labels)}).decode() if jsonl
                           else ",".join(map(str, labels)))
            continue
        scores = classifier.predict_proba(chunk) if calibrated \
            else classifier.decision_function(chunk)
        order = np.argsort(-scores, axis=1, kind="stable")[:, :top_k]
        for row, best in zip(scores, order):
            pairs = [(classes[i], float(row[i])) for i in best]
            if jsonl:
                key = "probability" if calibrated else "score"
                typer.echo(orjson.dumps({"label": pairs[0][0], "top": [
                    {"label": label, key: round(value, 6)} for label, value in pairs]}).decode())
            elif top_k == 1:
                typer.echo(str(pairs[0][0]))
            else:
                typer.echo("\t".join(f"{label} {value:.4f}" for label, value in pairs))
