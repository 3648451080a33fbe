"""Predicting and evaluating on a Dask cluster, partition by partition.

Each worker loads the model file (once per process, memory-mapped), reads its
shard, featurises and predicts it where it lies, and writes its predictions
to ``part-NNNNN.tsv`` of the output folder (atomically); only counts come
back to the client.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from snowpy._atomic import write_bytes
from snowpy.distributed.cluster import connect, default_shards
from snowpy.distributed.shards import Reading, Shard, plan_shards, read_shard
from snowpy.exceptions import ConfigurationError
from snowpy.metrics import confusion_report

__all__ = ["evaluate", "predict"]

_MODELS: dict[tuple[str, int, int], Any] = {}


def _model(path: str) -> Any:
    """The model at ``path``, loaded once per worker process (and again if replaced)."""
    from snowpy.persistence import load

    info = os.stat(path)
    key = (path, info.st_mtime_ns, info.st_size)
    if key not in _MODELS:
        _MODELS.clear()
        _MODELS[key] = load(path, mmap=True)
    return _MODELS[key]


def _predict_shard(model_path: str, shard: Shard, output: str | None, proba: bool
                   ) -> dict[str, Any]:
    model = _model(model_path)
    read = read_shard(shard)
    texts = read.texts or []
    predicted = model.predict(texts) if texts else []
    if output is not None:
        lines = []
        if proba and texts:
            top = model.predict_proba(texts).max(axis=1)
            lines = [f"{_label(p)}\t{q:.6f}" for p, q in zip(predicted, top)]
        else:
            lines = [_label(p) for p in predicted]
        _write_text(Path(output) / f"part-{shard.index:05d}.tsv", lines)
    pairs: Counter = Counter()
    for truth, guess in zip(read.labels, predicted):
        if truth is not None:
            pairs[(_label(truth), _label(guess))] += 1
    return {"index": shard.index, "documents": len(texts),
            "skipped": read.problems.skipped, "messages": read.problems.messages[:3],
            "pairs": dict(pairs)}


def _label(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    return str(value)


def _write_text(path: Path, lines: list[str]) -> None:
    write_bytes(path, "".join(f"{line}\n" for line in lines).encode("utf-8"))


def _run(model: str | os.PathLike, corpus: str, output: str | os.PathLike | None, *,
         cluster: Any, reading: Reading | None, proba: bool) -> list[dict[str, Any]]:
    model_path = os.path.abspath(model)
    reading = Reading() if reading is None else reading
    if output is not None:
        Path(output).mkdir(parents=True, exist_ok=True)
    with connect(cluster) as connected:
        count = reading.shards if reading.shards is not None else \
            default_shards(connected.scheduler_info()["workers"])
        planned = connected.submit(plan_shards, str(corpus), count, split=reading.split,
                                   format=reading.format, layout=reading.layout,
                                   on_error=reading.on_error, prefer="test", interleave=False,
                                   pure=False).result()
        parts = [connected.submit(_predict_shard, model_path, shard,
                                  None if output is None else os.path.abspath(output), proba,
                                  pure=False) for shard in planned]
        results = connected.gather(parts)
    if output is not None:
        manifest = {"model": model_path, "corpus": str(corpus),
                    "parts": [{"file": f"part-{r['index']:05d}.tsv",
                               "documents": r["documents"]} for r in results]}
        _write_text(Path(output) / "MANIFEST.json",
                    [orjson.dumps(manifest, option=orjson.OPT_INDENT_2).decode()])
    return results


def predict(model: str | os.PathLike, corpus: str, output: str | os.PathLike, *,
            cluster: Any = None, reading: Reading | None = None, proba: bool = False
            ) -> dict[str, Any]:
    """Write the predictions of ``model`` for ``corpus`` to the folder ``output``.

    One ``part-NNNNN.tsv`` per shard (a label per line, and its probability with
    ``proba``): the parts one after the other follow the corpus's order; and
    ``MANIFEST.json`` listing them. ``corpus`` is anything
    :func:`snowpy.distributed.fit` reads by path, read as ``reading`` says
    (``Reading(format="lines")`` reads plain text, one document per line); ``cluster``
    is as :func:`~snowpy.distributed.fit`'s.
    """
    results = _run(model, corpus, output, cluster=cluster, reading=reading, proba=proba)
    return {"documents": sum(r["documents"] for r in results), "parts": len(results),
            "skipped": sum(r["skipped"] for r in results), "output": str(output)}


def evaluate(model: str | os.PathLike, corpus: str, *, cluster: Any = None,
             reading: Reading | None = None, output: str | os.PathLike | None = None
             ) -> dict[str, Any]:
    """Accuracy, macro-averaged F1 and the confusion counts of ``model`` on ``corpus``
    (single-label), computed on the workers; predictions written to ``output`` too
    when given. ``cluster`` and ``reading`` are as :func:`predict`'s."""
    results = _run(model, corpus, output, cluster=cluster, reading=reading, proba=False)
    pairs: Counter = Counter()
    for result in results:
        pairs.update({tuple(k) if isinstance(k, list) else k: v
                      for k, v in result["pairs"].items()})
    total = sum(pairs.values())
    if not total:
        raise ConfigurationError(f"{corpus}: no labelled documents to evaluate on")
    labels = sorted({label for pair in pairs for label in pair})
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), np.int64)
    for (truth, guess), count in pairs.items():
        matrix[index[truth], index[guess]] += count
    return {"documents": total, "accuracy": int(np.trace(matrix)) / total,
            "macro_f1": confusion_report(matrix, labels)["macro"]["f1"],
            "confusion": {f"{t}\t{g}": v for (t, g), v in sorted(pairs.items())},
            "skipped": sum(r["skipped"] for r in results), "parts": len(results)}
