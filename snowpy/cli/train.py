"""``snowpy train CORPUS -o MODEL``: featurise a corpus and train a model."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from snowpy.base import is_fitted
from snowpy.cli.common import (
    check_output,
    cli_words,
    counted,
    err,
    given_options,
    handles_errors,
    model_key,
    parse_optional_float,
    parse_range,
    rule_options,
    settle_memory,
)
from snowpy.cli.distributed import (
    Scheduler,
    Shards,
    Workers,
    cluster_worth_it,
    train_distributed,
    wanted,
)
from snowpy.cli.memory import check_memory
from snowpy.cli.progress import Phases, TrainingReporter, run_interruptibly
from snowpy.cli.reading import (
    Decode,
    Encoding,
    Header,
    LabelColumn,
    LabelField,
    Multilabel,
    TextColumn,
    TextField,
    as_options,
    check_classes,
    describe_read,
)
from snowpy.cli.rule_check import check_rule_once
from snowpy.cli.run import Cluster, Run
from snowpy.cli.stream import StreamReport
from snowpy.cli.training_cache import train_cached
from snowpy.declared import CLASSIFIER, defaults
from snowpy.exceptions import ConfigurationError
from snowpy.progress import Progress, phase

if TYPE_CHECKING:  # pragma: no cover
    from snowpy import corpora

HELP = """Train a model on CORPUS and save it to MODEL.

CORPUS is a path (a folder or .tar.gz/.zip of class folders, label<TAB>text
lines, CSV, JSON Lines, fastText lines), a registered corpus name (snowpy
corpus list), or - for standard input.

Standard input is learned as a stream (--stream): one pass, each document
predicted then learned, progressive accuracy reported at 1, 2, 4, 8...
examples, in memory that does not grow with the stream; --save-every N
writes the model every N examples.

