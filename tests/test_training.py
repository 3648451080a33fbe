"""The training modes as library calls (snowpy.training): what ``snowpy train --stream``
and ``--cache`` do, from Python, giving the models the command line gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from typer.testing import CliRunner

import snowpy
from snowpy.cli import app
from snowpy.corpora import read
from snowpy.training import FeatureCache, learn_stream, train_from_cache

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
        per_epoch = train_from_cache(clf, cache, front, progress=lambda epoch, done, total,
                                     mistakes: said.append((epoch, done, total, mistakes)))
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
