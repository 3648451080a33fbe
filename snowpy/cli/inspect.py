"""``snowpy inspect MODEL``: what a model is, and its heaviest features by name."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from snowpy.cli.common import echo_json, handles_errors


def describe(model: Any, top: int) -> dict[str, Any]:
    """Everything ``inspect`` shows, as a dict."""
    from snowpy.classifier import SnowClassifier

    classifier = model if isinstance(model, SnowClassifier) else None
    net = classifier.network_ if classifier else model
    featurizer = classifier.featurizer_ if classifier else None
    table = net._table
    weights = net.effective_weights()[: table.n_rows]
    feature_ids = table.feature_ids
    names = featurizer.names_ if featurizer is not None and featurizer.keep_names else {}
    classes = net.classes_.tolist()
    heaviest = {}
    for t, label in enumerate(classes):
        column = weights[1:, t]
        best = np.argsort(-column, kind="stable")[:top]
        heaviest[str(label)] = [
            {"feature": int(feature_ids[i]), "weight": float(column[i]),
             "names": names.get(int(feature_ids[i]), [])} for i in best]
    return {
        "kind": "classifier" if classifier else "network",
        "rule": net.rule, "rule_params": net.rule_params_,
        "options": {name: getattr(net, name) for name in net._option_names if name != "rule"},
        "front_end": featurizer.get_params() if featurizer is not None else None,
        "classes": classes, "multilabel": net.multilabel_,
        "features_seen": int(table.n_rows - 1), "n_features": int(net.n_features_in_),
        "names_kept": bool(names),
        "training": {"epochs": len(net.mistakes_), "mistakes_per_epoch": net.mistakes_,
                     "updates_per_epoch": net.updates_, "examples": net.n_examples_seen_,
                     "promotions": net.promotions_.tolist(), "demotions": net.demotions_.tolist(),
                     "overflows": net.overflows_, "underflows": net.underflows_},
        "bias": {str(c): float(w) for c, w in zip(classes, net.intercept_)},
        "calibration": net.calibration_.header() if net.calibration_ is not None else None,
        "inference_only": bool(table.frozen),
        "top_features": heaviest,
    }


def export(model: Any, path: Path) -> None:
    """Every weight, per target: JSON (``.json``) or SNoW-like text (other suffixes)."""
    import orjson

    info = describe(model, top=0)
    net = model.network_ if info["kind"] == "classifier" else model
    table = net._table
    weights = net.effective_weights()[: table.n_rows]
    ids = table.feature_ids
    names = model.featurizer_.names_ if info["names_kept"] else {}
    if path.suffix.lower() == ".json":
        payload = {"rule": info["rule"], "rule_params": info["rule_params"], "targets": [
            {"label": label, "bias": float(weights[0, t]),
             "weights": [{"feature": int(ids[i]), "weight": float(weights[1 + i, t]),
                          **({"names": names[int(ids[i])]} if int(ids[i]) in names else {})}
                         for i in range(ids.size)]}
            for t, label in enumerate(info["classes"])]}
        path.write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2))
        return
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"# snowpy network: rule {info['rule']} {info['rule_params']}\n")
        for t, label in enumerate(info["classes"]):
            out.write(f"target {t} {label} bias {weights[0, t]:.6g} "
                      f"promotions {info['training']['promotions'][t]} "
                      f"demotions {info['training']['demotions'][t]}\n")
            for i in range(ids.size):
                name = " | ".join(names.get(int(ids[i]), []))
                out.write(f"  {int(ids[i])} {weights[1 + i, t]:.6g}{' ' + name if name else ''}\n")


@handles_errors
def inspect(
    model: Annotated[Path, typer.Argument(help="model file")],
    top: Annotated[int, typer.Option(help="heaviest features shown per class")] = 10,
    export_to: Annotated[Path | None, typer.Option(
        "--export", help="write every weight to .json, or SNoW-like text (.txt)")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Show MODEL: rule, parameters, classes, training figures, heaviest features."""
    from snowpy import load

    loaded = load(model)
    if export_to is not None:
        export(loaded, export_to)
    info = describe(loaded, top)
    if json_output:
        echo_json(info)
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]{model}[/bold]: {info['kind']}, rule {info['rule']} "
                  f"{info['rule_params']}")
    console.print(f"{len(info['classes'])} classes, {info['features_seen']:,} features seen "
                  f"of {info['n_features']:,}, trained {info['training']['epochs']} epochs on "
                  f"{info['training']['examples']:,} examples; mistakes per epoch "
                  f"{info['training']['mistakes_per_epoch']}")
    if info["calibration"]:
        console.print(f"calibrated: {info['calibration']}")
    if info["inference_only"]:
        console.print("inference only: effective weights, no training state")
    for label, features in info["top_features"].items():
        table = Table(title=f"{label} (bias {info['bias'][label]:.4g})", title_justify="left")
        table.add_column("feature")
        table.add_column("weight", justify="right")
        for item in features:
            shown = " | ".join(item["names"]) if item["names"] else f"#{item['feature']}"
            table.add_row(shown, f"{item['weight']:.4g}")
        console.print(table)
    if export_to is not None:
        console.print(f"exported every weight to {export_to}")