Rule parameters are options too: --rule winnow --alpha 1.35 --beta 0.8
--theta 4. `snowpy plugins` lists every rule's parameters and defaults.
"""

_DEFAULTS = defaults(CLASSIFIER)  # (the signature's defaults: snowpy.declared)


# The options, one alias each (typer reads the help from them), so that the command's
# signature is a list of names and defaults. The options that are the classifier's
# parameters are built from its table (:data:`snowpy.declared.CLASSIFIER`): their help is
# the declared line, and the command reads their defaults there too.


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
FromOption = Annotated[Path | None, typer.Option(
        "--from", help="continue training this model: CORPUS learned in one pass as a "
        "stream from what it learned, with its settings (Vowpal Wabbit's -i); -o may name "
        "it too")]
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
EvidenceOption = Annotated[bool, declared(
        "evidence", "--evidence/--no-evidence",
        note="stacked by a cross-fitted --calibrate (cv, holdout); docs/front-end.md")]
BiasOption = Annotated[str, declared("bias", note="none is false")]
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
    "--quiet", "-q", help="no progress and no notes: warnings and errors only (and "
    "--json's summary)")]
JsonOutputOption = Annotated[bool, typer.Option("--json", help="a JSON summary")]
ForceOption = Annotated[bool, typer.Option(
        "--force", help="replace MODEL even where it is a symbolic link (the link becomes "
        "a file)")]


@handles_errors
def train(
    ctx: typer.Context,
    corpus: CorpusOption,
    output: OutputOption,
    rule: RuleOption = _DEFAULTS["rule"],
    thickness: ThicknessOption = _DEFAULTS["thickness"],
    ngrams: NgramsOption = spelled("ngrams"),
    char_ngrams: CharNgramsOption = spelled("char_ngrams"),
    skipgrams: SkipgramsOption = None,
    conjunctions: ConjunctionsOption = None,
    bits: BitsOption = _DEFAULTS["bits"],
    values: ValuesOption = _DEFAULTS["values"],
    idf: IdfOption = _DEFAULTS["idf"],
    relevance: RelevanceOption = _DEFAULTS["relevance"],
    evidence: EvidenceOption = _DEFAULTS["evidence"],
    l2: L2Option = _DEFAULTS["norm"] == "l2",
    epochs: EpochsOption = None,
    average: AverageOption = _DEFAULTS["average"],
    bias: BiasOption = spelled("bias"),
    early_stop: EarlyStopOption = _DEFAULTS["early_stop"],
    links: LinksOption = _DEFAULTS["links"],
    multiclass: MulticlassOption = _DEFAULTS["multiclass"],
    eligibility: EligibilityOption = spelled("eligibility"),
    discard: DiscardOption = spelled("discard"),
    precision: PrecisionOption = _DEFAULTS["precision"],
    seed: SeedOption = _DEFAULTS["seed"],
    n_jobs: ThreadsOption = _DEFAULTS["n_jobs"],
    calibrate: CalibrateOption = None,
    keep_names: KeepNamesOption = _DEFAULTS["keep_names"],
    split: SplitOption = None,
    format: FormatOption = None,
    encoding: Encoding = None,
    decode: Decode = "strict",
    label_column: LabelColumn = None,
    text_column: TextColumn = None,
    header: Header = None,
    label_field: LabelField = None,
    text_field: TextField = None,
    multilabel: Multilabel = False,
    on_error: OnErrorOption = "raise",
    save_partial: SavePartialOption = None,
    inference_only: InferenceOnlyOption = False,
    stream: StreamOption = None,
    save_every: SaveEveryOption = None,
    cache: CacheOption = None,
    report_every: ReportEveryOption = None,
    test: TestOption = None,
    test_every: TestEveryOption = None,
    curve: CurveOption = None,
    workers: Workers = None,
    scheduler: Scheduler = None,
    shards: Shards = None,
    mixing: MixingOption = "arithmetic",
    average_over: AverageOverOption = "changed",
    checkpoint: CheckpointOption = None,
    resume: ResumeOption = False,
    quiet: QuietOption = False,
    json_output: JsonOutputOption = False,
    force: ForceOption = False,
    start: FromOption = None,
) -> None:
    from snowpy import SnowClassifier

    check_output(output, [corpus, save_partial], force=force)
    if curve is not None:
        try:
            import matplotlib  # noqa: F401  (asked before training, not after it)
        except ImportError:
            raise ConfigurationError("--curve needs matplotlib: pip install '.[plot]' in "
                                     "snowpy's source folder") from None
    if start is not None:  # (its settings, a stream of one pass)
        classifier = _continued(ctx, start)
        streaming, rule, multilabel = True, classifier.rule, classifier.network_.multilabel_
        _mode(corpus, True, None, None, None, save_every, report_every, None)
    else:
        streaming, epochs, calibrate = _mode(corpus, stream, cache, epochs, calibrate,
                                             save_every, report_every, test)
        rule_params = rule_options(rule, ctx.args, ctx.command)
        classifier = SnowClassifier(
            rule, thickness=thickness, ngrams=parse_range(ngrams, "--ngrams"),
            char_ngrams=parse_range(char_ngrams, "--char-ngrams"),
            skipgrams=skipgrams or None, bits=bits, values=values,
            extractors=[] if conjunctions is None else [("conjunctions",
                                                         {"window": conjunctions})],
            idf=idf, relevance=relevance, evidence=evidence, norm="l2" if l2 else None,
            epochs=epochs,
            average=average, seed=seed, bias=_bias(bias),
            early_stop=early_stop,
            calibrate=None if calibrate == "none" else calibrate,
            keep_names=keep_names, links=links, multiclass=multiclass,
            eligibility=int(eligibility) if eligibility.isdigit() else eligibility,
            discard=parse_optional_float(discard, "--discard"), precision=precision,
            n_jobs=n_jobs, **rule_params,
        )
        _snow_front_end(ctx, classifier, rule, quiet)
        if multilabel:
            _multilabel(ctx, classifier, rule_params, "--multilabel", streaming, quiet)
    _before_reading(rule, corpus, classifier, quiet)
    from snowpy.corpora import Layout

    run = Run(corpus, output, split, format,
              Layout(encoding, decode, label_column, text_column or [], header,
                     label_field, text_field or [], multilabel),
              on_error, inference_only, quiet, json_output, rule, time.perf_counter(),
              save_partial)
    cluster = Cluster(workers, scheduler, shards, mixing, average_over, checkpoint, resume)
    if cache is not None:
        if wanted(workers, scheduler):
            raise ConfigurationError("--cache is for one machine; the workers of "
                                     "--workers/--scheduler keep their shards in memory")
        train_cached(classifier, run, cache)
    elif _on_cluster(run, cluster, streaming=streaming, test=test, keep_names=keep_names):
        train_distributed(classifier, run, cluster)
    elif streaming:
        _train_stream(classifier, run, save_every=save_every, report_every=report_every)
    else:
        _train_in_memory(ctx, classifier, run, rule_params, (test, test_every, curve))


# What ``--from MODEL`` leaves to the command line: how CORPUS is read, the stream's
# reports and checkpoints, and how the model is written; the model says the rest.
_CONTINUING = {"corpus", "output", "start", "split", "format", "encoding", "decode",
               "label_column", "text_column", "header", "label_field", "text_field",
               "multilabel", "on_error", "save_partial", "inference_only", "stream",
               "save_every", "report_every", "quiet", "json_output", "force"}


def _continued(ctx: typer.Context, start: Path) -> Any:
    """The classifier ``--from MODEL`` holds, to learn CORPUS from what it learned: an
    option that would set what MODEL says (a setting, the epochs, another way to train)
    is refused, and so is a network without a front end."""
    from snowpy import load
    from snowpy.classifier import FITTED_ONCE
    from snowpy.model_kinds import kind_of

    flags = [next(param.opts[0] for param in ctx.command.params if param.name == name)
             for name in sorted(given_options(ctx) - _CONTINUING)] + \
        [arg for arg in ctx.args if arg.startswith("-")] + \
        (["--no-stream"] if ctx.params["stream"] is False else [])
    if flags:
        raise ConfigurationError(f"{flags[0]} does not go with --from: training goes on with "
                                 f"{start}'s own settings, one pass as a stream")
    classifier = load(start, key=model_key())
    if kind_of(classifier) != "classifier":
        raise ConfigurationError(f"--from {start} holds a network without a front end: "
                                 "continue it from Python (partial_fit)")
    if classifier.evidence:
        raise ConfigurationError(f"--from {start}: {cli_words(FITTED_ONCE)}")
    if classifier.network_.engine_.frozen:
        raise ConfigurationError(f"--from {start} is an inference-only model file: it keeps "
                                 "no training state to continue from")
    return classifier


def _bias(text: str) -> bool | float:
    """``--bias``: true, false, a strength (1 is ``True``), or none (``False``)."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    strength = parse_optional_float(text, "--bias")
    return False if strength is None else True if strength == 1.0 else strength


