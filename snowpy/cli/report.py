"""What ``snowpy evaluate`` prints: the headline, the explanation of what the figures
cover, per-class figures, the confusion matrix (whole, or folded to its largest
confusions with the whole written to a file), and the phases while it works."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["print_report", "write_confusion"]

#: Up to this many classes the confusion matrix is printed whole.
WHOLE_MATRIX = 12
#: Cells of a folded matrix: the largest confusions.
FOLDED_CELLS = 15


def print_report(report: dict[str, Any], multilabel: bool, confusion_file: Path | None) -> None:
    """Print an evaluation report: what the figures cover first, then the figures."""
    from snowpy.cli.common import console as make_console
    from snowpy.cli.common import table as Table

    console = make_console()
    if report.get("unknown_labels"):
        n = report["documents_with_unknown_labels"]
        names = ", ".join(report["unknown_labels"][:10])
        more = " ..." if len(report["unknown_labels"]) > 10 else ""
        rest = report["documents"] - n
        scope = ("" if multilabel else
                 "; accuracy counts them as errors" + (
                     f", the per-class figures and the probability figures cover the "
                     f"{rest:,} others" if rest else ": is this the model for this corpus?"))
        console.print(f"[yellow]note:[/yellow] {n:,} of {report['documents']:,} documents "
                      f"carry labels the model does not know ({names}{more}){scope}")
    headline = (f"subset accuracy {report['subset_accuracy']:.4f}" if multilabel
                else f"accuracy {report['accuracy']:.4f}")
    console.print(f"{report['documents']:,} documents: {headline}, "
                  f"macro-F1 {report['macro']['f1']:.4f} (over the {report['macro']['classes']:,} "
                  f"labels in the truth or the predictions), micro-F1 {report['micro']['f1']:.4f}")
    if "log_loss" in report:
        kind = " (each document-label pair)" if multilabel else ""
        console.print(f"log loss {report['log_loss']:.4f}, Brier {report['brier']:.4f}, "
                      f"ECE {report['ece']:.4f} ({report['ece_bins']} bins){kind}")
    elif report.get("unknown_labels") and report.get("documents_with_unknown_labels") == \
            report["documents"]:
        console.print("no probability figures: no document has a label the model knows")
    if "abstain" in report:
        a = report["abstain"]
        console.print(f"abstaining below a margin of {a['margin']:g}: coverage "
                      f"{a['coverage']:.4f} ({a['answered']:,} answered), accuracy on those "
                      f"{a['accuracy_answered']:.4f}")
    if "errors_file" in report:
        console.print(f"{report['errors_written']:,} mistakes written to "
                      f"{report['errors_file']}")
    table = Table("class", "precision", "recall", "F1", "support")
    for label, row in report["per_class"].items():
        table.add_row(label, f"{row['precision']:.3f}", f"{row['recall']:.3f}",
                      f"{row['f1']:.3f}", str(row["support"]))
    console.print(table)
    if "confusion" in report:
        _print_confusion(console, report["confusion"], confusion_file)


def _print_confusion(console: Any, confusion: dict[str, Any], file: Path | None) -> None:
    from snowpy.cli.common import table as Table

    labels, matrix = confusion["labels"], confusion["matrix"]
    if len(labels) <= WHOLE_MATRIX:
        table = Table("true \\ predicted", *labels, title="confusion matrix")
        for label, row in zip(labels, matrix):
            table.add_row(label, *map(str, row))
        console.print(table)
    else:
        cells = sorted(((count, i, j) for i, row in enumerate(matrix)
                        for j, count in enumerate(row) if i != j and count), reverse=True)
        table = Table("true class", "predicted as", "documents", "share",
                      title=f"the {min(FOLDED_CELLS, len(cells))} largest confusions of "
                            f"{len(labels)} classes")
        for count, i, j in cells[:FOLDED_CELLS]:
            table.add_row(labels[i], labels[j], str(count),
                          f"{count / max(sum(matrix[i]), 1):.1%}")
        console.print(table)
    if file is not None:
        console.print(f"the whole {len(labels)}x{len(labels)} confusion matrix: {file}")
    elif len(labels) > WHOLE_MATRIX:
        console.print(f"the whole {len(labels)}x{len(labels)} matrix: --confusion FILE.tsv, "
                      "--plot DIR (a figure) or --json")


def write_confusion(confusion: dict[str, Any], path: Path) -> None:
    """The whole confusion matrix as TSV: a header of predicted labels, a row per true
    label."""
    lines = ["true\\predicted\t" + "\t".join(confusion["labels"])]
    lines += [label + "\t" + "\t".join(map(str, row))
              for label, row in zip(confusion["labels"], confusion["matrix"])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
