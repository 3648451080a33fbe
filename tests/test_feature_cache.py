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


def _cached(tmp_path, documents, block_docs, **options):
    """A classifier of ``options`` trained from a cache of ``documents`` in blocks of
    ``block_docs``, and the cache."""
    import snowpy
    from snowpy.training import FeatureCache

    clf = snowpy.SnowClassifier(**options)
    front = clf.make_featurizer()
    cache = FeatureCache(tmp_path, {"blocks of": block_docs})
    assert cache.build(iter(documents), front, block_docs=block_docs) == len(documents)
    said: list = []
    clf.fit(cache, progress=lambda epoch, done, total, mistakes: said.append((epoch, done)))
    for epoch in range(len(clf.network_.mistakes_)):  # (each block of the epoch holds
        done = [d for e, d in said if e == epoch]    #  documents: no empty bucket)
        assert done == sorted(set(done)) and done[-1] == len(documents)
    return clf, cache


@pytest.mark.parametrize("block_docs,options", [
    (1, {}),  # (6 blocks of one: 8 buckets, some of them empty)
    (3, {}),  # (2 blocks: 2 buckets)
    (2, {"values": "binary", "idf": False, "norm": None}),  # (rows without strengths)
    (4, {"values": "count", "idf": False, "norm": None}),  # (counts: kept as float32)
    (2, {"sets": True}),  # (sets of labels)
])
def test_a_cache_of_a_few_documents_in_blocks_learns_what_fit_learns(
        tmp_path, block_docs, options):
    """Whatever the blocks (one document each, two blocks, rows with or without
    strengths, sets of labels), every epoch goes in fit's order: the network and the
    mistakes per epoch are fit's."""
    import snowpy
    from snowpy.corpora import Document

    texts = ["free prize now", "lunch at noon", "win a free prize", "lunch today",
             "cash prize prize", "noon meeting"]
    options = dict(options)
    if options.pop("sets", False):
        labels = [("spam", "win"), ("ham",), ("spam", "win"), ("ham", "food"), ("spam",),
                  ("ham",)]
    else:
        labels = ["spam", "ham", "spam", "ham", "spam", "ham"]
    options = {"calibrate": None, "epochs": 3, **options}
    documents = [Document(t, y, "") for t, y in zip(texts, labels)]
    clf, cache = _cached(tmp_path / "cache", documents, block_docs, **options)
    assert len(cache.blocks) == -(-6 // block_docs)
    in_memory = snowpy.SnowClassifier(**options).fit(texts, labels)
    assert list(clf.network_.mistakes_) == list(in_memory.network_.mistakes_)
    assert len(clf.network_.mistakes_) > 1
    np.testing.assert_array_equal(clf.decision_function(texts),
                                  in_memory.decision_function(texts))
    assert list(clf.predict(texts)) == list(in_memory.predict(texts))


def test_an_epochs_shuffle_deals_the_blocks_into_buckets_in_the_caches_shuffle_folder(
        tmp_path, monkeypatch):
    """The buckets are files of ``shuffle/``, one for each block (rounded up to a power
    of two), at most MAX_BUCKETS; each is deleted once read, and a folder left by an
    epoch that was stopped is replaced."""
    import snowpy
    from snowpy.corpora import Document
    from snowpy.training import FeatureCache

    documents = [Document(f"word{i} common", "ab"[i % 2], "") for i in range(14)]
    clf = snowpy.SnowClassifier()
    cache = FeatureCache(tmp_path / "cache", {})
    cache.build(iter(documents), clf.make_featurizer(), block_docs=2)  # (7 blocks)
    shuffle = tmp_path / "cache" / "shuffle"
    for most, left in ((256, 7), (4, 3)):
        monkeypatch.setattr(cache_module, "MAX_BUCKETS", most)
        shuffle.mkdir(exist_ok=True)
        (shuffle / "stale").write_bytes(b"left by an epoch stopped")
        epoch = cache._epoch(salt=5)
        X, labels, order = next(epoch)
        assert sorted(path.name for path in shuffle.iterdir()) == \
            [f"{j:03d}" for j in range(1, left + 1)]
        rest = list(epoch)
        assert X.shape[0] + sum(x.shape[0] for x, _, _ in rest) == 14
        assert not shuffle.exists()


def test_a_caches_frequencies_damaged_or_not_its_own_make_it_invalid(tmp_path):
    """``frequencies.npz`` unreadable, holding an object array (no pickle is loaded), or
    not the cache's (ids and counts of different lengths, other documents, factors of
    another length): the cache is not valid, and is built again."""
    import snowpy
    from snowpy.corpora import Document
    from snowpy.training import FeatureCache

    documents = [Document(t, y, "") for t, y in [("free prize", "spam"), ("lunch", "ham"),
                                                 ("free cash", "spam")]]
    front = snowpy.SnowClassifier(relevance=0.5).make_featurizer()
    folder = tmp_path / "cache"
    FeatureCache(folder, {}).build(iter(documents), front)
    path = folder / "frequencies.npz"
    with np.load(path) as arrays:
        kept = {name: arrays[name] for name in arrays}
    assert set(kept) == {"ids", "counts", "documents", "factors"}
    assert FeatureCache(folder, {}).valid()
    edits = [{"counts": kept["counts"][:-1]}, {"documents": np.array(4, np.int64)},
             {"factors": kept["factors"][:-1]},
             {"ids": np.array(kept["ids"].tolist(), dtype=object)}]
    for edit in edits:
        np.savez(path, **{**kept, **edit})
        assert not FeatureCache(folder, {}).valid(), edit
    path.write_bytes(b"not an npz")
    assert not FeatureCache(folder, {}).valid()
    np.savez(path, **kept)
    assert FeatureCache(folder, {}).valid()


def test_a_block_whose_labels_do_not_match_its_documents_is_named_damaged(tmp_path):
    import snowpy
    from snowpy.corpora import Document
    from snowpy.exceptions import ConfigurationError
    from snowpy.training import FeatureCache

    documents = [Document(t, y, "") for t, y in [("free prize", "spam"), ("lunch", "ham")]]
    folder = tmp_path / "cache"
    cache = FeatureCache(folder, {})
    cache.build(iter(documents), snowpy.SnowClassifier().make_featurizer())
    path = folder / "block-00000.npz"
    with np.load(path) as arrays:
        kept = {name: arrays[name] for name in arrays}
    np.savez(path, **{**kept, "labels": np.frombuffer(b'["spam"]', np.uint8)})
    with pytest.raises(ConfigurationError) as raised:
        cache.read(0)
    assert str(raised.value) == (f"{path}: the cache is damaged (labels do not match the "
                                 f"documents); delete {folder}")


def test_an_epoch_reads_at_most_three_blocks_ahead_of_the_one_learned(tmp_path, monkeypatch):
    """Memory holds the block learned and at most three read ahead, whatever the
    cache's size."""
    import snowpy
    from snowpy.corpora import Document
    from snowpy.training import FeatureCache

    documents = [Document(f"word{i}", "ab"[i % 2], "") for i in range(16)]
    cache = FeatureCache(tmp_path / "cache", {})
    cache.build(iter(documents), snowpy.SnowClassifier().make_featurizer(), block_docs=1)
    received = []
    ahead = []
    read = cache.read

    def reading(number):
        ahead.append(number - len(received))
        return read(number)

    monkeypatch.setattr(cache, "read", reading)
    for block in cache.epoch(None):
        received.append(block)
    assert len(received) == 16 and max(ahead) <= 3


def test_a_caches_manifest_and_blocks_say_what_it_holds(tmp_path):
    """The manifest, written last: the corpus's fingerprint, the documents, active
    features, width, labels, each block's file and documents, and the frequencies'
    file (none without idf); a block keeps its strengths as float32 when that keeps
    them exactly, as float64 otherwise, and binary rows keep none."""
    import orjson

    import snowpy
    from snowpy.corpora import Document
    from snowpy.training import FeatureCache

    documents = [Document(t, y, "") for t, y in [("free prize prize", "spam"),
                 ("lunch at noon", "ham"), ("free cash", "spam"), ("noon", "ham"),
                 ("win", "spam")]]
    for values, norm, stored in (("count", None, np.float32), ("count", "l2", np.float64),
                                 ("binary", None, None)):
        front = snowpy.SnowClassifier(values=values, idf=False, norm=norm,
                                      bits=10).make_featurizer()
        folder = tmp_path / values / str(norm) / "cache"  # (its parents made too)
        cache = FeatureCache(folder, {"corpus": tmp_path / "c.tsv"})
        assert cache.fingerprint == {"corpus": str(tmp_path / "c.tsv")}
        assert not cache.valid()  # (nothing there: it describes no documents)
        assert (cache.blocks, cache.labels, cache.multilabel, cache.n, cache.nnz,
                cache.width, cache.frequencies, cache.weigh) == ([], [], False, 0, 0, 0,
                                                                 None, None)
        assert cache.build(iter(documents), front, block_docs=2) == 5
        X = front.rows([d.text for d in documents], names=False)
        record = orjson.loads((folder / "MANIFEST.json").read_bytes())
        assert record == {"format": "snowpy-feature-cache", "version": 2,
                          "of": {"corpus": str(tmp_path / "c.tsv")}, "documents": 5,
                          "nnz": X.nnz, "width": 1024, "multilabel": False,
                          "labels": ["spam", "ham"],
                          "blocks": [{"file": f"block-0000{i}.npz", "documents": n}
                                     for i, n in enumerate((2, 2, 1))],
                          "frequencies": None}
        assert (cache.n, cache.nnz, cache.width) == (5, X.nnz, 1024)
        assert not (folder / "frequencies.npz").exists()
        with np.load(folder / "block-00000.npz") as arrays:
            assert {name: arrays[name].dtype for name in arrays} == {
                "indptr": np.int64, "indices": np.int32, "width": np.int64,
                "keys": np.uint64, "labels": np.uint8,
                **({"data": np.dtype(stored)} if stored else {})}


def test_a_cache_with_idf_names_its_frequencies_in_its_manifest(tmp_path):
    import orjson

    import snowpy
    from snowpy.corpora import Document
    from snowpy.training import FeatureCache

    documents = [Document(t, y, "") for t, y in [("free prize", "spam"), ("lunch", "ham")]]
    folder = tmp_path / "cache"
    cache = FeatureCache(folder, {})
    cache.build(iter(documents), snowpy.SnowClassifier().make_featurizer())  # (idf)
    assert orjson.loads((folder / "MANIFEST.json").read_bytes())["frequencies"] == \
        "frequencies.npz"
    again = FeatureCache(folder, {})
    assert again.valid() and again.frequencies.documents == 2
    cache.build(iter(documents), snowpy.SnowClassifier(relevance=0.0).make_featurizer())
    with np.load(folder / "frequencies.npz") as arrays:
        assert sorted(arrays) == ["counts", "documents", "ids"]  # (no relevance: no factors)
    assert FeatureCache(folder, {}).valid()  # (reused, not built again)


def test_building_a_cache_again_replaces_what_the_folder_held(tmp_path):
    """A build removes the manifest first (a build stopped midway leaves no valid
    cache), the blocks of the cache before and a shuffle left by an epoch stopped; a
    cache in a file is refused."""
    import snowpy
    from snowpy.corpora import Document
    from snowpy.exceptions import ConfigurationError
    from snowpy.training import FeatureCache

    front = snowpy.SnowClassifier().make_featurizer()
    documents = [Document(f"word{i}", "ab"[i % 2], "") for i in range(6)]
    folder = tmp_path / "cache"
    cache = FeatureCache(folder, {})
    cache.build(iter(documents), front, block_docs=1)
    (folder / "shuffle").mkdir()
    (folder / "shuffle" / "000").write_bytes(b"a bucket")
    cache.build(iter(documents), front, block_docs=4)
    assert sorted(path.name for path in folder.iterdir()) == [
        "MANIFEST.json", "block-00000.npz", "block-00001.npz", "frequencies.npz"]

    def stopped():
        yield from documents[:2]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.build(stopped(), front, block_docs=1)
    assert not (folder / "MANIFEST.json").exists() and not FeatureCache(folder, {}).valid()
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigurationError) as raised:
        FeatureCache(tmp_path / "file", {}).build(iter(documents), front)
    assert str(raised.value) == f"--cache {tmp_path / 'file'}: not a folder"


def test_a_manifest_not_of_this_cache_or_of_missing_blocks_is_not_valid(tmp_path):
    import orjson

    import snowpy
    from snowpy.corpora import Document
    from snowpy.training import FeatureCache

    folder = tmp_path / "cache"
    documents = [Document(f"word{i}", "ab"[i % 2], "") for i in range(4)]
    FeatureCache(folder, {"of": 1}).build(iter(documents), snowpy.SnowClassifier(
        idf=False).make_featurizer(), block_docs=2)
    manifest = folder / "MANIFEST.json"
    record = orjson.loads(manifest.read_bytes())
    assert FeatureCache(folder, {"of": 1}).valid() and not FeatureCache(folder, {"of": 2}).valid()
    for edit in ({"format": "another"}, {"version": 1}, {"blocks": "block-00000.npz"},
                 {"blocks": [{"file": "block-00000.npz"}, {"file": "block-00009.npz"}]}):
        manifest.write_bytes(orjson.dumps({**record, **edit}))
        assert not FeatureCache(folder, {"of": 1}).valid(), edit
    for text in (b"[]", b"{not json"):
        manifest.write_bytes(text)
        assert not FeatureCache(folder, {"of": 1}).valid(), text