def _mode(corpus: str, stream: bool | None, cache: Path | None, epochs: int | None,
          calibrate: str | None, save_every: int | None, report_every: int | None,
          test: str | None) -> tuple[bool, int, str]:
    """Whether CORPUS is learned as a stream, the epochs and the calibration, checked
    against the options that go with each mode."""
    from snowpy.network.options import calibrating

    streaming = corpus == "-" if stream is None else stream
    if cache is not None:
        if calibrating(calibrate).cross_fits or save_every or report_every or test:
            raise ConfigurationError("--cache trains from the cache in bounded memory: "
                                     "calibration is progressive, and --save-every, "
                                     "--report-every and --test do not apply")
        streaming, calibrate = False, calibrate or "progressive"
    if streaming:
        if epochs not in (None, 1):
            raise ConfigurationError("a stream is learned in one pass: --epochs 1 (or save "
                                     "the stream to a file and train from it)")
        if calibrating(calibrate).cross_fits:
            raise ConfigurationError(f"--calibrate {calibrate} needs the data twice; a stream "
                                     "is calibrated progressively (--calibrate progressive)")
        epochs, calibrate = 1, "progressive" if calibrate is None else calibrate
    elif save_every or report_every:
        raise ConfigurationError("--save-every and --report-every go with --stream")
    for name, value in (("--save-every", save_every), ("--report-every", report_every)):
        if value is not None and value < 1:
            raise ConfigurationError(f"{name} must be at least 1, got {value}")
    return (streaming, int(_DEFAULTS["epochs"]) if epochs is None else epochs,
            _DEFAULTS["calibrate"] if calibrate is None else calibrate)


def _on_cluster(run: Run, cluster: Cluster, *, streaming: bool, test: str | None,
                keep_names: bool) -> bool:
    """Whether the training goes to a cluster (asked, worth it or insisted on), with the
    options that do not go with one refused."""
    asked = wanted(cluster.workers, cluster.scheduler)
    if asked and run.corpus != "-" and not cluster_worth_it(
            run.corpus, cluster.workers, cluster.scheduler, not run.chatty):
        return False  # (the user took one process, offered at a terminal)
    if not asked:
        if cluster.resume or cluster.checkpoint is not None or cluster.shards is not None:
            raise ConfigurationError("--shards, --checkpoint and --resume go with --workers "
                                     "or --scheduler")
        return False
    if run.corpus == "-":
        raise ConfigurationError("the workers read the corpus themselves: give a path, "
                                 "a glob or a registered corpus, not standard input")
    alone = [name for name, value in (
        ("--stream", streaming), ("--test", test), ("--save-partial", run.save_partial),
        ("--keep-names", keep_names)) if value]
    if alone:
        raise ConfigurationError(f"{alone[0]} is not available with --workers/--scheduler")
    return True


