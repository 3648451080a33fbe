"""One ``snowpy train`` run: where it reads and writes and how it speaks, given once to
each training mode (in memory, stream, cache, cluster) instead of a dozen options each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snowpy.cli.common import err, model_key, summarise

if TYPE_CHECKING:  # pragma: no cover
    from snowpy import corpora

__all__ = ["Cluster", "Run"]


@dataclass(frozen=True)
class Run:
    """The options every training mode shares."""

    corpus: str
    output: Path
    split: str | None
    format: str | None
    layout: corpora.Layout
    on_error: str
    inference_only: bool
    quiet: bool
    json_output: bool
    rule: str
    started: float
    save_partial: Path | None = None

    @property
    def chatty(self) -> bool:
        """Whether progress is said on standard error."""
        return not (self.quiet or self.json_output)

    def read_with(self) -> dict[str, Any]:
        """How the corpus was read, kept in the model file."""
        return self.layout.recorded(self.corpus, self.format)

    def documents(self, featurizer: Any = None) -> Any:
        """The corpus's documents as a stream, and the reader's problems (standard input
        in blocks featurised by ``featurizer``, when given and the layout allows); a
        registered corpus's training split unless ``--split`` names another, as a
        training read in memory takes it."""
        from snowpy.files import stream_corpus

        corpus = self.open(prefer="train")
        return stream_corpus(corpus, featurizer), corpus.problems

    def open(self, prefer: str | None = None) -> corpora.Corpus:
        """The corpus, opened as the options say (:func:`snowpy.corpora.open`)."""
        from snowpy import corpora

        return corpora.open(self.corpus, split=self.split, format=self.format,
                            layout=self.layout, prefer=prefer, on_error=self.on_error)

    def save(self, classifier: Any) -> None:
        """Write the model (atomically), as the options ask."""
        classifier.save(self.output, inference_only=self.inference_only, key=model_key(),
                        read_with=self.read_with())

    def save_partial_model(self, classifier: Any) -> None:
        """Write what was learned so far to ``--save-partial`` (a full model)."""
        assert self.save_partial is not None
        classifier.save(self.save_partial, key=model_key(), read_with=self.read_with())

    def skipped(self, count: int, messages: list[str]) -> None:
        """Say how many malformed records were skipped, and the first."""
        if count and not self.json_output:
            err(f"skipped {count} malformed record(s); first: {messages[0]}")

    def summarise(self, summary: dict[str, Any], line: str) -> None:
        """The run's summary: a JSON object, or one line."""
        summarise(summary, line, json_output=self.json_output, quiet=self.quiet)


@dataclass(frozen=True)
class Cluster:
    """Where and how a training on a Dask cluster runs (``--workers`` and its options)."""

    workers: int | None
    scheduler: str | None
    shards: int | None
    mixing: str
    average_over: str
    checkpoint: Path | None
    resume: bool
