"""Model files: round trips, validation, fuzzing, atomic saves."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import orjson
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import snowpy
from snowpy.cli import app
from snowpy.exceptions import SnowpyError
from snowpy.model_file import ModelFileError, _header_digest, read_model, write_model

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args, input: str | None = None, **kwargs):
    return runner.invoke(app, [str(a) for a in args], input=input, **kwargs)

RULES = ["perceptron", "winnow", "balanced-winnow", "thick-separator", "aggressive",
         "passive-aggressive"]


def problem(seed=0, n=120, F=60):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((rng.random((n, F)) < 0.15) * rng.uniform(0.5, 1.5, (n, F)))
    return X, np.array(["red", "green", "blue"])[rng.integers(0, 3, n)]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("links", ["positive", "touched", "all"])
def test_network_round_trip_and_continued_training(tmp_path, rule, links):
    X, y = problem()
    net = snowpy.Network(rule, links=links, epochs=3).fit(X[:80], y[:80])
    path = net.save(tmp_path / "net.snowpy")
    loaded = snowpy.load(path)
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))
    assert loaded.rule_params_ == net.rule_params_ and loaded.mistakes_ == net.mistakes_
    net.partial_fit(X[80:], y[80:])
    loaded.partial_fit(X[80:], y[80:])
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))


@pytest.mark.parametrize("rule", ["balanced-winnow", "winnow", "passive-aggressive"])
@pytest.mark.parametrize("links", ["positive", "touched"])
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_inference_only_files_predict_bit_for_bit_and_refuse_to_continue(tmp_path, rule,
                                                                         links, precision):
    X, y = problem()
    net = snowpy.Network(rule, links=links, precision=precision, epochs=3,
                         calibrate="cv").fit(X, y)
    full = net.save(tmp_path / "full.snowpy")
    slim = net.save(tmp_path / "slim.snowpy", inference_only=True)
    for mmap in (False, True):
        loaded = snowpy.load(slim, mmap=mmap)
        np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))
        np.testing.assert_array_equal(loaded.predict_proba(X), net.predict_proba(X))
    planes = 2 if rule == "balanced-winnow" else 1
    stored, kept = read_model(slim)[1], read_model(full)[1]
    assert stored["link_weights"].shape[1] == 1 and "link_averaging" not in stored
    assert stored["link_targets"].shape == kept["link_targets"].shape  # the same links
    # weights and averaging sums, per plane, against one number per link
    assert kept["link_weights"].dtype == stored["link_weights"].dtype == np.dtype(precision)
    assert kept["link_weights"].nbytes + kept["link_averaging"].nbytes == \
        2 * planes * stored["link_weights"].nbytes
    resaved = snowpy.load(loaded.save(tmp_path / "again.snowpy"))  # stays inference-only
    assert read_model(tmp_path / "again.snowpy")[0]["network"]["inference_only"]
    np.testing.assert_array_equal(resaved.decision_function(X), net.decision_function(X))
    with pytest.raises(snowpy.exceptions.ConfigurationError, match="inference-only model"):
        loaded.partial_fit(X[:5], y[:5])
    afresh = loaded.fit(X, y)  # fit starts over, as it always does
    np.testing.assert_array_equal(afresh.decision_function(X), net.decision_function(X))


def test_inference_only_flag_is_validated(tmp_path, saved):
    def flag(header):  # an averaged model declared inference-only: sums and flag disagree
        header["network"]["inference_only"] = True

    def flag_and_drop_sums(header):  # ... and without the sums: two planes, not one
        header["network"]["inference_only"] = True
        del header["arrays"]["link_averaging"]

    net = snowpy.Network("balanced-winnow", epochs=2).fit(*problem())
    original = net.save(tmp_path / "bw.snowpy").read_bytes()
    with pytest.raises(ModelFileError, match="inference-only flag is invalid"):
        snowpy.load(write(tmp_path, header_change(original, flag)))
    with pytest.raises(ModelFileError, match="do not fit .* links of 1 plane"):
        snowpy.load(write(tmp_path, header_change(original, flag_and_drop_sums)))
    with pytest.raises(ModelFileError, match="'network.inference_only' must be true or false"):
        snowpy.load(write(tmp_path, header_change(
            saved, lambda h: h["network"].update(inference_only="yes"))))


def test_classifier_round_trip_with_names_calibration_and_mmap(tmp_path):
    texts = ["cheap pills now", "meeting at noon", "win cash now", "lunch meeting today",
             "cash prize winner", "project meeting notes"] * 3
    labels = ["spam", "ham", "spam", "ham", "spam", "ham"] * 3
    clf = snowpy.SnowClassifier(keep_names=True, calibrate="cv", epochs=5).fit(texts, labels)
    path = clf.save(tmp_path / "clf.snowpy")
    for mmap in (False, True):
        loaded = snowpy.load(path, mmap=mmap)
        np.testing.assert_array_equal(loaded.predict_proba(texts), clf.predict_proba(texts))
        assert loaded.featurizer_.names_ == clf.featurizer_.names_
        assert loaded.get_params() == clf.get_params()
    mapped = snowpy.load(path, mmap=True)
    before = path.read_bytes()
    mapped.partial_fit(["free cash"], ["spam"])  # copy-on-write: the file never changes
    assert path.read_bytes() == before


def test_a_loaded_model_predicts_a_few_rows_without_a_table_of_its_features(tmp_path):
    """A model file's features are looked up by bisection among them sorted while a few
    rows are predicted (8 bytes a feature, no table of the width); a large block, or
    learning, makes the table, and every answer is the unsaved network's."""
    rng = np.random.default_rng(4)
    n, width = 400, 2**22
    X = sp.csr_matrix((np.ones(20 * n), rng.integers(0, width, 20 * n),
                       np.arange(0, 20 * n + 1, 20)), shape=(n, width))
    X.sum_duplicates()
    y = np.array(["red", "green", "blue"])[rng.integers(0, 3, n)]
    net = snowpy.Network("passive-aggressive", epochs=3).fit(X[:300], y[:300])
    loaded = snowpy.load(net.save(tmp_path / "net.snowpy"), mmap=True)
    fmap = loaded.engine_.store.feature_map
    features = len(fmap)
    np.testing.assert_array_equal(loaded.decision_function(X[300:310]),
                                  net.decision_function(X[300:310]))
    assert not fmap.direct and fmap.nbytes == 4 * features  # (the ids, in order)
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))
    assert fmap.nbytes > 4 * features  # (a block of all the rows: the map made)
    again = snowpy.load(tmp_path / "net.snowpy")
    again.partial_fit(X[300:], y[300:])
    net.partial_fit(X[300:], y[300:])
    np.testing.assert_array_equal(again.decision_function(X), net.decision_function(X))
    assert again.save(tmp_path / "again.snowpy").read_bytes() == \
        net.save(tmp_path / "net.snowpy").read_bytes()  # (its rows by id, however they came)


@pytest.mark.parametrize("settings", [dict(rule="passive-aggressive"),
                                      dict(rule="winnow", average=False, links="all")])
def test_a_mapped_model_scores_a_few_rows_from_its_file_until_it_is_written(
        tmp_path, monkeypatch, settings):
    """A few examples of a mapped model are scored with their rows' links read from the
    file (a mapping's faults would bring whole folios in), the same to the bit; any
    write of the links (learning, a discard, forgetting a label) reads the pool again."""
    import snowpy.model_file

    monkeypatch.setattr(snowpy.model_file, "MMAP_MIN_BYTES", 1)  # (every array mapped)
    rng = np.random.default_rng(5)
    n, width = 300, 2**20
    X = sp.csr_matrix((rng.random(20 * n) + 0.5, rng.integers(0, width, 20 * n),
                       np.arange(0, 20 * n + 1, 20)), shape=(n, width))
    X.sum_duplicates()
    y = np.array(["red", "green", "blue"])[rng.integers(0, 3, n)]
    unseen = sp.csr_matrix(([1.0, 2.0], [1, width - 1], [0, 2]), shape=(1, width))
    few = sp.vstack([X[250:260], unseen]).tocsr()
    path = snowpy.Network(epochs=3, **settings).fit(X[:250], y[:250]).save(
        tmp_path / "net.snowpy")
    memory = snowpy.load(path)
    mapped = snowpy.load(path, mmap=True)
    store = mapped.engine_.store
    assert store.reads_file
    wanted = memory.decision_function(few)
    np.testing.assert_array_equal(mapped.decision_function(few), wanted)
    for i in range(few.shape[0]):  # (one example at a time too, and as River's one)
        np.testing.assert_array_equal(mapped.decision_function(few[i]), wanted[i:i + 1])
        ids, vals = few[i].indices.astype(np.int64), few[i].data
        scores, best = mapped.engine_.score_one(ids, vals)
        np.testing.assert_array_equal(scores, memory.engine_.score_one(ids, vals)[0])
        assert best == int(np.argmax(wanted[i]))
    assert store.reads_file
    store.W[:] = 7.0  # the mapping's pages, written behind the store's back (copy-on-write)
    if store.U.shape[0]:
        store.U[:] = 7.0
    np.testing.assert_array_equal(mapped.decision_function(few), wanted)  # (the file's)
    for change in (lambda m: m.partial_fit(X[260:280], y[260:280]),
                   lambda m: m.learn_one(dict(zip(X[281].indices.tolist(), X[281].data)),
                                         y[281]),
                   lambda m: m.engine_.discard(0.25, averaged=True),
                   lambda m: m.engine_.forget("green")):
        memory, mapped = snowpy.load(path), snowpy.load(path, mmap=True)
        change(memory)
        change(mapped)
        assert not mapped.engine_.store.reads_file
        np.testing.assert_array_equal(mapped.decision_function(few),
                                      memory.decision_function(few))


def test_a_mapped_classifier_predicts_one_text_from_its_file_and_makes_no_table(
        tmp_path, monkeypatch):
    """One text at a time (River's predict_one, `snowpy predict --batch 1`), a mapped
    model weighs the text's features by those the file counted and scores them by the
    links it reads from the file: the fitted model's probabilities, to the bit, with no
    table of the counted features made and nothing of the links' mapping read."""
    import snowpy.model_file

    monkeypatch.setattr(snowpy.model_file, "MMAP_MIN_BYTES", 1)
    texts = ["cheap pills now", "meeting at noon", "win cash now", "lunch meeting today",
             "cash prize winner", "project meeting notes", "free cash prize", "noon lunch"]
    labels = ["spam", "ham", "spam", "ham", "spam", "ham", "spam", "ham"]
    fitted = snowpy.SnowClassifier(calibrate="cv:2", epochs=5).fit(texts * 3, labels * 3)
    loaded = snowpy.load(fitted.save(tmp_path / "m.snowpy"), mmap=True)
    for text in texts + ["a prize at noon", "unseen words only"]:
        assert loaded.predict_proba_one(text) == fitted.predict_proba_one(text)
        assert loaded.predict_one(text) == fitted.predict_one(text)
    assert loaded.network_.engine_.store.reads_file
    assert loaded.featurizer_.frequencies_._stored is not None  # (no table made)
    loaded.learn_one("cash now", "spam")  # (learning makes them, and reads the pool)
    fitted.learn_one("cash now", "spam")
    assert not loaded.network_.engine_.store.reads_file
    assert loaded.predict_proba_one("cash at noon") == fitted.predict_proba_one("cash at noon")


