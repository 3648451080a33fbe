"""The compiled core beside the numba engine it replaces: the same inputs give the same
outputs, bit for bit (tokens, feature ids, rows, the feature map, and every array of the
link store after every training call). Removed with the numba engine."""

from __future__ import annotations

import itertools
import random
import warnings

import numpy as np
import pytest

import snowpy
import snowpy.network.training as training
from snowpy._core import engine as core
from snowpy._core import extract, featuremap, tokenize
from snowpy._core.rules import UpdateKernel
from snowpy.corpora import demo_path

_BUILTIN = {"perceptron", "winnow", "balanced-winnow", "aggressive", "passive-aggressive",
            "naive-bayes", "normalised-winnow"}
_NAMES = ("start", "size", "cap", "count", "dense", "target", "W", "U", "lcount", "meta", "S")


def _demo():
    texts, labels = [], []
    for line in open(demo_path("train"), encoding="utf-8"):
        label, text = line.rstrip("\n").split("\t", 1)
        texts.append(text)
        labels.append(label)
    return texts, labels


def test_tokens_ids_and_rows_are_the_numba_front_ends():
    from snowpy.text import tokenize as old_tokenize
    from snowpy.text.assemble import assemble_rows
    from snowpy.text.extractors.chars import chars_extract
    from snowpy.text.extractors.words import words_extract
    from snowpy.text.unicode import tables

    classes, lower = tables()
    rng = random.Random(0)
    alphabet = "abcXYZ 019_,.!?\t\né日本語😀ñÅ\u0301İ" + "".join(
        chr(rng.randrange(0x80, 0x3000)) for _ in range(30))
    for _ in range(60):
        docs = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 50)))
                for _ in range(rng.randrange(1, 5))]
        enc = [d.encode() + bytes([rng.randrange(0x80, 0x100)]) for d in docs]
        data = np.frombuffer(b"".join(enc), np.uint8)
        offsets = np.r_[0, np.cumsum([len(e) for e in enc])].astype(np.int64)
        size = int(offsets[-1])
        for lc, sm in itertools.product((True, False), (True, False)):
            out = []
            for f in (old_tokenize._tokenize, tokenize.tokenize):
                bufs = [np.zeros(2 * size + 1, np.uint8), np.zeros(size + 1, np.int64),
                        np.zeros(size + 1, np.int64), np.zeros(len(enc) + 1, np.int64),
                        np.zeros(len(enc), np.int64)]
                used, n = f(data, offsets, classes, lower, old_tokenize._ascii_word(lc), lc, sm,
                            *bufs)
                out.append((used, n, bufs[0][:used], bufs[1][:n], bufs[2][:n], bufs[3], bufs[4]))
            assert out[0][:2] == out[1][:2]
            assert all(np.array_equal(a, b) for a, b in zip(out[0][2:], out[1][2:]))
        stream = old_tokenize.tokenize_bytes(data, offsets)
        for old, new, params in ((words_extract, extract.words_extract, [1, 3]),
                                 (chars_extract, extract.chars_extract, [2, 5, 0])):
            found = []
            for f in (old, new):
                ids, ptr = np.zeros(4000, np.int32), np.zeros(len(docs) + 1, np.int64)
                count = f(stream.text, stream.starts, stream.ends, stream.doc_ptr,
                          np.array(params, float), 7, (1 << 18) - 1, ids, ptr, False,
                          np.zeros(0, np.uint8), np.zeros((0, 2), np.int64))
                found.append((count, ids[:count], ptr))
            assert found[0][0] == found[1][0] and np.array_equal(found[0][1], found[1][1])
            assert np.array_equal(found[0][2], found[1][2])
            count, ids, ptr = found[0]
            rows = []
            for f in (assemble_rows, extract.assemble_rows):
                indptr = np.zeros(len(docs) + 1, np.int64)
                indices, values = np.zeros(count, np.int32), np.zeros(count)
                nnz = f(ids, ptr[None, :], 1, True, 18, indptr, indices, values,
                        np.zeros(max(count, 1), np.int32))
                rows.append((nnz, indptr, indices[:nnz], values[:nnz]))
            assert rows[0][0] == rows[1][0]
            assert all(np.array_equal(a, b) for a, b in zip(rows[0][1:], rows[1][1:]))


