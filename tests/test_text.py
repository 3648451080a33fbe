"""The text front end: hashing, tokenisation, extractors, values, streaming."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import unicodedata
from decimal import Decimal

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
import scipy.sparse as sp

from snowpy.exceptions import ConfigurationError, NotFittedError, UnknownNameError
from snowpy.text import Featurizer, feature_seed, murmurhash3_32, unicode
from snowpy._rows import Rows
from snowpy.text.chunks import SequenceChunks, Workspace, approximate_size, grown, trimmed
from snowpy.text.hashing import hash_names
from snowpy.text.weighing import DocumentFrequencies
from snowpy.text.tokenize import (
    encode_documents,
    split_documents,
    split_spaces,
    tokenize_bytes,
)


def tokens(*docs: str | bytes, **options) -> list[list[str]]:
    raw, offsets = encode_documents(list(docs))
    data, offsets = split_documents(raw, offsets, len(docs))
    stream = tokenize_bytes(data, offsets, **options)
    return [stream.tokens(d) for d in range(len(docs))]


def expected_ids(strings, kind="words", namespace="", bits=20):
    seed = feature_seed(kind, namespace)
    return sorted({murmurhash3_32(s, seed) & ((1 << bits) - 1) for s in strings})


def row_ids(X, row=0):
    return sorted(X.indices[X.indptr[row]:X.indptr[row + 1]].tolist())


# ------------------------------------------------------------------ hashing
@pytest.mark.parametrize("data,seed,value", [
    # MurmurHash3 x86_32 reference values (identical to sklearn.utils.murmurhash3_32)
    (b"", 0, 0),
    (b"", 1, 0x514E28B7),
    (b"hello", 0, 613153351),
    (b"The quick brown fox jumps over the lazy dog", 0, 0x2E4FF723),
    (b"abc", 42, 1313807976),
    ("привет".encode(), 7, 320952002),
    (b"a", 0, 1009084850),
    (b"abcd", 0, 1139631978),
    (b"ab", 0, 2613040991),
    (b"abcdef", 3, 563141317),
])
def test_murmurhash3_vectors(data, seed, value):
    assert murmurhash3_32(data, seed) == value


def test_a_string_hashes_as_its_utf8_bytes_lone_surrogates_included():
    assert murmurhash3_32("\u00e7\udcff", 5) == murmurhash3_32(b"\xc3\xa7\xed\xb3\xbf", 5)


def test_hash_of_a_span_in_a_buffer_equals_the_hash_of_its_bytes():
    """Spans inside a buffer (the compiled front end's, and the numba helper plugin
    authors use) hash as their bytes alone."""
    from snowpy._core.hashing import hash_spans
    from snowpy.numba_kernels import murmur_bytes

    raw = "ab\x00cdéfghijk😀lm".encode()
    buffer = np.frombuffer(raw, dtype=np.uint8)
    for start in range(len(raw)):
        for stop in range(start, len(raw) + 1):
            expected = murmurhash3_32(raw[start:stop], 11)
            out = np.empty(1, np.int64)
            hash_spans(buffer, np.array([start, stop], np.int64), 11, 0xFFFFFFFF, out)
            assert out[0] == expected == murmur_bytes(buffer, start, stop, 11)


def test_feature_ids_are_pinned():
    """A change of hash, seed scheme or tokeniser would silently break saved models."""
    X = Featurizer(bits=20).transform(["Winnow learns"])
    assert row_ids(X) == expected_ids(["winnow", "learns"])
    assert feature_seed("words") == murmurhash3_32("\x1fwords")
    assert row_ids(X) == [432688, 968392]


def test_ids_do_not_depend_on_pythonhashseed():
    code = ("from snowpy.text import Featurizer; "
            "print(Featurizer().transform(['stable ids across runs']).indices.tolist())")
    outputs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                env=env, timeout=300)
        assert result.returncode == 0, result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_feature_dicts_hash_their_names_in_a_namespace_of_their_own():
    """River's feature dicts: each name hashed as UTF-8 (a number as its str) with the seed
    of the "dict" extractor, ids sorted, the strengths as given, colliding names summed."""
    featurizer = Featurizer(bits=20, hash_seed=5)
    seed = feature_seed("dict", "", 5)
    assert seed == murmurhash3_32("\x1fdict", 5)
    ids, values = featurizer.features_one({"price": 2.5, "größe": -1.0, 7: 4.0})
    by_id = {murmurhash3_32("price", seed) & 0xFFFFF: 2.5,
             murmurhash3_32("größe", seed) & 0xFFFFF: -1.0,
             murmurhash3_32("7", seed) & 0xFFFFF: 4.0}
    assert ids.dtype == np.int64 and ids.tolist() == sorted(by_id)
    assert values.tolist() == [by_id[i] for i in sorted(by_id)]
    assert Featurizer(bits=20).features_one({"a": 1.0})[0].tolist() == [
        murmurhash3_32("a", feature_seed("dict")) & 0xFFFFF]
    # with 2 bits, six names share at most four ids: each id's strength is its names' sum
    names = {f"n{k}": float(2 ** k) for k in range(6)}
    ids, values = Featurizer(bits=2).features_one(names)
    summed: dict[int, float] = {}
    for name, value in names.items():
        key = murmurhash3_32(name, feature_seed("dict")) & 3
        summed[key] = summed.get(key, 0.0) + value
    assert ids.tolist() == sorted(summed) and len(summed) < 6
    assert values.tolist() == [summed[i] for i in sorted(summed)]
    assert Featurizer().features_one({})[0].tolist() == []
    with pytest.raises(ConfigurationError, match="^a feature dict maps names to numbers$"):
        Featurizer().features_one({"a": "many"})


def test_hash_names_masks_each_utf8_name():
    names = ["", "a", "größe", "😀", "a" * 40, "lone\udcff"]
    out = hash_names(names, 9, 0xFFF)
    assert out.dtype == np.int64 and out.shape == (6,)
    assert out.tolist() == [murmurhash3_32(n.encode("utf-8", "surrogatepass"), 9) & 0xFFF
                            for n in names]
    assert hash_names(["x"], 2 ** 32 + 9, 0xFFFFFFFF).tolist() == [murmurhash3_32("x", 9)]
    assert hash_names([], 0, 1).tolist() == []


# ---------------------------------------------------------------- example keys
M64 = (1 << 64) - 1


def mix64(z):
    """splitmix64's finaliser, in Python."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def test_document_keys_follow_their_formula():
    """splitmix64(text + labels): the text's MurmurHash3 x64_128 (first 64 bits) and the
    wrapping sum of splitmix64 of each label's hash, a label's bytes "s" + UTF-8 for a str
    and "r" + repr otherwise; records and token lists hash as their sorted JSON."""
    from snowpy._core.hashing import murmurhash3_64
    from snowpy.text import keys

    assert murmurhash3_64(b"hello", 0) == 0xCBD8A7B341BD9B02  # (the reference's first half)

    def label_part(label):
        data = b"s" + label.encode("utf-8", "surrogatepass") if isinstance(label, str) \
            else b"r" + repr(label).encode()
        return mix64(murmurhash3_64(data, keys.LABEL_SEED))

    texts = ["a b", "a b", "a b", "\u00e7\udcff", "x\x00y", "x"]
    labels = ["x", ("x", 3), [3, "x"], "\udcff", "y", 3]  # (a list: unhashable, summed alike)
    expected = []
    for text, label in zip(texts, labels):
        group = label if isinstance(label, (list, tuple)) else (label,)
        part = sum(label_part(one) for one in group) & M64
        text_part = murmurhash3_64(text.encode("utf-8", "surrogatepass"), keys.TEXT_SEED)
        expected.append(mix64((text_part + part) & M64))
    got = keys.document_keys(texts, labels)
    assert got.dtype == np.uint64 and got.tolist() == expected
    assert got[1] == got[2] != got[0]  # the order of labels does not matter
    records = [{"b": 1, "a": "t"}, ["x", "y"], "a b"]
    assert keys.text_hashes(records).tolist() == [
        murmurhash3_64(b'{"a":"t","b":1}', keys.TEXT_SEED),
        murmurhash3_64(b'["x","y"]', keys.TEXT_SEED), murmurhash3_64(b"a b", keys.TEXT_SEED)]
    assert keys.text_hashes([]).tolist() == []
    mixed = ["\udcff", ["x"], {"x": Decimal("1.5")}]  # (a value JSON lacks: its str)
    assert keys.text_hashes(mixed).tolist() == [
        murmurhash3_64(b"\xed\xb3\xbf", keys.TEXT_SEED),
        murmurhash3_64(b'["x"]', keys.TEXT_SEED), murmurhash3_64(b'{"x":"1.5"}', keys.TEXT_SEED)]


# --------------------------------------------------------- the character table
@pytest.fixture(scope="module")
def built_tables():
    if unicodedata.unidata_version != unicode.UNICODE_VERSION:
        pytest.skip(f"the shipped tables are Unicode {unicode.UNICODE_VERSION}, this Python's "
                    f"unicodedata {unicodedata.unidata_version}")
    return unicode.build_tables()