def test_threads_predicting_at_once_from_a_loaded_model_each_find_every_feature(tmp_path):
    """The first large block a loaded model meets makes its map of features; threads
    that predict at once each get the unsaved network's scores (none looks its features
    up in a map half made)."""
    import threading

    rng = np.random.default_rng(3)
    n, width = 3000, 2**22
    X = sp.csr_matrix((np.ones(40 * n), rng.integers(0, width, 40 * n),
                       np.arange(0, 40 * n + 1, 40)), shape=(n, width))
    X.sum_duplicates()
    net = snowpy.Network("perceptron", epochs=1).fit(X, np.array(["a", "b", "c"])[
        rng.integers(0, 3, n)])
    wanted, path = net.decision_function(X), net.save(tmp_path / "net.snowpy")
    for _ in range(4):
        loaded, found = snowpy.load(path), [None] * 4

        def predict(i, loaded=loaded, found=found):
            found[i] = loaded.decision_function(X)

        threads = [threading.Thread(target=predict, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for scores in found:
            np.testing.assert_array_equal(scores, wanted)


def test_a_network_wider_than_2_31_features_predicts_and_learns_after_loading(tmp_path):
    """Feature ids past 2**31 (a file's uint32 ids) are looked up and learned on after a
    load as before it."""
    X = sp.csr_matrix((np.ones(4), np.array([5, 3_000_000_000, 7, 3_000_000_001]),
                       np.array([0, 2, 4])), shape=(2, 2**32))
    net = snowpy.Network("perceptron", epochs=2).fit(X, ["a", "b"])
    loaded = snowpy.load(net.save(tmp_path / "wide.snowpy"))
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))
    loaded.partial_fit(X, ["a", "b"])
    net.partial_fit(X, ["a", "b"])
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))


@pytest.mark.parametrize("largest", [2**31 - 1, 2**31])
def test_feature_ids_on_either_side_of_2_31_are_read_back_as_saved(tmp_path, largest):
    """The largest id an ``int32`` holds and the first past it (a file's ``uint32`` ids
    either way) are looked up after a load as before it."""
    X = sp.csr_matrix((np.ones(4), np.array([5, largest - 1, 7, largest]),
                       np.array([0, 2, 4])), shape=(2, 2**32))
    net = snowpy.Network("perceptron", epochs=2).fit(X, ["a", "b"])
    loaded = snowpy.load(net.save(tmp_path / "wide.snowpy"))
    assert read_model(tmp_path / "wide.snowpy")[1]["feature_ids"].dtype == np.uint32
    assert loaded.link_counts([largest - 1, largest]).tolist() == \
        net.link_counts([largest - 1, largest]).tolist() != [0, 0]
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))


def test_multilabel_and_restricted_round_trip(tmp_path):
    X = sp.csr_matrix(np.eye(4))
    net = snowpy.Network("perceptron", theta=0.5).fit(X, [["a"], ["a", "b"], [], ["b"]])
    loaded = snowpy.load(net.save(tmp_path / "m.snowpy"))
    assert loaded.predict(X) == net.predict(X) and loaded.multilabel_


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    X, y = problem()
    path = tmp_path_factory.mktemp("models") / "model.snowpy"
    snowpy.Network("winnow", epochs=2).fit(X, y).save(path)
    return path.read_bytes()


def write(tmp_path, data: bytes):
    path = tmp_path / "candidate.snowpy"
    path.write_bytes(data)
    return path


def rezip(original: bytes, change) -> bytes:
    """Rewrite a model's members through ``change(name, data) -> data``."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(original)) as source, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = change(info.filename, source.read(info))
            if data is not None:
                target.writestr(info.filename, data)
    return out.getvalue()


def header_change(original: bytes, edit) -> bytes:
    """The file with its header edited, the header's checksum recomputed as a hostile
    editor would (so that the checks behind it are reached;
    test_an_altered_header_is_detected checks that an edit without it is caught)."""

    def change(name, data):
        if name != "header.json":
            return data
        header = orjson.loads(data)
        edit(header)
        if "header_sha256" in header:
            header["header_sha256"] = _header_digest(header)
        return orjson.dumps(header)
    return rezip(original, change)


@pytest.mark.parametrize("edit,fragment", [
    (lambda h: h.update(magic="not-snowpy"), "wrong magic"),
    (lambda h: h.update(format_version=99), "reads up to format 4: upgrade snowpy"),
    (lambda h: h["arrays"]["link_weights"].update(shape=[10**9, 1], nbytes=8 * 10**9),
     "array 'link_weights' should hold"),
    (lambda h: h["arrays"]["link_weights"].update(sha256="0" * 64), "fails its SHA-256 check"),
    (lambda h: h["arrays"]["link_weights"].update(dtype="object"), "description of array"),
    (lambda h: h["arrays"].update(ghost={"dtype": "float64", "shape": [1], "nbytes": 8,
                                         "sha256": "x"}), "declared in the header but missing"),
])
def test_tampered_headers_name_the_failed_check(tmp_path, saved, edit, fragment):
    with pytest.raises(ModelFileError, match=None) as error:
        snowpy.load(write(tmp_path, header_change(saved, edit)))
    assert fragment in str(error.value)


def test_non_finite_and_reshaped_arrays_are_refused(tmp_path, monkeypatch):
    # a file with NaN is refused when written (it is read back before the rename)...
    with pytest.raises(ModelFileError, match="holds NaN or infinity"):
        write_model(tmp_path / "bad.snowpy", {"kind": "network"},
                    {"weights": np.array([1.0, np.nan])})
    assert list(tmp_path.iterdir()) == []  # nothing left behind
    # ... and when read, should one come from elsewhere
    import snowpy.model_file as model_file

    monkeypatch.setattr(model_file, "read_model", lambda *a, **k: None)
    path = write_model(tmp_path / "bad.snowpy", {"kind": "network"},
                       {"weights": np.array([1.0, np.nan])})
    monkeypatch.undo()
    with pytest.raises(ModelFileError, match="holds NaN or infinity"):
        read_model(path)
    with pytest.raises(ModelFileError, match="not a snowpy model"):
        read_model(write(tmp_path, b"PK\x05\x06" + b"\x00" * 18))
    with pytest.raises(ModelFileError, match="no such model file"):
        read_model(tmp_path / "missing.snowpy")


def test_a_member_marked_encrypted_is_a_model_file_error(tmp_path, saved):
    # (found by the fuzzing below: zipfile raises RuntimeError for bit 0 of a member's
    # flags, "encrypted", in its local or central header)
    blob = bytearray(saved)
    at = blob.rfind(b"PK\x01\x02")  # the last member's central directory entry
    blob[at + 8] |= 1
    with pytest.raises(ModelFileError, match="encrypted"):
        snowpy.load(write(tmp_path, bytes(blob)))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_files_raise_only_model_file_error(tmp_path, saved, data):
    kind = data.draw(st.sampled_from(["truncate", "flip", "garbage"]))
    blob = bytearray(saved)
    if kind == "truncate":
        blob = blob[: data.draw(st.integers(0, len(blob) - 1))]
    elif kind == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            position = data.draw(st.integers(0, len(blob) - 1))
            blob[position] ^= 1 << data.draw(st.integers(0, 7))
    else:
        blob = bytearray(data.draw(st.binary(max_size=512)))
    path = write(tmp_path, bytes(blob))
    try:
        model = snowpy.load(path)
    except ModelFileError:
        return
    # a flip that survives every check must not have changed the model
    original = snowpy.load(write(tmp_path, saved))
    X, _ = problem()
    np.testing.assert_array_equal(model.decision_function(X), original.decision_function(X))


KILLED_WRITER = """
import sys, numpy as np
from snowpy.model_file import write_model
print("ready", flush=True)
while True:
    write_model(sys.argv[1], {"kind": "test"}, {"weights": np.ones(4_000_000)})
