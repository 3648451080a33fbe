"""``snowpy train --cache DIR``: epochs from featurised blocks on disk."""

from __future__ import annotations

import os

import numpy as np
import pytest
from typer.testing import CliRunner

from snowpy import load
from snowpy.cli import app
from snowpy.training import cache as cache_module
from snowpy.corpora import demo_path, read

runner = CliRunner()
DEMO = str(demo_path("train"))


def _train(*args):
    return runner.invoke(app, ["train", *map(str, args)])


def test_epochs_from_the_cache_reuse_it_and_rebuild_it_when_the_corpus_changes(
        tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "BLOCK_DOCS", 64)  # several blocks
    corpus = tmp_path / "c.tsv"
    corpus.write_bytes(open(DEMO, "rb").read())
    folder = tmp_path / "cache"
    first = _train(corpus, "-o", tmp_path / "m.snowpy", "--cache", folder, "--epochs", "4")
    assert first.exit_code == 0, first.output
    assert "cached 400 documents in 7 blocks" in first.output
    first_output = first.output
    assert sorted(p.name for p in folder.iterdir()) == ["MANIFEST.json"] + [
        f"block-{i:05d}.npz" for i in range(7)] + ["frequencies.npz"]  # (the default idf)
    model = load(tmp_path / "m.snowpy")
    assert len(model.network_.mistakes_) >= 2  # epochs, not blocks
    # the model trained in memory, to the byte: epoch 1 is shuffled across blocks too
    # (it was learned in the corpus's class-by-class order, and scored 0.77 on IMDB)
    in_memory = _train(corpus, "-o", tmp_path / "same.snowpy", "--epochs", "4",
                       "--calibrate", "progressive")
    assert in_memory.exit_code == 0, in_memory.output
    assert (tmp_path / "same.snowpy").read_bytes() == (tmp_path / "m.snowpy").read_bytes()
    first = model.network_.mistakes_[0]
    assert f"epoch 1: {first} mistakes in 400 documents" in first_output
    test = list(read(str(demo_path("test"))))
    assert model.score([d.text for d in test], [d.label for d in test]) >= 0.9
    assert model.network_.calibration_ is not None  # progressive
    again = _train(corpus, "-o", tmp_path / "m2.snowpy", "--cache", folder, "--epochs", "4")
    assert "reusing the cache" in again.output
    np.testing.assert_array_equal(load(tmp_path / "m2.snowpy").network_.engine_.effective_links().data,
                                  model.network_.engine_.effective_links().data)
    with open(corpus, "a") as out:
        out.write("billing\tan invoice I cannot read\n")
    os.utime(corpus, ns=(1, 1))
    changed = _train(corpus, "-o", tmp_path / "m3.snowpy", "--cache", folder)
    assert "cached 401 documents" in changed.output


def test_a_damaged_cache_and_refused_options_say_so(tmp_path):
    folder = tmp_path / "cache"
    assert _train(DEMO, "-o", tmp_path / "m.snowpy", "--cache", folder,
                  "--epochs", "2").exit_code == 0
    (folder / "block-00000.npz").write_bytes(b"not a block")
    result = _train(DEMO, "-o", tmp_path / "m.snowpy", "--cache", folder, "--epochs", "2")
    assert result.exit_code == 1 and "the cache is damaged" in result.output
    result = _train(DEMO, "-o", tmp_path / "m.snowpy", "--cache", folder, "--calibrate", "cv")
    assert result.exit_code == 1 and "calibration is progressive" in result.output


def test_a_cache_weighs_its_blocks_by_the_frequencies_it_counted(tmp_path, monkeypatch):
    """With --idf the cache counts its documents as it builds (frequencies.npz) and weighs
    each block read back: the model file is the in-memory one, to the byte, built or
    reused."""
    monkeypatch.setattr(cache_module, "BLOCK_DOCS", 64)
    folder = tmp_path / "cache"
    options = ["--rule", "passive-aggressive", "--values", "log", "--idf", "--l2",
               "--bias", "0.1", "--epochs", "3"]
    built = _train(DEMO, "-o", tmp_path / "c.snowpy", "--cache", folder, *options)
    assert built.exit_code == 0, built.output
    assert (folder / "frequencies.npz").is_file()
    in_memory = _train(DEMO, "-o", tmp_path / "m.snowpy", *options, "--calibrate", "progressive")
    assert in_memory.exit_code == 0, in_memory.output
    assert (tmp_path / "c.snowpy").read_bytes() == (tmp_path / "m.snowpy").read_bytes()
    reused = _train(DEMO, "-o", tmp_path / "r.snowpy", "--cache", folder, *options)
    assert "reusing the cache" in reused.output
    assert (tmp_path / "r.snowpy").read_bytes() == (tmp_path / "m.snowpy").read_bytes()
    assert load(tmp_path / "m.snowpy").featurizer_.frequencies_.documents == 400


def test_blocks_are_read_one_ahead_in_order_and_errors_and_stops_reach_the_learner():
    """The next block is made on a thread of its own while this one is learned: the same
    items in the same order, an error in making one raised to the learner, and a learner
    that stops early stops the maker and closes what it read from (the shuffle's
    buckets are deleted by that close)."""
    from snowpy.training.stream import read_ahead

    def ahead(items):
        return read_ahead(items, batch=1)

    assert list(ahead(iter(range(5)))) == [0, 1, 2, 3, 4]

    def failing():
        yield 1
        raise ValueError("block 2 is damaged")

    read = ahead(failing())
    assert next(read) == 1
    with pytest.raises(ValueError, match="block 2 is damaged"):
        next(read)
    closed = []

    def endless():
        try:
            n = 0
            while True:
                yield n
                n += 1
        finally:
            closed.append(True)

    source = endless()  # (held here: only read_ahead's close can close it)
    read = ahead(source)
    assert [next(read), next(read)] == [0, 1]
    read.close()  # (the learner stopped)
    assert closed == [True]


@pytest.mark.corpus
def test_a_registered_corpus_name_trains_from_the_cache_as_it_trains_in_memory(
        corpora, tmp_path, monkeypatch):
    """`snowpy train trec --cache DIR` takes the corpus name `snowpy train trec` takes
    (its training split), and learns the same model: the same bytes as in memory with
    the cache's calibration."""
    monkeypatch.setenv("SNOWPY_DATA", str(corpora))
    cached = _train("trec", "-o", tmp_path / "c.snowpy", "--cache", tmp_path / "cache")
    assert cached.exit_code == 0, cached.output
    assert "5,452 documents" in cached.output  # (TREC's training questions)
    whole = _train("trec", "-o", tmp_path / "m.snowpy", "--calibrate", "progressive")
    assert whole.exit_code == 0, whole.output
    assert (tmp_path / "c.snowpy").read_bytes() == (tmp_path / "m.snowpy").read_bytes()