def _train_in_memory(ctx: typer.Context, classifier: Any, run: Run,
                     rule_params: dict[str, Any], testing: tuple[Any, Any, Any]) -> None:
    """Read CORPUS into memory, train every epoch (``testing``: ``--test``,
    ``--test-every``, ``--curve``), save."""
    from snowpy.files import read_corpus

    test, test_every, curve = testing
    chatty = run.chatty
    with Phases(quiet=not chatty)("reading"):
        read = read_corpus(run.open(prefer="train"), classifier.make_featurizer())
    labels, problems, split = read[1:4]
    if chatty:
        err(describe_read(run.corpus, read))
    from snowpy.network.labels import is_multilabel

    if not run.layout.multilabel and is_multilabel(labels):
        _multilabel(ctx, classifier, rule_params, "a multi-label corpus (documents with a "
                    "set of labels)", False, not chatty)
    check_classes(run.corpus, read)
    run.skipped(problems.skipped, problems.messages)
    learning = _learning_curve(classifier, run.rule, test, test_every, curve, run.layout,
                               run.on_error, len(read), chatty)
    reporter: Any = TrainingReporter(len(read), int(classifier.epochs)) if chatty else None
    if learning is not None:
        reporter = learning.around(reporter)
    documents = len(read)
    held = [read]  # (the fit takes it: texts are let go once featurised)
    del read
    _fit_interruptibly(classifier, run, held, reporter)
    net = classifier.network_
    epochs_run = len(net.mistakes_)
    if chatty and epochs_run < int(classifier.epochs) and net.updates_ and \
            net.updates_[-1] == 0:  # (a counting rule learns once: no stop)
        err(f"stopped after epoch {epochs_run} of {classifier.epochs}: no update in it "
            "(--no-early-stop runs every epoch)")
    if learning is not None:
        learning.finish()  # (the last point measures the model saved: discarded, calibrated)
    if reporter:
        reporter.phase("saving")
    run.save(classifier)
    if reporter:
        reporter.close()
    if learning is not None and curve is not None:
        _draw(learning.points, curve, f"{run.output.name}: accuracy on {test}", chatty)
    seconds = time.perf_counter() - run.started
    summary = {
        "model": str(run.output), "corpus": run.corpus, "split": split,
        "documents": documents, "classes": len(net.classes_),
        "rule": run.rule, "rule_params": net.rule_params_, "epochs_run": epochs_run,
        "links": net.n_links_,
        "mistakes": net.mistakes_, "skipped": problems.skipped, "seconds": round(seconds, 3),
        "calibrated": net.calibration_ is not None, "inference_only": run.inference_only,
        **({"learning_curve": learning.points} if learning is not None else {}),
    }
    run.summarise(summary, f"trained {run.rule} on {counted(documents, 'document')}, "
                  f"{counted(len(net.classes_), 'class', 'classes')}, "
                  f"{counted(epochs_run, 'epoch')}, {net.n_links_:,} links in "
                  f"{seconds:.1f} s; saved {run.output}")


def _fit_interruptibly(classifier: Any, run: Run, held: list[Any], reporter: Any) -> None:
    """Train on what was read (``held``: a list of it, which the fit takes: the texts of a
    corpus, once featurised, are let go); on Ctrl-C, keep MODEL and save what was learned
    to ``--save-partial`` (exit status 130)."""

    def fit(progress: Any) -> Any:
        from snowpy.files import featurised

        read = held.pop()
        if read.texts is not None and not classifier.keep_names:
            phase(progress, "featurising", None)
            read = featurised(read, classifier.make_featurizer())
        if read.texts is not None:
            return classifier.fit(read.texts, read.labels, progress=progress)
        return classifier.fit_rows(read.rows, read.labels, keys=read.keys,
                                   progress=progress, copy=False)

    try:
        run_interruptibly(fit, reporter, on_stuck=lambda: err(
                              f"interrupted: the training did not stop in time (the rule's "
                              f"update kernel did not return); stopped without saving "
                              f"({run.output} untouched)"))
    except KeyboardInterrupt:
        if reporter:
            reporter.close()
        if run.save_partial is not None and hasattr(classifier, "network_") \
                and is_fitted(classifier.network_):
            run.save_partial_model(classifier)  # (its sigmoids: none, or complete)
            err(f"interrupted: what was learned so far is in {run.save_partial}; "
                f"{run.output} untouched")
        elif run.save_partial is not None:
            err(f"interrupted before the network itself was trained (the calibration "
                f"folds' networks train first): nothing learned to save to "
                f"{run.save_partial}; {run.output} was not written")
        else:
            err(f"interrupted: {run.output} was not written")
        raise typer.Exit(130) from None


