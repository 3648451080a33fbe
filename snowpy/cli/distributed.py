"""The command line on a Dask cluster: ``snowpy train|evaluate|predict ... --workers N``
(a LocalCluster of N processes) or ``--scheduler tcp://HOST:8786`` (a cluster that runs)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from snowpy.cli.common import counted, echo_json, err
from snowpy.exceptions import ConfigurationError

Workers = Annotated[int | None, typer.Option(
    help="run on a Dask LocalCluster of this many worker processes (pip install "
         "'.\\[dask]' in snowpy's source folder)")]  # (\[: a bracket, not rich's markup)
Scheduler = Annotated[str | None, typer.Option(
    help="run on the Dask cluster of this scheduler, e.g. tcp://10.0.0.5:8786")]
Shards = Annotated[int | None, typer.Option(
    help="with --workers/--scheduler: shards of the corpus (default: the workers' "
         "threads, a task on each)")]


def wanted(workers: int | None, scheduler: str | None) -> bool:
    """Whether the command runs on a cluster."""
    if workers is not None and scheduler is not None:
        raise ConfigurationError("--workers starts a local cluster, --scheduler joins one: "
                                 "give one of them")
    if workers is not None and workers < 1:
        raise ConfigurationError(f"--workers must be at least 1, got {workers}")
    asked = workers is not None or scheduler is not None
    if asked:  # (before a word is said of the work: without Dask there is none)
        import importlib.util

        if importlib.util.find_spec("distributed") is None:
            raise ConfigurationError(
                f"{'--workers' if workers is not None else '--scheduler'} needs Dask "
                "(dask.distributed): pip install '.[dask]' in snowpy's source folder")
    return asked


def cluster_of(workers: int | None, scheduler: str | None) -> int | str:
    """The ``cluster`` of :func:`snowpy.distributed.fit` that ``--workers`` or
    ``--scheduler`` asks for."""
    if not wanted(workers, scheduler):
        raise ConfigurationError("give --workers or --scheduler")
    return scheduler if scheduler is not None else workers  # type: ignore[return-value]


#: Below this much text a cluster's rounds cost more than they save: in each round every
#: worker restores the whole network and what the shards changed is found and mixed, a
#: cost fixed per round that pays off only when the shards' training outweighs it
#: (20 Newsgroups, 22 MB, at the defaults: 11.5 s in one process, 73 s with --workers 2).
SMALL_FOR_A_CLUSTER = 256 * 2**20


def cluster_worth_it(corpus: str, workers: int | None, scheduler: str | None,
                     quiet: bool) -> bool:
    """Whether to train CORPUS on the cluster asked for: said before starting where one
    process is the better choice (SNOWPY_NO_CLUSTER_CHECK=1 silences it), and at a
    terminal one process offered instead (False: the user took it). It is, for a corpus
    small for a cluster, and for a local cluster at any size: its workers share this
    machine's cores, which one process uses without the rounds."""
    import os
    import sys

    from snowpy.cli.memory import corpus_bytes

    if not wanted(workers, scheduler) or os.environ.get("SNOWPY_NO_CLUSTER_CHECK"):
        return wanted(workers, scheduler)
    size = corpus_bytes(corpus)
    asked = f"--workers {workers}" if workers is not None else "--scheduler"
    if size is not None and size < SMALL_FOR_A_CLUSTER:
        said = (f"{corpus} holds about {size / 2**20:,.0f} MB of text: below about "
                f"{SMALL_FOR_A_CLUSTER // 2**20} MB a cluster's rounds cost more than they "
                "save (in each, every worker restores the whole network and what the "
                "shards changed is found and mixed), and one process trains it faster "
                "(20 Newsgroups, 22 MB, at the defaults: 11.5 s in one process, 73 s with "
                "--workers 2)")
    elif workers is not None:
        said = (f"{asked} starts {counted(workers, 'process', 'processes')} on this "
                "machine, which share its cores; one process learns on every core "
                "(--threads) without the rounds, in each of which every worker restores "
                "the whole network (360,000 documents, 3 epochs, 2 cores: 6.3 s in one "
                "process, 16.8 s with --workers 2, the same accuracy)")
    else:
        return True
    if not quiet and sys.stdin.isatty() and sys.stderr.isatty():
        err(f"note: {said}")
        return not typer.confirm("train in one process instead?", default=True, err=True)
    if not quiet:
        err(f"warning: {said}; training with {asked} as asked (without it: one process)")
    return True


def _mb(count: float) -> str:
    return f"{count / 1e6:,.1f} MB"


