"""``snowpy evaluate MODEL CORPUS``: accuracy, per-class figures, calibration, figures."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from snowpy.cli.common import echo_json, err, fail, given_options, handles_errors, model_key
from snowpy.cli.distributed import (
    Scheduler,
    Shards,
    Workers,
    cluster_of,
    evaluate_distributed,
    wanted,
)
from snowpy.cli.progress import Phases
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
    read_as_trained,
)
from snowpy.cli.report import print_report, write_confusion
from snowpy.exceptions import ConfigurationError


@handles_errors
def evaluate(
    ctx: typer.Context,
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
        help="write the figures into this folder (needs matplotlib): confusion.png, "
             "reliability.png (a calibrated model), coverage.png (single-label: accuracy "
             "against coverage when abstaining)")
    ] = None,
    reliability_diagram: Annotated[Path | None, typer.Option(
        help="draw the reliability diagram to this PNG or SVG (needs matplotlib)")] = None,
    confusion: Annotated[Path | None, typer.Option(
        help="write the whole confusion matrix to this TSV file")] = None,
    errors: Annotated[Path | None, typer.Option(
        help="write every mistake (document, text, true and predicted label, every "
             "target's activation) to this JSON Lines file (SNoW's error file)")] = None,
    abstain: Annotated[float | None, typer.Option(
        help="also report coverage and accuracy when abstaining where the two most "
             "probable labels are less than this apart (SNoW -p)")] = None,
    workers: Workers = None,
    scheduler: Scheduler = None,
    shards: Shards = None,
    predictions: Annotated[Path | None, typer.Option(
        help="with --workers/--scheduler: also write the predictions to this folder, a file "
             "per shard")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Evaluate MODEL on CORPUS: accuracy, precision, recall, F1, confusion, calibration."""
    from snowpy import corpora, load, model_kinds

    layout = corpora.Layout(encoding, decode, label_column, text_column or [], header,
                            label_field, text_field or [], multilabel)
    if abstain is not None and not 0.0 <= abstain <= 1.0:
        raise typer.BadParameter("must be a probability margin from 0 to 1",
                                 param_hint="--abstain")
    if wanted(workers, scheduler):
        extra = [name for name, value in (("--plot", plot), ("--reliability-diagram",
                 reliability_diagram), ("--confusion", confusion), ("--errors", errors),
                 ("--abstain", abstain)) if value is not None]
        if extra:
            raise ConfigurationError(f"{extra[0]} is not available with --workers/--scheduler "
                                     "(accuracy and macro-F1 are)")
        from snowpy.distributed.shards import Reading

        evaluate_distributed(model, corpus, cluster=cluster_of(workers, scheduler),
                             reading=Reading(shards, split, format, layout, on_error),
                             output=predictions, json_output=json_output)
        return

    if bins < 1:
        raise typer.BadParameter("must be at least 1", param_hint="--bins")
    classifier = load(model, mmap=True, key=model_key())  # (the pages of the weights it reads, no more)
    if model_kinds.kind_of(classifier) != "classifier":
        raise typer.BadParameter("this model holds a Network without a front end; evaluate "
                                 "it from Python", param_hint="MODEL")
    layout = read_as_trained(layout, classifier.read_with_, corpus, format,
                             given_options(ctx), quiet=json_output)
    phases = Phases(quiet=json_output)
    with phases("reading"):
        read = corpora.open(corpus, split=split, format=format, layout=layout,
                            prefer="test", on_error=on_error).read()
    texts = read.texts
    assert texts is not None  # (read without a featurizer: the texts)
    if not json_output:
        err(describe_read(corpus, read, training=False))
    network = classifier.network_
    with phases(f"featurising {len(texts):,} documents"):  # once, for every figure
        X = classifier.rows(texts)
    with phases(f"predicting {len(texts):,} documents"):
        predicted = network.predict(X)
    report = _measure(network, X, read.labels, predicted, bins, phases)
    if (abstain is not None or plot is not None) and not network.multilabel_:
        report.update(_coverage(network, X, read.labels, abstain))
    if errors is not None:
        report["errors_file"] = str(errors)
        report["errors_written"] = _write_errors(network, X, texts, read.labels,
                                                 predicted, errors)
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


def _coverage(network: Any, X: Any, labels: Any, abstain: float | None) -> dict[str, Any]:
    """Coverage and accuracy when abstaining below each margin 0, 0.05, ... 1 (and at
    ``abstain``, SNoW's ``-p``)."""
    margin, correct = _margins(network, X, labels)
    found: dict[str, Any] = {"coverage_curve": []}
    for step in range(21):
        coverage, _, accuracy = _abstention(margin, correct, step / 20)
        found["coverage_curve"].append({"margin": step / 20, "coverage": coverage,
                                        "accuracy": accuracy})
    if abstain is not None:
        coverage, answered, accuracy = _abstention(margin, correct, abstain)
        found["abstain"] = {"margin": abstain, "coverage": coverage, "answered": answered,
                            "accuracy_answered": accuracy or 0.0}
    return found


