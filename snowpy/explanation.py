"""Why a classifier gave its answer: each active feature's contribution to the targets.

A target's score is ``sum(strength * weight) - theta`` over the bias and the document's
active features (a network's ``engine_.link_weights``,
:meth:`snowpy.network.engine.Engine.link_weights`), so an explanation is that sum laid
out term by term, with each feature's *name* (the word or n-gram as it appeared in the
text, :meth:`snowpy.Featurizer.names_in`), its hashed id, its strength and its link
weight. The terms add up to the score the network computed (``residual``: the float64
rounding between the two sums, tested to be nothing more); a classifier that stacks each
document's Naive Bayes evidence with its scores (``evidence=True``) lists it as one more
term, ``evidence``: the document's evidence for the target, its weight and their
product. Vowpal Wabbit's ``--audit``
prints the same terms; eli5's ``show_prediction`` draws them.

A cloud is explained member by member (each member's own terms, and its confidence in
the vote); a learner's network by the terms its learner's ``explain(examples, targets,
scores)`` gives (the kernel Perceptron's: each support vector's ``K(s, x) *
coefficient``, listed as ``support_vectors``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy.exceptions import SnowpyError
from snowpy.model_kinds import kind_of
from snowpy.network.state import plain

__all__ = ["explain_document", "shortened"]


def explain_document(classifier: Any, text: Any, *, top_k: int = 3,
                     features: int | None = 20) -> dict[str, Any]:
    """The explanation of one document as plain data (see
    :meth:`snowpy.SnowClassifier.explain`)."""
    network = classifier.network_
    featurizer = classifier.featurizer_
    rows = classifier.rows([text])  # (weighed as the network reads them)
    ids = np.asarray(rows.indices[rows.indptr[0]:rows.indptr[1]], dtype=np.int64)
    strengths = np.asarray(rows.strengths[rows.indptr[0]:rows.indptr[1]], dtype=np.float64) \
        if rows.strengths is not None else np.ones(ids.size)
    names = featurizer.names_in(text)
    kept = _kept_names(featurizer, ids)
    scores = network.target_scores(rows)[0]
    classes = list(network.classes_)
    order = np.argsort(-scores, kind="stable")
    chosen = order[:max(int(top_k), 1)]
    probabilities = None if getattr(network, "calibration_", None) is None else \
        np.asarray(network.predict_proba(rows))[0]
    label = network.predict(rows)[0]
    # the runner-up is the best label left out of the answer: the second of a single
    # label's, the first outside a multi-label network's set, whose margin is the score
    # of the set's last label (or of the threshold, 0, for an empty set) over it
    given = int(scores.size > 1) if not network.multilabel_ else int(np.sum(scores >= 0))
    out: dict[str, Any] = {
        "text": text if isinstance(text, str) else str(text),
        "label": plain(label),
        "probability": None if probabilities is None else float(probabilities[order[0]]),
        "margin": (float((scores[order[given - 1]] if given else 0.0) - scores[order[given]])
                   if given < len(order) and len(order) > 1 else None),
        "runner_up": (plain(classes[order[given]])
                      if given < len(order) and len(order) > 1 else None),
        "n_features": int(ids.size),
    }
    out["kind"] = kind = kind_of(network)
    if kind == "cloud":  # each member's own terms
        out["targets"] = [_target(classes, scores, probabilities, t) for t in chosen]
        out["members"] = [
            {"rule": member.rule, "confidence": [float(network.confidence_[m, t])
                                                 for t in chosen],
             "targets": _link_terms(member, ids, strengths, names, kept, chosen,
                                    member.target_scores(rows)[0], None)}
            for m, member in enumerate(network.networks_)]
    elif kind == "network":
        out["targets"] = _link_terms(network, ids, strengths, names, kept, chosen, scores,
                                     probabilities, _evidence(network, rows))
    else:  # a learner's network: the learner's own terms (the kernel Perceptron's)
        stack = _evidence(network, rows)
        out["targets"] = []
        for t, terms in zip(chosen, network.explain_terms(rows, chosen, scores)):
            stacked, contribution = _evidence_term(stack, t)
            if "residual" in terms:  # (what the learner's terms leave of the score)
                terms = {**terms, "residual": terms["residual"] - contribution}
            out["targets"].append(_target(classes, scores, probabilities, t, **terms,
                                          **stacked))
    return shortened(out, features)


def shortened(explained: dict[str, Any], features: int | None) -> dict[str, Any]:
    """An explanation whose lists of terms keep their ``features`` largest contributions,
    the rest summed in each target's ``others`` (None: every term)."""
    def cut(target: dict[str, Any]) -> dict[str, Any]:
        key = "support_vectors" if "support_vectors" in target else "features"
        terms = target[key]
        rest = [] if features is None else terms[int(features):]
        others = target.get("others", {"count": 0, "contribution": 0.0})
        return {**target, key: terms if features is None else terms[:int(features)],
                "others": {"count": others["count"] + len(rest),
                           "contribution": others["contribution"]
                           + float(sum(r["contribution"] for r in rest))}}

    out = {**explained, "targets": [cut(t) if "features" in t or "support_vectors" in t
                                    else t for t in explained["targets"]]}
    if "members" in explained:
        out["members"] = [{**m, "targets": [cut(t) for t in m["targets"]]}
                          for m in explained["members"]]
    return out


