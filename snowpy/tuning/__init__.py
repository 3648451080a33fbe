"""``snowpy tune``: a classifier that chooses its own settings (``pip install '.[tune]'``
in snowpy's source folder), as fastText's ``-autotune-validation`` and ``vw-hyperopt`` do.

Optuna's TPE sampler proposes settings (:mod:`snowpy.tuning.space`); each trial trains on
the tuning split and is scored on a validation split carved from the *training* data (a
corpus's test split is never read). A trial is first trained on a quarter of the tuning
split and pruned there when it falls below the median of the trials before it (Optuna's
median pruner), so bad settings cost a quarter of a training. The search stops when the
budget, less the time the final training is expected to take, is spent; the best
setting is then trained on all the training data, calibrated, and returned. A study file
keeps every trial, so a search can be resumed."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snowpy.exceptions import ConfigurationError

__all__ = ["Standing", "TuneResult", "tune"]


@dataclass
class Standing:
    """Where a search stands after a trial (what it has done so far), passed to
    ``progress``."""

    trials: int
    pruned: int
    best_score: float
    best: dict[str, Any]
    elapsed: float
    budget: float


@dataclass
class TuneResult:
    """The tuned classifier and the trials that chose it."""

    classifier: Any
    best_params: dict[str, Any]
    best_score: float
    metric: str
    trials: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    baseline_score: float | None = None


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise ConfigurationError("tuning needs Optuna: pip install '.[tune]' in snowpy's source folder"
                                 ) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def tune(texts: Sequence[Any], labels: Sequence[Any], *, budget: float = 300.0,
         validation: float = 0.2, seed: int = 0, study: str | None = None,
         progress: Callable[[Standing], None] | None = None) -> TuneResult:
    """Search settings for ``texts`` and ``labels`` within ``budget`` seconds; returns
    the best setting trained on all of them (:class:`TuneResult`).

    Parameters
    ----------
    texts, labels
        The training data (a list of labels per text makes it multi-label, scored by
        micro-F1; otherwise accuracy).
    budget : float
        Seconds for the whole search, the final training included.
    validation : float
        The share of ``texts`` each trial is scored on (never trained on).
    seed : int
        Seeds the split and the sampler: the same budget of trials is the same search.
    study : str, optional
        A file keeping the trials (Optuna's journal storage); a search given the same
        file continues where it stopped.
    progress : callable, optional
        Called with the search's :class:`Standing` after each trial (``snowpy tune``
        prints a line from it).

    Examples
    --------
    >>> import snowpy.tuning as tuning                                # doctest: +SKIP
    >>> result = tuning.tune(texts, labels, budget=60)                # doctest: +SKIP
    >>> result.best_params, result.classifier.predict(["where is my parcel"])  # doctest: +SKIP
    """
    optuna = _optuna()
    started = time.monotonic()
    if not 0.0 < validation < 0.9:
        raise ConfigurationError(f"validation must be a share from 0 to 0.9, got {validation}")
    labels = [tuple(y) if isinstance(y, list) else y for y in labels]
    texts = list(texts)
    if len(texts) != len(labels) or len(texts) < 10:
        raise ConfigurationError("tuning needs at least 10 labelled documents")
    search = _Search(texts, labels, validation, seed)
    search.deadline = started + budget
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=8, multivariate=True)
    pruner = optuna.pruners.MedianPruner(n_startup_trials=4, n_warmup_steps=0)
    storage = None
    if study is not None:
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend

        storage = JournalStorage(JournalFileBackend(str(study)))
    found = optuna.create_study(direction="maximize", sampler=sampler, pruner=pruner,
                                storage=storage, study_name="snowpy-tune",
                                load_if_exists=True)
    from snowpy.tuning.space import first_trials

    if not found.trials:
        for params in first_trials(search.multilabel):
            found.enqueue_trial(params, skip_if_exists=True)

    def stop_in_time(study_: Any, trial: Any) -> None:
        elapsed = time.monotonic() - started
        if progress is not None and study_.best_trials:
            pruned = sum(t.state == optuna.trial.TrialState.PRUNED for t in study_.trials)
            progress(Standing(len(study_.trials), pruned, study_.best_value,
                              study_.best_params, elapsed, budget))
        if elapsed + search.final_estimate(study_) >= budget:
            study_.stop()

    found.optimize(search.objective, timeout=budget, callbacks=[stop_in_time],
                   catch=(ConfigurationError,))
    done = [t for t in found.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if not done:
        raise ConfigurationError(f"no trial finished within the budget of {budget:.0f} s: "
                                 "give a larger budget")
    best = found.best_trial
    classifier = search.final(best.params)
    waiting = optuna.trial.TrialState.WAITING  # (enqueued first trials not yet run)
    return TuneResult(classifier, dict(best.params), float(best.value), search.metric,
                      [_row(t) for t in found.trials if t.state != waiting],
                      time.monotonic() - started, _baseline(done))


def _baseline(done: list[Any]) -> float | None:
    first = min(done, key=lambda t: t.number)
    return float(first.value) if first.number == 0 else None


def _row(trial: Any) -> dict[str, Any]:
    return {"number": trial.number, "state": trial.state.name.lower(),
            "score": trial.value, "params": dict(trial.params),
            "seconds": trial.user_attrs.get("seconds"),
            "finished_at": trial.user_attrs.get("finished_at")}


def held_out(labels: Sequence[Any], share: float) -> np.ndarray:
    """The validation documents: the last ``share`` of each label's documents in corpus
    order (a multi-label document goes with its first label). A corpus in time order is
    then validated on its latest documents, as its test split tests them: a random
    split puts messages and their quotations on both sides, which rewards settings
    that memorise (20 Newsgroups: a random fifth chose character n-grams and
    conjunctions, 0.905 on it and 0.830 on the test split, below the defaults' 0.854).

    >>> held_out(["a", "a", "b", "a", "b", "a", "b", "b", "a", "b"], 0.2).tolist()
    [8, 9]
    """
    groups: dict[Any, list[int]] = {}
    for i, label in enumerate(labels):
        key = label[0] if isinstance(label, tuple) and label else label
        groups.setdefault(str(key), []).append(i)
    chosen = [i for members in groups.values()
              for i in members[len(members) - int(round(len(members) * share)):]
              if len(members) > 1]
    return np.array(sorted(chosen), dtype=np.int64)


class _Search:
    """The data of one search: the tuning and validation splits, the features of each
    front end met so far, and the objective."""

    def __init__(self, texts: list[Any], labels: list[Any], validation: float, seed: int
                 ) -> None:
        from snowpy.text.keys import document_keys

        self.texts, self.labels = texts, labels
        self.multilabel = any(isinstance(y, tuple) for y in labels)
        self.metric = "micro-F1" if self.multilabel else "accuracy"
        self.valid = held_out(labels, validation)
        self.train = np.setdiff1d(np.arange(len(texts)), self.valid)
        self.quarter = np.sort(self.train[np.random.default_rng(seed).permutation(
            len(self.train))[:max(len(self.train) // 4, 1)]])
        self.keys = document_keys(texts, labels)
        self._rows: dict[tuple, Any] = {}
        self._slowest = 0.0
        self.started = time.monotonic()
        self.deadline = float("inf")

    def rows(self, front: dict[str, Any], indices: np.ndarray) -> Any:
        """The features of documents ``indices`` (CSR, in that order) under a front end:
        each document featurised once per front end, and only when a trial needs it
        (the quarter and the validation split first: a trial stopped there never
        featurises the rest)."""
        import scipy.sparse as sp

        from snowpy.text import Featurizer

        key = tuple(sorted((k, str(v)) for k, v in front.items()))
        if key not in self._rows:
            if len(self._rows) >= 4:  # (features of a few front ends kept, not all)
                self._rows.pop(next(iter(self._rows)))
            self._rows[key] = {"position": np.full(len(self.texts), -1, np.int64),
                               "matrix": None}
        entry = self._rows[key]
        missing = indices[entry["position"][indices] < 0]
        if missing.size:
            made = Featurizer(**front).rows([self.texts[i] for i in missing],
                                            names=False).tocsr()  # (before the idf)
            before = 0 if entry["matrix"] is None else entry["matrix"].shape[0]
            entry["matrix"] = made if entry["matrix"] is None else \
                sp.vstack([entry["matrix"], made], format="csr")
            entry["position"][missing] = before + np.arange(missing.size)
        return entry["matrix"][entry["position"][indices]]

    def score(self, classifier: Any, rows: Any) -> float:
        """The validation score (``rows``: the validation split's features, weighed by
        the document frequencies the classifier counted when its front end has ``idf``)."""
        from snowpy import metrics

        truth = [self.labels[i] for i in self.valid]
        predicted = classifier.network_.predict(classifier.featurizer_.weighed(rows))
        if self.multilabel:
            return float(metrics.multilabel_report(truth, predicted, list(
                classifier.network_.classes_))["micro"]["f1"])
        return float(np.mean([str(p) == str(t) for p, t in zip(predicted, truth)]))

    def objective(self, trial: Any) -> float:
        import warnings

        import optuna

        from snowpy.tuning.space import suggest

        began = time.monotonic()
        options = suggest(trial, self.multilabel)
        with warnings.catch_warnings():  # (a trial's overflows and notes are its score's)
            warnings.simplefilter("ignore")
            value = self._trained(trial, options, optuna)
        seconds = time.monotonic() - began
        self._slowest = max(self._slowest, seconds)  # (until a trial finishes)
        trial.set_user_attr("seconds", round(seconds, 3))
        trial.set_user_attr("finished_at", round(time.monotonic() - self.started, 3))
        return value

    def _trained(self, trial: Any, options: dict[str, Any], optuna: Any) -> float:
        from snowpy import SnowClassifier
        from snowpy.tuning.space import FRONT_END

        began = time.monotonic()
        front = {k: options[k] for k in FRONT_END}
        classifier = SnowClassifier(**options, calibrate=None)
        for step, subset in enumerate((self.quarter, self.train)):
            if step == 0 and len(self.train) < 2000:
                continue  # (a small corpus: the whole split costs little more)
            classifier.fit_rows(self.rows(front, subset), [self.labels[i] for i in subset],
                                keys=self.keys[subset])
            value = self.score(classifier, self.rows(front, self.valid))
            trial.report(value, step)
            if step == 0 and trial.number > 0:
                # the whole split costs about four quarters: a trial that would end past
                # the budget (less the final training) stops here
                projected = (time.monotonic() - began) * 4
                if time.monotonic() + projected + self.final_estimate(trial.study) > \
                        self.deadline:
                    trial.set_user_attr("out_of_time", True)
                    raise optuna.TrialPruned()
                if trial.should_prune():
                    raise optuna.TrialPruned()
        return value

    def final_estimate(self, study: Any) -> float:
        """Seconds the final training may take: the best trial's, on all the data (a
        fifth more than the tuning split) and calibrated (three folds more)."""
        try:
            seconds = float(study.best_trial.user_attrs.get("seconds", self._slowest))
        except ValueError:  # (no trial finished yet)
            seconds = self._slowest
        return seconds * 1.25 * 4

    def final(self, params: dict[str, Any]) -> Any:
        """The best setting trained on every document, calibrated (its options rebuilt
        by :func:`snowpy.tuning.space.suggest` from a trial whose answers are given)."""
        import warnings

        from optuna.trial import FixedTrial

        from snowpy import SnowClassifier
        from snowpy.tuning.space import suggest

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return SnowClassifier(**suggest(FixedTrial(params), self.multilabel)).fit(
                self.texts, self.labels)