def test_the_shipped_tables_are_what_unicodedata_gives(built_tables, tmp_path, monkeypatch,
                                                       capsys):
    classes, lower, version = built_tables
    assert version == unicode.UNICODE_VERSION
    shipped = unicode.tables()
    assert shipped.class_index.shape == shipped.lower_index.shape == (4352,)
    assert np.array_equal(shipped.classes(), classes) and shipped.classes().dtype == np.uint8
    assert np.array_equal(shipped.lower(), lower) and shipped.lower().dtype == np.int32
    # regenerated, the file holds the shipped arrays, each of its type
    shipped_path = unicode._PATH
    made_path = tmp_path / "table.npz"
    monkeypatch.setattr(unicode, "_PATH", made_path)
    monkeypatch.setattr(unicode, "build_tables", lambda: built_tables)
    unicode.main()
    assert capsys.readouterr().err == f"wrote {made_path} (Unicode {version})\n"
    with np.load(made_path) as made, np.load(shipped_path) as original:
        assert sorted(made.files) == sorted(original.files) == [
            "class_index", "class_pages", "lower_index", "lower_pages", "version"]
        for name in made.files:
            assert made[name].dtype == original[name].dtype, name
            assert np.array_equal(made[name], original[name]), name
    monkeypatch.undo()
    assert unicode._shipped_version() == version
    unicode.save_tables(classes, lower, "0.1", tmp_path / "elsewhere.npz")
    with np.load(tmp_path / "elsewhere.npz") as elsewhere:
        assert str(elsewhere["version"]) == "0.1"
        assert np.array_equal(elsewhere["class_pages"], shipped.class_pages)


@pytest.mark.parametrize("char,kind", [
    ("a", unicode.WORD), ("Z", unicode.WORD), ("7", unicode.WORD), ("_", unicode.WORD),
    ("\u0663", unicode.WORD), ("\u216b", unicode.WORD), ("\u00bd", unicode.WORD),  # Nd Nl No
    ("\u0301", unicode.MARK), ("\u0903", unicode.MARK), ("\u20dd", unicode.MARK),  # Mn Mc Me
    ("😀", unicode.SINGLE), ("\u00a9", unicode.SINGLE), ("東", unicode.SINGLE),
    ("\u3400", unicode.SINGLE), ("\u4dbf", unicode.SINGLE), ("\U0002a6df", unicode.SINGLE),
    ("\U0003134f", unicode.SINGLE),  # the last of the Han ranges, though unassigned
    ("\u3041", unicode.WORD), ("\U0002a6e0", unicode.SEPARATOR), ("\U00031350", unicode.SEPARATOR),
    (" ", unicode.SEPARATOR), (".", unicode.SEPARATOR), ("-", unicode.SEPARATOR),
    ("+", unicode.SEPARATOR), ("$", unicode.SEPARATOR), ("^", unicode.SEPARATOR),
    ("\x00", unicode.SEPARATOR), ("\ud800", unicode.SEPARATOR), ("\udfff", unicode.SEPARATOR),
])
def test_each_class_of_the_character_table(char, kind):
    assert unicode.tables().classes()[ord(char)] == kind


@pytest.mark.parametrize("char,lowered", [
    ("A", "a"), ("a", "a"), ("Σ", "σ"), ("\u01c4", "\u01c6"), ("\U00010400", "\U00010428"),
    ("\u0130", "\u0130"),  # its lower case has two code points: kept
    ("1", "1"), ("\ud800", "\ud800"),
])
def test_the_simple_lower_case_mapping(char, lowered):
    assert unicode.tables().lower()[ord(char)] == ord(lowered)


def test_paged_tables_are_the_distinct_pages_of_256():
    values = np.zeros(0x110000, dtype=np.int32)
    values[256:512] = 3
    values[0x10FF00 + 7] = -2
    index, pages = unicode.paged(values)
    assert index.dtype == np.int32 and index.shape == (4352,)
    assert pages.flags.c_contiguous and pages.shape == (3 * 256,)
    assert np.array_equal(pages.reshape(-1, 256)[index].reshape(-1), values)
    assert index[:3].tolist() == [1, 2, 1] and index[-1] == 0  # pages sorted, then numbered


# ------------------------------------------------------------- tokenisation
@pytest.mark.parametrize("text,expected", [
    ("Crème brûlée, À LA CARTE!", ["crème", "brûlée", "à", "la", "carte"]),
    ("Съешь же ещё этих мягких булок", ["съешь", "же", "ещё", "этих", "мягких", "булок"]),
    ("東京タワーへ行く", ["東", "京", "タワーへ", "行", "く"]),
    ("great 😀👍 day", ["great", "😀", "👍", "day"]),
    ("I ❤️ NY", ["i", "❤", "ny"]),
    ("שלום עולם", ["שלום", "עולם"]),
    ("مرحبا بالعالم!", ["مرحبا", "بالعالم"]),
    ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),
    ("snake_case 3.14 x2", ["snake_case", "3", "14", "x2"]),
    ("ΣΊΣΥΦΟΣ", ["σίσυφοσ"]),
    ("", []),
    ("  \t\n  ", []),
    ("...!?", []),
])
def test_tokenisation_across_scripts(text, expected):
    assert tokens(text) == [expected]


def test_token_streams_keep_each_document_apart():
    """Each document's tokens, single spaces between them, its tokens' spans; offsets need
    not start at 0. split_spaces (custom patterns, token lists) splits on spaces only."""
    assert tokens("Ab c", "", "d", lowercase=False) == [["Ab", "c"], [], ["d"]]
    raw = np.frombuffer(b"xxxHello wOrld", np.uint8)
    for split, words in ((tokenize_bytes, ["hello", "world"]), (split_spaces, ["Hello", "wOrld"])):
        stream = split(raw, np.array([3, 9, 14]))
        assert stream.text.tobytes() == "".join(words).encode()
        assert stream.starts.tolist() == [0, 5] and stream.ends.tolist() == [5, 10]
        assert stream.doc_ptr.tolist() == [0, 1, 2] and stream.n_docs == 2
        assert stream.invalid.dtype == np.int64 and stream.invalid.tolist() == [0, 0]
        assert [stream.tokens(0), stream.tokens(1)] == [words[:1], words[1:]]
    data, offsets = split_documents(*encode_documents(["don't  stop", "", " x ", "a"]), 4)
    stream = split_spaces(data, offsets)
    assert stream.text.tobytes() == b"don't stopxa"
    assert (stream.starts.tolist(), stream.ends.tolist()) == ([0, 6, 10, 11], [5, 10, 11, 12])
    assert stream.doc_ptr.tolist() == [0, 2, 2, 3, 4]
    assert [stream.tokens(d) for d in range(4)] == [["don't", "stop"], [], ["x"], ["a"]]
    for split in (tokenize_bytes, split_spaces):
        empty = split(np.zeros(0, np.uint8), np.zeros(1, np.int64))
        assert empty.n_docs == 0 and empty.text.size == 0 and empty.invalid.shape == (0,)


def test_documents_are_encoded_one_by_one_when_bytes_or_nul_are_among_them():
    raw, offsets = encode_documents([b"x", "y\x00\u00e7", ""])
    assert raw.tobytes() == b"xy\x00\xc3\xa7"
    assert offsets.dtype == np.int64 and offsets.tolist() == [0, 1, 5, 5]
    assert split_documents(raw, offsets, 3)[1] is offsets
    raw, offsets = encode_documents(["ab", "c"])  # joined by NUL: the split finds them
    assert raw.tobytes() == b"ab\x00c" and offsets is None
    data, offsets = split_documents(raw, None, 2)
    assert data is raw and offsets.tolist() == [0, 3, 4]
    nul = ["a\x00b", "c"]
    raw, offsets = encode_documents(nul)  # a NUL inside: one by one, from the items
    with pytest.raises(ValueError, match="^documents hold NUL characters; pass them as items$"):
        split_documents(raw, offsets, 2)
    data, offsets = split_documents(raw, offsets, 2, items=nul)
    assert data.tobytes() == b"a\x00bc" and offsets.tolist() == [0, 3, 4]


def test_lowercase_can_be_turned_off_and_accents_stripped():
    assert tokens("MiXeD Case", lowercase=False) == [["MiXeD", "Case"]]
    X = Featurizer(strip_accents=True).transform(["Crème brûlée Ångström"])
    assert row_ids(X) == expected_ids(["creme", "brulee", "angstrom"])
    nfkc = Featurizer(unicode_form="NFKC").transform(["ﬁne ｆｕｌｌ"])  # ligature, full width
    assert row_ids(nfkc) == expected_ids(["fine", "full"])


@pytest.mark.parametrize("options", [{}, {"strip_accents": True}, {"unicode_form": "NFKC"},
                                     {"token_pattern": r"\w+"}])