def _draw(points: Any, curve: Path, title: str, chatty: bool) -> None:
    from snowpy import plots

    plots.plot_curve(points, str(curve), title)
    if chatty:
        err(f"wrote {curve}")


def _learning_curve(classifier: Any, rule: str, test: str | None, test_every: int | None,
                    curve: Path | None, layout: corpora.Layout, on_error: str, n: int,
                    chatty: bool) -> LearningCurve | None:
    """The learning curve ``--test CORPUS`` asks for (None without it)."""
    if test is None:
        if test_every is not None or curve is not None:
            raise ConfigurationError("--test-every and --curve go with --test CORPUS")
        return None
    if "+" in rule:
        raise ConfigurationError(
            f"--test draws a learning curve of one network; the members of the cloud "
            f"{rule!r} train one after the other: train each rule with --test, or "
            "evaluate the saved cloud")
    from snowpy import corpora

    tested = corpora.open(test, layout=layout, prefer="test", on_error=on_error).read()
    if chatty:
        err(describe_read(test, tested) + " (to test on)")
    return LearningCurve(classifier, tested, test_every or max(n // 10, 1), n,
                         say=err if chatty else None)


def _multilabel(ctx: typer.Context, classifier: Any, rule_params: dict[str, Any], why: str,
                streaming: bool, quiet: bool) -> None:
    """The multi-label defaults (:func:`snowpy.presets.multilabel_settings`) set for each
    option not given (a typer option left at its default, a rule parameter absent from
    ``rule_params``; a stream keeps its one pass), said in a note."""
    from snowpy.presets import multilabel_settings

    given = given_options(ctx) | set(rule_params) | ({"epochs"} if streaming else set())
    chosen = {name: value for name, value in multilabel_settings(classifier.rule).items()
              if name not in given}
    classifier.set_params(**chosen)
    if not quiet:
        err(f"note: {why}: trained at the multi-label defaults {as_options(chosen)} (an "
            "option given overrides its default)" if chosen else
            f"note: {why}: every multi-label setting was given")


def _snow_front_end(ctx: typer.Context, classifier: Any, rule: str, quiet: bool) -> None:
    """A multiplicative rule on SNoW's front end (:func:`snowpy.presets.front_end_settings`)
    when no strength option (--values, --idf, --relevance, --l2, --bias) was given, said in
    a note."""
    from snowpy.presets import front_end_settings

    settings = front_end_settings(rule)
    if not settings or given_options(ctx) & {"values", "idf", "relevance", "l2", "bias"}:
        return
    classifier.set_params(**settings)
    if not quiet:
        err(f"note: {rule} learns on SNoW's front end: trained with --values binary "
            "--no-idf --no-l2 --bias 1 (a strength option given keeps the defaults)")


def _before_reading(rule: str, corpus: str, classifier: Any, quiet: bool) -> None:
    """What is checked before the corpus is read: every option, a third party's kernel
    before it first trains (each member of a cloud), the memory the n-grams will take."""
    classifier.make_network().check_options()
    for member in rule.split("+"):
        said = check_rule_once(member)
        if said and not quiet:
            err(said)
    warned = check_memory(corpus, classifier)  # (its front end's n-gram options)
    if warned:
        err(warned)


def _train_stream(classifier: Any, run: Run, *, save_every: int | None,
                  report_every: int | None) -> None:
    """One pass over CORPUS as a stream (:func:`snowpy.training.learn_stream`), the
    progressive table as it goes, checkpoints every ``save_every``; then save."""
    from snowpy.training import learn_stream

    settle_memory(stream=True)
    compiled = None if classifier.keep_names else classifier.make_featurizer()
    documents, problems = run.documents(compiled)
    report = StreamReport(report_every, show=run.chatty)
    checkpoints = 0

    def after(figures: Any) -> None:
        nonlocal checkpoints
        report.at(figures.examples, figures.mistakes)
        if save_every and figures.examples % save_every == 0:
            run.save(classifier)
            checkpoints += 1

    try:
        learn_stream(classifier, documents, every=(save_every or 0, report_every or 0),
                     after=after)
        report.close()
    except KeyboardInterrupt:
        if run.save_partial is not None and hasattr(classifier, "network_"):
            run.save_partial_model(classifier)
            err(f"interrupted after {report.examples:,} documents: what was learned is in "
                f"{run.save_partial}")
        else:
            err(f"interrupted after {report.examples:,} documents: {run.output} "
                + ("holds the last checkpoint" if save_every else "was not written"))
        raise typer.Exit(130) from None
    if not hasattr(classifier, "network_"):
        raise ConfigurationError(f"{run.corpus}: no documents found")
    run.skipped(problems.skipped, problems.messages)
    net = classifier.network_
    net.prune()  # discard (SNoW -d) and eligible percent apply at the end, as after fit
    run.save(classifier)
    seconds = time.perf_counter() - run.started
    summary = {
        "model": str(run.output), "documents": report.examples, "classes": len(net.classes_),
        "rule": run.rule, "rule_params": net.rule_params_, "stream": True,
        "progressive_accuracy": round(report.accuracy, 6), "mistakes": report.mistakes,
        "links": net.n_links_, "checkpoints": checkpoints, "skipped": problems.skipped,
        "seconds": round(seconds, 3), "calibrated": net.calibration_ is not None,
        "inference_only": run.inference_only, "peak_memory_mb": _peak_memory_mb(),
    }
    run.summarise(summary, f"learned {report.examples:,} documents one at a time "
                  f"({run.rule}), {counted(len(net.classes_), 'class', 'classes')}, "
                  f"progressive accuracy {report.accuracy:.4f}, "
                  f"{net.n_links_:,} links in {seconds:.1f} s; saved {run.output}")


def _peak_memory_mb() -> float | None:
    """The process's peak resident memory so far (None where the OS does not say)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


class LearningCurve(Progress):
    """Accuracy on a test corpus every ``every`` training examples (SNoW's ``-c k``): a
    progress reporter, which also passes what it hears on to another (:meth:`around`)."""

    def __init__(self, classifier: Any, read: Any, every: int, n: int,
                 say: Any = None) -> None:
        if every < 1:
            raise ConfigurationError(f"--test-every must be at least 1, got {every}")
        self.classifier, self.texts, self.labels = classifier, read.texts, read.labels
        self.every: int = every
        self.n, self.say = n, say
        self.points: list[dict[str, Any]] = []
        self._X: Any = None
        self.reporter: Any = None

    def __call__(self, epoch: int, done: int, total: int, mistakes: int) -> None:
        if self.reporter is not None:
            self.reporter(epoch, done, total, mistakes)
        if done % self.every and done != total:
            return
        network = self.classifier.network_
        if self._X is None:
            self._X = self.classifier.featurizer_.transform(self.texts, names=False)
        accuracy = float(network.score(self._X, self.labels))  # (training invalidated
        # the network's cache before calling: the weights of this moment)
        seen = epoch * self.n + done
        self.points.append({"examples": seen, "epoch": epoch + 1, "accuracy": accuracy})
        if self.say is not None:
            self.say(f"  test accuracy {accuracy:.4f} after {seen:,} examples")

    def finish(self) -> None:
        """The last point measured again on the finished model (links discarded, sigmoids
        fitted), with its predictions: the accuracy ``snowpy evaluate`` gives the model
        file."""
        accuracy = float(self.classifier.score(self.texts, self.labels))
        last = self.points[-1] if self.points else None
        if last is not None and last["accuracy"] != accuracy:
            if self.say is not None:
                self.say(f"  test accuracy {accuracy:.4f} of the model saved (after "
                         f"{last['examples']:,} examples, {last['accuracy']:.4f} before "
                         "its negligible links were discarded and it was calibrated)")
            last["accuracy"] = accuracy

    def around(self, reporter: Any) -> LearningCurve:
        """This curve, passing each report, phase and close on to ``reporter`` (None: to
        no one)."""
        self.reporter = reporter
        return self

    def phase(self, name: str, total: int | None = None) -> None:
        if self.reporter is not None:
            self.reporter.phase(name, total)

    def close(self) -> None:
        if self.reporter is not None:
            self.reporter.close()