"""


def test_writer_killed_mid_save_leaves_the_old_model(tmp_path, saved):
    target = tmp_path / "model.snowpy"
    target.write_bytes(saved)
    process = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    process.send_signal(signal.SIGKILL)
    process.wait()
    header, _ = read_model(target)  # either the old model or a complete new one
    assert header["kind"] in ("network", "test")
    leftovers = [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert all(p.startswith(".model.snowpy.") for p in leftovers)  # never the target name


FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


@pytest.mark.parametrize("name", ["v1_classifier", "v1_classifier_inference",
                                  "v1_network_dense", "v1_network_compact"])
def test_format_1_files_still_load_and_predict_as_they_did(name):
    """Files written before the sparse links (format 1: full tables) load as "all" links
    and score exactly as the code that wrote them did (its figures are in the JSON)."""
    import json

    from snowpy.text import Featurizer

    with open(os.path.join(FIXTURES, "v1_expected.json")) as stream:
        fixture = json.load(stream)
    model = snowpy.load(os.path.join(FIXTURES, f"{name}.snowpy"))
    expected = fixture["expected"][name.replace("_inference", "")]
    texts = fixture["tests"]
    if name.startswith("v1_network"):
        X = Featurizer(bits=10, ngrams=(1, 1)).transform(texts)
        assert model.links == "all"
        np.testing.assert_allclose(model.decision_function(X), expected["decision"],
                                   rtol=1e-12, atol=1e-12)
        return
    np.testing.assert_allclose(model.decision_function(texts), expected["decision"],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.predict_proba(texts), expected["proba"], rtol=1e-12,
                               atol=1e-15)
    assert model.predict(texts).tolist() == expected["predict"]
    assert model.network_.n_links_ < model.network_.engine_.store.n_rows * len(model.classes_)
    # (written before the relevance: none, as the front end it was trained with had)
    assert model.relevance == model.featurizer_.relevance == 0.0
    if name == "v1_classifier":  # a full file goes on learning, and keeps its names
        assert ["firmware"] in model.featurizer_.names_.values()
        model.partial_fit(texts[:5], ["billing"] * 5)


def test_a_file_keeps_the_rule_parameters_it_was_trained_with_when_a_default_changes():
    """A classifier saved when passive-aggressive's negative thickness followed its
    thickness (1) goes on learning at 1, as the code that wrote it did (its scores after
    a partial_fit are in the JSON), not at today's default of 0.75."""
    import json

    with open(os.path.join(FIXTURES, "pa_negative_thickness_1.json")) as stream:
        fixture = json.load(stream)
    model = snowpy.load(os.path.join(FIXTURES, "pa_negative_thickness_1.snowpy"))
    demo = os.path.join(os.path.dirname(FIXTURES), "..", "corpora", "demo", "test.tsv")
    with open(demo, encoding="utf-8") as lines:
        rows = [line.rstrip("\n").split("\t", 1) for line in lines][:20]
    model.partial_fit([text for _, text in rows], [label for label, _ in rows])
    assert model.network_.engine_.params["negative_thickness"] == 1.0
    assert model.network_.mistakes_ == fixture["mistakes"]
    np.testing.assert_allclose(model.decision_function(fixture["tests"]),
                               fixture["decision"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["v2_classifier", "v2_classifier_inference",
                                  "v2_network_positive"])
@pytest.mark.parametrize("mmap", [False, True])
def test_format_2_files_still_load_and_predict_as_they_did(name, mmap):
    """Files of format 2 (integer arrays stored wide: int64 feature ids, int32 sizes and
    targets), written by the code before format 3, load and score as that code did, bit
    for bit (its figures are in the JSON), and go on learning."""
    import json

    from snowpy.text import Featurizer

    with open(os.path.join(FIXTURES, "v2_expected.json")) as stream:
        fixture = json.load(stream)
    path = os.path.join(FIXTURES, f"{name}.snowpy")
    assert read_model(path)[0]["format_version"] == 2
    model = snowpy.load(path, mmap=mmap)
    expected = fixture["expected"][name.replace("_inference", "")]
    texts = fixture["tests"]
    if name == "v2_network_positive":
        X = Featurizer(bits=12, ngrams=(1, 1)).transform(texts)
        assert model.links == "positive" and model.n_links_ == expected["n_links"]
        np.testing.assert_array_equal(model.decision_function(X), expected["decision"])
        model.partial_fit(X[:5], model.predict(X[:5]))
        return
    np.testing.assert_array_equal(model.decision_function(texts), expected["decision"])
    np.testing.assert_array_equal(model.predict_proba(texts), expected["proba"])
    assert model.predict(texts).tolist() == expected["predict"]
    if name == "v2_classifier":
        model.partial_fit(texts[:5], model.predict(texts[:5]))


def test_format_3_stores_integers_in_the_narrowest_type_their_bounds_allow(tmp_path):
    """Feature ids below 2**bits, row sizes up to the number of classes and link targets
    below it: uint32 or narrower, uint8 for fewer than 256 classes (a model file of 20
    Newsgroups at the defaults, 51 MB in format 2, is 38 MB)."""
    clf = snowpy.SnowClassifier(ngrams=1, calibrate=None).fit(
        ["a b", "c d", "e f"], ["x", "y", "z"])
    header, arrays = read_model(clf.save(tmp_path / "m.snowpy"))
    assert header["format_version"] == 4
    assert {name: arrays[name].dtype.name for name in
            ("feature_ids", "row_sizes", "link_targets")} == \
        {"feature_ids": "uint32", "row_sizes": "uint8", "link_targets": "uint8"}


def test_model_files_get_the_users_permissions(tmp_path):
    """Written through a private temporary file, a model still gets what the umask gives a
    new file, and a replaced model keeps the permissions it had."""
    import os
    import stat

    clf = snowpy.SnowClassifier(ngrams=1).fit(["a b", "c d"], ["x", "y"])
    umask = os.umask(0o022)
    try:
        path = tmp_path / "m.snowpy"
        clf.save(path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        path.chmod(0o640)
        clf.save(path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o640
    finally:
        os.umask(umask)


class _Trickle(io.BytesIO):
    """A stream that hands out at most 7 bytes a read (zip members may return less)."""

    def read(self, size=-1):
        return super().read(min(7, size) if size >= 0 else 7)


def test_a_saved_file_is_checked_a_piece_at_a_time(tmp_path):
    """Issue 15.8: the read-back before the rename keeps no array (it held a second
    copy of the model at the save, the peak of a large training)."""
    from snowpy.model_file import _check_stream

    floats = np.array([1.5, -2.0, 3.25, np.inf, 0.0])
    data = floats.tobytes()
    with pytest.raises(ModelFileError, match="'w' holds NaN or infinity"):
        _check_stream(tmp_path, "w", _Trickle(data), len(data), floats.dtype, True)
    import hashlib

    finite = np.arange(11, dtype=np.float32)
    digest = _check_stream(tmp_path, "w", _Trickle(finite.tobytes()), finite.nbytes,
                           finite.dtype, True)
    assert digest == hashlib.sha256(finite.tobytes()).hexdigest()
    with pytest.raises(ModelFileError, match="truncated"):
        _check_stream(tmp_path, "w", _Trickle(finite.tobytes()[:-4]), finite.nbytes,
                      finite.dtype, True)
    path = write_model(tmp_path / "m.snowpy", {"kind": "network"}, {"w": finite})
    header, arrays = read_model(path, check_only=True)
    assert arrays["w"].size == 0 and header["arrays"]["w"]["shape"] == [11]
    raw = bytearray(path.read_bytes())
    at = bytes(raw).index(finite.tobytes())
    raw[at + 5] ^= 1  # a flipped bit in the weights
    path.write_bytes(bytes(raw))
    with pytest.raises(ModelFileError, match="CRC-32|SHA-256"):  # zip's check comes first
        read_model(path, check_only=True)


def swap_labels(header: dict) -> None:
    labels = header["network"]["labels"]
    labels[0], labels[1] = labels[1], labels[0]


def test_a_header_without_its_checksum_is_refused(forge, quick_model, tmp_path):
    def strip(header):
        swap_labels(header)
        del header["header_sha256"]

    edited = forge(quick_model, tmp_path / "stripped.snowpy", strip)
    with pytest.raises(ModelFileError, match="checksum .header_sha256. is missing"):
        snowpy.load(edited)
    result = run("predict", edited, input="hello\n")
    assert result.exit_code == 1 and "header_sha256" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("version", [-1, 0, True, "3", None])
def test_an_invalid_format_version_is_refused(forge, quick_model, tmp_path, version):
    edited = forge(quick_model, tmp_path / "v.snowpy",
                     lambda header: header.update(format_version=version), checksum=True)
    with pytest.raises(ModelFileError, match="format version"):
        snowpy.load(edited)


def test_a_signed_model_loads_only_with_its_key(forge, quick_model, tmp_path):
    key, other = b"k" * 32, b"o" * 32
    classifier = snowpy.load(quick_model)
    signed = classifier.save(tmp_path / "signed.snowpy", key=key)
    assert snowpy.load(signed, key=key).predict(["hello"]).tolist() == \
        classifier.predict(["hello"]).tolist()
    # no key given: checked for damage only, and loaded whole
    assert snowpy.load(signed).decision_function(["hello"]).tolist() == \
        classifier.decision_function(["hello"]).tolist()
    with pytest.raises(ModelFileError, match="does not match the key"):
        snowpy.load(signed, key=other)
    with pytest.raises(ModelFileError, match="not signed"):
        snowpy.load(quick_model, key=key)
    # a forger who edits the labels and recomputes the checksum passes the checksum,
    # not the signature
    forged = forge(signed, tmp_path / "forged.snowpy", swap_labels, checksum=True)
    assert snowpy.load(forged).classes_.tolist() != classifier.classes_.tolist()
    with pytest.raises(ModelFileError, match="does not match the key"):
        snowpy.load(forged, key=key)
    with pytest.raises(ValueError, match="at least 16"):
        classifier.save(tmp_path / "short.snowpy", key=b"short")


def test_the_command_line_signs_and_checks_with_the_key_file(tmp_path, monkeypatch):
    key_file, other = tmp_path / "key", tmp_path / "other"
    key_file.write_bytes(b"s" * 32)
    other.write_bytes(b"t" * 32)
    out = tmp_path / "m.snowpy"
    monkeypatch.setenv("SNOWPY_MODEL_KEY_FILE", str(key_file))
    assert run("train", TRAIN, "-o", out, "--epochs", "1", "--calibrate", "none").exit_code == 0
    assert run("predict", out, input="hello\n").exit_code == 0
    monkeypatch.setenv("SNOWPY_MODEL_KEY_FILE", str(other))
    result = run("predict", out, input="hello\n")
    assert result.exit_code == 1 and "does not match the key" in result.stderr
    monkeypatch.setenv("SNOWPY_MODEL_KEY_FILE", str(tmp_path / "absent"))
    result = run("predict", out, input="hello\n")
    assert result.exit_code == 1 and "SNOWPY_MODEL_KEY_FILE" in result.stderr


def _set(*path, value):
    def edit(header):
        place = header
        for key in path[:-1]:
            place = place[key]
        place[path[-1]] = value
    return edit


SCHEMA_EDITS = {
    "fields as an object": (_set("featurizer", "fields", value={"a": "b"}),
                            "'featurizer.fields' must be an array"),
    "format_version -1": (_set("format_version", value=-1), "format version"),
    "float16 precision": (_set("network", "options", "precision", value="float16"),
                          "'network.options.precision' must be one of"),
    "NaN eligible_percent": (_set("network", "options", "eligible_percent",
                                  value={"$float": "nan"}), "eligible_percent' must be null"),
    "eligibility percent:abc": (_set("network", "params", "eligibility", value="percent:a"),
                                "'count:K' or 'percent:P'"),
    "alpha 1e308": (_set("network", "rule_params", "alpha", value=1e308),
                    "'network.rule_params.alpha' must be"),
    "negative chunk_bytes": (_set("featurizer", "chunk_bytes", value=-5),
                             "'featurizer.chunk_bytes' must be an integer from 1"),
    "n_jobs 100000": (_set("featurizer", "n_jobs", value=100_000), "'featurizer.n_jobs'"),
    "n_jobs -100000": (_set("featurizer", "n_jobs", value=-100_000), "'featurizer.n_jobs'"),
    "an unknown field": (_set("network", "surprise", value=1),
                         "'network.surprise' is not a field snowpy writes"),
    "a feature id beyond n_features": (_set("network", "n_features", value=3),
                                       "beyond the map's 3"),
    "a network of a kind no plugin brings": (_set("network", "kind", value="tree"),
                                             "unknown model kind 'tree'"),
    "frequencies without idf": (
        lambda header: (_set("featurizer", "idf", value=False)(header),
                        _set("classifier", "idf", value=False)(header)),
        "holds document frequencies for a front end that does not weigh by them"),
}


def test_files_of_snowpy_0_1_load_with_todays_parameters(forge, tmp_path):
    """snowpy 0.1 wrote eligible_percent and calibration_folds; they are the numbers of
    eligibility="percent:p" and calibrate="cv:k" now, and such a file goes on learning
    as it was set to."""
    import scipy.sparse as sp

    X = sp.csr_matrix(np.eye(6)[[0, 1, 2, 3, 4, 5] * 5])
    y = ["a", "b", "c"] * 10
    net = snowpy.Network("perceptron", links="positive", eligibility="percent:50",
                         calibrate="holdout:5").fit(X, y)
    net.save(tmp_path / "now.snowpy")

    def as_in_0_1(header):
        for options in (header["network"]["options"], header["network"]["params"]):
            options.update(eligibility=1, eligible_percent=50.0, calibrate="holdout",
                           calibration_folds=5)

    old = forge(tmp_path / "now.snowpy", tmp_path / "old.snowpy", as_in_0_1, checksum=True)
    loaded = snowpy.load(old)
    assert loaded.get_params()["eligibility"] == "percent:50"
    assert loaded.get_params()["calibrate"] == "holdout:5"
    assert loaded.predict(X).tolist() == net.predict(X).tolist()
    again = snowpy.Network(**loaded.get_params()).fit(X, y)
    np.testing.assert_array_equal(again.predict_proba(X), net.predict_proba(X))


@pytest.mark.parametrize("name", SCHEMA_EDITS)
def test_the_header_schema_refuses_what_loaded_before(forge, quick_model, tmp_path, name):
    """Each edit loaded with exit status 0 (or crashed in predict) before the schema."""
    edit, message = SCHEMA_EDITS[name]
    edited = forge(quick_model, tmp_path / "edited.snowpy", edit, checksum=True)
    with pytest.raises(ModelFileError, match=message):
        snowpy.load(edited)
    result = run("predict", edited, input="hello\n")
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_float_feature_ids_are_refused(forge, quick_model, tmp_path):
    import hashlib
    import io

    import numpy as np

    floats = {}

    def as_floats(members):
        floats["ids"] = np.load(io.BytesIO(members["arrays/feature_ids.npy"])).astype(float)
        buffer = io.BytesIO()
        np.save(buffer, floats["ids"])
        members["arrays/feature_ids.npy"] = buffer.getvalue()

    def declare(header):
        ids = floats["ids"]
        header["arrays"]["feature_ids"].update(
            dtype="float64", nbytes=ids.nbytes, sha256=hashlib.sha256(ids.tobytes()).hexdigest())

    edited = forge(quick_model, tmp_path / "floats.snowpy", declare, checksum=True,
                     members_edit=as_floats)
    with pytest.raises(ModelFileError, match="array 'feature_ids' must hold int32 or int64"):
        snowpy.load(edited)


def test_stale_temporary_files_of_killed_saves_are_removed(tmp_path):
    """A save removes the temporary files of earlier saves of the same model whose
    process is gone; it keeps those of a process still running (a save in progress), of
    its own process, of other models, and those without a process id (older snowpy)
    until they are a day old."""
    import os
    import subprocess
    import sys
    import time

    classifier = snowpy.SnowClassifier(epochs=1).fit(["a b", "c d"], ["x", "y"])
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]) as sleeper:
        files = {
            "stale": f".m.snowpy.{gone}.abc123.tmp",  # a save killed by kill -9
            "alive": f".m.snowpy.{sleeper.pid}.def456.tmp",  # a save in progress
            "own": f".m.snowpy.{os.getpid()}.ghi789.tmp",  # this process's
            "other": f".other.snowpy.{gone}.x.tmp",  # another model's
            "old": ".m.snowpy.old-style.tmp",  # no process id, two days old
            "young": ".m.snowpy.young-style.tmp",  # no process id, an hour old
        }
        for path in files.values():
            (tmp_path / path).write_bytes(b"half a model")
        now = time.time()
        os.utime(tmp_path / files["old"], (now - 2 * 86400, now - 2 * 86400))
        os.utime(tmp_path / files["young"], (now - 3600, now - 3600))
        classifier.save(tmp_path / "m.snowpy")
        assert sleeper.poll() is None  # (looked at, not signalled)
        sleeper.kill()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == \
        sorted(files[name] for name in ("alive", "own", "other", "young"))


def test_a_device_or_a_pipe_is_named_as_such(tmp_path):
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (fifo, "/dev/zero"):
        result = run("train", target, "-o", tmp_path / "m.snowpy")
        assert result.exit_code == 1 and "not a regular file" in result.stderr, result.stderr


@pytest.mark.parametrize("failure, said", [
    (OSError(28, "No space left on device"), "[Errno 28] No space left on device"),
    (OSError("the disk went away"), "[Errno None] the disk went away")])
def test_a_full_disk_names_the_model_file(tmp_path, monkeypatch, failure, said):
    classifier = snowpy.SnowClassifier(epochs=1, calibrate=None).fit(["a b", "c d"],
                                                                     ["x", "y"])

    def full(*args, **kwargs):
        raise failure

    monkeypatch.setattr("snowpy.model_file.os.fsync", full)
    with pytest.raises(OSError) as caught:
        classifier.save(tmp_path / "m.snowpy")
    assert str(caught.value) == f"{said}: '{tmp_path / 'm.snowpy'}'"
    assert caught.value.filename == str(tmp_path / "m.snowpy")
    assert caught.value.errno == failure.errno
    assert not list(tmp_path.iterdir())  # no temporary file left


def test_arrays_out_of_their_declared_bounds_are_never_saved():
    import numpy as np

    from snowpy.network.state import narrowest

    assert narrowest(np.array([0, 19]), 20).tolist() == [0, 19]
    with pytest.raises(SnowpyError, match="a value 97 where 0 to 19 are declared"):
        narrowest(np.array([3, 97]), 20)
    with pytest.raises(SnowpyError, match="a value -1 where"):
        narrowest(np.array([-1, 3]), 20)


def test_an_infinite_thickness_saves_and_loads(tmp_path):
    # 15.1: --thickness inf was saved as null, and the file did not load
    X, y = np.eye(4), [0, 1, 0, 1]
    net = snowpy.Network("perceptron", thickness=float("inf")).fit(X, y)
    loaded = snowpy.load(net.save(tmp_path / "m.snowpy"))
    assert loaded.rule_params_["thickness"] == float("inf")
    np.testing.assert_array_equal(loaded.target_scores(X), net.target_scores(X))


def test_a_file_that_would_not_load_never_replaces_a_model(fresh_model, monkeypatch):
    # 15.1: check before the rename
    import snowpy.model_file as model_file

    before = fresh_model.read_bytes()
    monkeypatch.setattr(model_file, "read_model", lambda *a, **k: (_ for _ in ()).throw(
        ModelFileError("the new file does not load")))
    classifier = snowpy.load(fresh_model)
    with pytest.raises(ModelFileError, match="does not load"):
        classifier.save(fresh_model)
    assert fresh_model.read_bytes() == before
    assert not [p for p in fresh_model.parent.iterdir() if p.name.endswith(".tmp")]


def test_an_altered_header_is_detected(fresh_model, tmp_path):
    # 15.7: only the arrays had checksums; labels or theta could be edited undetected
    with zipfile.ZipFile(fresh_model) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    header = orjson.loads(members["header.json"])
    header["network"]["labels"][0] = "tampered"
    members["header.json"] = orjson.dumps(header)
    edited = tmp_path / "edited.snowpy"
    with zipfile.ZipFile(edited, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(ModelFileError, match="header was altered after saving"):
        snowpy.load(edited)
    result = runner.invoke(app, ["predict", str(edited)], input="hello\n")
    assert result.exit_code == 1 and "altered" in result.stderr


def test_a_memory_mapped_load_racing_saves_reads_one_model_whole(tmp_path, monkeypatch):
    # 15.4: the loader checked the file, then reopened it by name: a save landing in
    # between gave weights of the new file at the old file's offsets (4 in 1,060 loads),
    # and spurious errors
    import threading

    import snowpy.model_file as model_file

    monkeypatch.setattr(model_file, "MMAP_MIN_BYTES", 0)  # map every array
    rng = np.random.default_rng(0)
    X = (rng.random((300, 400)) < 0.05).astype(float)
    nets = [snowpy.Network(rule, epochs=3).fit(X, rng.integers(0, 4, 300))
            for rule in ("perceptron", "balanced-winnow")]
    expected = [net.target_scores(X) for net in nets]
    path = tmp_path / "served.snowpy"
    nets[0].save(path)
    stop = threading.Event()

    def saver():
        i = 0
        while not stop.is_set():
            nets[i % 2].save(path)
            i += 1

    thread = threading.Thread(target=saver)
    thread.start()
    try:
        for _ in range(150):
            loaded = snowpy.load(path, mmap=True)
            scores = loaded.target_scores(X)
            assert any(np.array_equal(scores, e) for e in expected)
    finally:
        stop.set()
        thread.join()


def test_small_arrays_of_a_mapped_model_are_in_memory(tmp_path):
    # 15.5: a file rewritten in place killed a serving process (SIGBUS); the small arrays
    # (calibration, labels, maps) are read, only large weight tables are mapped
    texts = [line.split("\t", 1)[1] for line in TRAIN.read_text().splitlines() if line]
    labels = [line.split("\t", 1)[0] for line in TRAIN.read_text().splitlines() if line]
    clf = snowpy.SnowClassifier(calibrate="cv").fit(texts, labels)
    header, arrays = snowpy.model_file.read_model(clf.save(tmp_path / "m.snowpy"), mmap=True)
    for name, array in arrays.items():
        assert isinstance(array, np.memmap) == (array.nbytes >= (1 << 20)), name


@pytest.mark.parametrize("field,value", [
    ("labels", "xy"), ("labels", ["x", "x"]), ("n_features", "many"), ("rule_params", [1, 2]),
    ("options", None), ("stats", "x"), ("seen", "x"), (None, "classifier"),
    (None, "featurizer"),
])
def test_headers_with_wrong_types_fail_in_one_line(tmp_path, field, value):
    # 15.9: model headers with wrong types (9 variants) and duplicated labels gave
    # tracebacks; a hostile editor can recompute the header checksum, so the fields are
    # checked too

    source = snowpy.SnowClassifier(calibrate=None).fit(["a b", "c d", "e f", "g h"],
                                                       ["x", "y", "x", "y"])
    path = source.save(tmp_path / "m.snowpy")
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    header = orjson.loads(members["header.json"])
    if field is None:
        header[value] = "not a mapping"
    else:
        header["network"][field] = value
    header["header_sha256"] = _header_digest(header)
    members["header.json"] = orjson.dumps(header)
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(ModelFileError):
        snowpy.load(path)
    result = runner.invoke(app, ["predict", str(path)], input="a b\n")
    assert result.exit_code == 1 and "Traceback" not in result.output


def test_an_edited_front_end_section_is_detected(fresh_model, tmp_path):
    # the header's checksum covers the featurizer section too: another n-gram range would
    # hash the texts into other features, the weights unchanged, answers silently wrong
    def edit(name, data):
        if name != "header.json":
            return data
        header = orjson.loads(data)
        header["featurizer"]["ngrams"] = [1, 3]
        return orjson.dumps(header)

    edited = tmp_path / "edited.snowpy"
    edited.write_bytes(rezip(fresh_model.read_bytes(), edit))
    with pytest.raises(ModelFileError, match="header was altered after saving"):
        snowpy.load(edited)


def test_a_flipped_bit_the_zip_checksum_misses_fails_the_arrays_sha256(saved, tmp_path):
    # rewritten through zipfile, the member's CRC-32 matches its flipped bytes: only the
    # header's SHA-256 of each array is left to catch it
    def flip(name, data):
        if name != "arrays/link_weights.npy":
            return data
        flipped = bytearray(data)
        flipped[-1] ^= 1
        return bytes(flipped)

    path = tmp_path / "flipped.snowpy"
    path.write_bytes(rezip(saved, flip))
    with pytest.raises(ModelFileError, match="link_weights.*fails its SHA-256 check"):
        snowpy.load(path)


def test_document_frequencies_round_trip_and_are_checked(tmp_path):
    texts = ["free prize now", "lunch at noon", "win a free prize", "meeting at noon"] * 3
    labels = ["spam", "ham", "spam", "ham"] * 3
    clf = snowpy.SnowClassifier(rule="passive-aggressive", values="log", idf=True, norm="l2",
                                calibrate=None).fit(texts, labels)
    loaded = snowpy.load(clf.save(tmp_path / "idf.snowpy"))
    np.testing.assert_array_equal(loaded.decision_function(texts), clf.decision_function(texts))
    assert loaded.featurizer_.frequencies_.documents == 12
    header, arrays = clf.to_state()
    # 16 words and pairs: "free", "free prize", "at noon"... in 6 documents, the rest in 3
    assert sorted(arrays["frequency_counts"].tolist()) == [3] * 10 + [6] * 6
    # the relevance factors (relevance=0.25): the loaded front end's, to the bit
    np.testing.assert_array_equal(arrays["frequency_factors"], loaded.featurizer_.frequencies_
                                  .factors_of(arrays["frequency_ids"].astype(np.int64)))
    assert 0.75 <= arrays["frequency_factors"].min() < arrays["frequency_factors"].max()
    _refused_when_edited(tmp_path, header, arrays, [
            ("high", lambda a: a["frequency_counts"].__setitem__(0, 13), "from 1 to the 12"),
            ("order", lambda a: a.__setitem__("frequency_ids", a["frequency_ids"][::-1].copy()),
             "must ascend"),
            ("gone", lambda a: a.pop("frequency_counts"), "need 'frequency_ids'"),
            ("negative", lambda a: a["frequency_factors"].__setitem__(1, -1.0),
             "finite, non-negative factor"),
            ("short", lambda a: a.__setitem__("frequency_factors", a["frequency_factors"][1:]),
             "finite, non-negative factor")])


def _refused_when_edited(tmp_path, header, arrays, edits):
    """Each of ``edits`` (name, an edit of the arrays, the message expected) written into
    a file: refused on loading, naming what is wrong, and by the command line in one
    line with exit status 1."""
    for name, edit, message in edits:
        edited = {k: v.copy() for k, v in arrays.items()}
        edit(edited)
        path = write_model(tmp_path / f"{name}.snowpy", header, edited)
        with pytest.raises(ModelFileError, match=message):
            snowpy.load(path)
        result = run("predict", path, input="free prize\n")
        assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1


def test_a_progressive_window_wider_than_the_targets_is_refused(forge, tmp_path):
    """The one-example path writes an example's scores in its window's row, a score per
    target: a file whose window holds more columns than the network has targets is
    inconsistent, and refused where it is read, not where it is learned from."""
    import hashlib
    import io

    net = snowpy.Network("perceptron", calibrate="progressive")
    for x, y in [({0: 1.0}, "a"), ({1: 1.0}, "b"), ({0: 1.0, 2: 1.0}, "a")] * 5:
        net.learn_one(x, y)
    net.save(tmp_path / "online.snowpy")
    wide = {}

    def widen(members):
        for name, dtype in (("progressive_scores", float), ("progressive_positives", bool)):
            kept = np.load(io.BytesIO(members[f"arrays/{name}.npy"]))
            wide[name] = np.hstack([kept, np.zeros((kept.shape[0], 1), dtype)])
            buffer = io.BytesIO()
            np.save(buffer, wide[name])
            members[f"arrays/{name}.npy"] = buffer.getvalue()

    def declare(header):
        for name, array in wide.items():
            header["arrays"][name].update(shape=list(array.shape), nbytes=array.nbytes,
                                          sha256=hashlib.sha256(array.tobytes()).hexdigest())

    edited = forge(tmp_path / "online.snowpy", tmp_path / "wide.snowpy", declare,
                   checksum=True, members_edit=widen)
    with pytest.raises(ModelFileError, match="progressive calibration window is inconsistent"):
        snowpy.load(edited)
    assert snowpy.load(tmp_path / "online.snowpy").predict_one({0: 1.0}) == "a"


def test_a_save_on_several_threads_writes_the_same_bytes_and_checks_them_alike(saved, tmp_path):
    # the checksums are taken on n_jobs threads, and the file read back on as many
    # before it replaces a model: the same bytes, and a flipped bit caught on threads too
    loaded = snowpy.load(write(tmp_path, saved))
    one = loaded.set_params(n_jobs=None).save(tmp_path / "one.snowpy")
    two = loaded.set_params(n_jobs=2).save(tmp_path / "two.snowpy")
    assert one.read_bytes() == two.read_bytes()

    def flip(name, data):
        return data[:-1] + bytes([data[-1] ^ 1]) if name == "arrays/link_weights.npy" \
            else data

    path = tmp_path / "flipped.snowpy"
    path.write_bytes(rezip(saved, flip))
    for threads in (1, 2):
        with pytest.raises(ModelFileError, match="link_weights.*fails its SHA-256 check"):
            read_model(path, check_only=True, threads=threads)


def test_frequency_ids_that_repeat_or_run_backwards_anywhere_are_refused(tmp_path):
    """A front end's document frequencies are read only with ascending ids
    (docs/model-files.md): an id repeated, or one step backwards in the middle (the ends
    in order), is a one-line refusal naming the array; the file as saved loads."""
    texts = ["free prize now", "lunch at noon", "win a free prize", "meeting at noon"] * 3
    labels = ["spam", "ham", "spam", "ham"] * 3
    clf = snowpy.SnowClassifier(idf=True, calibrate=None, epochs=1).fit(texts, labels)
    header, arrays = clf.to_state()
    ids = arrays["frequency_ids"]
    assert ids.size >= 6 and np.all(np.diff(ids.astype(np.int64)) > 0)
    assert snowpy.load(write_model(tmp_path / "kept.snowpy", header, arrays)) \
        .predict(texts[:4]).tolist() == clf.predict(texts[:4]).tolist()
    middle = ids.size // 2
    repeated, backwards = ids.copy(), ids.copy()
    repeated[middle] = repeated[middle - 1]
    backwards[middle - 1], backwards[middle] = ids[middle], ids[middle - 1]
    for name, edited in (("repeated", repeated), ("backwards", backwards)):
        path = write_model(tmp_path / f"{name}.snowpy", header,
                           dict(arrays, frequency_ids=edited))
        with pytest.raises(ModelFileError) as caught:
            snowpy.load(path)
        assert str(caught.value).endswith(
            "'frequency_ids' must ascend, each below 2**bits"), name
        assert "\n" not in str(caught.value)


def test_frequency_ids_out_of_order_past_the_first_million_are_refused(tmp_path):
    """The ids are checked a piece at a time (no second array of their size): a front end
    of 2**20 + 2 counted features (every third id of 2**22), with one id repeated or one
    step backwards at the start, at the 2**19th and 2**20th ids and at the end, is
    refused in one line each time; the ids in order load, counts and all."""
    texts = ["free prize now", "lunch at noon", "win a free prize", "meeting at noon"] * 3
    labels = ["spam", "ham", "spam", "ham"] * 3
    clf = snowpy.SnowClassifier(idf=True, calibrate=None, epochs=1).fit(texts, labels)
    header, arrays = clf.to_state()
    assert clf.featurizer_.frequencies_.width == 1 << 22
    n = (1 << 20) + 2
    ids = (np.arange(n, dtype=np.uint32) * 3)
    many = dict(arrays, frequency_ids=ids, frequency_counts=np.ones(n, np.uint8),
                frequency_factors=np.ones(n, np.float32))
    loaded = snowpy.load(write_model(tmp_path / "kept.snowpy", header, many))
    counted, _ = loaded.featurizer_.frequencies_.to_arrays()
    assert np.array_equal(counted, ids)
    for at in (1, 1 << 19, 1 << 20, n - 1):
        repeated, backwards = ids.copy(), ids.copy()
        repeated[at] = ids[at - 1]
        backwards[at - 1], backwards[at] = ids[at], ids[at - 1]
        for name, edited in (("repeated", repeated), ("backwards", backwards)):
            path = write_model(tmp_path / f"{name}.snowpy", header,
                               dict(many, frequency_ids=edited))
            with pytest.raises(ModelFileError) as caught:
                snowpy.load(path)
            assert str(caught.value).endswith(
                "'frequency_ids' must ascend, each below 2**bits"), (name, at)
            assert "\n" not in str(caught.value)


def test_the_features_counted_are_a_set_of_bits_where_that_is_smaller(tmp_path):
    """Format 4: a front end's counted features are stored as a set of bits over its
    width (``frequency_set``, 2**bits / 8 bytes) when that is smaller than their ids: a
    narrow front end counting many features. The file predicts as the model did, to the
    bit; a set of the wrong length, a bit past the width, or both forms at once, is a
    one-line refusal; a file of format 3 (ids) loads as it did."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choice(words, 12)) for _ in range(60)]
    labels = ["a", "b", "c"] * 20
    clf = snowpy.SnowClassifier(bits=10, ngrams=1, calibrate=None, epochs=2).fit(texts, labels)
    header, arrays = clf.to_state()
    ids = np.flatnonzero(np.unpackbits(arrays["frequency_set"], bitorder="little"))
    assert "frequency_ids" not in arrays and arrays["frequency_set"].nbytes == 1024 // 8
    assert ids.size == arrays["frequency_counts"].size > 128  # (more ids than the set's bytes)
    assert ids.tolist() == clf.featurizer_.frequencies_.to_arrays()[0].tolist()
    loaded = snowpy.load(write_model(tmp_path / "set.snowpy", header, arrays))
    np.testing.assert_array_equal(loaded.decision_function(texts), clf.decision_function(texts))
    as_ids = {k: v for k, v in arrays.items() if k != "frequency_set"}
    as_ids["frequency_ids"] = ids.astype(np.uint16)
    np.testing.assert_array_equal(snowpy.load(write_model(
        tmp_path / "ids.snowpy", header, as_ids)).decision_function(texts),
        clf.decision_function(texts))
    past = arrays["frequency_set"].copy()
    for name, edited, message in [
            ("short", dict(arrays, frequency_set=past[1:]), "'frequency_set' must be uint8 bits"),
            ("both", dict(arrays, frequency_ids=ids.astype(np.uint16)), "both"),
            ("sized", dict(arrays, frequency_counts=arrays["frequency_counts"][1:]),
             "one count for each feature counted")]:
        path = write_model(tmp_path / f"{name}.snowpy", header, edited)
        with pytest.raises(ModelFileError, match=message) as caught:
            snowpy.load(path)
        assert "\n" not in str(caught.value)


def test_a_set_of_bits_is_the_ids_it_holds():
    from snowpy.model_file import id_set, ids_of_set

    ids = np.array([0, 3, 8, 9, 10, 11, 12, 13, 14, 63])  # (10 bytes as uint8 ids)
    bits = id_set(ids, 64)
    assert bits is not None and bits.tolist() == [0b1001, 0b1111111, 0, 0, 0, 0, 0, 0b10000000]
    assert ids_of_set(bits, 64).tolist() == ids.tolist()
    assert ids_of_set(bits, 60) is None  # (8 bytes are not the set of 60 features)
    assert id_set(np.array([5]), 64) is None  # (one id: one byte, less than the set's 8)
    assert ids_of_set(np.array([0x80], np.uint8), 7) is None  # (a bit past the width)
    for wrong in (bits.astype(np.int16), bits.reshape(2, 4)):  # (not a set of bytes)
        assert ids_of_set(wrong, 64) is None


@pytest.mark.parametrize("width, itemsize", [(64, 1), (256, 1), (257, 2), (1024, 2),
                                             (1 << 16, 2), ((1 << 16) + 1, 4)])
def test_a_set_of_bits_is_made_only_when_smaller_than_the_ids(width, itemsize):
    """Ids in the narrowest unsigned type their width allows (1, 2 or 4 bytes) against a
    set of ``ceil(width / 8)`` bytes: the ids kept while they take no more bytes, the set
    from one id more."""
    from snowpy.model_file import id_set, ids_of_set

    size = (width + 7) // 8
    tie = size // itemsize  # (the most ids that take no more bytes than the set)
    assert tie * itemsize <= size < (tie + 1) * itemsize
    ids = np.linspace(0, width - 1, tie + 1).astype(np.int64)
    assert np.unique(ids).size == tie + 1
    assert id_set(ids[:tie], width) is None
    bits = id_set(ids, width)
    assert bits is not None and bits.dtype == np.uint8 and bits.size == size
    assert ids_of_set(bits, width).tolist() == ids.tolist()


def test_a_set_of_bits_over_the_command_lines_width_is_read_a_piece_at_a_time():
    """2**22 features are read from their set in pieces of 2**19 bits: every id found,
    those either side of each piece's edge and the last the width holds included, in
    the type asked for."""
    from snowpy.model_file import id_set, ids_of_set

    width, edge = 1 << 22, 1 << 19
    rng = np.random.default_rng(5)
    edges = [k * edge + d for k in range(1, 8) for d in (-1, 0, 1)]
    ids = np.unique(np.concatenate([rng.choice(width, 300_000, replace=False),
                                    edges, [0, width - 1]]))
    bits = id_set(ids, width)
    assert bits is not None and bits.size == width // 8
    found = ids_of_set(bits, width, np.uint32)
    assert found.dtype == np.uint32 and found.tolist() == ids.tolist()
    assert ids_of_set(bits, width + 8) is None  # (one byte short of that width's set)


def test_a_loaded_model_weighs_a_few_lines_from_its_file_without_a_map(tmp_path):
    """A model that only predicts weighs a line by looking its features up among the
    file's counted features (a bisection), making no map of them: the same
    probabilities, to the bit, as the model saved, a line at a time or all at once; a
    model that learns again makes its map then, and learns as the saved one does."""
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(3000)]
    texts = [" ".join(rng.choice(words, 30)) for _ in range(90)]
    labels = ["a", "b", "c"] * 30
    clf = snowpy.SnowClassifier(epochs=2, calibrate="cv:3").fit(texts, labels)
    loaded = snowpy.load(clf.save(tmp_path / "m.snowpy"))
    lines = texts[:5] + ["w1 w2 w3 unseen words", "nothing counted here"]
    one_at_a_time = np.vstack([loaded.predict_proba([line]) for line in lines])
    frequencies = loaded.featurizer_.frequencies_
    assert "_counts" not in frequencies.__dict__  # (no map made for a few lines: the ids
    assert frequencies._map.nbytes <= 8 * len(frequencies)  # as read, not a table)
    np.testing.assert_array_equal(one_at_a_time, clf.predict_proba(lines))
    np.testing.assert_array_equal(loaded.predict_proba(texts), clf.predict_proba(texts))
    again = snowpy.load(tmp_path / "m.snowpy")
    again.partial_fit(texts[:6], labels[:6])
    clf.partial_fit(texts[:6], labels[:6])
    np.testing.assert_array_equal(again.predict_proba(lines), clf.predict_proba(lines))
    assert len(again.featurizer_.frequencies_) == len(clf.featurizer_.frequencies_)


def _v1(name):
    header, arrays = read_model(os.path.join(FIXTURES, f"{name}.snowpy"))
    return header, dict(arrays)


def _refused(header, arrays):
    with pytest.raises(ModelFileError) as caught:
        snowpy.Network.from_state(header, arrays, "f.snowpy")
    return str(caught.value)


def test_an_inconsistent_format_1_table_is_refused_in_one_line_naming_the_file():
    """A format 1 file's table (rows x planes x targets) is checked as it is read: its
    shape against the targets and planes, its averaging sums against it, a dense table's
    rows against the features, a compact one's feature map against its rows."""
    header, arrays = _v1("v1_network_dense")
    weights, averaging = arrays["weights"], arrays["averaging"]
    assert weights.shape == (1025, 1, 5)
    for wrong in (weights[:, :, :4], np.concatenate([weights, weights], axis=1),
                  weights[:, 0, :]):
        assert _refused(header, arrays | {"weights": wrong, "averaging": np.zeros(
            wrong.shape)}) == (f"f.snowpy: weights of shape {wrong.shape} do not fit 5 "
                               "targets and 1 plane(s)")
    assert _refused(header, arrays | {"averaging": averaging[:, :, :4]}) == \
        "f.snowpy: averaging sums and weights differ in shape"
    assert _refused(header, arrays | {"weights": weights[:1000],
                                      "averaging": averaging[:1000]}) == \
        "f.snowpy: a dense table needs 1025 rows, has 1000"
    header, arrays = _v1("v1_network_compact")
    ids = arrays.pop("feature_ids")
    for found in ({}, {"feature_ids": ids[:-1]}):
        assert _refused(header, arrays | found) == \
            "f.snowpy: the compact feature map does not match the weights"


@pytest.mark.parametrize("name", ["v1_network_dense", "v1_network_compact"])
def test_a_format_1_table_becomes_the_links_that_differ_from_the_initial_weight(name):
    """Each weight of a format 1 table that differs from the rule's initial one (or whose
    averaging sum is not 0) becomes a link, the bias row linked to every target; rows
    without such a weight hold no link and are left out."""
    header, arrays = _v1(name)
    weights = arrays["weights"]
    initial = float(header["network"]["rule_params"]["initial_weight"])
    if "averaging" in arrays:  # (a link whose sum is 0, and a sum at the initial weight)
        averaging = arrays["averaging"] = arrays["averaging"].copy()
        moved, still = np.argwhere(weights != initial)[5], np.argwhere(weights == initial)[5]
        averaging[tuple(moved)], averaging[tuple(still)] = 0.0, 0.5
    differs = np.any(weights != initial, axis=1)
    if "averaging" in arrays:
        differs |= np.any(arrays["averaging"] != 0, axis=1)
    differs[0] = True
    assert not differs.all() and differs.any(axis=1).sum() < weights.shape[0]
    net = snowpy.Network.from_state(header, arrays)
    assert net.n_links_ == int(differs.sum())
    assert net.engine_.store.n_rows == int(differs.any(axis=1).sum())


def test_a_network_file_without_its_figures_loads_with_none():
    """A network's part without the training figures (mistakes, updates, examples seen,
    clamped weights) loads with none: no epochs, no examples seen."""
    header, arrays = _v1("v1_network_compact")
    header["network"]["stats"] = {}
    net = snowpy.Network.from_state(header, arrays)
    assert net.mistakes_ == [] and net.engine_.updates == [] and net.n_examples_seen_ == 0
    assert net.engine_.overflows == net.engine_.underflows == 0


def test_a_networks_per_target_figures_and_integer_arrays_are_checked():
    """Promotions and demotions per target: none kept loads as none made, the wrong
    count refused naming it; feature ids, row sizes and link targets must be integers."""
    X = sp.csr_matrix(np.array([[1.0, 0, 1], [0, 1, 1], [1, 1, 0]] * 4))
    net = snowpy.Network("perceptron").fit(X, list("abc") * 4)
    header, arrays = net.to_state()
    assert net.engine_.promotions.tolist() != [0, 0, 0]
    arrays = dict(arrays)
    kept = {name: arrays.pop(name) for name in ("promotions", "demotions")}
    loaded = snowpy.Network.from_state(header, arrays).engine_
    assert loaded.promotions.tolist() == loaded.demotions.tolist() == [0, 0, 0]
    assert loaded.counts.dtype == np.int64
    assert _refused(header, arrays | kept | {"demotions": kept["demotions"][:2]}) == \
        "f.snowpy: demotions has shape (2,), expected (3,)"
    for name in ("feature_ids", "row_sizes", "link_targets"):
        assert _refused(header, arrays | {name: arrays[name].astype(np.float64)}) == \
            "f.snowpy: feature ids, row sizes and link targets must be integers"


def _state_of(**options):
    X = sp.csr_matrix(np.array([[1.0, 0, 1], [0, 1, 1], [1, 1, 0]] * 4))
    header, arrays = snowpy.Network("perceptron", **options).fit(X, list("abc") * 4).to_state()
    return header, dict(arrays)


def _edited(name, change):
    def edit(arrays):
        arrays[name] = change(arrays[name])
        return arrays
    return edit


def _int32(array):
    return array.astype(np.int32)


def _sizes_negative(arrays):  # (8 links in rows of -1, 3, 3 and 3)
    arrays["row_sizes"] = np.array([-1, 3, 3, 3], np.int32)
    for name in ("link_targets", "link_weights", "link_averaging"):
        arrays[name] = arrays[name][:8]
    return arrays


def _sizes_wide(sizes):  # (the same sum: a row of 4 links among 3 targets)
    sizes = sizes.astype(np.int32)
    sizes[1] -= 4 - sizes[0]
    sizes[0] = 4
    return sizes


def _twice(targets):  # (row 0 linked to target 0 twice)
    targets = targets.copy()
    targets[1] = targets[0]
    return targets


@pytest.mark.parametrize("options, edit, message", [
    ({}, _edited("row_sizes", lambda s: s.reshape(1, -1)), "feature ids and rows do not match"),
    ({}, _edited("feature_ids", lambda s: s[:-1]), "feature ids and rows do not match"),
    ({}, _edited("link_targets", lambda s: s.reshape(-1, 1)),
     "feature ids and rows do not match"),
    ({}, _edited("row_sizes", lambda s: s + np.eye(4, dtype=s.dtype)[1]),
     "the row sizes do not add up to the links"),
    ({}, _sizes_negative, "the row sizes do not add up to the links"),
    ({}, _edited("row_sizes", _sizes_wide), "the row sizes do not add up to the links"),
    ({}, _edited("link_weights", lambda w: w[:-1]),
     "link weights of shape (8, 1) do not fit 9 links of 1 plane(s)"),
    ({}, _edited("link_weights", lambda w: w.astype(np.float64)),
     "link weights are float64, the header says float32"),
    ({}, _edited("link_targets", lambda t: np.where(t == 2, 3, t).astype(t.dtype)),
     "a link names a target outside 0..2"),
    ({}, _edited("link_targets", lambda t: np.where(t == 2, -1, t).astype(np.int32)),
     "a link names a target outside 0..2"),
    ({}, _edited("link_averaging", lambda u: u[:-1]),
     "averaging sums and link weights differ in shape or type"),
    ({}, _edited("link_averaging", lambda u: u.astype(np.float64)),
     "averaging sums and link weights differ in shape or type"),
    ({}, lambda arrays: {k: v for k, v in arrays.items() if k != "link_averaging"},
     "an averaged network's file lacks its averaging sums"),
    ({"eligibility": "percent:50", "links": "positive"},
     lambda arrays: {k: v for k, v in arrays.items() if k != "link_counts"},
     "the link counts are missing or do not fit"),
    ({"eligibility": "percent:50", "links": "positive"},
     _edited("link_counts", lambda c: c[:-1]), "the link counts are missing or do not fit"),
    ({}, _edited("link_targets", _twice), "a feature is linked twice to the same target"),
    ({}, _edited("feature_ids", lambda i: np.array([i[0], i[0], i[2]], i.dtype)),
     "a feature id appears twice"),
    ({"eligibility": 2}, lambda arrays: {k: v for k, v in arrays.items() if k != "row_counts"},
     "the row counts are missing or do not fit"),
    ({"eligibility": 2}, _edited("row_counts", lambda c: c[:-1]),
     "the row counts are missing or do not fit"),
    ({}, _edited("state", lambda s: s[:2]),
     "the per-target state has shape (2, 0), expected (3, 0)"),
    ({}, lambda arrays: {k: v for k, v in arrays.items() if k != "link_weights"},
     "the links are inconsistent ('link_weights')"),
])
def test_an_inconsistent_network_part_is_refused_in_one_line_naming_the_file(
        options, edit, message):
    header, arrays = _state_of(**options)
    assert _refused(header, edit(arrays)) == f"f.snowpy: {message}"


def test_an_invalid_inference_only_flag_is_refused():
    header, arrays = _state_of()
    for flag, kept in (("yes", arrays), (True, arrays)):
        header["network"]["inference_only"] = flag
        assert _refused(header, kept) == (
            "f.snowpy: the inference-only flag is invalid (an inference-only file holds no "
            "averaging sums)")


def test_a_format_1_inference_only_table_with_averaging_sums_is_refused():
    header, arrays = _v1("v1_network_dense")
    header["network"]["inference_only"] = True
    assert _refused(header, arrays) == (
        "f.snowpy: the inference-only flag is invalid (an inference-only file holds no "
        "averaging sums)")


def test_a_network_parts_description_is_checked_and_its_optional_fields_default():
    """The labels must be a list and the figures a mapping (refused naming the file);
    a part without the inference-only flag is a full network, without ``seen`` its
    averaging clock starts at 0; the per-target state is restored as it was kept."""
    X = sp.csr_matrix(np.array([[1.0, 0, 1], [0, 1, 1], [1, 1, 0]] * 4))
    net = snowpy.Network("normalised-winnow").fit(X, list("abc") * 4)
    header, arrays = net.to_state()
    part = header["network"]
    for field, value in (("labels", "abc"), ("stats", [1, 2])):
        broken = {**header, "network": {**part, field: value}}
        assert _refused(broken, arrays) == (
            "f.snowpy: the network description is invalid (TypeError: labels and stats "
            "must be a list and a mapping)")
    state = net.engine_.store.S
    assert state.shape == (3, 1) and np.all(state != 0) and part["seen"] > 0
    loaded = snowpy.Network.from_state(header, arrays).engine_.store
    np.testing.assert_array_equal(loaded.S, state)
    assert loaded.seen == part["seen"] and not loaded.frozen
    bare = {k: v for k, v in part.items() if k not in ("inference_only", "seen")}
    loaded = snowpy.Network.from_state({**header, "network": bare}, arrays).engine_.store
    assert not loaded.frozen and loaded.seen == 0
    np.testing.assert_array_equal(loaded.S, state)


def test_a_networks_rows_are_kept_by_id_or_as_met_and_rows_without_links_left_out():
    """A network's arrays hold its rows in the order of their features' ids (a model
    file's) or, ``by_id=False``, in the order they were met (a cluster's shard's); a row
    that holds no link (feature 3, met in an example learned without an update) is left
    out. Either restores the network."""
    from snowpy.network.state import network_state

    X = sp.csr_matrix(np.array([[0, 0, 5.0, 0], [5.0, 0, 0, 0], [0, 0, 5.0, 0],
                                [5.0, 0, 0, 0], [0, 0, 5.0, 1.0]]))
    net = snowpy.Network("perceptron", epochs=1, shuffle=False).fit(X, list("ababa"))
    store = net.engine_.store
    assert store.n_rows == 4 and store.feature_ids[:3].tolist() == [2, 0, 3]
    for by_id, ids in ((True, [0, 2]), (False, [2, 0])):
        header, arrays = network_state(net, by_id=by_id)
        assert arrays["feature_ids"].tolist() == ids
        assert arrays["row_sizes"].tolist() == [2, 2, 2]
        loaded = snowpy.Network.from_state({"kind": "network", "network": header}, arrays)
        np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))


