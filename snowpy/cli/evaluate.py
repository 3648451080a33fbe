"""``snowpy evaluate MODEL CORPUS``: accuracy, per-class figures, calibration, figures."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from snowpy.cli.common import echo_json, err, fail, handles_errors
from snowpy.cli.progress import Phases
from snowpy.cli.reading import (
    Decode,
    Encoding,
    Header,
    LabelColumn,
    LabelField,
    Multilabel,
    ReadOptions,
    TextColumn,
    TextField,
    describe_read,
    read_documents,
)
from snowpy.cli.report import print_report, write_confusion


@handles_errors
def evaluate(
    model: Annotated[Path, typer.Argument(help="model file")],
    corpus: Annotated[str, typer.Argument(help="path, registered corpus name, or -")],
    split: Annotated[str | None, typer.Option(
        help="split of the corpus (default: its test split)")] = None,
    format: Annotated[str | None, typer.Option(help="input format (guessed)")] = None,
    encoding: Encoding = None,
    decode: Decode = "strict",
    label_column: LabelColumn = None,
    text_column: TextColumn = None,
    header: Header = None,
    label_field: LabelField = None,
    text_field: TextField = None,
    multilabel: Multilabel = False,
    on_error: Annotated[str, typer.Option(help="malformed records: raise or skip")] = "raise",
    bins: Annotated[int, typer.Option(help="bins of the calibration error")] = 15,
    plot: Annotated[Path | None, typer.Option(
        help="write confusion.png and reliability.png into this folder (needs matplotlib)")
    ] = None,
    reliability_diagram: Annotated[Path | None, typer.Option(
        help="draw the reliability diagram to this PNG or SVG (needs matplotlib)")] = None,
    confusion: Annotated[Path | None, typer.Option(
        help="write the whole confusion matrix to this TSV file")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Evaluate MODEL on CORPUS: accuracy, precision, recall, F1, confusion, calibration."""
    from snowpy import load
    from snowpy.classifier import SnowClassifier

    if bins < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--bins")
    classifier = load(model)
    if not isinstance(classifier, SnowClassifier):
        raise typer.BadParameter("this model holds a Network without a front end; evaluate "
                                 "it from Python", param_hint="MODEL")
    layout = ReadOptions(encoding, decode, label_column, text_column or [], header,
                         label_field, text_field or [], multilabel)
    phases = Phases(quiet=json_output)
    with phases("reading"):
        read = read_documents(corpus, split=split, format=format, on_error=on_error,
                              layout=layout, prefer="test")
    if not json_output:
        err(describe_read(corpus, read))
    report = _measure(classifier, read.texts, read.labels, bins, phases)
    report["split"] = read.split
    report["skipped"] = read.problems.skipped
    title = f"{model.name} on {Path(corpus).name}" + (f", {read.split}" if read.split else "")
    if confusion is not None and "confusion" in report:
        write_confusion(report["confusion"], confusion)
        report["confusion_file"] = str(confusion)
    if json_output:
        echo_json(report)
    else:
        print_report(report, classifier.network_.multilabel_, confusion)
    _figures(report, title, plot, reliability_diagram, quiet=json_output)


def _measure(classifier: Any, texts: list[Any], labels: list[Any], bins: int,
             phases: Any) -> dict[str, Any]:
    """The report: quality over every document, probabilities over those whose labels
    the model knows (an unknown label has no probability to score)."""
    import numpy as np

    from snowpy import metrics

    network = classifier.network_
    classes = list(network.classes_)
    known_names = {str(c) for c in classes}
    with phases(f"predicting {len(texts):,} documents"):
        predicted = classifier.predict(texts)
    if network.multilabel_:
        truth = [tuple(x) if isinstance(x, (list, tuple)) else (x,) for x in labels]
        report = metrics.multilabel_report(truth, predicted, classes)
        seen = {str(label) for labels_ in truth for label in labels_}
        known = np.ones(len(truth), dtype=bool)
    else:
        predicted = predicted.tolist()
        report = metrics.classification_report(labels, predicted, classes)
        seen = {str(x) for x in labels}
        known = np.array([str(x) in known_names for x in labels], dtype=bool)
    unknown = sorted(seen - known_names)
    if unknown:
        report["unknown_labels"] = unknown
        report["documents_with_unknown_labels"] = int((~known).sum())
    if network.calibration_ is None or not known.any():
        return report
    with phases("probabilities"):
        probabilities = classifier.predict_proba([t for t, k in zip(texts, known) if k])
    if network.multilabel_:
        index = {str(c): i for i, c in enumerate(classes)}
        indicator = np.zeros(probabilities.shape)
        for row, labels_ in enumerate(truth):
            for label in labels_:
                if str(label) in index:
                    indicator[row, index[str(label)]] = 1.0
        figures = metrics.multilabel_calibration(probabilities, indicator, bins)
        report.update(figures)
        report["reliability_kind"] = "per label"
    else:
        index = {str(c): i for i, c in enumerate(classes)}
        true_index = np.array([index[str(x)] for x, k in zip(labels, known) if k])
        report["log_loss"] = metrics.log_loss(probabilities, true_index)
        report["brier"] = metrics.brier_score(probabilities, true_index)
        report["ece"] = metrics.expected_calibration_error(probabilities, true_index, bins)
        report["reliability"] = metrics.reliability(probabilities, true_index, bins)
        report["reliability_kind"] = "top class"
    report["ece_bins"] = bins
    report["calibrated_documents"] = int(known.sum())
    return report


def _figures(report: dict[str, Any], title: str, folder: Path | None,
             reliability_path: Path | None, quiet: bool) -> None:
    """Draw the figures asked for, after the figures were printed (a missing matplotlib
    costs the pictures, never the evaluation)."""
    wanted: list[tuple[str, Path]] = []
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        if "confusion" in report:
            wanted.append(("confusion", folder / "confusion.png"))
        if "reliability" in report:
            wanted.append(("reliability", folder / "reliability.png"))
    if reliability_path is not None:
        if "reliability" not in report:
            fail("--reliability-diagram: this model gives no probabilities (train it with "
                 "--calibrate cv) or no document has a label it knows")
        wanted.append(("reliability", reliability_path))
    if not wanted:
        return
    from snowpy import plots

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        fail("the figures need matplotlib: pip install 'snowpy[plot]' (the figures above "
             "are complete)")
    for kind, path in wanted:
        if kind == "confusion":
            plots.plot_confusion(report["confusion"]["matrix"], report["confusion"]["labels"],
                                 str(path), f"Confusion matrix: {title}")
        else:
            per_label = report.get("reliability_kind") == "per label"
            plots.plot_reliability(
                report["reliability"], str(path), f"Reliability: {title}",
                xlabel="probability of a label" if per_label else
                "confidence of the predicted label",
                ylabel="fraction holding the label" if per_label else "accuracy")
        if not quiet:
            err(f"wrote {path}")
