"""``snowpy train CORPUS --cache DIR``: epochs from a cache of featurised blocks
(:mod:`snowpy.training.cache`, which ``SnowClassifier.fit`` takes), in memory bounded
by the model and one block."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import typer

from snowpy.cli.common import counted, err
from snowpy.cli.reading import check_labels
from snowpy.cli.run import Run
from snowpy.exceptions import ConfigurationError
from snowpy.progress import Progress

__all__ = ["train_cached"]


def _fingerprint(front: Any, run: Run) -> dict[str, Any]:
    from snowpy.declared import learned
    from snowpy.network.state import plain

    corpus = run.corpus
    path = corpus.split("::")[0]
    where: dict[str, Any] = {"corpus": corpus, "split": run.split, "format": run.format,
                             "layout": run.layout.given()}
    if corpus == "-":
        where["stdin"] = time.time_ns()  # (standard input is never the same twice)
    elif os.path.exists(path):
        info = os.stat(path)
        where.update(corpus=os.path.abspath(corpus), size=info.st_size,
                     mtime_ns=info.st_mtime_ns)
    return {"of": where, "front_end": plain(learned(front.get_params()))}


class _EpochLines(Progress):
    """A line after each epoch: its mistakes, made before learning each document."""

    def __init__(self, documents: int) -> None:
        self.documents = documents
        self.mistakes = 0

    def __call__(self, epoch: int, done: int, total: int, mistakes: int) -> None:
        self.mistakes += mistakes
        if done == total:
            err(f"epoch {epoch + 1}: {self.mistakes:,} mistakes in {self.documents:,} "
                f"documents (accuracy while learning {1 - self.mistakes / total:.4f})")
            self.mistakes = 0


def train_cached(classifier: Any, run: Run, folder: Path) -> None:
    """Build (or reuse) the cache, then train every epoch from it and save."""
    from snowpy.training import FeatureCache

    chatty = run.chatty
    front = classifier.make_featurizer()
    cache = FeatureCache(folder, _fingerprint(front, run))
    skipped = 0
    if cache.valid():
        if chatty:
            err(f"reusing the cache in {folder} ({len(cache.blocks)} blocks)")
    else:
        documents, problems = run.documents()
        count = cache.build(documents, front)
        skipped = problems.skipped
        if not count:
            raise ConfigurationError(f"{run.corpus}: no documents found")
        if chatty:
            err(f"cached {count:,} documents in {len(cache.blocks)} blocks in {folder}")
    check_labels(run.corpus, cache.n, set(cache.labels), cache.multilabel)
    documents = cache.n
    said = _EpochLines(documents) if chatty else None
    try:
        per_epoch = list(classifier.fit(cache, progress=said).network_.mistakes_)
    except KeyboardInterrupt:
        err(f"interrupted: {run.output} untouched; the cache in {folder} stays for next time")
        raise typer.Exit(130) from None
    run.save(classifier)
    network = classifier.network_
    seconds = time.perf_counter() - run.started
    summary = {"model": str(run.output), "corpus": run.corpus, "cache": str(folder),
               "documents": documents,
               "classes": len(network.classes_), "rule": run.rule,
               "epochs_run": len(per_epoch), "mistakes": per_epoch,
               "links": network.n_links_, "skipped": skipped,
               "seconds": round(seconds, 3), "calibrated": network.calibration_ is not None,
               "inference_only": run.inference_only}
    run.summarise(summary, f"trained {run.rule} on {documents:,} documents from the cache, "
                  f"{counted(len(per_epoch), 'epoch')}, {network.n_links_:,} links in "
                  f"{seconds:.1f} s; saved {run.output}")