def test_invalid_utf8_is_counted_alike_whatever_finds_the_tokens(options):
    """A bad byte of a bytes document is one invalid byte, a lone surrogate in a string the
    three bytes the tokeniser meets, whether or not the text is normalised first or its
    tokens found by a pattern (normalising counted a bad byte as three, a pattern none)."""
    featurizer = Featurizer(**options)
    X = featurizer.transform([b"Cr\xc3\xa8me \xff ok", "lone\udcffsur"])
    assert featurizer.invalid_bytes_ == 1 + 3
    first = ["crème", "ok"] if not options.get("strip_accents") else ["creme", "ok"]
    assert row_ids(X, 0) == expected_ids(first) and row_ids(X, 1) == expected_ids(
        ["lone", "sur"])
    with pytest.raises(ConfigurationError, match="^document 1 holds 2 invalid UTF-8 byte"):
        Featurizer(errors="strict", **options).transform(["fine", b"\xfe\xff"])
    tokens = Featurizer(**options)
    tokens.transform([["ok", "x\udcff"], ["fine"]])
    assert tokens.invalid_bytes_ == 3


def test_invalid_utf8_is_replaced_and_counted():
    featurizer = Featurizer()
    X = featurizer.transform([b"ok\xff\xfebad", "lone\udcffsurrogate", b"fine"])
    assert row_ids(X, 0) == expected_ids(["ok", "bad"])
    assert row_ids(X, 1) == expected_ids(["lone", "surrogate"])
    assert featurizer.invalid_bytes_ == 2 + 3


@pytest.mark.parametrize("n_jobs", [1, 2])  # (one job: the tasks run inline, as a pool's)
def test_invalid_utf8_strict_names_the_document(n_jobs):
    featurizer = Featurizer(errors="strict", n_jobs=n_jobs)
    with pytest.raises(ConfigurationError, match=r"^document 2 holds 1 invalid UTF-8 byte\(s\); "
                       r"use errors='replace' to treat them as separators$"):
        featurizer.transform(["a", "b", b"c\xff"])
    with pytest.raises(ConfigurationError, match=r"^document 1 \(field 'b'\) holds 2 invalid"):
        Featurizer(errors="strict", fields=("a", "b"), n_jobs=n_jobs).transform(
            [{"a": "x", "b": "y"}, {"a": "x", "b": b"\xff\xfe"}])


def test_documents_holding_nul_and_of_every_length_near_eight_bytes():
    """Documents are found in the NUL-joined buffer eight bytes at a time."""
    docs = ["w" * n + " z" for n in range(20)] + ["a\x00b", "", "\x00", "c\x00\x00d e"]
    featurizer = Featurizer(n_jobs=1)
    together = featurizer.transform(docs)
    alone = sp.vstack([featurizer.transform([doc]) for doc in docs]).tocsr()
    assert (together != alone).nnz == 0
    assert row_ids(together, 20) == expected_ids(["a", "b"])
    assert row_ids(together, 23) == expected_ids(["c", "d", "e"])
    assert row_ids(together, 7) == expected_ids(["wwwwwww", "z"])


def test_empty_and_whitespace_documents_give_empty_rows():
    X = Featurizer(ngrams=(1, 3), char_ngrams=(2, 4)).transform(["", "   ", "x"])
    assert X.shape[0] == 3 and np.diff(X.indptr).tolist()[:2] == [0, 0]
    assert X.indptr[-1] > 0


def test_a_fifty_megabyte_document():
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon"])
    rng = np.random.default_rng(0)
    text = " ".join(words[rng.integers(0, 5, 8_400_000)])
    assert len(text) > 50_000_000
    X = Featurizer(ngrams=(1, 2), chunk_bytes=1 << 20).transform([text])
    assert X.shape[0] == 1 and X.nnz == 5 + 25


# --------------------------------------------------------------- extractors
def test_word_ngrams_by_hand():
    X = Featurizer(ngrams=(1, 3)).transform(["To be, or not"])
    strings = ["to", "be", "or", "not", "to be", "be or", "or not", "to be or", "be or not"]
    assert row_ids(X) == expected_ids(strings)


def test_char_ngrams_within_words_match_char_wb():
    X = Featurizer(ngrams=None, char_ngrams=(2, 3)).transform(["ab cde"])
    # scikit-learn's char_wb on "ab cde" with ngram_range=(2, 3)
    strings = [" a", "ab", "b ", " ab", "ab ", " c", "cd", "de", "e ", " cd", "cde", "de "]
    assert row_ids(X) == expected_ids(strings, "chars")
    short = Featurizer(ngrams=None, char_ngrams=(4, 5)).transform(["ab"])
    assert row_ids(short) == expected_ids([" ab "], "chars")  # shorter than n: once, whole


def test_char_ngrams_across_words_and_by_code_point():
    X = Featurizer(ngrams=None, char_ngrams=3, char_boundaries="across").transform(["ab, çd"])
    assert row_ids(X) == expected_ids(["ab ", "b ç", " çd"], "chars")


def test_skipgrams_and_affixes_by_hand():
    X = Featurizer(ngrams=None, skipgrams=2).transform(["a b c d"])
    assert row_ids(X) == expected_ids(["a c", "a d", "b d"], "skipgrams")
    Y = Featurizer(ngrams=None, affixes=(2, 3)).transform(["going to"])
    assert row_ids(Y) == expected_ids(["go ", " ng", "goi ", " ing"], "affixes")


def test_namespaces_and_extractors_hash_apart():
    records = [{"subject": "win cash", "body": "win a prize"}]
    X = Featurizer(fields=("subject", "body")).transform(records)
    assert row_ids(X) == sorted(expected_ids(["win", "cash"], namespace="subject")
                                + expected_ids(["win", "a", "prize"], namespace="body"))
    tuples = Featurizer(fields=("subject", "body")).transform([("win cash", "win a prize")])
    assert (tuples != X).nnz == 0
    with pytest.raises(ConfigurationError, match="document 0 has no field 'body'"):
        Featurizer(fields=("subject", "body")).transform([{"subject": "x"}])


def test_plugin_extractor_by_name_and_unknown_name():
    X = Featurizer(ngrams=None, extractors=[("words", {"min_n": 2, "max_n": 2})])
    assert row_ids(X.transform(["a b c"])) == expected_ids(["a b", "b c"])
    with pytest.raises(UnknownNameError, match="unknown feature extractor 'stems'; choose one of:"
                                               " affixes, chars, conjunctions, skipgrams, words"):
        Featurizer(extractors=[("stems", {})]).transform(["x"])
    with pytest.raises(ConfigurationError, match="words: min_n .3. must not exceed max_n .2."):
        Featurizer(ngrams=(3, 2)).transform(["x"])


def _fivefold(text, starts, ends, doc_ptr, params, seed, mask, out_ids, out_ptr, names,
              arena, spans):
    """A plugin's kernel in Python: each token, five times over, as a feature, three times
    (ids may repeat within a document); -1 and -2 when its buffers are too small."""
    raw = bytes(text)
    count = used = 0
    out_ptr[0] = 0
    for doc in range(doc_ptr.size - 1):
        for k in range(doc_ptr[doc], doc_ptr[doc + 1]):
            feature = raw[starts[k]:ends[k]] * 5
            for _ in range(3):
                if count >= out_ids.size or (names and count >= spans.shape[0]):
                    return -1
                if names:
                    if used + len(feature) > arena.size:
                        return -2
                    arena[used:used + len(feature)] = np.frombuffer(feature, np.uint8)
                    spans[count] = (used, used + len(feature))
                    used += len(feature)
                out_ids[count] = murmurhash3_32(feature, seed) & mask
                count += 1
        out_ptr[doc + 1] = count
    return count


def test_an_extractor_asks_for_larger_buffers_as_the_contract_says():
    """-1: out_ids (or spans) too small, -2: the arena; the front end enlarges that one
    and calls again. Any other negative number is an error naming the extractor."""
    import types

    import snowpy
    from snowpy.plugins import temporary_plugin
    from snowpy.text.extractors import ExtractorKernel, ExtractorSpec

    calls = []

    def kernel(*args):
        calls.append((args[7].size, args[10].size))  # (out_ids, arena)
        return _fivefold(*args)

    def failing(*args):
        return -7

    specs = [ExtractorSpec("fivefold", lambda params: ExtractorKernel(
                 kernel, (), "fivefold", per_token=0.0), (), "each token five times"),
             ExtractorSpec("failing", lambda params: ExtractorKernel(failing, (), "failing"),
                           (), "fails")]
    plugin = types.SimpleNamespace(snowpy_feature_extractors=snowpy.hookimpl(lambda: specs))
    words = [f"w{k}" for k in range(30)]
    with temporary_plugin(plugin, "fivefold-plugin"):
        featurizer = Featurizer(ngrams=None, extractors=[("fivefold", {})], keep_names=True,
                                n_jobs=1)
        X = featurizer.transform([" ".join(words[:20]), " ".join(words[20:])])
        assert row_ids(X, 0) == expected_ids([w * 5 for w in words[:20]], kind="fivefold")
        assert row_ids(X, 1) == expected_ids([w * 5 for w in words[20:]], kind="fivefold")
        assert X.data.tolist() == [1.0] * 30  # (repeats within a document: one feature)
        names = {n for found in featurizer.names_of(X.indices).values() for n in found}
        assert names == {w * 5 for w in words}
        text = len(" ".join(words[:20]) + " ".join(words[20:]))  # (the chunk's token text)
        assert calls[0] == (16, 4 * text + 64) and calls[-1][0] >= 90
        assert [size for size, _ in calls] == sorted(size for size, _ in calls)
        assert calls[-1][1] >= 3 * 5 * (text - 28)  # (every feature's bytes held)
        assert {a for _, a in calls} > {calls[0][1]}  # the arena grew too
        with pytest.raises(ConfigurationError, match="^extractor 'failing' returned -7$"):
            Featurizer(ngrams=None, extractors=[("failing", {})]).transform(["a b"])