def test_narrowest_takes_the_narrowest_type_the_bound_allows_and_refuses_the_rest():
    """``narrowest``: values in ``0 .. bound - 1`` in the narrowest unsigned type that
    holds ``bound - 1`` (256 values fit uint8, 257 do not), none at all refused for no
    value; a value past the bound, or below 0, refused naming it."""
    from snowpy.exceptions import SnowpyError
    from snowpy.network.state import narrowest

    for bound, dtype in ((256, np.uint8), (257, np.uint16), (2**16, np.uint16),
                         (2**16 + 1, np.uint32), (2**32, np.uint32)):
        kept = narrowest(np.array([0, bound - 1], np.int64), bound)
        assert kept.dtype == dtype and kept.tolist() == [0, bound - 1]
    assert narrowest(np.array([5], np.int64), 2**32 + 1).dtype == np.int64
    assert narrowest(np.zeros(0, np.int64), 1).dtype == np.uint8
    for values, value in (([0, 3], 3), ([-1, 2], -1)):
        with pytest.raises(SnowpyError) as caught:
            narrowest(np.array(values), 3)
        assert str(caught.value) == (
            f"the network's arrays are inconsistent (a value {value} where 0 to 2 are "
            "declared): its memory was written over, and it is not saved")


def test_a_network_parts_feature_space_and_label_forms_are_read_as_kept():
    """The feature space must be a count (open: at most the online width), refused
    naming it; a multi-label network kept from a label-indicator matrix loads as one
    (its predictions an indicator matrix again), sets of labels as sets, a part without
    the multi-label flag is single-label, and one without the indicator flag (format
    1's) predicts sets."""
    from snowpy.network.state import ONLINE_WIDTH

    X = sp.csr_matrix(np.array([[1.0, 0, 1], [0, 1, 1], [1, 1, 0]] * 4))
    header, arrays = snowpy.Network("perceptron").fit(X, list("abc") * 4).to_state()
    part = header["network"]
    for fields in ({"open_features": "yes"}, {"n_features": -1},
                   {"open_features": True, "n_features": ONLINE_WIDTH + 1}):
        broken = {**header, "network": {**part, **fields}}
        assert _refused(broken, arrays) == (
            f"f.snowpy: the feature space ({fields.get('n_features', 3)} features, open: "
            f"{fields.get('open_features', False)!r}) is invalid")
    bare = {k: v for k, v in part.items() if k != "multilabel"}
    assert not snowpy.Network.from_state({**header, "network": bare}, arrays).engine_.multilabel
    indicator = np.array([[1, 0], [0, 1], [1, 1]] * 4)
    sets = [["a"], ["b"], ["a", "b"]] * 4
    for y, form in ((indicator, True), (sets, False)):
        net = snowpy.Network("perceptron").fit(X, y)
        loaded = snowpy.Network.from_state(*net.to_state())
        assert loaded.engine_.multilabel and loaded.engine_.indicator is form
        predicted = loaded.predict(X[:3])
        assert isinstance(predicted, np.ndarray) == form
    # (a part written before the indicator was kept, format 1's: sets, as it predicted)
    state, arrays = snowpy.Network("perceptron").fit(X, sets).to_state()
    state["network"].pop("indicator")
    loaded = snowpy.Network.from_state(state, arrays)
    assert loaded.engine_.multilabel and loaded.engine_.indicator is False
    assert not isinstance(loaded.predict(X[:3]), np.ndarray)