def _link_terms(network: Any, ids: np.ndarray, strengths: np.ndarray,
                names: dict[int, list[str]], kept: dict[int, list[str]], chosen: Any,
                scores: np.ndarray, probabilities: Any,
                evidence: np.ndarray | None = None) -> list[dict[str, Any]]:
    from snowpy.network.options import bias_strength

    columns = np.concatenate([[-1], ids])
    weights, linked = network.engine_.link_weights(columns)
    bias = bias_strength(network.bias)
    theta = float(network.rule_params_["theta"])
    classes = list(network.classes_)
    targets = []
    for t in chosen:
        terms = strengths * weights[1:, t]
        total = bias * weights[0, t] + float(terms.sum()) - theta
        stacked, contribution = _evidence_term(evidence, t)
        total += contribution
        rows = [{
            "name": " | ".join(names.get(int(i), [])) or f"#{int(i)}",
            "id": int(i), "strength": float(v), "weight": float(w),
            "contribution": float(c), "linked": bool(k),
            **_collision(names.get(int(i), []), kept.get(int(i), [])),
        } for i, v, w, c, k in zip(ids, strengths, weights[1:, t], terms, linked[1:, t])]
        rows.sort(key=lambda row: -abs(row["contribution"]))
        targets.append(_target(
            classes, scores, probabilities, t, theta=theta,
            bias={"strength": bias, "weight": float(weights[0, t]),
                  "contribution": bias * float(weights[0, t])},
            features=rows, residual=float(scores[t] - total), **stacked))
    return targets


def _evidence(network: Any, rows: Any) -> np.ndarray | None:
    """The one row's evidence for each target and its weight (two rows), where the
    network stacks the evidence with its scores; else None."""
    calibration = network.calibration_
    evidence = getattr(rows, "evidence", None)
    if evidence is None or calibration is None or calibration.evidence is None:
        return None
    values = evidence.by(list(network.classes_))[0]
    weights = np.zeros(values.size)
    width = min(values.size, calibration.evidence.size)
    weights[:width] = calibration.evidence[:width]
    return np.stack([values, weights])


def _evidence_term(evidence: np.ndarray | None, t: int) -> tuple[dict[str, Any], float]:
    """Target ``t``'s evidence term (its value, weight and contribution) and its
    contribution, from :func:`_evidence`'s rows; nothing where none is stacked."""
    if evidence is None:
        return {}, 0.0
    value, weight = float(evidence[0, t]), float(evidence[1, t])
    return {"evidence": {"value": value, "weight": weight,
                         "contribution": value * weight}}, value * weight


def _collision(here: list[str], kept: list[str]) -> dict[str, Any]:
    """A feature id shared by several strings: in this document, or (where the model
    kept names) in the training corpus."""
    others = sorted(set(kept) - set(here))
    if len(here) > 1 or others:
        return {"collision": True, "shared_with": sorted(set(here[1:]) | set(others))}
    return {"collision": False}


def _kept_names(featurizer: Any, ids: np.ndarray) -> dict[int, list[str]]:
    """The strings the model kept for these ids (none unless trained with keep_names)."""
    if not featurizer.keep_names:
        return {}
    try:
        return featurizer.names_of(ids.tolist())
    except SnowpyError:  # (a model whose names were not kept in its file)
        return {}


def _target(classes: list[Any], scores: np.ndarray, probabilities: np.ndarray | None,
            t: int, **terms: Any) -> dict[str, Any]:
    """Target ``t``'s label, score and probability, then its ``terms``."""
    return {"label": plain(classes[t]), "score": float(scores[t]),
            "probability": None if probabilities is None else float(probabilities[t]),
            **terms}
