"""``snowpy train CORPUS --cache DIR``: epochs from a cache of featurised blocks
(:mod:`snowpy.cli.cache`), in memory bounded by the model and one block."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import typer

from snowpy.cli.cache import FeatureCache
from snowpy.cli.common import counted, err, model_key, summarise
from snowpy.cli.reading import iter_documents
from snowpy.exceptions import ConfigurationError

__all__ = ["train_cached"]


def _fingerprint(front: Any, corpus: str, split: str | None, format: str | None,
                 layout: Any) -> dict[str, Any]:
    from snowpy.network.state import plain

    path = corpus.split("::")[0]
    where: dict[str, Any] = {"corpus": corpus, "split": split, "format": format,
                             "layout": layout.given() if layout is not None else []}
    if corpus == "-":
        where["stdin"] = time.time_ns()  # (standard input is never the same twice)
    elif os.path.exists(path):
        info = os.stat(path)
        where.update(corpus=os.path.abspath(corpus), size=info.st_size,
                     mtime_ns=info.st_mtime_ns)
    options = front.get_params()
    options.pop("n_jobs", None)
    return {"of": where, "front_end": plain(options)}


def train_cached(classifier: Any, corpus: str, output: Path, folder: Path, *,
                 epochs: int | None, split: str | None, format: str | None, layout: Any,
                 on_error: str, inference_only: bool, quiet: bool, json_output: bool,
                 rule: str, seed: int, started: float) -> None:
    """Build (or reuse) the cache, then train every epoch from it and save."""
    import numpy as np

    chatty = not (quiet or json_output)
    epochs = int(classifier.epochs) if epochs is None else int(epochs)
    if epochs < 1:
        raise ConfigurationError(f"--epochs must be at least 1, got {epochs}")
    front = classifier.make_featurizer()
    cache = FeatureCache(folder, _fingerprint(front, corpus, split, format, layout))
    skipped = 0
    if cache.valid():
        if chatty:
            err(f"reusing the cache in {folder} ({len(cache.blocks)} blocks)")
    else:
        documents, problems = iter_documents(corpus, split=split, format=format,
                                             on_error=on_error, layout=layout)
        count = cache.build(documents, front)
        skipped = problems.skipped
        if not count:
            raise ConfigurationError(f"{corpus}: no documents found")
        if chatty:
            err(f"cached {count:,} documents in {len(cache.blocks)} blocks in {folder}")
    classifier.featurizer_ = front
    network = classifier.make_network()
    classifier.network_ = network
    rng = np.random.default_rng(seed)
    per_epoch: list[int] = []
    n_blocks = len(cache.blocks)
    documents = sum(b["documents"] for b in cache.blocks)
    try:
        for epoch in range(epochs):
            order = range(n_blocks) if epoch == 0 else rng.permutation(n_blocks).tolist()
            before = len(getattr(network, "mistakes_", []))
            updates_before = sum(getattr(network, "updates_", []))
            for X, labels in cache.read(order, None if epoch == 0 else rng):
                network.partial_fit(X, labels)
            per_epoch.append(sum(network.mistakes_[before:]))
            if chatty:
                err(f"epoch {epoch + 1}: {per_epoch[-1]:,} mistakes in {documents:,} "
                    f"documents (accuracy while learning {1 - per_epoch[-1] / documents:.4f})")
            if sum(network.updates_) == updates_before:  # an epoch without update (SNoW)
                if classifier.early_stop:
                    break
    except KeyboardInterrupt:
        err(f"interrupted: {output} untouched; the cache in {folder} stays for next time")
        raise typer.Exit(130) from None
    network.mistakes_ = per_epoch
    network.prune()  # eligible percent and discard, as after fit
    classifier.save(output, inference_only=inference_only, key=model_key(),
                    read_with=layout.recorded(corpus, format))
    seconds = time.perf_counter() - started
    summary = {"model": str(output), "corpus": corpus, "cache": str(folder),
               "documents": documents,
               "classes": len(network.classes_), "rule": rule, "epochs_run": len(per_epoch),
               "mistakes": per_epoch, "links": network.n_links_, "skipped": skipped,
               "seconds": round(seconds, 3), "calibrated": network.calibration_ is not None,
               "inference_only": inference_only}
    summarise(summary, f"trained {rule} on {documents:,} documents from the cache, "
              f"{counted(len(per_epoch), 'epoch')}, {network.n_links_:,} links in {seconds:.1f} s; "
              f"saved {output}", json_output=json_output, quiet=quiet)
