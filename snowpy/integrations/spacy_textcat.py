"""``snowpy_textcat``: a snowpy classifier as a spaCy pipeline component.

Installed with ``pip install '.[spacy]' in snowpy's source folder``, the component is registered through
spaCy's ``spacy_factories`` entry point, so any pipeline can add it by name::

    nlp = spacy.blank("en")
    textcat = nlp.add_pipe("snowpy_textcat", config={"rule": "balanced-winnow"})
    nlp.initialize(lambda: examples)       # the labels, from spaCy Examples
    for epoch in range(10):
        nlp.update(examples)               # one pass, as spaCy's training loop does
    nlp("cheap pills now").cats            # calibrated probabilities

It fills ``doc.cats`` with calibrated probabilities (progressive calibration: spaCy
trains in batches, each seen once per epoch), reads the tokens spaCy made (never
tokenising again), trains from ``Example`` objects through ``initialize``/``update``
(so ``spacy train`` configs can use it) or wholesale with :meth:`SnowTextCat.fit`, or
loads a snowpy model file (``config={"model": "path/to/model.snowpy"}``). It is saved
by ``nlp.to_disk`` as a snowpy model file and a JSON configuration: no pickle.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

__all__ = ["SnowTextCat", "make_snowpy_textcat"]

DEFAULT_CONFIG: dict[str, Any] = {
    "model": None,
    "rule": "balanced-winnow",
    "ngrams": [1, 2],
    "bits": 22,
    "calibrate": "progressive",
    "multilabel": False,
    "threshold": 0.5,
    "options": {},
}
MODEL_FILE = "model.snowpy"
CONFIG_FILE = "cfg.json"


@Language.factory(
    "snowpy_textcat",
    default_config=DEFAULT_CONFIG,
    assigns=["doc.cats"],
    default_score_weights={"cats_score": 1.0, "cats_macro_f": None, "cats_micro_f": None,
                           "cats_macro_auc": None},
)
def make_snowpy_textcat(nlp: Language, name: str, model: str | None, rule: str,
                        ngrams: list[int], bits: int, calibrate: str | None,
                        multilabel: bool, threshold: float,
                        options: dict[str, Any]) -> SnowTextCat:
    """Build the component from its configuration (see :data:`DEFAULT_CONFIG`)."""
    return SnowTextCat(nlp.vocab, name, model=model, rule=rule, ngrams=ngrams, bits=bits,
                       calibrate=calibrate, multilabel=multilabel, threshold=threshold,
                       options=options)


class SnowTextCat:
    """A snowpy classifier over spaCy documents: ``doc.cats`` from its probabilities.

    Parameters
    ----------
    vocab : spacy.vocab.Vocab
        The pipeline's vocabulary (spaCy's convention; snowpy hashes its own).
    name : str
        The component's name in the pipeline.
    model : str, optional
        A snowpy model file (``snowpy train ... -o model.snowpy``) to predict with;
        without one, the classifier is trained from spaCy ``Example`` objects.
    rule, ngrams, bits, calibrate, options :
        The :class:`snowpy.SnowClassifier` to train: its rule, word n-gram range,
        hash width, calibration and any other option or rule parameter.
    multilabel : bool
        Documents may hold several categories (``textcat_multilabel``'s task):
        each category's own probability, and those above ``threshold`` are positive.
    threshold : float
        The probability above which a category counts as present (for scoring and
        for multi-label training data).
    """

    def __init__(self, vocab: Any, name: str = "snowpy_textcat", *, model: str | None = None,
                 rule: str = "balanced-winnow", ngrams: Any = (1, 2), bits: int = 22,
                 calibrate: str | None = "progressive", multilabel: bool = False,
                 threshold: float = 0.5, options: dict[str, Any] | None = None) -> None:
        import snowpy

        self.vocab = vocab
        self.name = name
        self.multilabel = bool(multilabel)
        self.threshold = float(threshold)
        self.cfg: dict[str, Any] = {"rule": rule, "ngrams": list(ngrams) if isinstance(ngrams, (list, tuple))
                    else ngrams, "bits": int(bits), "calibrate": calibrate,
                    "multilabel": self.multilabel, "threshold": self.threshold,
                    "options": dict(options or {}), "labels": []}
        self.classifier: Any = None
        if model is not None:
            self.classifier = snowpy.load(model)
            self.cfg["labels"] = [str(c) for c in self.classifier.classes_]

    # ------------------------------------------------------------ the model
    def _new_classifier(self) -> Any:
        from snowpy import SnowClassifier

        ngrams = self.cfg["ngrams"]
        return SnowClassifier(self.cfg["rule"], ngrams=tuple(ngrams) if isinstance(
            ngrams, list) else ngrams, bits=self.cfg["bits"], calibrate=self.cfg["calibrate"],
            **self.cfg["options"])

    @property
    def labels(self) -> tuple[str, ...]:
        """The categories, in the classifier's order."""
        return tuple(self.cfg["labels"])

    def add_label(self, label: str) -> int:
        """Add a category before training (spaCy's convention); 1 if new, else 0."""
        if label in self.cfg["labels"]:
            return 0
        self.cfg["labels"].append(label)
        return 1

    @property
    def is_trainable(self) -> bool:
        """Yes: spaCy's training loop updates it (``spacy train``)."""
        return True

    @property
    def model(self) -> Any:
        """The component's model, as spaCy's ``TrainablePipe`` protocol names it: the
        :class:`snowpy.SnowClassifier` (None before ``initialize``). spaCy's loop calls
        :meth:`finish_update` on a component whose model is set."""
        return self.classifier

    # ----------------------------------------------------------- prediction
    def __call__(self, doc: Doc) -> Doc:
        """Fill ``doc.cats``."""
        return next(self.pipe([doc]))

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 1000) -> Iterator[Doc]:
        """Fill ``doc.cats`` for a stream of documents, a batch at a time."""
        batch: list[Doc] = []
        for doc in stream:
            batch.append(doc)
            if len(batch) >= batch_size:
                yield from self._annotate(batch)
                batch = []
        if batch:
            yield from self._annotate(batch)

    def _annotate(self, docs: list[Doc]) -> list[Doc]:
        if self.classifier is None or not hasattr(self.classifier, "network_"):
            raise ValueError(f"[{self.name}] the component is not trained: initialize and "
                             "update it, fit it, or give it a model file")
        network = self.classifier.network_
        if network.calibration_ is not None:
            scores = self.classifier.predict_proba(docs)
        else:  # a model file without calibration: 1 for the predicted labels, else 0
            scores = self._indicator(docs)
        labels = [str(c) for c in self.classifier.classes_]
        for doc, row in zip(docs, scores):
            doc.cats = {label: float(value) for label, value in zip(labels, row)}
        return docs

    def _indicator(self, docs: list[Doc]) -> Any:
        import numpy as np

        classes = list(self.classifier.classes_)
        out = np.zeros((len(docs), len(classes)))
        for row, predicted in enumerate(self.classifier.predict(docs)):
            for label in (predicted if self.multilabel else [predicted]):
                out[row, classes.index(label)] = 1.0
        return out

    # ------------------------------------------------------------- training
    def _targets(self, examples: Iterable[Example]) -> tuple[list[Doc], list[Any]]:
        docs, labels = [], []
        for example in examples:
            cats = example.reference.cats
            if self.multilabel:
                labels.append([label for label, value in cats.items()
                               if value >= self.threshold])
            else:
                positive = [label for label, value in cats.items() if value >= self.threshold]
                if len(positive) != 1:
                    raise ValueError(
                        f"[{self.name}] an example has {len(positive)} categories at or above "
                        f"{self.threshold} ({example.reference.text[:40]!r}...); a single-label "
                        "component needs exactly one (or set multilabel: true)")
                labels.append(positive[0])
            docs.append(example.predicted)
        return docs, labels

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *,
                   nlp: Language | None = None, labels: Iterable[str] | None = None) -> None:
        """Start a new classifier, its categories from ``labels`` or from the examples
        (spaCy calls this from ``nlp.initialize``)."""
        if labels is None:
            found: dict[str, None] = {}
            for example in get_examples():
                found.update(dict.fromkeys(example.reference.cats))
            labels = list(found)
        self.cfg["labels"] = sorted(str(label) for label in labels)
        self.classifier = self._new_classifier()

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Any = None,
               losses: dict[str, float] | None = None) -> dict[str, float]:
        """Learn a batch of examples, one pass (spaCy's training loop calls this per
        batch). The loss is the batch's mistakes before learning each example."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        if not examples:
            return losses
        if self.classifier is None:
            self.initialize(lambda: examples)
        docs, labels = self._targets(examples)
        first = not hasattr(self.classifier, "network_")
        before = 0 if first else sum(self.classifier.network_.mistakes_)
        self.classifier.partial_fit(docs, labels,
                                    classes=self.cfg["labels"] if first else None)
        losses[self.name] += float(sum(self.classifier.network_.mistakes_) - before)
        return losses

    def finish_update(self, sgd: Any) -> None:
        """Nothing to apply: snowpy's updates are made as each example is learned."""

    def fit(self, examples: Iterable[Example], **fit_options: Any) -> SnowTextCat:
        """Train on all ``examples`` at once with snowpy's own epochs and calibration
        (``calibrate`` from the configuration, or ``fit_options``), not batch by batch."""
        examples = list(examples)
        if not self.cfg["labels"]:
            self.initialize(lambda: examples)
        docs, labels = self._targets(examples)
        classifier = self._new_classifier()
        if fit_options:
            classifier.set_params(**fit_options)
        self.classifier = classifier.fit(docs, labels)
        return self

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
        """spaCy's text-classification scores (``cats_score``, macro F, AUC...)."""
        from spacy.scorer import Scorer

        return Scorer.score_cats(examples, "cats", labels=self.labels,
                                 multi_label=self.multilabel, threshold=self.threshold,
                                 **kwargs)

    # -------------------------------------------------------------- storage
    def to_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> None:
        """A folder with the snowpy model file and the component's configuration."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        (path / CONFIG_FILE).write_bytes(orjson.dumps(self.cfg, option=orjson.OPT_INDENT_2))
        if self.classifier is not None and hasattr(self.classifier, "network_"):
            self.classifier.save(path / MODEL_FILE)

    def from_disk(self, path: str | Path, *, exclude: Iterable[str] = ()) -> SnowTextCat:
        """Read what :meth:`to_disk` wrote (the model file validated, never unpickled)."""
        import snowpy

        path = Path(path)
        self.cfg = orjson.loads((path / CONFIG_FILE).read_bytes())
        self.multilabel = bool(self.cfg.get("multilabel", False))
        self.threshold = float(self.cfg.get("threshold", 0.5))
        self.classifier = snowpy.load(path / MODEL_FILE) if (path / MODEL_FILE).exists() \
            else None
        return self

    def to_bytes(self, *, exclude: Iterable[str] = ()) -> bytes:
        """The component as bytes: the configuration and the model file (as :meth:`to_disk`
        writes it), length-prefixed."""
        with tempfile.TemporaryDirectory() as folder:
            self.to_disk(folder)
            model = Path(folder) / MODEL_FILE
            saved = model.read_bytes() if model.exists() else b""
        config = orjson.dumps(self.cfg)
        return len(config).to_bytes(8, "little") + config + saved

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = ()) -> SnowTextCat:
        """Read what :meth:`to_bytes` gave (as :meth:`from_disk` reads its folder)."""
        size = int.from_bytes(data[:8], "little")
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / CONFIG_FILE).write_bytes(data[8:8 + size])
            if data[8 + size:]:
                (Path(folder) / MODEL_FILE).write_bytes(data[8 + size:])
            return self.from_disk(folder)
