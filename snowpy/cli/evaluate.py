"""``snowpy evaluate MODEL CORPUS``: accuracy, per-class figures, calibration."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from snowpy.cli.common import describe_read, echo_json, err, handles_errors, read_documents


@handles_errors
def evaluate(
    model: Annotated[Path, typer.Argument(help="model file")],
    corpus: Annotated[str, typer.Argument(help="path, registered corpus name, or -")],
    split: Annotated[str | None, typer.Option(
        help="split of the corpus (a registered corpus: test by default)")] = None,
    format: Annotated[str | None, typer.Option(help="input format (guessed)")] = None,
    encoding: Annotated[str | None, typer.Option(help="text encoding of files")] = None,
    on_error: Annotated[str, typer.Option(help="malformed records: raise or skip")] = "raise",
    bins: Annotated[int, typer.Option(help="bins of the calibration error")] = 15,
    reliability_diagram: Annotated[Path | None, typer.Option(
        help="draw a reliability diagram to this PNG or SVG (needs matplotlib)")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Evaluate MODEL on CORPUS: accuracy, precision, recall, F1, confusion, calibration."""
    from snowpy import load, metrics
    from snowpy.classifier import SnowClassifier

    classifier = load(model)
    if not isinstance(classifier, SnowClassifier):
        raise typer.BadParameter("this model holds a Network without a front end; evaluate "
                                 "it from Python", param_hint="MODEL")
    read = read_documents(corpus, split=split, format=format,
                          encoding=encoding, on_error=on_error, prefer="test")
    texts, labels, problems, split = read
    if not json_output:
        err(describe_read(corpus, read))
    network = classifier.network_
    classes = list(network.classes_)
    predicted = classifier.predict(texts)
    if network.multilabel_:
        truth = [tuple(x) if isinstance(x, (list, tuple)) else (x,) for x in labels]
        report = metrics.multilabel_report(truth, predicted, classes)
    else:
        predicted = predicted.tolist()
        report = metrics.classification_report(labels, predicted, classes)
        unknown = sorted({str(x) for x in labels} - {str(c) for c in classes})
        if unknown:
            report["unknown_labels"] = unknown
        if network.calibration_ is not None:
            index = {str(c): i for i, c in enumerate(classes)}
            import numpy as np

            known = np.array([str(x) in index for x in labels])
            true_index = np.array([index.get(str(x), 0) for x in labels])[known]
            probabilities = classifier.predict_proba([t for t, k in zip(texts, known) if k])
            report["log_loss"] = metrics.log_loss(probabilities, true_index)
            report["brier"] = metrics.brier_score(probabilities, true_index)
            report["ece"] = metrics.expected_calibration_error(probabilities, true_index, bins)
            report["ece_bins"] = bins
            diagram = metrics.reliability(probabilities, true_index, bins)
            report["reliability"] = diagram
            if reliability_diagram is not None:
                try:
                    metrics.plot_reliability(diagram, str(reliability_diagram),
                                             f"{model.name} on {corpus}")
                except ImportError:
                    err("the reliability diagram needs matplotlib: pip install 'snowpy[plot]'")
                    raise typer.Exit(1) from None
    report["skipped"] = problems.skipped
    if json_output:
        echo_json(report)
        return
    _print(report, network.multilabel_)


def _print(report: dict, multilabel: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    headline = (f"subset accuracy {report['subset_accuracy']:.4f}" if multilabel
                else f"accuracy {report['accuracy']:.4f}")
    console.print(f"{report['documents']} documents: {headline}, "
                  f"macro-F1 {report['macro']['f1']:.4f}, micro-F1 {report['micro']['f1']:.4f}")
    if "log_loss" in report:
        console.print(f"log loss {report['log_loss']:.4f}, Brier {report['brier']:.4f}, "
                      f"ECE {report['ece']:.4f} ({report['ece_bins']} bins)")
    table = Table("class", "precision", "recall", "F1", "support")
    for label, row in report["per_class"].items():
        table.add_row(label, f"{row['precision']:.3f}", f"{row['recall']:.3f}",
                      f"{row['f1']:.3f}", str(row["support"]))
    console.print(table)
    confusion = report.get("confusion")
    if confusion and len(confusion["labels"]) <= 12:
        matrix = Table("true \\ predicted", *confusion["labels"])
        for label, row in zip(confusion["labels"], confusion["matrix"]):
            matrix.add_row(label, *map(str, row))
        console.print(matrix)
    if report.get("unknown_labels"):
        console.print(f"labels the model does not know: {', '.join(report['unknown_labels'])}")