def test_custom_token_pattern():
    X = Featurizer(token_pattern=r"[\w']+").transform(["Don't STOP"])
    assert row_ids(X) == expected_ids(["don't", "stop"])


# ------------------------------------------------------------------- values
def test_values_and_l2_normalisation():
    text = ["spam spam spam eggs"]
    ids = expected_ids(["spam", "eggs"])
    spam = ids.index(expected_ids(["spam"])[0])
    binary = Featurizer(values="binary").transform(text)
    counts = Featurizer(values="count").transform(text)
    logs = Featurizer(values="log", norm="l2").transform(text)
    assert binary.data.tolist() == [1.0, 1.0]
    assert counts.data[spam] == 3 and counts.data[1 - spam] == 1
    raw = np.array([1.0, 1.0])
    raw[spam] = 1 + np.log(3)
    np.testing.assert_allclose(logs.data, raw / np.linalg.norm(raw))
    assert logs.has_canonical_format


# ---------------------------------------------------------------- streaming
def corpus(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    words = np.array(["alpha", "béta", "γάμμα", "delta", "東", "e😀", "ze", "x"])
    return [" ".join(words[rng.integers(0, 8, rng.integers(0, 40))]) for _ in range(n)]


def test_chunked_threaded_and_whole_featurisation_agree():
    docs = corpus()
    options = dict(ngrams=(1, 2), char_ngrams=(2, 4), skipgrams=1, affixes=(1, 2))
    whole = Featurizer(chunk_bytes=1 << 30, n_jobs=1, **options).transform(docs)
    small = Featurizer(chunk_bytes=512, n_jobs=2, **options).transform(docs)
    assert (whole != small).nnz == 0 and whole.shape == small.shape
    blocks = list(Featurizer(**options).iter_blocks(iter(docs), chunk_docs=77))
    assert len(blocks) == -(-len(docs) // 77)
    assert (sp.vstack(blocks).tocsr() != whole).nnz == 0


def test_chunks_stay_bounded_when_long_documents_follow_short_ones():
    docs = ["a b"] * 5000 + [" ".join(["word"] * 20_000)] * 20 + ["c"] * 10
    featurizer = Featurizer(chunk_bytes=64 << 10, n_jobs=1)
    blocks = list(featurizer.iter_blocks(docs))
    sizes, start = [], 0
    for block in blocks:
        stop = start + block.shape[0]
        sizes.append((block.shape[0], sum(len(doc) for doc in docs[start:stop])))
        start = stop
    assert start == len(docs)
    assert all(n == 1 or size <= 4 * (64 << 10) for n, size in sizes)
    assert len(blocks) < 40  # neither one document per chunk nor one chunk
    assert (sp.vstack(blocks).tocsr() != featurizer.transform(docs)).nnz == 0


def test_sequence_chunks_guess_from_the_last_chunk_and_give_back_the_second_half():
    """About chunk_bytes a chunk: the first guess from the first 256 documents' sizes, each
    next from the last chunk's encoded size (at most twice as many documents), and a chunk
    over four times chunk_bytes gives its second half back."""
    chunks = SequenceChunks(["abcd"] * 1000, 40)
    assert chunks.step == 10  # 256 documents of 4 bytes: 40 bytes in 10
    assert chunks.next() == ["abcd"] * 10 and chunks.position == 10
    assert chunks.encoded(10, 44) == 10 and chunks.step == 9  # int(10 * 40 / 44)
    assert chunks.encoded(4, 1) == 4 and chunks.step == 8  # at most twice the documents
    assert len(chunks.next()) == 8 and chunks.position == 18
    assert chunks.encoded(8, 161) == 4  # over 4 * 40 bytes: the second half goes back
    assert chunks.position == 14 and chunks.step == 4
    assert chunks.encoded(8, 160) == 8  # (at four times, kept)
    assert chunks.encoded(1, 1000) == 1 and chunks.step == 1  # one document is never cut
    chunks.position = 998
    assert chunks.next() == ["abcd"] * 1 and chunks.next() == ["abcd"] and chunks.next() == []
    assert SequenceChunks([], 40).step == 1 and SequenceChunks(["a"], 40).step == 40
    small = SequenceChunks(["ab"] * 10, 1)
    assert small.step == 1 and small.encoded(2, 1) == 2 and small.step == 2
    assert small.next() == ["ab", "ab"] and small.encoded(2, 5) == 1  # two: one goes back
    assert small.position == 1 and small.step == 1
    assert SequenceChunks(["x" * 100] * 3, 40).step == 1
    assert [approximate_size(doc) for doc in ("abc", b"ab", {"a": "xy", "n": 3, "b": b"z"},
                                              ("ab", 5, "c"), ["abcd"], 12.5)] == [
        3, 2, 3, 3, 4, 64]


def test_workspace_buffers_are_reused_grown_and_named_per_field():
    workspace = Workspace()
    first = workspace.get("x", 10, np.int32)
    assert first.shape == (10,) and first.dtype == np.int32
    assert np.shares_memory(workspace.get("x", 15, np.int32), first)  # room for 10 + 5
    bigger = workspace.get("x", 16, np.int32)
    assert bigger.shape == (16,) and not np.shares_memory(bigger, first)
    assert np.shares_memory(workspace.get("x", 24, np.int32), bigger)  # 16 + 8
    assert workspace.get("x", 3, np.float64).dtype == np.float64  # another type: anew
    table = workspace.get("t", (3, 2), np.int64)
    assert table.shape == (3, 2) and np.shares_memory(workspace.get("t", (4, 2), np.int64),
                                                      table)  # 6 + 3 items
    assert workspace.get("z", 0, np.uint8).shape == (0,)
    field = workspace.view("field0:")
    assert not np.shares_memory(field.get("x", 4, np.float64), workspace.get("x", 4,
                                                                            np.float64))
    again = workspace.view("field0:").get("x", 4, np.float64)
    assert np.shares_memory(again, field.get("x", 4, np.float64))
    assert np.shares_memory(workspace.view("a").view("b").get("y", 2, np.int8),
                            workspace.view("ab").get("y", 2, np.int8))


def test_grown_and_trimmed_keep_the_items_in_use():
    for array, used in ((np.arange(5), 5), (np.arange(5)[1:], 3)):
        before = array[:used].tolist()
        out = grown(array, 8, np.int64, used)
        assert out.shape == (8,) and out.dtype == np.int64 and out[:used].tolist() == before
    empty = grown(None, 4, np.int32, 0)
    assert empty.shape == (4,) and empty.dtype == np.int32
    held = np.arange(6, dtype=np.int64)
    view = held[2:]  # (held elsewhere: copied, not resized)
    assert grown(held, 9, np.int64, 6)[:6].tolist() == list(range(6)) and view.tolist() == [
        2, 3, 4, 5]
    assert trimmed(np.arange(6), 4).tolist() == [0, 1, 2, 3]
    shared = np.arange(6)
    alias = shared[:]
    assert trimmed(shared, 2).tolist() == [0, 1] and alias.size == 6
    assert trimmed(np.arange(3), 5).tolist() == [0, 1, 2]


def test_inverse_map_names_features_and_counts_collisions():
    featurizer = Featurizer(ngrams=(1, 2), bits=4, keep_names=True)
    X = featurizer.transform(["red apple", "green apple", "red car"])
    names = featurizer.names_
    everything = sorted(n for strings in names.values() for n in strings)
    assert everything == sorted(["red", "apple", "green", "car", "red apple", "green apple",
                                 "red car"])
    for feature_id, strings in names.items():
        assert all(murmurhash3_32(s, feature_seed("words")) & 15 == feature_id for s in strings)
    assert featurizer.collisions() == {i: len(s) - 1 for i, s in names.items() if len(s) > 1}
    assert set(X.indices.tolist()) == set(names)
    with pytest.raises(ConfigurationError, match="keep_names=True"):
        Featurizer().names_


def test_names_of_every_extractor_and_namespace():
    featurizer = Featurizer(ngrams=1, char_ngrams=3, skipgrams=1, affixes=2, keep_names=True,
                            fields=("t",))
    featurizer.transform([{"t": "abc de fg"}])
    shown = {n for strings in featurizer.names_.values() for n in strings}
    assert {"t/abc", "t/chars:' ab'", "t/abc _ fg", "t/ab-", "t/-bc"} <= shown


def test_bad_configuration_is_named():
    for options, fragment in [({"bits": 40}, "bits must be an integer from 1 to 31"),
                              ({"values": "tfidf"}, "values must be one of binary, count, log"),
                              ({"norm": "l1"}, "norm must be None or 'l2'"),
                              ({"ngrams": "two"}, "ngrams must be None, an integer or (min, max)"),
                              ({"token_pattern": "("}, "token_pattern is not a valid regular"),
                              ({"ngrams": None}, "no feature extractor configured")]:
        with pytest.raises(ConfigurationError, match=None) as error:
            Featurizer(**options).transform(["x"])
        assert fragment in str(error.value)
    with pytest.raises(ConfigurationError, match="document 1 is not text .got int."):
        Featurizer().transform(["ok", 5])


def test_every_extractor_values_and_names_are_pinned():
    """Word 1-3 grams, character 2-5 grams across tokens, skip-grams, affixes, log values,
    l2 rows and the names, on 400 documents and invalid bytes: one digest, pinned. It was
    recorded from the numba front end that the compiled one replaced, and both give it:
    a change anywhere in tokenising, hashing or extracting breaks saved models."""
    import hashlib

    f = Featurizer(ngrams=(1, 3), char_ngrams=(2, 5), char_boundaries="across", skipgrams=2,
                   affixes=(1, 3), values="log", norm="l2", keep_names=True)
    X = f.transform(corpus(400) + [b"bad\xff\xc3", "x\udcff"])
    out = json.dumps([X.indptr.tolist(), X.indices.tolist(), X.data.tolist(),
                      sorted((k, v) for k, v in f.names_.items()), f.invalid_bytes_])
    assert hashlib.sha256(out.encode()).hexdigest() == \
        "cb6fdf1b7939e1c1732ea52a3265e0618f02e58b14cb286f8c11c1ed365c6d0f"


def test_conjunctions_pair_distinct_tokens_in_either_order():
    # SNoW's -g +: "not good" and "good not" share their conjunction; a token with
    # itself is no conjunction; a window bounds how far apart the pair may be
    from snowpy import Featurizer

    featurizer = Featurizer(ngrams=None, keep_names=True,
                                   extractors=[("conjunctions", {"window": 0})])
    X = featurizer.transform(["not good at all", "good not", "good good"])
    names = featurizer.names_of(X.indices)
    first = sorted(n for i in X[0].indices for n in names[i])
    assert first == ["all & at", "all & good", "all & not", "at & good", "at & not",
                     "good & not"]  # 4 tokens: 6 pairs
    assert X[1].indices.tolist() == [i for i in X[0].indices if "good & not" in names[i]]
    assert X[2].nnz == 0
    near = Featurizer(ngrams=None, extractors=[("conjunctions", {"window": 1})])
    assert near.transform(["not good at all"]).nnz == 3  # adjacent pairs only


# ---------------------------------------------------------------- document frequencies
IDF_DOCS = ["the cat sat on the mat", "the dog sat", "a cat and a dog and a cat",
            "dogs bark at cats", "the mat is red"]


def test_idf_rows_equal_scikit_learns_sublinear_tfidf():
    """values="log", idf=True, norm="l2" is TfidfVectorizer(sublinear_tf=True): the same
    numbers in every row (the columns differ: hashed ids against a vocabulary)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    ours = Featurizer(values="log", idf=True, norm="l2").fit_transform(IDF_DOCS)
    theirs = TfidfVectorizer(sublinear_tf=True, token_pattern=r"(?u)\b\w+\b").fit_transform(
        IDF_DOCS)
    for row in range(len(IDF_DOCS)):
        mine = np.sort(ours.data[ours.indptr[row]:ours.indptr[row + 1]])
        sklearns = np.sort(theirs.data[theirs.indptr[row]:theirs.indptr[row + 1]])
        np.testing.assert_allclose(mine, sklearns, rtol=1e-12)
    again = Featurizer(values="log", idf=True, norm="l2").fit(IDF_DOCS).transform(IDF_DOCS)
    assert (again != ours).nnz == 0


def test_idf_leaves_out_the_features_never_counted_and_needs_a_fit():
    featurizer = Featurizer(idf=True).fit(["red apple", "green apple"])
    row = featurizer.transform(["red pear apple"])
    # three documents' worth: n = 2; df(red) = 1, df(apple) = 2; pear never counted
    assert row.nnz == 2
    assert sorted(row.data.round(6).tolist()) == [1.0, round(np.log(3 / 2) + 1, 6)]
    with pytest.raises(NotFittedError, match="call fit first"):
        Featurizer(idf=True).transform(["red apple"])
    with pytest.raises(ConfigurationError, match="idf must be true or false"):
        Featurizer(idf="yes").transform(["red apple"])


@pytest.mark.parametrize("bits", [18, 24])  # (the counts' map: direct, then hashed)
def test_a_large_block_and_one_document_are_weighed_to_the_bit_alike(bits):
    """A block larger than the features counted looks each idf up in a table; one document
    computes its own: the same numbers, bit for bit (predict and predict_one agree)."""
    featurizer = Featurizer(values="log", idf=True, norm="l2", ngrams=(1, 2),
                            bits=bits).fit(IDF_DOCS)
    block = featurizer.transform(IDF_DOCS * 20)  # (more entries than features counted)
    assert block.nnz > len(featurizer.frequencies_)
    unseen = ["a zebra sat", "zebras graze"]  # (features never counted: left out)
    block = sp.vstack([block, featurizer.transform(unseen)]).tocsr()
    assert block.indptr[-1] - block.indptr[-2] == 0
    for row, doc in enumerate(IDF_DOCS + unseen):
        row += 0 if row < len(IDF_DOCS) else len(IDF_DOCS) * 19
        ids, vals = featurizer.weighed_one(*featurizer.features_one(doc))
        assert ids.tolist() == block.indices[block.indptr[row]:block.indptr[row + 1]].tolist()
        assert vals.tobytes() == block.data[block.indptr[row]:block.indptr[row + 1]].tobytes()


def idf(n, df):
    return np.log((1 + n) / (1 + df)) + 1


@pytest.mark.parametrize("width", [16, 1 << 30])  # (the counts' map: direct, then hashed)
def test_document_frequencies_count_weigh_and_round_trip_by_hand(width):
    frequencies = DocumentFrequencies(width)
    frequencies.count(Rows(np.array([0, 2, 3]), np.array([1, 5, 5]), None, width))  # {1, 5} {5}
    frequencies.count(Rows(np.array([0, 1]), np.array([7]), None, width), weights=[3])
    frequencies.count(sp.csr_matrix((np.ones(2), np.array([5, 1]), np.array([0, 1, 2])),
                                    shape=(2, width)), weights=np.array([2, 1]))  # {5}x2 {1}
    frequencies.count(Rows(np.array([0, 0]), np.array([], np.int64), None, width))  # no feature
    assert frequencies.documents == 9 and len(frequencies) == 3
    ids, counts = frequencies.to_arrays()
    assert ids.dtype == counts.dtype == np.int64
    assert (ids.tolist(), counts.tolist()) == ([1, 5, 7], [2, 4, 3])
    # a scipy row (int32 ids) of strengths 2, 1, 4 over 1, 5 and 9 (never counted)
    row = sp.csr_matrix((np.array([2.0, 1.0, 4.0]), np.array([1, 5, 9]), np.array([0, 3])),
                        shape=(1, width))
    expected = np.array([2 * idf(9, 2), idf(9, 4)])
    for norm in (False, True):
        weighed = frequencies.weigh(row, norm=norm)
        assert weighed.indices.tolist() == [1, 5] and weighed.indptr.tolist() == [0, 2]
        scale = np.linalg.norm(expected) if norm else 1.0
        np.testing.assert_allclose(weighed.data, expected / scale, rtol=1e-15)
        ids, vals = frequencies.weigh_one(np.array([1, 5, 9]), np.array([2.0, 1.0, 4.0]),
                                          norm=norm, learn=False)
        assert ids.tolist() == [1, 5] and vals.tobytes() == weighed.data.tobytes()
    assert frequencies.documents == 9  # (weighing counts nothing)
    again = DocumentFrequencies(width, *frequencies.to_arrays(), documents=9)
    assert again.weigh(row).data.tobytes() == frequencies.weigh(row).data.tobytes()
    # each document counted (weights times) before it is weighed, in order
    learned = DocumentFrequencies(width, *frequencies.to_arrays(), documents=8)
    rows = Rows(np.array([0, 2, 3]), np.array([1, 2, 2]), None, width)  # {1, 2} then {2}
    weighed = learned.weigh(rows, each=True, weights=[2, 1])
    np.testing.assert_allclose(weighed.data, [idf(10, 4), idf(10, 2), idf(11, 3)], rtol=1e-15)
    assert learned.documents == 11 and learned.to_arrays()[1].tolist() == [4, 3, 4, 3]
    # float32 strengths and float weights (scikit-learn's sample_weight) weigh alike
    again = DocumentFrequencies(width, *frequencies.to_arrays(), documents=8)
    floats = again.weigh(Rows(rows.indptr, rows.indices, np.ones(3, np.float32), width),
                         each=True, weights=np.array([2.0, 1.0]))
    assert floats.data.tobytes() == weighed.data.tobytes() and again.documents == 11
    one = DocumentFrequencies(width, *frequencies.to_arrays(), documents=8)
    ids, vals = one.weigh_one(np.array([1, 2]), np.array([1.0, 1.0]), norm=False, learn=True)
    np.testing.assert_allclose(vals, [idf(9, 3), idf(9, 1)], rtol=1e-15)
    assert ids.tolist() == [1, 2] and one.documents == 9
    copied = pickle.loads(pickle.dumps(one))  # (the compiled one-document weigher is not kept)
    for table in (one, copied):
        ids, vals = table.weigh_one(np.array([2, 3]), np.array([1.0, 1.0]), norm=False,
                                    learn=True)
        np.testing.assert_allclose(vals, [idf(10, 2), idf(10, 1)], rtol=1e-15)




def _relevance_by_hand(docs, labels, weights, share, features=None):
    """NBSVM's ratios written out over every label (those that lack a feature included),
    the relevance factors of ``features`` (by default every feature)."""
    every = sum(w * len(d) for d, w in zip(docs, weights))
    features = sorted(set().union(*docs)) if features is None else features
    names = sorted({label for these in labels for label in these})
    size = {c: sum(w * len(d) for d, these, w in zip(docs, labels, weights) if c in these)
            for c in names}
    found = {}
    for f in features:
        t = sum(w for d, w in zip(docs, weights) if f in d)
        ratios = []
        for c in names:
            k = sum(w for d, these, w in zip(docs, labels, weights) if f in d and c in these)
            ratios.append(abs(np.log((1 + k) / (len(features) + size[c]))
                              - np.log((1 + t - k) / (len(features) + every - size[c]))))
        found[f] = max(ratios)
    mean = np.mean(list(found.values()))
    if mean == 0:  # (no feature tells a label apart: every factor 1)
        return dict.fromkeys(found, 1.0)
    return {f: (1 - share) + share * r / mean for f, r in found.items()}


@pytest.mark.parametrize("width", [64, 1 << 30])  # (the counts' map: direct, then hashed)
def test_relevance_factors_are_the_naive_bayes_ratios_written_out(width):
    """Each feature's factor is (1 - share) + share * r / mean r, r its largest |log-count
    ratio| over every label (those that lack it too: feature 3, in every document but
    label c's), with weights and several labels a document; counted in two batches, on
    three threads, or in two counts added up as a cluster's shards are, the same
    factors."""
    docs = [{1, 2}, {1, 3}, {3, 4}, {3, 5}, {2, 3, 5}, {6}, {1, 3, 6}]
    labels = [["a"], ["a"], ["b"], ["b", "a"], ["b"], ["c"], ["a"]]
    weights = [1, 2, 1, 1, 3, 1, 1]
    expected = _relevance_by_hand(docs, labels, weights, 0.4)

    def rows(part):
        indptr = np.cumsum([0] + [len(d) for d in part])
        return Rows(indptr, np.array([f for d in part for f in sorted(d)], np.int64), None,
                    width)

    one = DocumentFrequencies(width)
    one.count(rows(docs), weights, labels=labels)
    one.relate(0.4)
    ids = one.to_arrays()[0]
    # (features 1, 3 and 4 have their largest ratio at a label that lacks them: b, c, c)
    # (in float32's precision, as a model file keeps them)
    np.testing.assert_allclose(one.factors_of(ids), [expected[f] for f in ids], rtol=6e-8)
    two = DocumentFrequencies(width)
    two.count(rows(docs[:3]), weights[:3], labels=labels[:3])
    two.count(rows(docs[3:]), weights[3:], labels=labels[3:])
    two.relate(0.4)
    assert two.factors_of(ids).tobytes() == one.factors_of(ids).tobytes()
    threaded = DocumentFrequencies(width)  # (the labels in runs, a run a thread)
    threaded.count(rows(docs), weights, labels=labels, threads=3)
    threaded.relate(0.4)
    assert threaded.factors_of(ids).tobytes() == one.factors_of(ids).tobytes()
    shards = []
    for part in (slice(0, 4), slice(4, None)):
        shard = DocumentFrequencies(width)
        shard.count(rows(docs[part]), weights[part], labels=labels[part])
        shards.append(shard)
    added = DocumentFrequencies(width)
    for shard in shards[::-1]:
        added.add(shard)
    added.relate(0.4)
    np.testing.assert_allclose(added.factors_of(ids), one.factors_of(ids), rtol=6e-8)
    # the factors are frozen: a document counted later moves none, a new feature has 1
    row = Rows(np.array([0, 2]), np.array([3, 9]), None, width)
    weighed = one.weigh(row, each=True)
    three = one.factors_of(np.array([3]))[0]
    assert one.factors_of(np.array([3, 9])).tolist() == [three, 1.0]
    np.testing.assert_allclose(weighed.data, [idf(11, 9) * three, idf(11, 1)], rtol=1e-15)
    ids_one, vals = one.weigh_one(np.array([3, 9]), np.array([1.0, 1.0]), norm=False,
                                  learn=False)
    assert vals.tobytes() == one.weigh(row).data.tobytes()
    nothing = DocumentFrequencies(width)
    nothing.count(rows(docs))
    nothing.relate(0.4)  # (nothing counted by label: no factors)
    assert nothing.factors_of(ids) is None


def _counted_in_batches(docs, single, batches, width):
    """``docs`` (features, labels, weight) counted by label in ``batches`` batches: one
    label a document (``single``) or the set of them."""
    frequencies = DocumentFrequencies(width)
    for part in np.array_split(np.arange(len(docs)), batches):
        chosen = [docs[i] for i in part]
        indptr = np.cumsum([0] + [len(d) for d, _, _ in chosen])
        rows = Rows(indptr, np.array([f for d, _, _ in chosen for f in sorted(d)], np.int64),
                    None, width)
        labels = [next(iter(these)) for _, these, _ in chosen] if single else \
            [sorted(these) for _, these, _ in chosen]
        frequencies.count(rows, [w for _, _, w in chosen], labels=labels)
    return frequencies


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sets(st.integers(0, 11), max_size=6),
                          st.sets(st.sampled_from("abcd"), max_size=3), st.integers(0, 3)),
                min_size=1, max_size=12),
       st.booleans(), st.integers(1, 3))
def test_relevance_factors_match_the_ratios_written_out_for_any_documents(docs, single,
                                                                          batches):
    """Any documents, weights (0 included), one label each or sets of them (empty
    included), counted in any number of batches: the factors of the features counted are
    the by-hand ones, in float32's precision."""
    if single:
        docs = [(d, {min(these) if these else "a"}, w) for d, these, w in docs]
    width = 16
    frequencies = _counted_in_batches(docs, single, batches, width)
    frequencies.relate(0.3)
    counted = [f for f in range(12) if any(f in d and w for d, _, w in docs)]
    if not counted or not any(w for _, these, w in docs if these):
        return  # (nothing counted, or no label: the factors are 1 or any)
    expected = _relevance_by_hand([d for d, _, _ in docs], [these for _, these, _ in docs],
                                  [w for _, _, w in docs], 0.3, counted)
    found = frequencies.factors_of(np.array(counted))
    np.testing.assert_allclose(found, [expected[f] for f in counted], rtol=1.2e-7)


@pytest.mark.parametrize("batches", [1, 2])
def test_relevance_factors_count_each_of_more_than_32768_labels_as_its_own(batches):
    """More labels than a 16-bit number holds: 32,770 labels, one document each; the
    last two labels' documents hold features 5 to 7 as well, the others one feature of 0
    to 4 (so the features' document counts and each label's ``n_c`` tell the labels
    apart). Each feature's factor is the by-hand one, the ratios written out over every
    label at once, counted in one batch or in two (added up by label)."""
    n_labels, width, share = 32_770, 16, 0.5
    docs = [[i % 5] + ([5, 6, 7] if i >= n_labels - 2 else []) for i in range(n_labels)]
    labels = [f"label {i}" for i in range(n_labels)]
    frequencies = DocumentFrequencies(width)
    for part in np.array_split(np.arange(n_labels), batches):
        indptr = np.cumsum([0] + [len(docs[i]) for i in part])
        frequencies.count(Rows(indptr, np.array([f for i in part for f in docs[i]],
                                                 np.int64), None, width),
                          labels=[labels[i] for i in part])
    frequencies.relate(share)
    held = np.zeros((n_labels, 8))  # (k: label c's documents holding feature f)
    for c, doc in enumerate(docs):
        held[c, doc] = 1
    sizes = held.sum(1)  # n_c
    every, totals, features = sizes.sum(), held.sum(0), 8.0  # N, t, F
    r = np.abs(np.log((1 + held) / (features + sizes[:, None]))
               - np.log((1 + totals - held) / (features + every - sizes[:, None]))).max(0)
    expected = (1 - share) + share * r / r.mean()
    found = frequencies.factors_of(np.arange(8))
    np.testing.assert_allclose(found, expected, rtol=1.2e-7)
    assert found[5] != found[0]  # (the rare features are the telling ones)


def test_a_front_end_with_relevance_scales_its_tfidf_rows_by_the_factors():
    """relevance=s multiplies each TF-IDF strength by its factor before the norm; a fit
    without labels counts none, and relevance=0 leaves TF-IDF as it is."""
    texts = ["free prize now", "lunch at noon", "win a free prize", "meeting at noon",
             "a free lunch"]
    labels = ["spam", "ham", "spam", "ham", "ham"]
    plain = Featurizer(values="log", idf=True).fit(texts)
    scaled = Featurizer(values="log", idf=True, norm="l2", relevance=0.5).fit(texts, labels)
    X, Y = plain.transform(texts), scaled.transform(texts)
    factors = scaled.frequencies_.factors_of(X.indices)
    expected = X.multiply(sp.csr_matrix((factors, X.indices, X.indptr), shape=X.shape))
    expected = sp.diags(1 / np.sqrt(np.asarray(expected.multiply(expected).sum(1)).ravel())) \
        @ expected
    np.testing.assert_allclose(Y.toarray(), expected.toarray(), rtol=1e-14)
    assert (scaled.fit_transform(texts, labels) != Y).nnz == 0
    unlabelled = Featurizer(values="log", idf=True, norm="l2", relevance=0.5).fit(texts)
    tfidf = Featurizer(values="log", idf=True, norm="l2").fit(texts, labels)
    assert (unlabelled.transform(texts) != tfidf.transform(texts)).nnz == 0
    assert tfidf.frequencies_.factors_of(X.indices) is None
    for bad in (-0.1, 1.5, "half", True):
        with pytest.raises(ConfigurationError, match="relevance must be a number from 0 to 1"):
            Featurizer(idf=True, relevance=bad).fit(texts, labels)


def test_a_calibration_fold_weighs_its_rows_by_its_own_documents_alone():
    """refold: rows weighed by a fit over every document, reweighed as a front end fitted
    on the fold's training documents alone weighs them (idf, relevance, the norm), the
    held-out rows too, their features the fold never saw left out: no held-out label
    reaches a fold's strengths."""
    texts = ["free prize now", "lunch at noon", "win a free prize", "meeting at noon",
             "a free lunch", "prize draw tonight", "noon meeting moved", "win big now"]
    labels = ["spam", "ham", "spam", "ham", "ham", "spam", "ham", "spam"]
    options = dict(values="log", idf=True, norm="l2", ngrams=(1, 2), relevance=0.5)
    whole = Featurizer(**options)
    X = whole.fit_transform(texts, labels)
    train, held = [0, 1, 2, 3, 4], [5, 6, 7]
    weigh = whole.refold(X[train], [labels[i] for i in train])
    alone = Featurizer(**options).fit([texts[i] for i in train], [labels[i] for i in train])
    ids = whole.frequencies_._map.row_ids  # (the id of each of the fit's numbers 1, 2...)
    for rows in (train, held):
        found, expected = weigh(X[rows]), alone.transform([texts[i] for i in rows])
        # (named by the fit's numbers for them, 1 to 27: as wide as its 27 features)
        assert found.shape == (len(rows), 28) and len(ids) == 27
        assert ids[found.indices - 1].tolist() == expected.indices.tolist()
        np.testing.assert_allclose(found.data, expected.data, rtol=1e-12)
    assert weigh(X[[7]]).nnz == 2  # ("win", "now": "win big", "big now", "big" unseen)
    assert X[[7]].nnz == 5


def test_a_front_end_takes_frequencies_counted_elsewhere_of_its_own_width():
    """A feature cache's, a cluster's or a model file's counts: taken by fit, as a fit
    counts them (the same rows); refused for another width or a front end without idf."""
    texts = ["free prize now", "lunch at noon", "a free lunch"]
    counted = Featurizer(bits=10, idf=True).fit(texts)
    taken = Featurizer(bits=10, idf=True).fit(frequencies=counted.frequencies_)
    assert (taken.transform(texts) != counted.transform(texts)).nnz == 0
    with pytest.raises(ConfigurationError, match="over 2048 features are for a front end "
                                                 "with idf and 2\\*\\*bits features"):
        Featurizer(bits=10, idf=True).fit(frequencies=DocumentFrequencies(2048))
    with pytest.raises(ConfigurationError, match="idf=False"):
        Featurizer(bits=10, idf=False).fit(frequencies=counted.frequencies_)


def test_the_counts_of_parts_add_up_to_the_count_of_them_all():
    """A cluster's shards: each part counted as a fit counts its documents
    (``Featurizer.counted``, by label too), pickled as another process takes it (its
    features and counts, not its table of 2**bits numbers), added up and related by
    ``fit``: the frequencies and relevance factors of a fit of every document, the same
    rows; and a calibration fold's weighing from its documents' counts added up is the
    one from its rows."""
    import pickle

    texts = ["free prize now", "lunch at noon", "a free lunch", "win a prize now",
             "noon meeting at lunch", "free win", "prize draw", "team lunch"]
    labels = ["spam", "ham", "ham", "spam", "ham", "spam", "spam", "ham"]
    options = dict(bits=20, idf=True, relevance=0.5, norm="l2", ngrams=(1, 2))
    whole = Featurizer(**options).fit(texts, labels)
    front = Featurizer(**options)
    parts = [pickle.dumps(front.counted(front.rows(texts[i::3]), labels[i::3]))
             for i in range(3)]
    assert max(map(len, parts)) < 20_000  # (the table alone: 4 MB)
    added = Featurizer(**options).fit(frequencies=[pickle.loads(part) for part in parts])
    ids, counts = whole.frequencies_.to_arrays()
    assert added.frequencies_.documents == 8
    for found, wanted in zip(added.frequencies_.to_arrays(), (ids, counts)):
        np.testing.assert_array_equal(found, wanted)
    np.testing.assert_allclose(added.frequencies_.factors_of(ids),
                               whole.frequencies_.factors_of(ids), rtol=1e-6)
    assert whole.frequencies_.factors_of(ids).std() > 0  # (related: not all 1)
    np.testing.assert_allclose(added.transform(texts).toarray(),
                               whole.transform(texts).toarray(), rtol=1e-6)
    X = whole.transform(texts)  # (the fit's rows, weighed by every document)
    by_rows = whole.refold(X[:5], labels[:5])(X)
    by_counts = whole.refold(whole.related([front.counted(front.rows(texts[:2]), labels[:2]),
                                            front.counted(front.rows(texts[2:5]),
                                                          labels[2:5])]))(X)
    np.testing.assert_array_equal(by_counts.indices, by_rows.indices)
    np.testing.assert_allclose(by_counts.data, by_rows.data, rtol=1e-6)
    assert pickle.loads(pickle.dumps(whole.frequencies_)).factors_of(ids).tolist() == \
        whole.frequencies_.factors_of(ids).tolist()  # (related: its factors travel)


def test_a_thread_keeps_a_short_texts_workspace_and_lets_a_corpus_s_go():
    """The buffers of a chunk of a corpus (tens of MB for chunks of 1 MB) are let go when
    the call that featurised it ends: they are not held by the thread through training;
    a short text's, which the next short text reuses, are kept. The rows are the same."""
    from snowpy.text import featurizer as module

    featurizer = Featurizer(ngrams=(1, 2))
    short = featurizer.rows(["one short text"])
    kept = featurizer._local.workspace
    assert 0 < kept.nbytes <= module._KEPT_WORKSPACE
    corpus = [" ".join(f"word{i * 7 + j}" for j in range(400)) for i in range(600)]
    rows = featurizer.rows(corpus)
    assert getattr(featurizer._local, "workspace", None) is None
    again = Featurizer(ngrams=(1, 2)).rows(corpus)
    assert rows.indices.tolist() == again.indices.tolist()
    assert featurizer.rows(["one short text"]).indices.tolist() == short.indices.tolist()


def test_a_fits_count_is_held_packed_while_its_networks_learn():
    """After a fit's weighing the count holds what a model file gives (ascending ids of
    4 bytes, their counts of 4, relevance factors of 4 bytes; no table of 2**bits ids), and
    weighs as before, to the bit."""
    texts = ["free prize now", "lunch at noon", "win a free prize", "meeting at noon"]
    labels = ["spam", "ham", "spam", "ham"]
    featurizer = Featurizer(values="log", idf=True, norm="l2", relevance=0.5)
    X = featurizer.fit_transform(texts, labels)
    frequencies = featurizer.frequencies_
    counts, factors = frequencies._stored
    ids, order = frequencies._map._sorted  # (numbered in the order of the ids: no order)
    assert ids.dtype == np.int32 and order is None and np.all(np.diff(ids) > 0)
    assert counts.dtype == np.int32 and factors.dtype == np.float32
    assert ids.size == counts.size == factors.size == len(frequencies) == 9
    again = featurizer.transform(texts)
    assert (again != X).nnz == 0


def test_rows_coded_read_back_the_same_strengths():
    """Strengths of few distinct values are held as codes into a table of them and read
    back to the bit, whole and by rows; many distinct ones, or none, are not coded."""
    counts = np.array([1.0, 1.0 + np.log(3.0), -0.0, 1.0, 7.5, 1.0 + np.log(3.0)])
    rows = Rows(np.array([0, 2, 2, 6]), np.arange(6, dtype=np.int32), counts.copy(), 8)
    assert rows.code() and not rows.binary and rows.strengths is not rows.strengths
    assert rows.data.tobytes() == counts.tobytes()
    assert rows[np.array([2, 0])].data.tobytes() == counts[[2, 3, 4, 5, 0, 1]].tobytes()
    assert rows[2:].data.tobytes() == counts[2:].tobytes()
    assert rows.copy().data.tobytes() == counts.tobytes()
    signed = Rows(np.array([0, 2]), np.arange(2, dtype=np.int32), np.array([0.0, -0.0]), 2)
    assert not signed.code()  # (-0.0 would be read back as 0.0)
    many = np.arange(70_000, dtype=np.float64)
    assert not Rows(np.array([0, many.size]), np.arange(many.size), many, many.size).code()
    assert not Rows(np.array([0, 2]), np.arange(2), None, 2).code()  # (binary: none)


@pytest.mark.parametrize("relevance", [0.0, 0.25])
def test_a_fits_own_rows_are_weighed_as_they_are_read_to_the_bit(relevance):
    """A fit's rows weighed where they lie (copy=False) are held coded until read: read
    by documents (a calibration fold's) or whole (the final network's), the strengths of
    weighing them at once, bit for bit, and the rows given then hold them."""
    texts = IDF_DOCS * 30 + ["the cat sat on the mat the cat", "a dog a dog a dog barked"]
    labels = [i % 3 for i in range(len(texts))]
    options = dict(values="log", idf=True, norm="l2", ngrams=(1, 2), relevance=relevance)
    at_once = Featurizer(**options)
    expected = at_once.weighed(at_once.rows(texts), count="all", labels=labels)
    featurizer = Featurizer(**options)
    own = featurizer.rows(texts)
    read = featurizer.weighed(own, count="all", labels=labels, copy=False)
    assert own.strengths.tobytes() != expected.data.tobytes()  # (held as counted)
    again = Featurizer(**options)
    copied = again.weighed(again.rows(texts), count="all", labels=labels,
                           copy=False).copy()  # (a copy before any read: weighed too)
    assert copied.data.tobytes() == expected.data.tobytes() and not copied.binary
    for which in (np.array([5, 0, len(texts) - 1]), np.arange(len(texts))[::3]):
        part, whole = read[which], expected[which]
        assert part.indices.tolist() == whole.indices.tolist()
        assert part.data.tobytes() == whole.data.tobytes()
    assert read.data.tobytes() == expected.data.tobytes()
    assert own.strengths.tobytes() == expected.data.tobytes()  # (weighed where they lie)
    assert read[np.array([1])].data.tobytes() == expected[np.array([1])].data.tobytes()


def _evidence_by_hand(docs, labels, weights, doc):
    """A document's evidence for each label, NBSVM's log-count ratios written out: for
    label c, r = ln((1 + k) / (F + n_c)) - ln((1 + t - k) / (F + N - n_c)) summed over
    the document's features counted, over the square root of all its features."""
    names = list(dict.fromkeys(c for these in labels for c in these))
    features = sorted({f for d, w in zip(docs, weights) if w for f in d})
    every = sum(w * len(d) for d, w in zip(docs, weights))
    out = []
    for c in names:
        n_c = sum(w * len(d) for d, these, w in zip(docs, labels, weights) if c in these)
        total = 0.0
        for f in doc:
            if f not in features:
                continue
            t = sum(w for d, w in zip(docs, weights) if f in d)
            k = sum(w for d, these, w in zip(docs, labels, weights) if f in d and c in these)
            total += np.log((1 + k) / (len(features) + n_c)) \
                - np.log((1 + t - k) / (len(features) + every - n_c))
        out.append(total / np.sqrt(max(len(doc), 1)))
    return names, out


def test_evidence_is_the_naive_bayes_ratios_of_a_documents_features_worked_out():
    """Three documents: two of pos (features 1 and 2; 1), one of neg (2 and 3). F = 3
    features, N = 5 entries, n_pos = 3, n_neg = 2; feature 1's ratio for pos is
    ln(3 / 6) - ln(1 / 5) = ln 2.5, feature 3's ln(1 / 6) - ln(2 / 5) = ln(5 / 12); a
    document of features 1, 3 and 7 (never counted: no ratio, but one of its three
    features) has the evidence (ln 2.5 + ln(5 / 12)) / sqrt 3 = ln(25 / 24) / sqrt 3 for
    pos, its opposite for neg. A document of no feature counted has none."""
    frequencies = DocumentFrequencies(width=8)
    frequencies.count(Rows(np.array([0, 2, 3, 5]), np.array([1, 2, 1, 2, 3]), None, 8),
                      labels=["pos", "pos", "neg"])
    frequencies.relate(0.0, evidence=True)
    ratios = frequencies.ratios
    assert ratios.labels == ["pos", "neg"] and frequencies.factors_of(np.array([1])) is None
    np.testing.assert_allclose(ratios.of(np.array([1, 2, 3]))[:, 0],
                               [np.log(2.5), np.log(2 / 6 * 5 / 2), np.log(5 / 12)],
                               rtol=1e-14)
    evidence = ratios.evidence(Rows(np.array([0, 3, 4, 4]), np.array([1, 3, 7, 6]), None, 8))
    expected = np.log(25 / 24) / np.sqrt(3)
    np.testing.assert_allclose(evidence.values, [[expected, -expected], [0, 0], [0, 0]],
                               rtol=1e-14, atol=1e-15)
    assert evidence[1:].values.shape == (2, 2) and evidence.by(["neg", "x"])[0, 0] == \
        pytest.approx(-expected, rel=1e-14)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sets(st.integers(0, 11), max_size=6),
                          st.sets(st.sampled_from("abcd"), min_size=1, max_size=2),
                          st.integers(0, 3)), min_size=1, max_size=12),
       st.booleans(), st.integers(1, 3), st.sets(st.integers(0, 15), max_size=6))
