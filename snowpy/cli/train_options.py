"""The options of ``snowpy train``, one alias each (typer reads the help from them),
so that the command's signature is a list of names and defaults. The options that are
the classifier's parameters are built from its table (:data:`snowpy.declared.CLASSIFIER`):
their help is the declared line, and the command reads their defaults there too."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from snowpy.declared import CLASSIFIER

__all__ = [
    "AverageOption", "AverageOverOption", "BiasOption", "BitsOption", "CacheOption",
    "CalibrateOption", "CharNgramsOption", "CheckpointOption",
    "ConjunctionsOption", "CorpusOption", "CurveOption", "DiscardOption",
    "EarlyStopOption", "EligibilityOption", "EpochsOption",
    "ForceOption", "FormatOption", "IdfOption", "InferenceOnlyOption", "JsonOutputOption",
    "KeepNamesOption", "L2Option", "LinksOption", "MixingOption", "MulticlassOption",
    "NgramsOption",
    "OnErrorOption", "OutputOption", "PrecisionOption", "QuietOption", "SkipgramsOption",
    "RelevanceOption", "ReportEveryOption", "ResumeOption", "RuleOption", "SaveEveryOption",
    "SavePartialOption", "SeedOption", "SplitOption", "StreamOption", "TestEveryOption",
    "TestOption", "ThicknessOption", "ThreadsOption", "ValuesOption", "declared", "spelled",
]



def declared(name: str, *flags: str, note: str = "", callback: Any = None) -> Any:
    """The option of the classifier's parameter ``name``: its help is the declared line,
    then ``note`` (how the command line writes a value, or decides a default);
    ``callback`` checks a value given."""
    doc = CLASSIFIER[name].doc
    return typer.Option(*flags, help=f"{doc} ({note})" if note else doc, callback=callback)


def _threads(value: int | None) -> int | None:
    """``--threads``: a number from 1, or -1 for every core (-2 all but one...), leaving
    at least one of the cores this process may use."""
    from snowpy._validation import usable_cores

    cores = usable_cores()
    if value is not None and (value == 0 or value < -cores):
        raise typer.BadParameter(
            f"{value} leaves no thread: give a number of threads from 1, or -1 for every "
            f"core this process may use ({cores}; -2 all but one...)")
    return value


def spelled(name: str) -> str:
    """The classifier's default of ``name``, as the command line writes it (a range of
    lengths as 1-2, None as none)."""
    value = CLASSIFIER[name].default
    if value is None:
        return "none"
    if value is True:  # (a bias of strength 1)
        return "1"
    return "-".join(map(str, value)) if isinstance(value, tuple) else str(value)


CorpusOption = Annotated[str, typer.Argument(help="path, registered corpus name, or -")]
OutputOption = Annotated[Path, typer.Option("--output", "-o", help="model file to write")]
RuleOption = Annotated[str, declared("rule")]
ThicknessOption = Annotated[float, declared("thickness")]
NgramsOption = Annotated[str, declared("ngrams", note="e.g. 1-2, or none")]
CharNgramsOption = Annotated[str, declared("char_ngrams", note="e.g. 3-5, or none")]
SkipgramsOption = Annotated[int | None, declared("skipgrams", note="VW's --skips")]
ConjunctionsOption = Annotated[int | None, typer.Option(
        help="add pairwise conjunctions of tokens within this window, 0 for the whole "
             "document (SNoW -g +)")]
BitsOption = Annotated[int, declared("bits")]
ValuesOption = Annotated[str, declared("values")]
IdfOption = Annotated[bool, declared("idf", "--idf/--no-idf")]
RelevanceOption = Annotated[float, declared("relevance", note="0 for none")]
BiasOption = Annotated[str, declared("bias", note="its strength, or none")]
L2Option = Annotated[bool, declared("norm", "--l2/--no-l2")]
EpochsOption = Annotated[int | None, declared(
        "epochs", note=f"default {CLASSIFIER['epochs'].default}; a stream is learned in one")]
AverageOption = Annotated[bool, declared("average", "--average/--no-average")]
ThreadsOption = Annotated[int, declared(
        "n_jobs", "--threads", note="default -1; the targets are shared among the threads, "
        "or, when they are learned together (--multiclass constraint) or fewer than the "
        "threads, each epoch's examples (docs/rules.md)", callback=_threads)]
MulticlassOption = Annotated[str, declared("multiclass")]
EarlyStopOption = Annotated[bool, declared("early_stop", "--early-stop/--no-early-stop")]
LinksOption = Annotated[str, declared("links")]
EligibilityOption = Annotated[str, declared("eligibility")]
DiscardOption = Annotated[str, declared("discard", note="or none")]
PrecisionOption = Annotated[str, declared("precision")]
SeedOption = Annotated[int, declared("seed")]
CalibrateOption = Annotated[str | None, declared(
        "calibrate", note=f"default {CLASSIFIER['calibrate'].default}; progressive for a "
                          "stream")]
KeepNamesOption = Annotated[bool, declared(
        "keep_names", "--keep-names/--no-keep-names", note="a pass over the corpus of its "
        "own; without them `snowpy inspect --corpus` names features on demand")]
SplitOption = Annotated[str | None, typer.Option(help="split of the corpus")]
FormatOption = Annotated[str | None, typer.Option(help="input format (guessed)")]
OnErrorOption = Annotated[str, typer.Option(help="malformed records: raise or skip")]
SavePartialOption = Annotated[Path | None, typer.Option(
        help="on Ctrl-C, save what was learned so far here")]
InferenceOnlyOption = Annotated[bool, typer.Option(
        "--inference-only", help="save only what prediction needs (a smaller file that "
        "cannot continue training)")]
StreamOption = Annotated[bool | None, typer.Option(
        "--stream/--no-stream", help="learn in one pass, each document predicted then "
        "learned (progressive validation, SNoW -i +); the default for standard input")
    ]
SaveEveryOption = Annotated[int | None, typer.Option(
        help="with --stream, write the model every N documents")]
CacheOption = Annotated[Path | None, typer.Option(
        help="read CORPUS once into this folder of featurised blocks and train every epoch "
             "from it, in memory that does not grow with the corpus (Vowpal Wabbit's "
             "--cache_file); reused while CORPUS and the front end stay the same")]
ReportEveryOption = Annotated[int | None, typer.Option(
        help="with --stream, report accuracy every N documents too (SNoW -c k)")]
TestOption = Annotated[str | None, typer.Option(
        help="a corpus to test on as training goes: a learning curve (SNoW -c k)")]
TestEveryOption = Annotated[int | None, typer.Option(
        help="with --test, test every K training examples (default: a tenth of an epoch)")
    ]
CurveOption = Annotated[Path | None, typer.Option(
        help="with --test, draw the learning curve to this PNG or SVG (needs matplotlib)")
    ]
MixingOption = Annotated[str, typer.Option(
        help="with --workers/--scheduler: how the shards' changes to the weights are "
             "averaged each round, arithmetic or geometric (docs/distributed.md)")
    ]
AverageOverOption = Annotated[str, typer.Option(
        help="with --workers/--scheduler: each link's change averaged over the shards that "
             "changed it (changed) or over all shards (all: IPM as published)")
    ]
CheckpointOption = Annotated[Path | None, typer.Option(
        help="with --workers/--scheduler: the folder of the per-round checkpoints (default "
             "MODEL.checkpoint, removed once MODEL is written)")]
ResumeOption = Annotated[bool, typer.Option(
        "--resume", help="with --workers/--scheduler: continue from the last checkpoint")
    ]
QuietOption = Annotated[bool, typer.Option(
    "--quiet", "-q", help="no progress and no notes: the errors only (and --json's summary)")]
JsonOutputOption = Annotated[bool, typer.Option("--json", help="a JSON summary")]
ForceOption = Annotated[bool, typer.Option(
        "--force", help="replace MODEL even where it is a symbolic link (the link becomes "
        "a file)")]