def test_a_network_parts_clamped_and_raised_weights_are_read_back():
    X = sp.csr_matrix(np.array([[1.0, 0, 1], [0, 1, 1], [1, 1, 0]] * 4))
    header, arrays = snowpy.Network("perceptron").fit(X, list("abc") * 4).to_state()
    header["network"]["stats"].update(overflows=3, underflows=4)
    engine = snowpy.Network.from_state(header, arrays).engine_
    assert (engine.overflows, engine.underflows) == (3, 4)
    assert _refused(header, dict(arrays) | {"promotions": arrays["promotions"][:1]}) == \
        "f.snowpy: promotions has shape (1,), expected (3,)"


def test_a_network_part_without_its_parameters_loads_from_its_options_and_rule_parameters():
    """A part without ``params`` (the network's own parameters) is built from its options
    and its rule's resolved parameters: the same network, which predicts as it did."""
    X = sp.csr_matrix(np.array([[1.0, 0, 1], [0, 1, 1], [1, 1, 0]] * 4))
    net = snowpy.Network("perceptron", learning_rate=0.5, epochs=3).fit(X, list("abc") * 4)
    header, arrays = net.to_state()
    part = header["network"]
    bare = {k: v for k, v in part.items() if k != "params"}
    loaded = snowpy.Network.from_state({**header, "network": bare}, arrays)
    assert loaded.get_params() == {**net.get_params(), **part["rule_params"]}
    assert loaded.rule_params_ == net.rule_params_
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))