def train_distributed(classifier: Any, run: Any, cluster: Any) -> None:
    """``snowpy train CORPUS --workers N``: iterative parameter mixing, a line per round,
    the model written as any other, the checkpoint removed by the fit (``run``: a
    :class:`snowpy.cli.run.Run`; ``cluster``: a :class:`snowpy.cli.run.Cluster`)."""
    from snowpy import distributed

    chatty, output, corpus = run.chatty, run.output, run.corpus
    workers, scheduler, checkpoint = cluster.workers, cluster.scheduler, cluster.checkpoint
    mixing, average_over, resume = cluster.mixing, cluster.average_over, cluster.resume
    if mixing not in distributed.MIXING or average_over not in ("changed", "all"):
        raise ConfigurationError(f"--mixing is arithmetic or geometric (got {mixing!r}), "
                                 f"--average-over changed or all (got {average_over!r})")
    folder = checkpoint if checkpoint is not None else output.with_name(
        output.name + ".checkpoint")
    if resume and not (folder / "progress.json").is_file():
        raise ConfigurationError(f"--resume: {folder} holds no checkpoint (train without "
                                 "--resume to start afresh)")

    def show(report: Any) -> None:
        if chatty:
            err(f"round {report.round}/{report.rounds}: {report.examples:,} examples, "
                f"{report.mistakes:,} mistakes, {report.links:,} links, model "
                f"{_mb(report.model_bytes)}, moved {_mb(report.bytes_per_worker)} per worker "
                f"({report.models} network(s)), {report.seconds:.1f} s (the slowest "
                f"shard's epoch {report.slowest:.1f} s, overhead {report.overhead:.0%})"
                + (" (resumed)" if report.resumed else ""))

    if chatty:
        where = f"a local cluster of {workers} worker(s)" if workers else scheduler
        err(f"training on {where}" + (f", resuming from {folder}" if resume else ""))
    try:
        trained = distributed.fit(
            classifier, corpus, cluster=cluster_of(workers, scheduler),
            reading=distributed.Reading(shards=cluster.shards, split=run.split,
                                        format=run.format, layout=run.layout,
                                        on_error=run.on_error),
            mixing=mixing, average_over=average_over, checkpoint=folder, resume=resume,
            progress=show)
    except KeyboardInterrupt:
        err(f"interrupted: {output} untouched; `--resume` continues from {folder}")
        raise typer.Exit(130) from None
    run.save(trained)  # (the checkpoint went when the fit returned)
    info = trained.distributed_
    net = trained.network_
    seconds = time.perf_counter() - run.started
    run.skipped(info["skipped"], info["messages"])
    summary = {
        "model": str(output), "corpus": corpus, "documents": sum(info["examples"]),
        "classes": len(net.classes_), "rounds_run": len(net.mistakes_),
        "links": net.n_links_, "mistakes": net.mistakes_, "skipped": info["skipped"],
        "workers": info["workers"], "shards": info["shards"], "mixing": mixing,
        "average_over": average_over,
        "rounds": info["rounds"], "seconds": round(seconds, 3),
        "calibrated": net.calibration_ is not None, "inference_only": run.inference_only,
    }
    run.summarise(summary, f"trained on {counted(summary['documents'], 'document')} in "
              f"{counted(info['shards'], 'shard')}, "
              f"{counted(len(net.classes_), 'class', 'classes')}, "
              f"{counted(len(net.mistakes_), 'round')}, "
              f"{net.n_links_:,} links in {seconds:.1f} s; saved {output}")


def evaluate_distributed(model: Path, corpus: str, *, cluster: int | str, reading: Any,
                         output: Path | None, json_output: bool) -> None:
    """``snowpy evaluate MODEL CORPUS --workers N``: accuracy and macro-F1 from the
    confusion counts the workers send back (``cluster``: :func:`cluster_of`'s;
    ``reading``: a :class:`snowpy.distributed.Reading`)."""
    from snowpy import distributed

    result = distributed.evaluate(model, corpus, cluster=cluster, reading=reading,
                                  output=output)
    if json_output:
        echo_json(result)
        return
    typer.echo(f"documents  {result['documents']:,}")
    typer.echo(f"accuracy   {result['accuracy']:.4f}")
    typer.echo(f"macro F1   {result['macro_f1']:.4f}")
    if output is not None:
        err(f"predictions in {output}")


def predict_distributed(model: Path, corpus: str, output: Path, *, cluster: int | str,
                        shards: int | None, json_output: bool) -> None:
    """``snowpy predict MODEL CORPUS --workers N --output-dir DIR``: a document per line,
    its label and probability (``cluster``: :func:`cluster_of`'s)."""
    from snowpy import distributed

    result = distributed.predict(model, corpus, output, cluster=cluster, proba=True,
                                 reading=distributed.Reading(shards=shards, format="lines"))
    if json_output:
        echo_json(result)
    else:
        err(f"predicted {result['documents']:,} documents in {result['parts']} parts; "
            f"wrote {output}")