def test_the_feature_map_probes_as_numba_did():
    from snowpy.hashmap import _probe, lookup

    rng = np.random.default_rng(0)
    for dtype, idtype in itertools.product((np.int32, np.int64), (np.int32, np.int64)):
        slots = np.empty(128, dtype)
        slots[0::2] = -1
        copy, row_ids = slots.copy(), np.zeros(32, dtype)
        ids = rng.integers(0, 2**31 - 1, 50).astype(idtype)
        out_old, out_new = np.empty(50, np.int32), np.empty(50, np.int32)
        old = _probe(slots, row_ids, ids, out_old, 0, 1)
        new = featuremap.probe(copy, row_ids.copy(), ids, out_new, 0, 1)
        assert tuple(old) == tuple(new) and np.array_equal(slots, copy)
        assert np.array_equal(out_old[:old[0]], out_new[:old[0]])
        lookup(slots, ids, out_old, -1)
        featuremap.lookup(copy, ids, out_new, -1)
        assert np.array_equal(out_old, out_new)


@pytest.fixture()
def both_engines(monkeypatch):
    """Every training call runs both engines on copies of the store and compares."""
    old_run = training._run
    calls = []

    def run(net, call, order, counts, counting, creating, scores):
        store = net._store
        before = {n: getattr(store, n).copy() for n in _NAMES}
        counts_before, seen = counts.copy(), store.seen
        result = old_run(net, call, order, counts, counting, creating, scores)
        arrays = {n: a.copy() for n, a in before.items()}
        new_counts, new_scores = counts_before.copy(), np.empty_like(scores)
        name = "perceptron" if net.rule == "thick-separator" else net.rule
        kernel = UpdateKernel.builtin(name) if name in _BUILTIN else \
            UpdateKernel.from_python(net.kernel_.update.py_func)
        params = net.rule_params_
        links = core.Links(*(arrays[n] for n in _NAMES[:-1]))
        rule = core.RuleBinding(kernel, net.kernel_.params, np.asarray(store.planes, float),
                                store.initial_weights, store.absent_planes, arrays["S"],
                                store.dtype == np.float32)
        options = core.Options(store.policy_code, store.min_count,
                               bool(net.kernel_.multiplicative), store.min_magnitude,
                               store.max_magnitude, float(params["theta"]),
                               *training.separator(net), net._bias_strength(),
                               bool(net.multilabel_), net.multiclass == "constraint")
        out = core.run(links, rule, options, call.indptr, call.rows, call.X.data, order,
                       call.y_indptr, call.y_targets, call.a_indptr, call.a_targets, seen,
                       new_counts, call.max_active, new_scores, counting, creating)
        assert tuple(int(v) for v in result) == (
            out.processed, out.mistakes, out.updates, out.overflows, out.underflows,
            int(out.nonfinite), out.seen, out.need_room)
        used = int(store.meta[0])
        for n in _NAMES:
            a, b = getattr(store, n), arrays[n]
            if n in ("target", "W", "U", "lcount"):
                a, b = a[:used], b[:used]
            assert np.array_equal(a, b, equal_nan=True), n
        assert np.array_equal(counts, new_counts)
        assert np.array_equal(scores[:out.processed], new_scores[:out.processed])
        calls.append(out.processed)
        return result

    monkeypatch.setattr(training, "_run", run)
    return calls


def test_the_compiled_engine_trains_the_numba_engines_networks(both_engines):
    texts, labels = _demo()
    X = snowpy.Featurizer(ngrams=(1, 2), bits=18).transform(texts)
    rules = ["perceptron", "winnow", "balanced-winnow", "thick-separator", "aggressive",
             "passive-aggressive", "naive-bayes", "normalised-winnow"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rule, links, precision in itertools.product(
                rules, ["signed", "positive", "touched", "all"], ["float32", "float64"]):
            snowpy.Network(rule, links=links, precision=precision, epochs=2,
                           calibrate="progressive").fit(X, labels)
        snowpy.Network("winnow", eligibility=3, epochs=2, average=False).fit(X, labels)
        snowpy.Network("perceptron", links="positive", eligible_percent=30).fit(X, labels)
        snowpy.Network("perceptron", multiclass="constraint", epochs=2).fit(X, labels)
        multi = [[label] if i % 3 else [label, labels[(i + 7) % len(labels)]]
                 for i, label in enumerate(labels)]
        snowpy.Network("balanced-winnow", epochs=2).fit(X, multi)
        snowpy.Network("perceptron").fit(X, labels, targets=[[lab, "billing"] for lab in labels])
        net = snowpy.Network("balanced-winnow")
        for i in range(0, X.shape[0], 37):
            net.partial_fit(X[i:i + 37], labels[i:i + 37])
    assert len(both_engines) > 300 and sum(both_engines) > 20_000