def test_a_format_1_network_keeps_every_link_in_float64_and_discards_none():
    """A format 1 table becomes links of the ``"all"`` policy in float64, and nothing is
    discarded as it goes on learning (format 1 kept every weight)."""
    for name in ("v1_network_dense", "v1_network_compact"):
        header, arrays = _v1(name)
        assert "discard" not in header["network"]["params"]
        net = snowpy.Network.from_state(header, arrays)
        assert (net.links, net.precision, net.discard) == ("all", "float64", None)


def test_an_unknown_rule_and_invalid_or_repeated_labels_are_refused_in_one_line():
    from snowpy.plugins import get_rule

    X = sp.csr_matrix(np.array([[1.0, 0, 1], [0, 1, 1], [1, 1, 0]] * 4))
    header, arrays = snowpy.Network("perceptron").fit(X, list("abc") * 4).to_state()
    part = header["network"]
    with pytest.raises(SnowpyError) as unknown:
        get_rule("nosuch")
    renamed = {"options": {**part["options"], "rule": "nosuch"},
               "params": {**part["params"], "rule": "nosuch"}}
    assert _refused({**header, "network": {**part, **renamed}}, arrays) == \
        f"f.snowpy: the model was trained with rule 'nosuch': {unknown.value}"
    for labels, message in (
            (["a", "b", None], "a label is invalid: a label must be a string, an integer or "
                               "a finite number, got None"),
            (["a", "b", "a"], "the labels are not distinct")):
        assert _refused({**header, "network": {**part, "labels": labels}}, arrays) == \
            f"f.snowpy: {message}"