def test_evidence_matches_the_ratios_written_out_for_any_documents(docs, single, batches,
                                                                   doc):
    """Any documents, weights (0 included), one label each or sets of them, counted in
    any number of batches: a document's evidence for each label is the by-hand sum."""
    if single:
        docs = [(d, {min(these)}, w) for d, these, w in docs]
    width = 16
    frequencies = _counted_in_batches(docs, single, batches, width)
    frequencies.relate(0.0, evidence=True)
    if not any(w for _, _, w in docs):
        return  # (nothing counted)
    names, expected = _evidence_by_hand([d for d, _, _ in docs],
                                        [sorted(these) if not single else list(these)
                                         for _, these, _ in docs],
                                        [w for _, _, w in docs], sorted(doc))
    found = frequencies.ratios.evidence(Rows(np.array([0, len(doc)]),
                                             np.array(sorted(doc), np.int64), None, width))
    np.testing.assert_allclose(found.by(names)[0], expected, rtol=1e-12, atol=1e-12)


def test_a_front_end_with_evidence_gives_each_row_weighed_for_prediction_its_evidence():
    """evidence=True: a fit with labels keeps the ratios, rows weighed for prediction
    carry their evidence (the rows a fit weighs do not), a fold's refold gives the
    evidence of a front end fitted on the fold alone, and evidence needs idf."""
    texts = ["free prize now", "lunch at noon", "win a free prize", "meeting at noon",
             "a free lunch", "prize draw tonight", "noon meeting moved", "win big now"]
    labels = ["spam", "ham", "spam", "ham", "ham", "spam", "ham", "spam"]
    options = dict(values="log", idf=True, norm="l2", ngrams=(1, 2), evidence=True)
    whole = Featurizer(**options)
    fitted = whole.weighed(whole.rows(texts), count="all", labels=labels)
    assert fitted.evidence is None and whole.frequencies_.factors_of(fitted.indices) is None
    rows = whole.weighed(whole.rows(["win a free prize"]))
    expected = whole.frequencies_.ratios.evidence(whole.rows(["win a free prize"]))
    assert rows.evidence.labels == ["spam", "ham"]
    np.testing.assert_array_equal(rows.evidence.values, expected.values)
    assert rows.evidence.values[0, 0] > 0 > rows.evidence.values[0, 1]
    ids, _ = whole.features_one("win a free prize")
    np.testing.assert_array_equal(whole.evidence_one(ids).values, expected.values)
    train, held = [0, 1, 2, 3, 4], [5, 6, 7]
    X = whole.weighed(whole.rows(texts), count="all", labels=labels)
    weigh = whole.refold(X[train], [labels[i] for i in train])
    alone = Featurizer(**options).fit([texts[i] for i in train], [labels[i] for i in train])
    found = weigh.evidence(X[held])
    np.testing.assert_allclose(found.by(["spam", "ham"]), alone.frequencies_.ratios.evidence(
        alone.rows([texts[i] for i in held])).by(["spam", "ham"]), rtol=1e-12)
    with pytest.raises(ConfigurationError, match="evidence=True needs idf=True"):
        Featurizer(evidence=True).fit(texts, labels)
    with pytest.raises(ConfigurationError, match="evidence must be true or false"):
        Featurizer(idf=True, evidence="yes").fit(texts, labels)
