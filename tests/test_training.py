"""The training modes as library calls (snowpy.training): what ``snowpy train --stream``
and ``--cache`` do, from Python, giving the models the command line gives."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

import snowpy
from snowpy.cli import app
from snowpy.corpora import Document, read
from snowpy.corpora.corpus import Read
from snowpy.files import read_blocks
from snowpy.training import FeatureCache, learn_stream
from snowpy.training import stream as stream_module

DEMO = Path(__file__).resolve().parent.parent / "corpora" / "demo"


def _documents(name: str) -> list:
    return list(read(DEMO / name))


def test_a_stream_learned_from_python_is_the_command_lines_model(tmp_path):
    documents = _documents("train.tsv")
    seen = []
    clf = snowpy.SnowClassifier(epochs=1, calibrate="progressive")
    figures = learn_stream(clf, documents, every=[100],
                           after=lambda f: seen.append((f.examples, f.mistakes)))
    assert figures.examples == len(documents) == seen[-1][0] == 400
    assert figures.mistakes == seen[-1][1] and seen[0] == (1, 1)  # (no model yet: wrong)
    reported = [examples for examples, _ in seen]  # (blocks end at 1, 2, 4... and every
    assert {1, 2, 4, 8, 16, 32, 64, 100, 128, 200, 256, 300, 400} <= set(reported)  # 100)
    assert reported == sorted(reported) and all(m <= n for n, m in seen)
    assert 0.80 < figures.accuracy < 1.0  # (progressive: every document before it is learned)
    clf.network_.prune()  # as the command line does at the end of a stream
    model = tmp_path / "m.snowpy"
    result = CliRunner().invoke(app, ["train", str(DEMO / "train.tsv"), "-o", str(model),
                                      "--stream", "--json"])
    assert result.exit_code == 0, result.output
    loaded = snowpy.load(model)
    texts = [d.text for d in _documents("test.tsv")]
    np.testing.assert_array_equal(loaded.decision_function(texts),
                                  clf.decision_function(texts))


def test_epochs_from_a_cache_of_blocks_learn_the_network_fit_learns_in_memory(tmp_path):
    """The cache's blocks are dealt into buckets each epoch and sorted there: every epoch
    (the first too) goes in fit's order across blocks, so the network is fit's, bit for
    bit, on one thread or two, with the per-epoch figures fit reports."""
    documents = _documents("train.tsv")
    texts, labels = [d.text for d in documents], [d.label for d in documents]
    tests = [d.text for d in _documents("test.tsv")]
    for number, options in enumerate(({"calibrate": "progressive", "epochs": 4},
                    {"calibrate": None, "rule": "perceptron", "n_jobs": 2, "epochs": 3},
                    {"calibrate": None, "ngrams": 1, "values": "count", "norm": "l2"})):
        in_memory = snowpy.SnowClassifier(**options).fit(texts, labels)
        clf = snowpy.SnowClassifier(**options)
        front = clf.make_featurizer()
        cache = FeatureCache(tmp_path / f"cache{number}", {"of": "the demo corpus"})
        assert not cache.valid()
        assert cache.build(iter(documents), front, block_docs=64) == 400
        assert len(cache.blocks) == 7 and cache.valid()
        said = []
        per_epoch = clf.fit(cache, progress=lambda epoch, done, total, mistakes: said.append(
            (epoch, done, total, mistakes))).network_.mistakes_
        assert per_epoch == in_memory.network_.mistakes_ == clf.network_.mistakes_
        assert [sum(m for e, _, _, m in said if e == epoch)
                for epoch in range(len(per_epoch))] == per_epoch
        assert [d for e, d, t, _ in said if d == t] == [400] * len(per_epoch)
        assert (in_memory.network_.engine_.effective_links() != clf.network_.engine_.effective_links()).nnz == 0
        np.testing.assert_array_equal(clf.decision_function(tests),
                                      in_memory.decision_function(tests))
        assert not (tmp_path / f"cache{number}" / "shuffle").exists()  # (each epoch's buckets gone)
    assert per_epoch[0] > 15  # (an honest first epoch: in the corpus's class-by-class
    #                            order PA makes 5 mistakes, one per class)


def test_a_multilabel_stream_of_tab_separated_lines_learns_sets_of_one_label(tmp_path):
    """`printf 'a\\tx y' | snowpy train - --multilabel`: each line's label is a set of one,
    as a file's lines are read with --multilabel (it ended in a TypeError traceback);
    the note of the multi-label defaults names only what a stream does (no --epochs:
    a stream is one pass), standard input or a file read with --stream; a file read
    whole takes the multi-label epochs, and its note says so."""
    model = tmp_path / "m.snowpy"
    lines = "".join(f"{label}\t{text}\n" for label, text in
                    [("a", "x y"), ("b", "z w"), ("a", "x v"), ("b", "z u")] * 3)
    corpus = tmp_path / "c.tsv"
    corpus.write_text(lines, encoding="utf-8")
    for source, extra, streamed in (("-", [], True), (str(corpus), ["--stream"], True),
                                    (str(corpus), [], False)):
        result = CliRunner().invoke(app, ["train", source, "-o", str(model), "--multilabel",
                                          *extra], input=lines if source == "-" else None)
        assert result.exit_code == 0, result.output
        note = next(line for line in result.stderr.splitlines()
                    if line.startswith("note: --multilabel"))
        assert ("--epochs" not in note) == streamed and "--links touched" in note, \
            (source, extra, note)
        clf = snowpy.load(model)
        assert clf.network_.multilabel_ and clf.predict(["x y", "z w"]) == [("a",), ("b",)]


_WORDS = ["free", "prize", "lunch", "noon", "invoice", "refund", "meeting", "today", "win",
          "cash"]


def _stream(labels: list) -> list:
    """Short documents of the words above, one for each of ``labels``."""
    return [Document(f"{_WORDS[i % 10]} {_WORDS[i * 3 % 7]} {_WORDS[i * 7 % 10]}", label, "")
            for i, label in enumerate(labels)]


def _learned(items, classifier=None, every=()):
    """What ``after`` was told at each block's end (documents, mistakes), and the
    classifier."""
    classifier = classifier or snowpy.SnowClassifier(calibrate="none")
    told: list = []
    learn_stream(classifier, items, every=every,
                 after=lambda figures: told.append((figures.examples, figures.mistakes)))
    return told, classifier


def _compiled(documents, size: int, multilabel: bool = False) -> list:
    """The documents as a stream's blocks read in compiled code (tsv; fastText for
    sets of labels), of about ``size`` bytes each."""
    if multilabel:
        lines = "".join(" ".join(f"__label__{name}" for name in d.label) + f" {d.text}\n"
                        for d in documents)
    else:
        lines = "".join(f"{d.label}\t{d.text}\n" for d in documents)
    front = snowpy.SnowClassifier(calibrate="none").make_featurizer()
    return list(read_blocks(io.BytesIO(lines.encode()), front, size=size,
                            format="fasttext" if multilabel else "tsv",
                            multilabel=multilabel))


def _ends(blocks) -> set:
    return set(np.cumsum([len(block) for block in blocks]).tolist())


def test_a_streams_blocks_end_at_powers_of_two_every_k_and_before_a_new_label(monkeypatch):
    """A block ends after document n when n is a power of two, a multiple of BLOCK or of
    one of ``every``, and before a label not met yet; blocks read in compiled code are
    cut at the same documents (and end where they end), learning the same network."""
    monkeypatch.setattr(stream_module, "BLOCK", 12)
    labels = ["ab"] * 5 + ["ba", "ab"] * 3 + ["c"] + ["ab", "ba", "c"] * 10
    documents = _stream(labels)  # ("ba" first at document 6, "c" at 12)
    told, clf = _learned(documents, every=[10, 15])
    assert [n for n, _ in told] == [1, 2, 4, 5, 8, 10, 11, 12, 15, 16, 20, 24, 30, 32, 36,
                                    40, 42]
    assert told[0] == (1, 1)  # (no model yet: a mistake)
    blocks = _compiled(documents, size=150)
    assert len(blocks) > 3 and all(isinstance(block, Read) for block in blocks)
    read_told, read_clf = _learned(blocks, every=[10, 15])
    assert [n for n, _ in read_told] == sorted({n for n, _ in told} | _ends(blocks))
    assert set(told) <= set(read_told)  # (the same mistakes where both report)
    texts = [d.text for d in documents]
    np.testing.assert_array_equal(read_clf.decision_function(texts),
                                  clf.decision_function(texts))


def test_a_stream_of_sets_of_labels_ends_a_block_before_a_label_not_met_yet():
    """Each label of a set counts, not the set: a set of labels met already in other
    sets ends no block; a set with one new label does. Blocks read in compiled code
    (fastText lines) are cut at the same documents."""
    sets = [("a", "b")] * 3 + [("b", "a"), ("a",)] * 3 + [("c", "a")] + \
        [("a", "b"), ("b",), ("c",)] * 3
    documents = _stream(sets)
    told, clf = _learned(documents)
    assert [n for n, _ in told] == [1, 2, 4, 8, 9, 16, 19]  # ("c" first at 10)
    blocks = _compiled(documents, size=150, multilabel=True)  # (ends at 3, 7, 12, 16, 19)
    assert len(blocks) > 3 and isinstance(blocks[0].labels, list)
    read_told, read_clf = _learned(blocks)
    assert [n for n, _ in read_told] == sorted({n for n, _ in told} | _ends(blocks))
    assert set(told) <= set(read_told)
    texts = [d.text for d in documents]
    assert read_clf.predict(texts) == clf.predict(texts)


def test_a_stream_continued_ends_no_block_at_the_labels_the_classifier_knows():
    """A classifier that has learned already knows its labels: a stream that goes on
    from it ends a block only where the documents' count says, or at a label it has
    not met."""
    labels = ["ab", "ba", "c"] * 4
    for blocked in (False, True):
        _, clf = _learned(_stream(labels))
        more = _stream(["ab", "ab", "ab", "c", "c", "ba", "d", "ab"])
        items = _compiled(more, size=1 << 20) if blocked else more
        told, _ = _learned(items, classifier=clf)
        assert [n for n, _ in told] == [1, 2, 4, 6, 8], blocked  # ("d" first at 7)


def test_a_stream_may_mix_documents_and_blocks_read_in_compiled_code():
    """Documents, then blocks read in compiled code, then documents again: the
    documents before a block are learned before it, and the network is the one the
    documents alone teach."""
    labels = ["ab", "ba", "c"] * 12
    documents = _stream(labels)
    told, clf = _learned(documents)
    mixed = documents[:3] + _compiled(documents[3:30], size=100) + documents[30:]
    mixed_told, mixed_clf = _learned(mixed)
    assert set(told) <= set(mixed_told)
    assert mixed_told[-1] == told[-1] == (36, told[-1][1])
    texts = [d.text for d in documents]
    np.testing.assert_array_equal(mixed_clf.decision_function(texts),
                                  clf.decision_function(texts))
