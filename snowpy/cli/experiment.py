"""``snowpy experiment NAME``: run a learning-theory experiment, write its table and figure."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from snowpy.cli.common import err, handles_errors


@handles_errors
def experiment(
    name: Annotated[str, typer.Argument(help="attribute-efficiency, margin, drift, averaging, "
                                             "learning-curve, halving, weighted-majority, "
                                             "clouds or normalised-winnow")],
    out: Annotated[Path, typer.Option("--out", "-o", help="folder for the table and figure")]
    = Path("."),
    table: Annotated[str, typer.Option(help="csv or json")] = "csv",
    figure: Annotated[str, typer.Option(help="png, svg or none")] = "png",
    seed: Annotated[int, typer.Option(help="seed of the experiment")] = 0,
) -> None:
    """Run a classic experiment of online learning: a mistake bound checked, a curve drawn.

    Each runs on snowpy's own implementation. Writes NAME.csv (or .json) and NAME.png (or .svg) into --out.
    """
    from snowpy import experiments

    result = experiments.run(name, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    written = [result.write_table(out / f"{name}.{table}")]
    if figure != "none":
        import warnings

        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            drawn = result.draw(out / f"{name}.{figure}")
        if drawn is None:
            err("no figure: it needs matplotlib (pip install '.[plot]' in snowpy's source folder)")
        else:
            written.append(drawn)
    err(f"{result.title}: {len(result.rows)} rows; wrote {', '.join(map(str, written))}")
