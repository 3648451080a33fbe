"""``snowpy tune CORPUS -o MODEL --budget 5m``: search the settings for a corpus, within a
time budget, and save the best model (fastText's ``-autotune-validation``)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Annotated

import typer

from snowpy.cli.common import (
    check_output,
    counted,
    err,
    handles_errors,
    model_key,
    summarise,
)
from snowpy.cli.reading import (
    Decode,
    Encoding,
    Header,
    LabelColumn,
    LabelField,
    Multilabel,
    TextColumn,
    TextField,
    describe_read,
)
from snowpy.cli.train import QuietOption
from snowpy.exceptions import ConfigurationError


def parse_budget(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``5m``, ``1h30m``.

    >>> parse_budget("5m"), parse_budget("1h30m"), parse_budget("45")
    (300.0, 5400.0, 45.0)
    """
    parts = re.fullmatch(r"\s*(?:(\d+(?:\.\d+)?)h)?\s*(?:(\d+(?:\.\d+)?)m)?\s*"
                         r"(?:(\d+(?:\.\d+)?)s?)?\s*", text)
    if not text.strip() or parts is None or not any(parts.groups()):
        raise ConfigurationError(f"--budget {text!r}: give a time such as 300, 90s, 5m or "
                                 "1h30m")
    hours, minutes, seconds = (float(x) if x else 0.0 for x in parts.groups())
    return hours * 3600 + minutes * 60 + seconds


@handles_errors
def tune(
    corpus: Annotated[str, typer.Argument(help="path or registered corpus name")],
    output: Annotated[Path, typer.Option("--output", "-o", help="model file to write")],
    budget: Annotated[str, typer.Option(
        help="time for the whole search, the final training included: 300, 90s, 5m, 1h")
    ] = "5m",
    validation: Annotated[float, typer.Option(
        help="share of the training documents each trial is scored on")] = 0.2,
    report: Annotated[Path | None, typer.Option(
        help="write an HTML report of the trials, with the score against time")] = None,
    study: Annotated[Path | None, typer.Option(
        help="a file keeping every trial: given again, the search continues")] = None,
    seed: Annotated[int, typer.Option(help="seed of the split and the sampler")] = 0,
    split: Annotated[str | None, typer.Option(
        help="split of the corpus (default: its train split; a test split is never read "
             "unless named)")] = None,
    format: Annotated[str | None, typer.Option(help="input format (guessed)")] = None,
    encoding: Encoding = None,
    decode: Decode = "strict",
    label_column: LabelColumn = None,
    text_column: TextColumn = None,
    header: Header = None,
    label_field: LabelField = None,
    text_field: TextField = None,
    multilabel: Multilabel = False,
    quiet: QuietOption = False,
    json_output: Annotated[bool, typer.Option("--json", help="a JSON summary")] = False,
) -> None:
    """Search the settings for CORPUS, then train the best on it and save it to MODEL.

    The rule, its parameters, the n-grams, bits, thickness, epochs and link policy
    (Optuna's TPE, bad trials pruned early), each scored on a validation split carved
    from the training documents; the best setting is trained on them all."""
    from snowpy import tuning

    seconds = parse_budget(budget)
    check_output(output, [corpus])
    chatty = not (quiet or json_output)
    from snowpy import corpora

    layout = corpora.Layout(encoding, decode, label_column, text_column or [], header,
                            label_field, text_field or [], multilabel)
    read = corpora.open(corpus, split=split, format=format, layout=layout,
                        prefer="train").read()
    if chatty:
        err(describe_read(corpus, read))
    assert read.texts is not None

    said: dict[str, float] = {"best": float("nan"), "at": 0.0}

    def show(standing: tuning.Standing) -> None:
        """A line when the best changes, else every 10 seconds at most."""
        if not chatty:
            return
        from snowpy.tuning.space import described

        now = time.monotonic()
        if standing.best_score == said["best"] and now - said["at"] < 10:
            return
        said.update(best=standing.best_score, at=now)
        left = max(standing.budget - standing.elapsed, 0.0)
        err(f"trial {standing.trials} ({standing.pruned} pruned): best "
            f"{standing.best_score:.4f} ({described(standing.best)}); {left:.0f} s left")

    result = tuning.tune(read.texts, list(read.labels), budget=seconds,
                         validation=validation, seed=seed,
                         study=None if study is None else str(study), progress=show)
    result.classifier.save(output, key=model_key(),
                           read_with=layout.recorded(corpus, format))
    if report is not None:
        from snowpy._atomic import write_bytes
        from snowpy.tuning.report import report_html

        write_bytes(report, report_html(result, f"snowpy tune {corpus}").encode())
    from snowpy.tuning.space import described

    summary = {"model": str(output), "corpus": corpus, "metric": result.metric,
               "best_score": result.best_score, "baseline_score": result.baseline_score,
               "best": result.best_params, "trials": len(result.trials),
               "seconds": round(result.seconds, 1)}
    summarise(summary, f"tuned on {counted(len(read), 'document')} in "
              f"{counted(len(result.trials), 'trial')}, {result.seconds:.0f} s: validation "
              f"{result.metric} {result.best_score:.4f}"
              + ("" if result.baseline_score is None else
                 f" (defaults {result.baseline_score:.4f})")
              + f"; saved {output}, which this command trains again:\n"
              f"snowpy train {corpus}{'' if split is None else f' --split {split}'} "
              + "".join(f"{flag} " for flag in
                        ([f"--format {format}"] if format else []) + layout.flags())
              + f"-o MODEL {described(result.best_params, exact=True)}",
              json_output=json_output, quiet=quiet)