def test_an_open_feature_space_loads_at_its_bounds_and_stays_open():
    """A network started one example at a time keeps an open feature space: one that has
    met no feature yet (0 features) and one that has met the last id the online width
    allows both load, and go on taking ids past those they met."""
    from snowpy.network.state import ONLINE_WIDTH

    for first, width in (({}, 0), ({ONLINE_WIDTH - 1: 1.0}, ONLINE_WIDTH)):
        net = snowpy.Network("perceptron")
        net.learn_one(first, "a")
        net.learn_one({}, "b")
        header, arrays = net.to_state()
        assert (header["network"]["n_features"], header["network"]["open_features"]) == \
            (width, True)
        loaded = snowpy.Network.from_state(header, arrays)
        assert loaded.engine_.open_features and loaded.engine_.n_features == width
        loaded.learn_one({7: 1.0}, "a")
        net.learn_one({7: 1.0}, "a")
        assert loaded.n_features_in_ == net.n_features_in_ == max(width, 8)
        assert loaded.predict_one({7: 1.0}) == net.predict_one({7: 1.0})


def test_a_format_1_tables_bias_row_is_linked_to_every_target_and_row_1_as_it_differs():
    """The bias row (row 0) is linked to every target, even where its weight is the
    initial one; row 1 is a feature's like any other: at the initial weight everywhere,
    it holds no link and is left out."""
    header, arrays = _v1("v1_network_compact")
    weights = arrays["weights"] = arrays["weights"].copy()
    assert float(header["network"]["rule_params"]["initial_weight"]) == 0.0
    weights[0, 0, :2] = 0.0
    weights[1] = 0.0
    net = snowpy.Network.from_state(header, arrays)
    moved = np.any(weights[2:] != 0.0, axis=1)
    assert net.n_links_ == 5 + int(moved.sum())
    assert net.engine_.store.n_rows == 1 + int(moved.any(axis=1).sum())
    assert net.link_counts(arrays["feature_ids"][:2]).tolist() == \
        [0, int(moved[0].sum())]


