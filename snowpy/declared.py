"""The estimators' parameters, declared once: a table per estimator, as update rules
declare theirs (:class:`~snowpy.params.Param`).

Each entry is a :class:`Setting`: the default and one line saying what the parameter
does. The estimators' signatures read their defaults here, ``snowpy train`` builds its
options from the classifier's table (the help is the line, the default the value), and
the test suite checks that each class's docstring states the same default. Where the
classifier's default differs from its front end's or its network's, the table says why.

>>> from snowpy.declared import CLASSIFIER, FEATURIZER, defaults
>>> FEATURIZER["bits"].default, CLASSIFIER["bits"].default
(20, 22)
>>> defaults(CLASSIFIER)["rule"]
'passive-aggressive'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["CLASSIFIER", "FEATURIZER", "NETWORK", "RUNNING", "Setting",
           "defaults", "learned"]


@dataclass(frozen=True)
class Setting:
    """One parameter of an estimator: its default, and one line for ``--help``.

    Parameters
    ----------
    default : object
        The value when the parameter is not given.
    doc : str
        What the parameter does, in one line (the class's docstring says more).
    why : str
        Where an estimator's default differs from the one of the estimator it is
        built from (the classifier from its front end and its network): the reason.
    """

    default: Any
    doc: str
    why: str = ""


#: Parameters that say how an estimator runs, not what it learns (the threads: the model
#: is the same for any number). Model files leave them out, so that a model is the same
#: file however it was trained; a loaded model takes their defaults.
RUNNING = frozenset({"n_jobs"})


def learned(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` without the :data:`RUNNING` ones (what a model file keeps).

    >>> learned({"epochs": 3, "n_jobs": 2})
    {'epochs': 3}
    """
    return {name: value for name, value in params.items() if name not in RUNNING}


def _table(entries: Mapping[str, Setting]) -> Mapping[str, Setting]:
    return MappingProxyType(dict(entries))


def defaults(table: Mapping[str, Setting]) -> dict[str, Any]:
    """Every parameter's default, by name, in the table's order.

    >>> defaults(NETWORK)["epochs"]
    10
    """
    return {name: setting.default for name, setting in table.items()}


#: :class:`~snowpy.Featurizer`'s parameters. Its defaults are those of scikit-learn's
#: ``HashingVectorizer`` (unigrams, 2**20 columns): a front end alone often feeds a
#: learner whose weights are dense in the columns.
FEATURIZER: Mapping[str, Setting] = _table({
    "ngrams": Setting(1, "word n-grams: a length, or a range of lengths"),
    "char_ngrams": Setting(None, "character n-grams: a length, or a range of lengths"),
    "char_boundaries": Setting("within", "character n-grams within words, or across "
                                         "them"),
    "skipgrams": Setting(None, "pairs of words with up to this many words between them"),
    "affixes": Setting(None, "prefixes and suffixes of words of these lengths"),
    "extractors": Setting((), "feature extractors of plugins, as (name, parameters)"),
    "bits": Setting(20, "hash into 2**bits features"),
    "lowercase": Setting(True, "lowercase the text"),
    "unicode_form": Setting(None, "Unicode normal form: NFC, NFKC, NFD or NFKD"),
    "strip_accents": Setting(False, "remove accents"),
    "token_pattern": Setting(None, "a regular expression a token matches"),
    "values": Setting("binary", "feature strength: binary, count or log"),
    "idf": Setting(False, "multiply each strength by its inverse document frequency, "
                          "counted over the documents learned"),
    "relevance": Setting(0.0, "with idf, the share of each feature's relevance to the "
                              "labels in its strength (NBSVM's Naive Bayes log-count "
                              "ratios, counted once by a fit)"),
    "evidence": Setting(False, "with idf, each document's Naive Bayes evidence by label "
                               "(NBSVM's log-count ratios of its features, counted once by "
                               "a fit), which calibration stacks with the network's scores"),
    "norm": Setting(None, "divide each row by its Euclidean norm (l2)"),
    "fields": Setting(None, "the fields of record documents to featurise"),
    "keep_names": Setting(False, "store the names of the features the model keeps"),
    "hash_seed": Setting(0, "base seed of the hash"),
    "errors": Setting("replace", "invalid UTF-8: replace, or strict (an error)"),
    "chunk_bytes": Setting(1 << 20, "text processed per chunk"),
    "n_jobs": Setting(-1, "threads featurising chunks at once (-1: one per core)"),
})

#: :class:`~snowpy.Network`'s parameters (with the rule's own, which the rule declares).
NETWORK: Mapping[str, Setting] = _table({
    "rule": Setting("winnow", "update rule (snowpy plugins)"),
    "epochs": Setting(10, "passes over the data"),
    "average": Setting(True, "predict with the weights averaged over the updates"),
    "shuffle": Setting(True, "shuffle the examples before each pass"),
    "seed": Setting(0, "seed of the shuffling"),
    "bias": Setting(True, "a bias feature in every example: true, false or its strength"),
    "early_stop": Setting(True, "stop after an epoch without update"),
    "links": Setting("touched", "when a feature is linked to a target: signed, positive "
                                "(SNoW), touched or all (SNoW -s f)"),
    "eligibility": Setting(1, "SNoW -e: link a feature once it was active k times (k or "
                              "count:k), or keep each target's top p percent of features "
                              "by count (percent:p, with links positive)"),
    "discard": Setting(0.5, "drop links weighing less than this fraction of the initial "
                            "weight after training (SNoW -d)"),
    "precision": Setting("float32", "weights stored as float32 or float64"),
    "multiclass": Setting("ova", "targets trained one against all (ova) or by "
                                 "constraint classification"),
    "calibrate": Setting(None, "how probabilities are calibrated: none, cv or holdout (3 "
                               "folds; cv:k, holdout:k with k), or progressive"),
    "n_jobs": Setting(None, "threads learning (and scoring a batch) at once, the targets "
                            "shared among them: the same network for any number (None: "
                            "one, -1: every core)"),
})

#: The parameters of a network hosting a rule's :class:`~snowpy.rules.Learner`
#: (:class:`~snowpy.network.learner.LearnerNetwork`): the network's that apply to it.
LEARNER_NETWORK: Mapping[str, Setting] = _table({
    "rule": Setting(None, "update rule whose state is a learner (snowpy plugins)"),
    **{name: NETWORK[name] for name in ("epochs", "shuffle", "seed", "early_stop",
                                        "calibrate")},
})

_TEXT = "the best of the measurements in docs/benchmarks.md (20 Newsgroups)"
_TFIDF = ("TF-IDF's strengths, which LinearSVC learns from: the accuracy of "
          "docs/benchmarks.md's table, every shared corpus")

#: :class:`~snowpy.SnowClassifier`'s parameters: the rule and the thickness, the front
#: end's, then the network's; ``snowpy train``'s options are built from them.
CLASSIFIER: Mapping[str, Setting] = _table({
    "rule": Setting("passive-aggressive", "update rule (snowpy plugins)",
                    why="a margin rule whose step fits the strengths of a unit-length "
                        "row (PA-I: the hinge loss LinearSVC minimises)"),
    "thickness": Setting(None, "thick separator, every rule (default: the rule's own, "
                               "which snowpy plugins lists)"),
    **FEATURIZER,
    "ngrams": Setting((1, 2), FEATURIZER["ngrams"].doc, why=_TEXT),
    "bits": Setting(22, FEATURIZER["bits"].doc, why="the network grows with the links it "
                    "learns, not with the columns: fewer collisions cost nothing"),
    "values": Setting("log", FEATURIZER["values"].doc, why=_TFIDF),
    "idf": Setting(True, FEATURIZER["idf"].doc, why=_TFIDF),
    "relevance": Setting(0.25, FEATURIZER["relevance"].doc, why="every shared corpus "
                         "within half a point of its best baseline (docs/benchmarks.md): "
                         "up to +0.9 point on short sentences and reviews"),
    "norm": Setting("l2", FEATURIZER["norm"].doc, why=_TFIDF),
    **{name: setting for name, setting in NETWORK.items() if name != "rule"},
    "bias": Setting(0.1, NETWORK["bias"].doc, why="a bias of strength 1 weighs more than "
                    "most features of a unit-length row (20 Newsgroups: 0.870 at 0.1, "
                    "0.867 at 1, 0.869 with none)"),
    "links": Setting("signed", NETWORK["links"].doc, why="SNoW's sparse mode with "
                     "negative evidence: on text, as accurate with half the model"),
    "calibrate": Setting("cv", NETWORK["calibrate"].doc, why="a classifier gives "
                         "probabilities, as the command line does"),
    "n_jobs": Setting(-1, "threads featurising, learning and scoring at once (-1: every "
                          "core the process may use); the model is the same for any number",
                      why="featurising and learning use every core, as fastText does"),
})