def _measure(network: Any, X: Any, labels: list[Any], predicted: Any, bins: int,
             phases: Any) -> dict[str, Any]:
    """The report: quality over every document, probabilities over those whose labels
    the model knows (an unknown label has no probability to score)."""
    import numpy as np

    from snowpy import metrics

    classes = list(network.classes_)
    known_names = {str(c) for c in classes}
    if network.multilabel_:
        truth = [tuple(x) if isinstance(x, (list, tuple)) else (x,) for x in labels]
        report = metrics.multilabel_report(truth, predicted, classes)
        seen = {str(label) for labels_ in truth for label in labels_}
        known = np.ones(len(truth), dtype=bool)  # (every document keeps its probabilities)
        unknown_in = np.array([any(str(x) not in known_names for x in labels_)
                               for labels_ in truth], dtype=bool)
    else:
        report = metrics.classification_report(labels, predicted.tolist(), classes)
        seen = {str(x) for x in labels}
        known = np.array([str(x) in known_names for x in labels], dtype=bool)
        unknown_in = ~known
    unknown = sorted(seen - known_names)
    if unknown:
        report["unknown_labels"] = unknown
        report["documents_with_unknown_labels"] = int(unknown_in.sum())
    if network.calibration_ is None or not known.any():
        return report
    with phases("probabilities"):
        probabilities = network.predict_proba(X[np.flatnonzero(known)])
    index = {str(c): i for i, c in enumerate(classes)}
    if network.multilabel_:
        indicator = np.zeros(probabilities.shape)
        for row, labels_ in enumerate(truth):
            for label in labels_:
                if str(label) in index:
                    indicator[row, index[str(label)]] = 1.0
        report.update(metrics.multilabel_calibration(probabilities, indicator, bins))
        report["reliability_kind"] = "per label"
    else:
        true_index = np.array([index[str(x)] for x, k in zip(labels, known) if k])
        report["log_loss"] = metrics.log_loss(probabilities, true_index)
        report["brier"] = metrics.brier_score(probabilities, true_index)
        report["ece"] = metrics.expected_calibration_error(probabilities, true_index, bins)
        report["reliability"] = metrics.reliability(probabilities, true_index, bins)
        report["reliability_kind"] = "top class"
    report["ece_bins"] = bins
    report["calibrated_documents"] = int(known.sum())
    return report


def _margins(network: Any, X: Any, labels: list[Any]) -> tuple[Any, Any]:
    """Per document, the gap between its two most probable labels (what abstaining,
    SNoW's -p k, compares with k) and whether the most probable one is right."""
    import numpy as np

    classes = [str(c) for c in network.classes_]
    shares = network.normalised_scores(X)
    order = np.sort(shares, axis=1)
    margin = order[:, -1] - order[:, -2] if shares.shape[1] > 1 else np.ones(len(labels))
    correct = np.array([classes[i] == str(y) for i, y in zip(shares.argmax(axis=1), labels)])
    return margin, correct


def _abstention(margin: Any, correct: Any, k: float) -> tuple[float, int, float | None]:
    """Abstaining below margin ``k``: the coverage (share of documents answered), the
    documents answered, and the accuracy on those (None when none is)."""
    answered = margin >= k
    return (float(answered.mean()) if answered.size else 0.0, int(answered.sum()),
            float(correct[answered].mean()) if answered.any() else None)


def _write_errors(network: Any, X: Any, texts: list[Any], labels: list[Any], predicted: Any,
                  path: Path) -> int:
    """SNoW's error file as JSON Lines: each mistake with its document number (from 0, in
    corpus order), text, true and predicted labels, and every target's activation."""
    import orjson

    classes = [str(c) for c in network.classes_]
    if network.multilabel_:
        wrong = [i for i, (p, y) in enumerate(zip(predicted, labels))
                 if set(map(str, p)) != set(map(str, y if isinstance(y, (list, tuple))
                                                     else (y,)))]
    else:
        wrong = [i for i, (p, y) in enumerate(zip(predicted, labels)) if str(p) != str(y)]
    scores = network.target_scores(X[wrong]) if wrong else []
    with open(path, "wb") as out:
        for i, row in zip(wrong, scores):
            p = predicted[i]
            out.write(orjson.dumps({
                "document": i, "text": texts[i] if isinstance(texts[i], str) else str(texts[i]),
                "true": labels[i] if isinstance(labels[i], (str, int)) else list(labels[i]),
                "predicted": p if isinstance(p, (str, int)) else list(p),
                "activations": {c: round(float(v), 6) for c, v in zip(classes, row)},
            }, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
    return len(wrong)


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
        if "coverage_curve" in report:
            wanted.append(("coverage", folder / "coverage.png"))
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
        fail("the figures need matplotlib: pip install '.[plot]' in snowpy's source folder (the figures above "
             "are complete)")
    for kind, path in wanted:
        if kind == "coverage":
            plots.plot_coverage(report["coverage_curve"], str(path),
                                f"Abstaining: {title}")
        elif kind == "confusion":
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
