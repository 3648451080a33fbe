"""``snowpy compile``: compile every kernel now and cache it, so no later command waits.

numba compiles a kernel the first time a process calls it and caches the
machine code on disk (beside the sources, under ``NUMBA_CACHE_DIR``, or in the
user's cache folder); a machine's first compiled training spends some 20 s
there. This command pays that at a time of the user's choosing: in a
container image's build step, after ``pip install`` in CI (with the cache
folder cached), before a demo. numba has no supported ahead-of-time compiler
any more (``numba.pycc`` is deprecated), so warming its cache is the way.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from snowpy.cli.common import err, handles_errors
from snowpy.cli.tiering import numba_cache_places
from snowpy.exceptions import ConfigurationError


@handles_errors
def compile(
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """Compile snowpy's kernels (training, prediction, one example at a time, every
    feature extractor and every installed rule) and cache them on disk."""
    from snowpy._jit import interpreted

    if interpreted():
        raise ConfigurationError("NUMBA_DISABLE_JIT=1 is set: the kernels run as Python, "
                                 "there is nothing to compile")
    started = time.perf_counter()
    steps = _steps()
    for number, (what, step) in enumerate(steps, start=1):
        began = time.perf_counter()
        problem = _run(step)
        if not quiet:
            took = time.perf_counter() - began
            err(f"[{number}/{len(steps)}] {what}: "
                + (f"{took:.1f} s" if problem is None else f"skipped ({problem})"))
    if not quiet:
        places = " or ".join(map(str, numba_cache_places()))
        err(f"compiled in {time.perf_counter() - started:.1f} s; cached in {places}")


def _run(step: Any) -> str | None:
    try:
        step()
    except Exception as exc:  # a plugin's rule that fails to build is named, not fatal
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


def _steps() -> list[tuple[str, Any]]:
    from snowpy import DualNetwork, Network, SnowClassifier, load, save
    from snowpy.corpora import read
    from snowpy.corpora.demo import demo_path
    from snowpy.plugins import get_rule, list_extractors, list_rules
    from snowpy.text import Featurizer

    documents = list(read(demo_path("train"), format="tsv"))
    texts = [d.text for d in documents]
    labels = [d.label for d in documents]

    def classifier() -> None:  # the defaults: 1-2 grams, cv calibration, saving, loading
        model = SnowClassifier(calibrate="cv", epochs=2, seed=0).fit(texts, labels)
        model.predict_proba(texts[:50])
        with tempfile.TemporaryDirectory(prefix="snowpy-compile-") as folder:
            save(model, Path(folder) / "m.snowpy")
            load(Path(folder) / "m.snowpy").predict(texts[:5])

    def one_at_a_time() -> None:
        model = SnowClassifier(calibrate="progressive", seed=0)
        for text, label in zip(texts[:50], labels[:50]):
            model.learn_one(text, label)
        model.predict_proba_one(texts[0])

    def extractors() -> None:
        every: list[tuple[str, dict[str, Any]]] = [
            (name, {}) for name in list_extractors() if name != "words"]
        Featurizer(ngrams=(1, 2), char_ngrams=(3, 5), extractors=every).transform(texts[:50])

    X = Featurizer(ngrams=(1, 1), bits=18).transform(texts)

    def rule(name: str) -> Any:
        kind = DualNetwork if get_rule(name).dual else Network
        return lambda: kind(rule=name, epochs=1, calibrate=None, seed=0).fit(X, labels)

    return [("training, prediction and model files", classifier),
            ("one example at a time", one_at_a_time),
            ("feature extractors", extractors),
            *((f"rule {name}", rule(name)) for name in list_rules())]
