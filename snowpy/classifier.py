"""``snowpy.SnowClassifier``: raw text in, labels out.

The front end (:class:`snowpy.Featurizer`) and the network
(:class:`snowpy.Network`) in one estimator with scikit-learn's conventions:
``fit``, ``partial_fit``, ``predict``, ``decision_function``, ``score``,
``get_params``/``set_params``, usable in a scikit-learn ``Pipeline`` (with no
dependency on scikit-learn).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from snowpy import model_kinds
from snowpy._validation import threads_of
from snowpy.base import Estimator, available_if, is_fitted
from snowpy.declared import CLASSIFIER, FEATURIZER, NETWORK, RUNNING, defaults, learned
from snowpy.exceptions import ConfigurationError, ModelFileError, NotFittedError, SnowpyError
from snowpy.model_file import id_set, ids_of_set, write_model
from snowpy.model_kinds import model_kind
from snowpy.network import Network
from snowpy.network.cloud import Cloud, cloud_members
from snowpy.network.engine import Blocks
from snowpy.network.learner import network_for
from snowpy.network.network import gives_probabilities
from snowpy.network.options import calibrating, upgraded
from snowpy.network.state import narrowest, plain
from snowpy.progress import phase
from snowpy.text import Featurizer
from snowpy.text.featurizer import as_documents
from snowpy.text.keys import document_keys
from snowpy.text.names import NameIndex
from snowpy.text.weighing import DocumentFrequencies, LabelRatios

__all__ = ["SnowClassifier"]

_DEFAULTS = defaults(CLASSIFIER)  # (the signature's defaults: snowpy.declared)
_TUPLES = ("ngrams", "char_ngrams", "affixes", "fields")
_FEATURIZER_OPTIONS = tuple(FEATURIZER)
#: No bytes (a text whose row a compiled call made already).
_NO_BYTES = np.zeros(0, np.uint8)

_NETWORK_OPTIONS = tuple(name for name in NETWORK if name != "rule")

#: Why a classifier with ``evidence=True`` learns no more after :meth:`SnowClassifier.fit`
#: (its own refusals, ``snowpy train --from``'s, ``snowpy serve``'s closed ``/learn``).
FITTED_ONCE = ("evidence=True is fitted once, by fit: its log-count ratios by label and "
               "the evidence's weight do not learn one example or batch more (fit again on "
               "all the documents, or train without evidence to learn online)")


def _check_labels(texts: Any, labels: Any) -> Any:
    """``labels``, a label per text, each hashable (a collection of them, multi-label),
    checked before any work: the message names what is wrong."""
    try:
        n_labels = len(labels)
    except TypeError:
        raise ConfigurationError("labels must be a sequence, one per text") from None
    if n_labels != len(texts):
        raise ConfigurationError(f"{len(texts)} texts but {n_labels} labels")
    if isinstance(labels, np.ndarray) and labels.dtype.kind in "iuUSb":
        return labels
    collections = 0
    for label in labels:
        if isinstance(label, (list, tuple, set, frozenset)):
            collections += 1
            items = label
        else:
            items = (label,)
        for item in items:
            try:
                hash(item)
            except TypeError:
                raise ConfigurationError(f"labels must be hashable (strings or integers), "
                                         f"got {item!r}") from None
    if 0 < collections < n_labels:
        raise ConfigurationError("labels mixes single labels and collections of labels; "
                                 "give one label per text, or a collection per text "
                                 "(multi-label)")
    return labels


@model_kind("classifier")
class SnowClassifier(Estimator):
    """A text classifier: hashed features and a sparse network of target nodes.

    Parameters
    ----------
    rule : str or RuleSpec, default "passive-aggressive"
        The update rule (``snowpy plugins`` lists them), or a rule given as an object
        (a :class:`~snowpy.rules.RuleSpec`, registered or not); its parameters are
        passed as keywords (``alpha=1.2``, ``theta=2``).
    thickness : float or None, default None
        SNoW's thick separator, which every rule accepts (see
        ``docs/rules.md``); None: the rule's own default, which ``snowpy plugins``
        lists (1.0 for passive-aggressive, 0.0 for the Perceptron). The defaults of this class (PA-I on sublinear term
        frequencies times inverse document frequencies, a quarter of each
        strength scaled by its feature's relevance to the labels, each row of
        length 1, a bias of strength 0.1; word 1-2 grams, 2**22 hashed features,
        ten averaged epochs) are the best of the measurements in
        ``docs/benchmarks.md``: 0.870 accuracy on 20 Newsgroups, against 0.866
        for TF-IDF and LinearSVC. The multiplicative rules (Winnow, Balanced
        Winnow) learn on SNoW's front end instead, binary features and a bias of
        1: ``SnowClassifier(rule="balanced-winnow", **SNOW)`` with ``SNOW`` from
        :mod:`snowpy.presets` (0.850 there).
    ngrams, char_ngrams, char_boundaries, skipgrams, affixes, extractors, bits,
    lowercase, unicode_form, strip_accents, token_pattern, values, idf, relevance, norm,
    fields, keep_names, hash_seed, errors, chunk_bytes :
        The front end's options; see :class:`snowpy.Featurizer`.
    evidence : bool, default False
        Stack each document's Naive Bayes evidence by label (the log-count ratios of
        its features, NBSVM's, Wang and Manning 2012) with the network's scores: the
        calibration folds' held-out scores and evidence fit the evidence's weight
        (:mod:`snowpy.calibration`), and every prediction takes its decision from the
        stacked scores. Needs ``idf`` and a cross-fitted ``calibrate`` (``"cv"``,
        ``"holdout"``); ``docs/benchmarks.md`` measures it.
    n_jobs : int, default -1
        Threads featurising and learning at once (-1: every core the process may
        use); the model is the same for any number (see :class:`snowpy.Network`).
    calibrate : {"cv", "holdout", "progressive", None} or str, default "cv"
        How probabilities are calibrated (see :class:`snowpy.Network`). By default
        a classifier gives calibrated probabilities, as the command line does:
        three extra trainings on folds (20 Newsgroups, Balanced Winnow: 28.3 s
        instead of 10.1 s; log loss 0.65, ECE 0.062; at the defaults, log loss
        0.491 against LinearSVC's 0.521 with the same sigmoid calibration).
        ``"progressive"`` costs nothing more and calibrates from first-epoch
        scores (log loss 1.21, ECE 0.086 there, Balanced Winnow; as good as cv
        on SMS Spam); ``None`` gives none. A classifier
        started by ``partial_fit`` or ``learn_one`` sees its data once: with
        ``"cv"`` or ``"holdout"`` it calibrates progressively.
    links : {"signed", "touched", "positive", "all"}, default "signed"
        When a feature is linked to a target (see :class:`snowpy.Network`, whose
        default is ``"touched"``, the rule over every feature). A text classifier
        keeps SNoW's sparse mode with negative evidence: a feature met in a
        target's documents is part of its concept, which on text is a useful bias
        (20 Newsgroups, Balanced Winnow: 0.850 with a 38 MB model, against 0.849
        and 84 MB with ``"touched"``). On features that are not words, many of
        them noise, it can learn nothing: ``docs/rules.md``.
    epochs, average, shuffle, seed, bias, early_stop, eligibility, discard, precision,
    multiclass :
        The network's options; see :class:`snowpy.Network`.
    **rule_params
        Parameters of the rule.

    Attributes
    ----------
    featurizer_ : Featurizer
        The fitted front end (its ``names_`` when ``keep_names=True``).
    network_ : Network
        The trained network (``mistakes_``, ``rule_params_``...).
    classes_ : ndarray
        The labels.

    Examples
    --------
    >>> clf = SnowClassifier(epochs=5).fit(
    ...     ["cheap pills now", "meeting at noon", "win cash now", "lunch meeting"],
    ...     ["spam", "ham", "spam", "ham"])
    >>> clf.predict(["cash pills", "noon lunch"]).tolist()
    ['spam', 'ham']
    """

    _option_names = ("rule", "thickness") + _FEATURIZER_OPTIONS + tuple(
        name for name in _NETWORK_OPTIONS if name not in _FEATURIZER_OPTIONS)  # (n_jobs: both)
    _takes_text = True
    #: How the training corpus was read, on a classifier loaded from a file (``{}`` where
    #: the file kept none; see :meth:`save`), kept by every later save of it.
    read_with_: dict[str, Any]

    def __init__(
        self,
        rule: str = _DEFAULTS["rule"],
        *,
        thickness: float | None = _DEFAULTS["thickness"],
        ngrams: Any = _DEFAULTS["ngrams"],
        char_ngrams: Any = _DEFAULTS["char_ngrams"],
        char_boundaries: str = _DEFAULTS["char_boundaries"],
        skipgrams: int | None = _DEFAULTS["skipgrams"],
        affixes: Any = _DEFAULTS["affixes"],
        extractors: Sequence[tuple[str, dict]] = _DEFAULTS["extractors"],
        bits: int = _DEFAULTS["bits"],
        lowercase: bool = _DEFAULTS["lowercase"],
        unicode_form: str | None = _DEFAULTS["unicode_form"],
        strip_accents: bool = _DEFAULTS["strip_accents"],
        token_pattern: str | None = _DEFAULTS["token_pattern"],
        values: str = _DEFAULTS["values"],
        idf: bool = _DEFAULTS["idf"],
        relevance: float = _DEFAULTS["relevance"],
        evidence: bool = _DEFAULTS["evidence"],
        norm: str | None = _DEFAULTS["norm"],
        fields: Sequence[str] | None = _DEFAULTS["fields"],
        keep_names: bool = _DEFAULTS["keep_names"],
        hash_seed: int = _DEFAULTS["hash_seed"],
        errors: str = _DEFAULTS["errors"],
        chunk_bytes: int = _DEFAULTS["chunk_bytes"],
        n_jobs: int = _DEFAULTS["n_jobs"],
        epochs: int = _DEFAULTS["epochs"],
        average: bool = _DEFAULTS["average"],
        shuffle: bool = _DEFAULTS["shuffle"],
        seed: int | None = _DEFAULTS["seed"],
        bias: bool | float = _DEFAULTS["bias"],
        early_stop: bool = _DEFAULTS["early_stop"],
        links: str = _DEFAULTS["links"],
        eligibility: int | str = _DEFAULTS["eligibility"],
        discard: float | None = _DEFAULTS["discard"],
        precision: str = _DEFAULTS["precision"],
        multiclass: str = _DEFAULTS["multiclass"],
        calibrate: str | None = _DEFAULTS["calibrate"],
        **rule_params: Any,
    ) -> None:
        self.rule = rule
        self.thickness = thickness
        self.ngrams = ngrams
        self.char_ngrams = char_ngrams
        self.char_boundaries = char_boundaries
        self.skipgrams = skipgrams
        self.affixes = affixes
        self.extractors = extractors
        self.bits = bits
        self.lowercase = lowercase
        self.unicode_form = unicode_form
        self.strip_accents = strip_accents
        self.token_pattern = token_pattern
        self.values = values
        self.idf = idf
        self.relevance = relevance
        self.evidence = evidence
        self.norm = norm
        self.fields = fields
        self.keep_names = keep_names
        self.hash_seed = hash_seed
        self.errors = errors
        self.chunk_bytes = chunk_bytes
        self.n_jobs = n_jobs
        self.epochs = epochs
        self.average = average
        self.shuffle = shuffle
        self.seed = seed
        self.bias = bias
        self.early_stop = early_stop
        self.links = links
        self.eligibility = eligibility
        self.discard = discard
        self.precision = precision
        self.multiclass = multiclass
        self.calibrate = calibrate
        self.rule_params = rule_params

    def set_params(self, **params: Any) -> SnowClassifier:
        """Set options or rule parameters (scikit-learn's convention); returns the
        classifier. A running parameter (``n_jobs``) reaches a fitted front end and
        network too: how a model runs is its holder's choice, not what trained it."""
        super().set_params(**params)
        running = {name: value for name, value in params.items() if name in RUNNING}
        if running and hasattr(self, "network_"):
            self.featurizer_.set_params(**running)
            if isinstance(self.network_, (Network, Cloud)):  # (a plugin's runs as it runs)
                self.network_.set_params(**running)
        return self

    def make_featurizer(self) -> Featurizer:
        """An unfitted front end with this classifier's settings (what :meth:`fit` uses).

        >>> SnowClassifier(ngrams=(1, 2)).make_featurizer().ngrams
        (1, 2)
        """
        return Featurizer(**{name: getattr(self, name) for name in _FEATURIZER_OPTIONS})

    def make_network(self) -> Any:
        """An untrained network with this classifier's settings: a
        :class:`~snowpy.Network`, the network of a rule whose state is no weight table
        (``RuleSpec(learner=True)``: the kernel Perceptron's support vectors), or a
        :class:`~snowpy.Cloud` for several rules."""
        return network_for(self.rule, {name: getattr(self, name) for name in _NETWORK_OPTIONS},
                           {**_thickness_of(self.rule, self.thickness), **self.rule_params})

    # -------------------------------------------------------------- training
    def begin(self) -> Any:
        """Start the model afresh: an untrained network and front end with this
        classifier's settings, its options checked before any document is read; what
        :meth:`fit`, :meth:`partial_fit` and :meth:`learn_one` start from. Returns the
        network.

        >>> clf = SnowClassifier(rule="perceptron")
        >>> clf.begin().rule, clf.featurizer_.bits
        ('perceptron', 22)
        """
        network = self.make_network()
        network.check_options()  # a bad option or rule parameter fails before featurising
        if self.evidence and isinstance(network, Cloud):
            raise ConfigurationError("evidence=True is stacked with one network's scores; a "
                                     "cloud votes by its members' confidences (give one rule)")
        if self.evidence and not calibrating(self.calibrate).cross_fits:
            raise ConfigurationError(
                f"evidence=True is stacked with the scores by a cross-fitted calibration, "
                f"which a fit in memory makes with calibrate='cv' or calibrate='holdout'; "
                f"this one has calibrate='{self.calibrate or 'none'}' (a stream and a "
                f"feature cache calibrate progressively)")
        self.featurizer_ = self.make_featurizer()
        self.network_ = network
        self.__dict__.pop("read_with_", None)  # (how an earlier corpus was read)
        return network

    def with_network(self, network: Any) -> SnowClassifier:
        """A copy of this trained classifier that predicts with ``network`` (one of its
        cloud's members, say) through the same front end; this one is unchanged.

        >>> clf = SnowClassifier(rule="winnow+perceptron", calibrate=None).fit(
        ...     ["free prize", "lunch at noon"], ["spam", "ham"])
        >>> [clf.with_network(member).network_.rule for member in clf.network_.networks_]
        ['winnow', 'perceptron']
        """
        self._check_fitted()
        view = copy.copy(self)
        view.__dict__["network_"] = network
        return view

    def fit(self, texts: Iterable[Any], labels: Sequence[Any] | None = None, *,
            sample_weight: Any = None, targets: Sequence[Any] | None = None,
            progress: Any = None) -> SnowClassifier:
        """Featurise ``texts`` once, then train the network for ``epochs`` passes.

        ``texts`` are strings, or documents already tokenised (lists of tokens, spaCy
        ``Doc`` objects: not tokenised again). ``labels`` holds one label per text, or
        one collection per text (multi-label); ``sample_weight`` (whole numbers) says
        how many times each text counts; ``targets`` restricts examples to some targets
        and ``progress`` reports training as it goes (see :meth:`Network.fit`).

        Or ``texts`` is a feature cache of this classifier's front end
        (:class:`snowpy.training.FeatureCache`, documents featurised and labelled in
        blocks on disk: no ``labels``): its blocks, weighed by the cached documents'
        frequencies, are learned one at a time (``Network.fit(cache)``: the network
        ``fit`` learns from the same documents in memory, to the bit, in the memory of
        a block and the model; calibrated progressively).
        """
        network = self.begin()  # (first: an interrupted fit leaves what was learned)
        featurizer = self.featurizer_
        if labels is None and isinstance(texts, Blocks):
            cache: Any = texts  # (its blocks weighed as they are read back)
            if featurizer.idf:
                cache.weigh = featurizer.fit(frequencies=cache.frequencies).weighed
            network.fit(cache, progress=progress)
            return self
        texts = as_documents(texts)
        if not isinstance(texts, (list, tuple, np.ndarray)):
            texts = list(texts)  # read again for the names
        labels = _check_labels(texts, labels)
        phase(progress, "featurising", None)
        X = featurizer.rows(texts, names=False)
        # shuffled and cut in calibration folds by what the documents say, not where they
        # stand (a cluster's folds are drawn by the same keys); counted first when
        # the front end weighs by document frequency (the rows are this fit's to weigh
        # where they lie), a calibration fold's rows by its own documents' counts
        # (Featurizer.refold)
        network.fit(featurizer.weighed(X, count="all", weights=sample_weight, labels=labels,
                                       copy=False), labels,
                    sample_weight=sample_weight, targets=targets, progress=progress,
                    shuffle_keys=document_keys(texts, labels),
                    refold=featurizer.refold if featurizer.idf else None, copy=False)
        self._name_kept_features(texts, network.feature_ids_[network.link_counts() > 0],
                                 progress)
        return self

    def fit_rows(self, rows: Any, labels: Sequence[Any], *, keys: np.ndarray | None = None,
                 progress: Any = None, copy: bool = True) -> SnowClassifier:
        """Train on documents featurised already by this classifier's front end: rows
        from :meth:`Featurizer.rows` (or a CSR matrix) of ``2**bits`` columns, or what
        :func:`snowpy.files.read_rows` read (before the document frequencies: with
        ``idf``, this fit counts them). ``keys``: the documents' shuffling keys
        (:func:`snowpy.text.keys.document_keys`, which ``fit`` uses), which shuffle them
        and cut them in calibration folds; without them, their features do. ``fit(texts, labels)`` is ``fit_rows`` of
        their rows and keys. ``copy=False`` (as scikit-learn's ``copy``): the rows are the
        fit's to change, a corpus read for this fit alone: their strengths are weighed
        where they lie, and the network's rows of their features written over their
        indices (no second array of either)."""
        network = self.begin()
        featurizer = self.featurizer_
        network.fit(featurizer.weighed(rows, count="all", labels=labels, copy=copy), labels,
                    progress=progress, shuffle_keys=keys,
                    refold=featurizer.refold if featurizer.idf else None, copy=copy)
        return self

    def fit_file(self, path: Any, *, format: str | None = None, multilabel: bool = False,
                 progress: Any = None) -> SnowClassifier:
        """Train on a corpus file of ``label<TAB>text`` or fastText lines, or anything
        :func:`snowpy.corpora.open` opens (``format``: guessed from the name and the first
        line when None; ``multilabel``: every document has a set of labels, recognised
        without it from fastText lines of several labels).

        A clean ``label<TAB>text`` or fastText file read with a word n-gram front end is
        read and featurised in compiled code, in parallel, with no Python object per
        document (:func:`snowpy.files.read_corpus`); anything else is read by the Python
        reader. The model is the one :meth:`fit` trains on the same documents and
        labels, whatever their order in the file.
        """
        from snowpy import corpora
        from snowpy.files import read_corpus

        self.make_network().check_options()  # a bad option fails before the reading
        phase(progress, "reading", None)
        corpus = corpora.open(str(path), format=format,
                              layout=corpora.Layout(multilabel=multilabel))
        read = read_corpus(corpus, self.make_featurizer())
        if read.texts is not None:
            return self.fit(read.texts, read.labels, progress=progress)
        return self.fit_rows(read.rows, read.labels, keys=read.keys, progress=progress,
                             copy=False)

    def _name_kept_features(self, texts: Any, ids: np.ndarray, progress: Any = None
                            ) -> None:
        """With ``keep_names``: the strings of the features the network keeps (a pass
        of its own after training, so training never pays for names)."""
        if self.keep_names and ids.size:
            phase(progress, "naming the features kept", None)
            self.featurizer_.collect_names(texts, ids)

    def partial_fit(self, texts: Iterable[Any], labels: Sequence[Any], *,
                    classes: Sequence[Any] | None = None, sample_weight: Any = None,
                    targets: Sequence[Any] | None = None) -> SnowClassifier:
        """Learn from one more batch, in order; new labels grow new targets.

        ``classes`` (optional) fixes the order of the first targets, as in
        scikit-learn's incremental learners.
        """
        self._check_learns_more()
        if not hasattr(self, "network_"):
            self.begin()
        texts = as_documents(texts)
        if not isinstance(texts, (list, tuple, np.ndarray)):
            texts = list(texts)
        X = self.featurizer_.weighed(self.featurizer_.rows(texts, names=False), count="each",
                                     weights=sample_weight)
        self.network_.partial_fit(X, labels, classes=classes, sample_weight=sample_weight,
                                  targets=targets)
        if self.keep_names:
            columns = np.unique(X.indices)
            self._name_kept_features(texts, columns[self.network_.link_counts(columns) > 0])
        return self

    def partial_fit_rows(self, rows: Any, labels: Sequence[Any]) -> SnowClassifier:
        """Learn one more batch of documents featurised already by this classifier's
        front end (what :meth:`fit_rows` takes), in order: :meth:`partial_fit` of their
        texts."""
        self._check_learns_more()
        if not hasattr(self, "network_"):
            self.begin()
        self.network_.partial_fit(self.featurizer_.weighed(rows, count="each"), labels)
        return self

    def _check_learns_more(self) -> None:
        """Refuse to learn one example or batch more with ``evidence=True``: the log-count
        ratios by label and the evidence's weight are fitted once, by :meth:`fit`."""
        if self.evidence:
            raise ConfigurationError(FITTED_ONCE)

    def forget(self, label: Any) -> SnowClassifier:
        """Forget ``label`` (a label learned by mistake, a class retired): its target
        node goes, with its links and its sigmoid, and the model predicts the labels it
        has left; what the other targets learned stays, and so do the front end's
        counts (the network's engine forgets it:
        :meth:`snowpy.network.engine.Engine.forget`). Returns the classifier.

        >>> clf = SnowClassifier(calibrate=None).fit(["free prize", "lunch at noon"],
        ...                                          ["spam", "ham"])
        >>> clf.partial_fit(["cancel my plan"], ["biling"]).classes_.tolist()
        ['ham', 'spam', 'biling']
        >>> clf.forget("biling").classes_.tolist()
        ['ham', 'spam']
        """
        self._check_fitted()
        engine = self.network_.engine_
        if not hasattr(engine, "forget"):  # (a plugin's network of its own)
            raise ConfigurationError(f"rule {self.rule!r}'s network cannot forget a label; "
                                     "train it again without the label's examples")
        engine.forget(label)
        return self

    # --------------------------------------------------------------- online
    def learn_one(self, x: Any, y: Any) -> SnowClassifier:
        """Learn one document (River's protocol): ``x`` a text (or a dict of feature
        name -> strength, as River's feature extractors give), ``y`` its label.

        The same network as :meth:`partial_fit` document by document, at the
        cost of the document alone: no thread, no matrix, no pass over the model.
        """
        self._check_learns_more()
        if not hasattr(self, "network_"):
            self.begin()
        featurizer, network = self.featurizer_, self.network_
        width = 1 << int(featurizer.bits)
        if not (type(x) is str and self._learn_fused(x, y)):
            if featurizer.idf and is_fitted(network):  # (refused before it is counted)
                network.engine_.check_label(y)
            network.learn_one(self.features_one(x, learn=True), y, width=width)
        if self.keep_names and not isinstance(x, dict):
            featurizer.record_names([x])
        return self

    def predict_one(self, x: Any) -> Any:
        """The label of one document (a tuple of labels for a multi-label model); None
        before the first document is learned, as River's classifiers answer.

        >>> clf = SnowClassifier()
        >>> clf.predict_one("free prize") is None, clf.predict_proba_one("free prize")
        (True, {})
        """
        if not self._trained():
            return None
        return self.network_.engine_.label_of(*self._scores_one(x))

    def predict_proba_one(self, x: Any) -> dict[Any, float]:
        """The probability of each label for one document, a dict (needs ``calibrate``;
        ``calibrate="progressive"`` follows a stream from its first examples); ``{}``
        before the first document is learned."""
        if not self._trained():
            return {}
        return self.network_.engine_.probabilities_of(self._scores_one(x)[0])

    def _scores_one(self, x: Any) -> tuple[np.ndarray, int]:
        """One document's scores and best target: a text featurised, weighed and scored
        in one compiled call where the front end and the network allow it (its row kept
        for a :meth:`learn_one` of the same text), else in two."""
        engine, featurizer = self.network_.engine_, self.featurizer_
        calibration = engine.calibration  # (a cloud's engine: its members', a tuple)
        if featurizer.evidence and getattr(calibration, "evidence", None) is not None:
            # (the decision from the scores and the evidence)
            raw = self._featurised(x)
            if raw is None:
                raw = featurizer.features_one(x)
                if type(x) is str:
                    self._last_features = (x, featurizer, raw)
            scores, _ = engine.score_one(*featurizer.weighed_one(*raw))
            evidence = featurizer.evidence_one(raw[0])
            if evidence is not None:
                scores = calibration.stacked(scores[None, :], evidence.by(
                    engine.labels.labels))[0]
            return scores, int(np.argmax(scores)) if scores.size else -1
        one = featurizer.one_document() if type(x) is str and engine.scores_texts else None
        if one is not None:
            words, weigher = one
            scored = engine.score_text(words, np.frombuffer(
                x.encode("utf-8", "surrogatepass"), dtype=np.uint8), weigher)
            if scored is not None:
                featurizer.invalid_bytes_ = 0
                self._last_features = (x, featurizer, words.serial)  # (in its buffers)
                return scored
        return engine.score_one(*self.features_one(x))

    def _learn_fused(self, x: str, y: Any) -> bool:
        """Featurise (unless the last prediction did), weigh and learn a text in one
        compiled call (:meth:`snowpy._core.online.OnlineLearner.learn_text`) when the
        front end allows it; False when nothing was done (the caller takes the two-call
        path)."""
        featurizer, network = self.featurizer_, self.network_
        if not is_fitted(network):
            return False  # (a first example starts the network: the two calls)
        last = self.__dict__.get("_last_features")  # (text, featurizer, features or serial)
        serial = -1
        if last is not None and last[0] is x and last[1] is featurizer:
            if type(last[2]) is not int:
                return False  # (featurised by the two calls: learned by them)
            serial = last[2]
        one = featurizer.one_document()
        if one is None:
            return False
        words, weigher = one
        if serial != words.serial:  # (a row made since: this text's is featurised again)
            serial = -1
        raw = np.frombuffer(x.encode("utf-8", "surrogatepass"), dtype=np.uint8) \
            if serial < 0 else _NO_BYTES
        try:  # (a label refused is refused before the document is counted)
            learned = network.engine_.learn_text(words, raw, y, weigher, serial)
        finally:
            if weigher is not None:
                featurizer.frequencies_.counted_by(weigher)
        if learned:
            featurizer.invalid_bytes_ = 0
        return learned

    def _featurised(self, x: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """The features of ``x`` when it is the last text featurised, by this front end
        (predict, then learn: the text is featurised once; strings do not change), as the
        compiled path left them in its buffers if no row was made since."""
        last = self.__dict__.get("_last_features")  # (text, featurizer, features or serial)
        if last is None or last[0] is not x or last[1] is not self.featurizer_:
            return None
        if type(last[2]) is int:
            one = self.featurizer_.one_document()
            return None if one is None else one[0].last(last[2])
        return last[2]

    def features_one(self, x: Any, *, learn: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The features of one document (counted first when ``learn`` and the front end
        weighs by document frequency); those of the last text again when it is the same
        object (:meth:`_featurised`)."""
        featurizer = self.featurizer_
        features = self._featurised(x)
        if features is None:
            features = featurizer.features_one(x)
            if type(x) is str:
                self._last_features = (x, featurizer, features)
        if featurizer.idf:
            return featurizer.weighed_one(*features, learn=learn)
        return features

    # ------------------------------------------------------------ prediction
    def __getstate__(self) -> dict[str, Any]:
        """The classifier without the last text featurised (a cache of this process: its
        row may lie in compiled buffers a copy does not have)."""
        state = self.__dict__.copy()
        state.pop("_last_features", None)
        return state

    def _check_fitted(self) -> None:
        if not hasattr(self, "network_"):
            raise NotFittedError(
                "this SnowClassifier is not trained yet; call fit or partial_fit first"
            )

    def transform(self, texts: Iterable[Any]) -> Any:
        """The active-feature sets of ``texts`` (a CSR matrix)."""
        self._check_fitted()
        return self.featurizer_.transform(texts, names=False)

    def rows(self, texts: Iterable[Any]) -> Any:
        """The active-feature sets of ``texts`` as the network reads them (no scipy)."""
        self._check_fitted()
        return self.featurizer_.weighed(self.featurizer_.rows(texts, names=False))

    def explain(self, text: Any, *, top_k: int = 3, features: int | None = 20
                ) -> dict[str, Any]:
        """Why the classifier answers what it does for ``text``, as plain data.

        The predicted label, its probability, the margin to the runner-up, and for the
        ``top_k`` highest-scoring targets each term of the score: the bias, and every
        active feature's contribution (strength x link weight) with its name as it
        appeared in the text, its hashed id and whether it collides with another string
        (the ``features`` largest contributions are listed, the rest summed in
        ``others``). The terms add up to the target's score: ``bias.contribution + sum
        of the contributions - theta == score`` (``residual`` is the float64 rounding
        between the two sums). A cloud is explained member by member, a learner's
        network by its learner's terms (the kernel Perceptron's: support vector by support
        vector; :mod:`snowpy.explanation`).

        >>> from snowpy import SnowClassifier
        >>> clf = SnowClassifier("perceptron", epochs=2, calibrate=None, ngrams=(1, 1))
        >>> clf = clf.fit(["cheap pills now", "lunch at noon", "cheap pills", "lunch"],
        ...               ["spam", "ham", "spam", "ham"])
        >>> why = clf.explain("cheap pills lunch", top_k=1)
        >>> why["label"], sorted(f["name"] for f in why["targets"][0]["features"])
        ('spam', ['cheap', 'lunch', 'pills'])
        >>> target = why["targets"][0]
        >>> total = target["bias"]["contribution"] - target["theta"] + sum(
        ...     f["contribution"] for f in target["features"])
        >>> abs(total - target["score"]) < 1e-12
        True
        """
        from snowpy.explanation import explain_document

        self._check_fitted()
        return explain_document(self, text, top_k=top_k, features=features)

    def target_scores(self, texts: Iterable[Any]) -> np.ndarray:
        """Activation minus threshold of every target, ``[n_texts, n_targets]``."""
        self._check_fitted()
        return self.network_.target_scores(self.rows(texts))

    def decision_function(self, texts: Iterable[Any]) -> np.ndarray:
        """scikit-learn's decision scores: :meth:`target_scores`, or for two labels
        ``[n_texts]``, the score of ``classes_[1]`` minus that of ``classes_[0]``."""
        self._check_fitted()
        return self.network_.decision_function(self.rows(texts))

    @available_if(gives_probabilities, NotFittedError)
    def predict_proba(self, texts: Iterable[Any]) -> np.ndarray:
        """Calibrated probabilities, ``[n_texts, n_targets]`` (needs ``calibrate``)."""
        self._check_fitted()
        return self.network_.predict_proba(self.rows(texts))

    def to_state(self, inference_only: bool = False) -> tuple[dict, dict]:
        """The classifier as a header and named arrays: its network's; its front end's
        parameters (hashing is stateless, so they rebuild it exactly), with the document
        frequencies it counted (``idf``: every feature, ``frequency_ids`` and
        ``frequency_counts``, and the documents in the header's ``frequencies``: a
        feature the network does not link still weighs in a row's norm); and the inverse
        feature map (``keep_names``), when kept, only for the features the network holds
        links for: names of features the model does not use are not worth their bytes."""
        self._check_fitted()
        network = self.network_
        header, arrays = network.to_state(inference_only)
        if header["kind"] == "network":  # (its own part only: the file format of 0.1)
            header = header["network"]
        # the features a network's file keeps (a row whose links were all dropped is not)
        kept = arrays["feature_ids"] if "feature_ids" in arrays else network.feature_ids_
        featurizer = self.featurizer_
        params = plain(learned(featurizer.get_params()))
        params["extractors"] = [list(item) for item in params.get("extractors", [])]
        own = learned(self.get_params())
        own.update(_thickness_of(self.rule, self.thickness))  # (the one it trained with)
        header = {"kind": "classifier", "network": header, "featurizer": params,
                  "classifier": plain(own)}
        names = featurizer.packed_names(kept)
        if names is not None:
            packed, header["names"] = names
            arrays = dict(arrays, names_packed=packed)
        frequencies = featurizer.__dict__.get("frequencies_") if featurizer.idf else None
        if frequencies is not None:
            ids, counts = frequencies.to_arrays()
            header["frequencies"] = {"documents": frequencies.documents}
            # (the features counted as a set of bits where that is smaller: format 4)
            bits = id_set(ids, frequencies.width)
            arrays = dict(arrays, frequency_counts=narrowest(counts, frequencies.documents + 1))
            if bits is None:
                arrays["frequency_ids"] = narrowest(ids, frequencies.width)
            else:
                arrays["frequency_set"] = bits
            factors = frequencies.factors_of(ids)
            if factors is not None:  # (float32 numbers: DocumentFrequencies.relate)
                arrays["frequency_factors"] = factors.astype(np.float32)
            ratios = frequencies.ratios
            if ratios is not None:  # (the counts by label, in the order of the classes)
                positions, by_label, begins, sizes = ratios.to_arrays(
                    self.network_.classes_.tolist())
                header["frequencies"]["evidence"] = {"sizes": sizes.tolist(),
                                                     "every": ratios.every}
                arrays.update(evidence_positions=narrowest(positions, ids.size),
                              evidence_counts=narrowest(by_label, frequencies.documents + 1),
                              evidence_begins=begins)
        if self.__dict__.get("read_with_"):  # (how its corpus was read: kept on every save)
            header["read_with"] = dict(self.read_with_)
        return header, arrays

    @classmethod
    def from_state(cls, header: dict[str, Any], arrays: dict[str, np.ndarray],
                   where: str = "model") -> SnowClassifier:
        """The classifier :meth:`to_state` described, validated."""
        described = header.get("network") or {}
        if not isinstance(described, dict):
            raise ModelFileError(f"{where}: the network description is invalid")
        if "kind" not in described:  # a network's own part
            described = {"kind": "network", "network": described}
        network = model_kinds.restore(described, arrays, where)
        try:
            featurizer = Featurizer(**_tupled(dict(header["featurizer"])))
            featurizer.segments()
        except (KeyError, TypeError, ValueError, SnowpyError) as exc:
            raise ModelFileError(f"{where}: the front-end description is invalid "
                                 f"({exc})") from None
        stored = {k: v for k, v in arrays.items() if k.startswith("names_")}
        labels = [segment.label for segment in featurizer.segments()]
        info = header.get("names")

        def names() -> NameIndex:  # on first use: loading stays fast
            unpacked = NameIndex.unpack(stored["names_packed"], info or {}, where) \
                if "names_packed" in stored else stored
            return NameIndex.from_arrays(unpacked, labels, where)

        featurizer.load_names_later(names)
        frequencies = _frequencies(header, arrays, 1 << int(featurizer.bits), where)
        if frequencies is not None and not featurizer.idf:
            raise ModelFileError(f"{where}: the file holds document frequencies for a front "
                                 "end that does not weigh by them (idf is false)")
        if frequencies is not None:
            frequencies.ratios = _ratios(header, arrays, frequencies, network, where)
            featurizer.fit(frequencies=frequencies)
        elif featurizer.idf:
            raise ModelFileError(f"{where}: the front end weighs by document frequency (idf) "
                                 "but the file holds no frequencies")
        options = _tupled(dict(header.get("classifier") or {}))
        for name in ("links", "precision", "discard"):  # format 1 files predate them
            if hasattr(network, name):  # (a learner's network has no links)
                options.setdefault(name, getattr(network, name))
        options.setdefault("relevance", featurizer.relevance)  # (files before it: none)
        try:
            classifier = cls(**options)
            given = classifier.thickness
            if given is not None and _thickness_of(classifier.rule, None) == {
                    "thickness": given}:
                classifier.set_params(thickness=None)  # (the rule's own reads back as None)
        except TypeError as exc:
            raise ModelFileError(f"{where}: the classifier description is invalid "
                                 f"({exc})") from None
        classifier.featurizer_ = featurizer
        classifier.network_ = network
        classifier.read_with_ = dict(header.get("read_with") or {})
        # (how it runs is the loading classifier's: the running parameters no file holds)
        return classifier.set_params(n_jobs=classifier.n_jobs)

    def save(self, path: Any, *, inference_only: bool = False, key: bytes | None = None,
             read_with: dict[str, Any] | None = None) -> Any:
        """Save the trained classifier atomically (see :func:`snowpy.save`).

        ``read_with``: how the training corpus was read (plain JSON values: the format,
        its encoding, label field...), kept in the file as data; a loaded classifier
        gives it back as ``read_with_`` (``{}`` where none was kept), and ``snowpy
        evaluate`` reads a corpus of the same format the same way unless told otherwise.
        """
        header, arrays = self.to_state(inference_only)
        if read_with:
            header = {**header, "read_with": dict(read_with)}
        return write_model(path, header, arrays, key=key, threads=threads_of(self.n_jobs))

    def predict(self, texts: Iterable[Any], *, targets: Sequence[Any] | None = None,
                abstain: float | None = None) -> Any:
        """The label of each text (a tuple of labels per text for multi-label models);
        with ``abstain=k``, ``None`` where the two most probable labels are less than
        ``k`` apart (SNoW's ``-p k``; see :meth:`Network.predict`)."""
        self._check_fitted()
        return self.network_.predict(self.rows(texts), targets=targets, abstain=abstain)

    def score(self, texts: Iterable[Any], labels: Sequence[Any]) -> float:
        """Accuracy (exact set match for multi-label models)."""
        self._check_fitted()
        return self.network_.score(self.rows(texts), labels)

    @property
    def classes_(self) -> np.ndarray:
        """The labels, one per target node."""
        self._check_fitted()
        return self.network_.classes_


def _thickness_of(rule: Any, thickness: float | None) -> dict[str, float]:
    """The thickness ``rule`` learns with: the one given, else the rule's declared default
    (``snowpy plugins`` lists it); a cloud's members each their own."""
    if thickness is not None:
        return {"thickness": thickness}
    if cloud_members(rule) is not None:
        return {}
    from snowpy.plugins import get_rule

    return {p.name: p.default for p in get_rule(rule).params if p.name == "thickness"}


def _frequencies(header: dict[str, Any], arrays: dict[str, np.ndarray], width: int,
                 where: str) -> DocumentFrequencies | None:
    """The document frequencies a file stores, checked: ascending ids below the front
    end's width, each counted in 1 to ``documents`` documents, and their relevance
    factors when it has them (finite, positive)."""
    ids, counts = arrays.get("frequency_ids"), arrays.get("frequency_counts")
    factors, bits = arrays.get("frequency_factors"), arrays.get("frequency_set")
    described = header.get("frequencies")
    if ids is None and bits is None and counts is None and described is None:
        return None
    if bits is not None:  # (format 4: the features counted as a set of bits)
        if ids is not None:
            raise ModelFileError(f"{where}: the file holds both 'frequency_ids' and "
                                 "'frequency_set'; snowpy writes one of them")
        ids = ids_of_set(bits, width, narrowest(np.zeros(0, np.int64), width).dtype)
        if ids is None:
            raise ModelFileError(f"{where}: 'frequency_set' must be uint8 bits of the "
                                 f"{width} features, none set past them")
    documents = described.get("documents") if isinstance(described, dict) else None
    if ids is None or counts is None or not isinstance(documents, int) \
            or isinstance(documents, bool) or documents < 0:
        raise ModelFileError(f"{where}: the document frequencies need 'frequency_ids' (or "
                             "'frequency_set'), 'frequency_counts' and the header's "
                             "frequencies.documents")
    # (checked as they are read: the file's narrow arrays are what the count keeps)
    ids, counts = np.asarray(ids), np.asarray(counts)
    if ids.shape != counts.shape or ids.ndim != 1 or ids.dtype.kind not in "iu" \
            or counts.dtype.kind not in "iu":
        raise ModelFileError(f"{where}: 'frequency_counts' must hold one count for each "
                             "feature counted ('frequency_ids' or 'frequency_set')")
    if ids.size and (int(ids[0]) < 0 or int(ids[-1]) >= width
                     or not _ascending(ids)):
        raise ModelFileError(f"{where}: 'frequency_ids' must ascend, each below 2**bits")
    if counts.size and (int(counts.min()) < 1 or int(counts.max()) > documents):
        raise ModelFileError(f"{where}: 'frequency_counts' must lie from 1 to the "
                             f"{documents} documents counted")
    if factors is not None:
        factors = np.asarray(factors)
        if factors.shape != ids.shape or factors.dtype.kind != "f" \
                or not np.all(np.isfinite(factors)) or (factors.size and factors.min() < 0):
            raise ModelFileError(f"{where}: 'frequency_factors' must hold a finite, "
                                 "non-negative factor for each feature counted")
    return DocumentFrequencies(width, ids, counts, documents, factors)


def _ratios(header: dict[str, Any], arrays: dict[str, np.ndarray],
            frequencies: DocumentFrequencies, network: Any, where: str) -> LabelRatios | None:
    """The log-count ratios by label a file stores (``evidence=True``), checked: for each
    of the network's classes, its features (positions among the features counted, each
    once, ascending) and the documents of the class holding each (1 to the documents
    holding it), and the features its documents hold (``n_c``) with all documents'
    (``N``)."""
    names = ("evidence_positions", "evidence_counts", "evidence_begins")
    described = (header.get("frequencies") or {}).get("evidence")
    if described is None and not any(name in arrays for name in names):
        return None
    if not isinstance(described, dict) or any(name not in arrays for name in names):
        raise ModelFileError(f"{where}: the log-count ratios by label need "
                             f"{', '.join(map(repr, names))} and the header's "
                             "frequencies.evidence")
    positions, counts, begins = (np.asarray(arrays[name]) for name in names)
    ids, totals = frequencies.to_arrays()
    labels = network.classes_.tolist()
    try:
        sizes = np.asarray(described["sizes"], dtype=np.float64)
        every = float(described["every"])
    except (KeyError, TypeError, ValueError):
        raise ModelFileError(f"{where}: frequencies.evidence needs 'sizes' (one number a "
                             "class) and 'every'") from None
    runs = np.diff(begins) if begins.ndim == 1 else np.zeros(0)
    if sizes.shape != (len(labels),) or not np.all(np.isfinite(sizes)) or not np.isfinite(
            every) or sizes.min(initial=0.0) < 0 or every < sizes.max(initial=0.0):
        raise ModelFileError(f"{where}: frequencies.evidence's sizes must be one finite, "
                             f"non-negative number for each of the {len(labels)} classes, "
                             "none above 'every'")
    if positions.ndim != 1 or positions.shape != counts.shape \
            or positions.dtype.kind not in "iu" or counts.dtype.kind not in "iu" \
            or begins.dtype.kind not in "iu" or begins.shape != (len(labels) + 1,) \
            or begins[0] != 0 or begins[-1] != positions.size or runs.min(initial=0) < 0:
        raise ModelFileError(f"{where}: 'evidence_begins' must cut 'evidence_positions' and "
                             f"'evidence_counts' (integers, one count a position) in "
                             f"{len(labels)} runs, one for each class")
    positions = positions.astype(np.int64)
    if positions.size and (positions.min() < 0 or positions.max() >= ids.size):
        raise ModelFileError(f"{where}: 'evidence_positions' must lie among the "
                             f"{ids.size} features counted")
    starts = np.zeros(positions.size, bool)
    starts[begins[:-1][runs > 0]] = True
    if positions.size and not np.all((np.diff(positions) > 0) | starts[1:]):
        raise ModelFileError(f"{where}: each class's 'evidence_positions' must ascend")
    if counts.size and (counts.min() < 1 or np.any(counts > totals[positions])):
        raise ModelFileError(f"{where}: 'evidence_counts' must lie from 1 to the documents "
                             "holding each feature")
    return LabelRatios(ids, totals, positions, counts, begins, sizes, every, labels)


def _ascending(ids: np.ndarray) -> bool:
    """Whether ``ids`` (integers) strictly ascend: compared a piece at a time, in their own
    type (no second array of the ids' size)."""
    step = 1 << 20
    for start in range(0, ids.size - 1, step):
        piece = ids[start:start + step + 1]
        if not np.all(piece[1:] > piece[:-1]):
            return False
    return True


def _tupled(params: dict[str, Any]) -> dict[str, Any]:
    params = upgraded(params)  # (the names of snowpy 0.1's files)
    for name in _TUPLES:
        if isinstance(params.get(name), list):
            params[name] = tuple(params[name])
    params["extractors"] = tuple(tuple(item) for item in params.get("extractors", ()))
    params.pop("storage", None)  # format 1: the network's storage, replaced by links
    return params
