"""The options of ``snowpy train``, one alias each (typer reads the help from them),
so that the command's signature is a list of names and defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "AverageOption", "AverageOverOption", "BitsOption", "CacheOption",
    "CalibrateOption", "CalibrationFoldsOption", "CharNgramsOption", "CheckpointOption",
    "ConjunctionsOption", "CorpusOption", "CurveOption", "DiscardOption",
    "EarlyStopOption", "EligibilityOption", "EligiblePercentOption", "EpochsOption",
    "ForceOption", "FormatOption", "InferenceOnlyOption", "JsonOutputOption",
    "KeepNamesOption", "L2Option", "LinksOption", "MixingOption", "NgramsOption",
    "OnErrorOption", "OutputOption", "PrecisionOption", "QuietOption",
    "ReportEveryOption", "ResumeOption", "RuleOption", "SaveEveryOption",
    "SavePartialOption", "SeedOption", "SplitOption", "StreamOption", "TestEveryOption",
    "TestOption", "ThicknessOption", "ValuesOption",
]

CorpusOption = Annotated[str, typer.Argument(help="path, registered corpus name, or -")]
OutputOption = Annotated[Path, typer.Option("--output", "-o", help="model file to write")]
RuleOption = Annotated[str, typer.Option(help="update rule (snowpy plugins)")]
ThicknessOption = Annotated[float, typer.Option(help="thick separator, every rule")]
NgramsOption = Annotated[str, typer.Option(help="word n-grams, e.g. 1-2, or none")]
CharNgramsOption = Annotated[str, typer.Option(help="character n-grams, e.g. 3-5")]
ConjunctionsOption = Annotated[int | None, typer.Option(
        help="add pairwise conjunctions of tokens within this window, 0 for the whole "
             "document (SNoW -g +)")]
BitsOption = Annotated[int, typer.Option(help="hash into 2**bits features")]
ValuesOption = Annotated[str, typer.Option(help="binary, count or log")]
L2Option = Annotated[bool, typer.Option("--l2/--no-l2", help="l2-normalise rows")]
EpochsOption = Annotated[int | None, typer.Option(
        help="passes over the data (default 10; a stream is learned in one)")]
AverageOption = Annotated[bool, typer.Option("--average/--no-average")]
EarlyStopOption = Annotated[bool, typer.Option(
        "--early-stop/--no-early-stop", help="stop after an epoch without update")]
LinksOption = Annotated[str, typer.Option(
        help="when a feature is linked to a target: signed, positive (SNoW), touched or all "
             "(SNoW -s f)")]
EligibilityOption = Annotated[int, typer.Option(
        help="link a feature once it was active this many times (SNoW -e count:k)")]
EligiblePercentOption = Annotated[float | None, typer.Option(
        help="keep each target's top percent of features by count (SNoW -e percent:p; "
             "with --links positive)")]
DiscardOption = Annotated[str, typer.Option(
        help="drop links weighing less than this fraction of the initial weight after "
             "training (SNoW -d), or none")]
PrecisionOption = Annotated[str, typer.Option(help="weights stored as float32 or float64")
                         ]
SeedOption = Annotated[int, typer.Option(help="seed of the shuffling")]
CalibrateOption = Annotated[str | None, typer.Option(
        help="none, cv, holdout or progressive (default cv; progressive for a stream)")
    ]
CalibrationFoldsOption = Annotated[int, typer.Option(help="folds for calibration")]
KeepNamesOption = Annotated[bool, typer.Option(
        "--keep-names/--no-keep-names",
        help="store the names of the features the model keeps (a pass over the corpus of "
             "its own; without them `snowpy inspect --corpus` names features on demand)")
    ]
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
QuietOption = Annotated[bool, typer.Option("--quiet", "-q")]
JsonOutputOption = Annotated[bool, typer.Option("--json", help="a JSON summary")]
ForceOption = Annotated[bool, typer.Option(
        "--force", help="replace MODEL even where it is a symbolic link (the link becomes "
        "a file)")]