def test_a_networks_lowest_feature_without_links_is_left_out_and_its_state_is_full():
    """The row of the lowest feature id, the first after the bias row, is left out when
    it holds no link (feature 0, met once in an example learned without an update), as
    any other; ``network_state`` describes the full network unless told otherwise."""
    from snowpy.network.state import network_state

    X = sp.csr_matrix(np.array([[0, 0, 5.0], [0, 5.0, 0], [0, 0, 5.0], [0, 5.0, 0],
                                [1.0, 0, 5.0]]))
    net = snowpy.Network("perceptron", epochs=1, shuffle=False).fit(X, list("ababa"))
    assert net.engine_.store.n_rows == 4 and net.link_counts([0]).tolist() == [0]
    header, arrays = network_state(net)
    assert header["inference_only"] is False and "link_averaging" in arrays
    assert arrays["feature_ids"].tolist() == [1, 2]
    assert arrays["row_sizes"].tolist() == [2, 2, 2]
    loaded = snowpy.Network.from_state({"kind": "network", "network": header}, arrays)
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))


def test_a_row_counted_once_without_links_is_kept_and_learns_on_from_its_count():
    """With ``eligibility=2`` a feature met once holds no link yet but its count: the
    file keeps the row (count 1), so the loaded network links it the next time it is
    met, as the network it was saved from does."""
    X = sp.csr_matrix(np.array([[5.0, 0, 0], [0, 5.0, 0], [5.0, 0, 0], [0, 5.0, 0],
                                [5.0, 0, 1.0]]))
    net = snowpy.Network("perceptron", epochs=1, shuffle=False, eligibility=2)
    net.fit(X, list("ababa"))
    header, arrays = net.to_state()
    assert arrays["feature_ids"].tolist() == [0, 1, 2]
    assert arrays["row_sizes"].tolist()[3] == 0 and arrays["row_counts"].tolist()[3] == 1
    loaded = snowpy.Network.from_state(header, arrays)
    for network in (net, loaded):
        network.partial_fit(sp.csr_matrix(np.array([[0, 0, 1.0]])), ["a"])
    assert loaded.link_counts([2]).tolist() == net.link_counts([2]).tolist() == [2]
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))


def test_an_inference_only_part_keeps_no_progressive_window():
    """A network calibrated progressively keeps its window (scores, labels, where it
    stands) for the training it may go on with; an inference-only part, which cannot go
    on, keeps its sigmoids only."""
    net = snowpy.Network("perceptron", calibrate="progressive")
    for x, y in [({0: 1.0}, "a"), ({1: 1.0}, "b"), ({0: 1.0, 2: 1.0}, "a")] * 5:
        net.learn_one(x, y)
    header, arrays = net.to_state()
    assert {"progressive_scores", "progressive_positives"} <= set(arrays)
    assert header["network"]["progressive"]["since_fit"] == 5
    header, arrays = net.to_state(inference_only=True)
    assert not any(name.startswith("progressive") for name in arrays)
    assert "progressive" not in header["network"] and "calibration_a" in arrays
    loaded = snowpy.Network.from_state(header, arrays)
    assert loaded.predict_proba_one({0: 1.0}) == net.predict_proba_one({0: 1.0})


def test_a_network_of_255_targets_keeps_its_row_sizes_in_one_byte():
    """Row sizes run from 0 to the number of targets: 255 targets, a bias row of 255
    links, fit one byte."""
    X = sp.csr_matrix(np.eye(255)[:, :4] + 1)
    y = [f"t{i:03d}" for i in range(255)]
    net = snowpy.Network("perceptron", links="all", epochs=1).fit(X, y)
    header, arrays = net.to_state()
    assert arrays["row_sizes"].dtype == np.uint8 and arrays["row_sizes"][0] == 255
    assert arrays["link_targets"].dtype == np.uint8
    loaded = snowpy.Network.from_state(header, arrays)
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))


def test_a_progressive_networks_window_is_checked_naming_the_file_or_started_afresh():
    """A progressively calibrated network's window, its scores without their labels, is
    refused naming the file; a part that kept no window starts one, which the examples it
    learns next fill."""
    net = snowpy.Network("perceptron", calibrate="progressive")
    for x, y in [({0: 1.0}, "a"), ({1: 1.0}, "b"), ({0: 1.0, 2: 1.0}, "a")] * 5:
        net.learn_one(x, y)
    header, arrays = net.to_state()
    arrays = dict(arrays)
    assert _refused(header, {k: v for k, v in arrays.items()
                             if k != "progressive_positives"}) == \
        "f.snowpy: the progressive calibration window is inconsistent"
    bare = {k: v for k, v in arrays.items() if not k.startswith("progressive")}
    part = {k: v for k, v in header["network"].items() if k != "progressive"}
    loaded = snowpy.Network.from_state({**header, "network": part}, bare)
    assert loaded.engine_.progressive is not None and loaded.engine_.progressive.filled == 0
    loaded.learn_one({0: 1.0}, "a")
    assert loaded.engine_.progressive.filled == 1


def test_a_percent_eligibility_networks_link_counts_survive_a_round_trip():
    """With ``eligibility="percent:p"`` each link's count is kept: loaded, the network
    goes on learning and keeps the same top links as the network it was saved from."""
    X, y = problem()
    net = snowpy.Network("perceptron", eligibility="percent:50", links="positive",
                         epochs=2).fit(X[:80], y[:80])
    loaded = snowpy.Network.from_state(*net.to_state())
    counts = [np.sort(network.engine_.store.lcount[: net.n_links_]) for network in (net, loaded)]
    np.testing.assert_array_equal(counts[1], counts[0])
    for network in (net, loaded):
        network.partial_fit(X[80:], y[80:])
        network.prune()
    assert loaded.n_links_ == net.n_links_ < 172
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))


def test_the_ratios_by_label_and_the_evidence_weights_round_trip_and_are_checked(tmp_path):
    """evidence=True: the counts by label (each class's features, as positions among the
    features counted, and the documents of the class holding each; n_c and N in the
    header) and the calibration's evidence weights are kept in the file; the loaded model
    stacks the same evidence (the same decisions, probabilities, one text at a time too);
    a damaged count, position or run is refused in one line naming the array."""
    texts = ["free prize now", "lunch at noon", "win a free prize", "meeting at noon",
             "a free lunch", "prize draw tonight", "noon meeting moved", "win big now"] * 3
    labels = ["spam", "ham", "spam", "ham", "ham", "spam", "ham", "spam"] * 3
    clf = snowpy.SnowClassifier(evidence=True, epochs=3).fit(texts, labels)
    loaded = snowpy.load(clf.save(tmp_path / "evidence.snowpy"))
    queries = ["free lunch", "win a prize at noon", "meeting tonight", "nothing known"]
    np.testing.assert_array_equal(loaded.decision_function(queries),
                                  clf.decision_function(queries))
    np.testing.assert_array_equal(loaded.predict_proba(queries), clf.predict_proba(queries))
    assert [loaded.predict_one(q) for q in queries] == clf.predict(queries).tolist()
    assert loaded.featurizer_.evidence and loaded.network_.calibration_.evidence.tolist() == \
        clf.network_.calibration_.evidence.tolist()
    np.testing.assert_array_equal(loaded.rows(queries).evidence.values,
                                  clf.rows(queries).evidence.by(loaded.classes_.tolist()))
    header, arrays = clf.to_state()
    assert header["frequencies"]["evidence"]["every"] == sum(
        len(set(clf.featurizer_.features_one(t)[0])) for t in texts)
    # each class's run: every feature its documents hold, by position, ascending
    begins = arrays["evidence_begins"]
    assert begins.tolist()[0] == 0 and begins[-1] == arrays["evidence_positions"].size
    ids = loaded.featurizer_.frequencies_.to_arrays()[0]
    for c, label in enumerate(clf.classes_.tolist()):
        positions = arrays["evidence_positions"][begins[c]:begins[c + 1]].astype(np.int64)
        assert np.all(np.diff(positions) > 0)
        held = {int(i) for t, y in zip(texts, labels) if y == label
                for i in clf.featurizer_.features_one(t)[0]}
        assert {int(ids[p]) for p in positions} == held
    _refused_when_edited(tmp_path, header, arrays, [
            ("count", lambda a: a["evidence_counts"].__setitem__(0, 99), "'evidence_counts'"),
            ("zero", lambda a: a["evidence_counts"].__setitem__(0, 0), "'evidence_counts'"),
            ("position", lambda a: a["evidence_positions"].__setitem__(0, 255),
             "'evidence_positions' must lie among"),
            ("runs", lambda a: a.__setitem__("evidence_begins", a["evidence_begins"][:2]),
             "'evidence_begins' must cut"),
            ("gone", lambda a: a.pop("evidence_counts"), "need 'evidence_positions'")])
