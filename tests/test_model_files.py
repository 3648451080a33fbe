"""Model files: round trips, validation, fuzzing, atomic saves."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
import zipfile

import numpy as np
import orjson
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import snowpy
from snowpy.model_file import ModelFileError, read_model, write_model

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
    editor would (so that the checks behind it are reached; test_reliability checks
    that an edit without it is caught)."""
    from snowpy.model_file import _header_digest

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
    (lambda h: h.update(format_version=99), "reads up to format 3: upgrade snowpy"),
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
    assert model.network_.n_links_ < model.network_.state_.store.n_rows * len(model.classes_)
    if name == "v1_classifier":  # a full file goes on learning, and keeps its names
        assert ["firmware"] in model.featurizer_.names_.values()
        model.partial_fit(texts[:5], ["billing"] * 5)


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
    assert header["format_version"] == 3
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
