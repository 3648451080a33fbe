"""The model file's header against its schema (`snowpy.model_schema.check_header`): a
real header passes, and each field edited out of its type or range is refused in one line
naming the field, the values it may hold and the value found."""

from __future__ import annotations

import copy

import pytest

import snowpy
from snowpy.model_file import ModelFileError
from snowpy.model_schema import check_header

BIG = f"{2**62:,}"


@pytest.fixture(scope="module")
def header():
    clf = snowpy.SnowClassifier(epochs=1, calibrate="progressive", keep_names=True).fit(
        ["free prize now", "lunch at noon", "win a free prize", "noon meeting"],
        ["spam", "ham", "spam", "ham"])
    found, _ = clf.to_state()
    check_header(found, "m.snowpy")  # (what snowpy writes passes)
    return found


def edited(header, path, value):
    out = copy.deepcopy(header)
    *parents, last = path.split(".")
    place = out
    for name in parents:
        place = place[name]
    if value is KeyError:
        del place[last]
    else:
        place[last] = value
    return out


@pytest.mark.parametrize("path, value", [
    ("featurizer.bits", 1), ("featurizer.bits", 31), ("featurizer.ngrams", None),
    ("featurizer.ngrams", 1), ("featurizer.ngrams", 64), ("featurizer.ngrams", [1, 64]),
    ("featurizer.ngrams", [3, 3]),
    ("featurizer.unicode_form", None), ("featurizer.unicode_form", "NFKD"),
    ("featurizer.token_pattern", None), ("featurizer.token_pattern", "x" * 10_000),
    ("featurizer.n_jobs", -1), ("featurizer.n_jobs", 1), ("featurizer.n_jobs", 4096),
    ("featurizer.fields", None), ("featurizer.fields", ["a"] * 256),
    ("featurizer.skipgrams", None), ("featurizer.skipgrams", 0),
    ("network.options.seed", None), ("network.options.seed", 2**32 - 1),
    ("network.options.bias", True), ("network.options.bias", 0), ("network.options.bias", 1e30),
    ("network.options.discard", None), ("network.options.discard", 0.0),
    ("network.rule_params.alpha", float("inf")), ("network.rule_params.alpha", -1e30),
    ("network.rule_params.name", "text"), ("network.rule_params.flag", None),
    ("network.labels", [True, -(2**62), "x" * 10_000]), ("network.n_features", 2**40),
    ("network.calibration", None), ("frequencies", None), ("names", None),
    ("read_with", {"split": None, "columns": ["a", "b"], "lower": False}),
    ("classifier.rule", ["winnow", "perceptron"]), ("classifier.thickness", float("inf")),
])
def test_values_within_the_schema_are_taken(header, path, value):
    check_header(edited(header, path, value), "m.snowpy")


@pytest.mark.parametrize("path, value, message", [
    ("featurizer.bits", 0, "'featurizer.bits' must be an integer from 1 to 31, got 0"),
    ("featurizer.bits", 32, "'featurizer.bits' must be an integer from 1 to 31, got 32"),
    ("featurizer.bits", True, "'featurizer.bits' must be an integer from 1 to 31, got True"),
    ("featurizer.ngrams", 65, "'featurizer.ngrams' must be null, an integer from 1 to 64 or "
                              "[min, max] within it, got 65"),
    ("featurizer.ngrams", 0, "'featurizer.ngrams' must be null, an integer from 1 to 64 or "
                             "[min, max] within it, got 0"),
    ("featurizer.ngrams", [2, 1], "'featurizer.ngrams' must be null, an integer from 1 to 64 "
                                  "or [min, max] within it, got an array"),
    ("featurizer.ngrams", [0, 2], "'featurizer.ngrams' must be null*"),
    ("featurizer.ngrams", [1, 65], "'featurizer.ngrams' must be null*"),
    ("featurizer.ngrams", [1], "'featurizer.ngrams' must be null*"),
    ("featurizer.ngrams", [1, 2, 3], "'featurizer.ngrams' must be null*"),
    ("featurizer.ngrams", [1.0, 2], "'featurizer.ngrams' must be null*"),
    ("featurizer.ngrams", "1-2", "'featurizer.ngrams' must be null*"),
    ("featurizer.values", "tfidf", "'featurizer.values' must be one of 'binary', 'count', "
                                   "'log', got 'tfidf'"),
    ("featurizer.unicode_form", "nfc", "'featurizer.unicode_form' must be one of null, 'NFC', "
                                       "'NFKC', 'NFD', 'NFKD', got 'nfc'"),
    ("featurizer.norm", "l1", "'featurizer.norm' must be one of null, 'l2', got 'l1'"),
    ("featurizer.token_pattern", "x" * 10_001, "'featurizer.token_pattern' must be null or a "
                                               "string of at most 10,000 characters, got "
                                               "'" + "x" * 56 + "..."),
    ("featurizer.n_jobs", 0, "'featurizer.n_jobs' must be -1 or an integer from 1 to 4,096, "
                             "got 0"),
    ("featurizer.n_jobs", -2, "'featurizer.n_jobs' must be -1 or an integer from 1 to 4,096, "
                              "got -2"),
    ("featurizer.n_jobs", 4097, "'featurizer.n_jobs' must be -1 or an integer from 1 to "
                                "4,096, got 4097"),
    ("featurizer.fields", [], "'featurizer.fields' must hold 1 to 256 items, holds 0"),
    ("featurizer.fields", ["a"] * 257, "'featurizer.fields' must hold 1 to 256 items, holds "
                                       "257"),
    ("featurizer.fields", "body", "'featurizer.fields' must be an array, got 'body'"),
    ("featurizer.fields", [3], "'featurizer.fields[0]' must be a string of at most 1,000 "
                               "characters, got 3"),
    ("featurizer.colour", "red", "'featurizer.colour' is not a field snowpy writes"),
    ("network.options.seed", 2**32, "'network.options.seed' must be null or an integer from "
                                    "0 to 4,294,967,295, got 4294967296"),
    ("network.options.bias", float("nan"), "'network.options.bias' must be true or false or a "
                                           "number from 0 to 1e+30, got nan"),
    ("network.options.bias", 1.1e30, "'network.options.bias' must be true or false or a "
                                     "number from 0 to 1e+30, got 1.1e+30"),
    ("network.options.bias", -0.5, "'network.options.bias' must be true or false*"),
    ("network.options.bias", "1", "'network.options.bias' must be true or false*"),
    ("network.options.discard", float("inf"), "'network.options.discard' must be null or a "
                                              "number from 0 to 1e+30, got inf"),
    ("network.options.precision", "float16", "'network.options.precision' must be one of "
                                             "'float32', 'float64', got 'float16'"),
    ("network.options.links", None, "'network.options.links' must be one of 'signed', "
                                    "'positive', 'touched', 'all', got None"),
    ("network.options.epochs", 0, "'network.options.epochs' must be an integer from 1 to "
                                  "1,000,000, got 0"),
    ("network.rule_params.alpha", 1.1e30, "'network.rule_params.alpha' must be true or false "
                                          "or null or a string of at most 200 characters or "
                                          "a number from -1e+30 to 1e+30 or infinity, got "
                                          "1.1e+30"),
    ("network.rule_params.alpha", float("nan"), "'network.rule_params.alpha' must be true or "
                                                "false or null*"),
    ("network.rule_params.alpha", [1], "'network.rule_params.alpha' must be true or false or "
                                       "null or a string of at most 200 characters or a "
                                       "number from -1e+30 to 1e+30 or infinity, got an "
                                       "array"),
    ("network.rule_params.alpha", {"a": 1}, "'network.rule_params.alpha' must be true or "
                                            "false*"),
    ("network.labels", [1.5], "'network.labels[0]' must be a string of at most 10,000 "
                              f"characters or an integer from -{BIG} to {BIG} or true or "
                              "false, got 1.5"),
    ("network.labels", KeyError, "'network.labels' is missing"),
    ("network.options", KeyError, "'network.options' is missing"),
    ("network.options.rule", KeyError, "'network.options.rule' is missing"),
    ("network.stats.mistakes", [-1], "'network.stats.mistakes[0]' must be an integer from 0 "
                                     f"to {BIG}, got -1"),
    ("network.stats", [], "'network.stats' must be an object, got an array"),
    ("network.n_features", -1, "'network.n_features' must be an integer from 0 to "
                               "1,099,511,627,776, got -1"),
    ("network", "x", "'network' must be an object, got 'x'"),
    ("featurizer", KeyError, "'featurizer' is missing"),
    ("kind", 3, "'kind' must be a string of at most 100 characters, got 3"),
    ("frequencies", {"documents": -1}, "'frequencies.documents' must be an integer from 0 to "
                                       f"{BIG}, got -1"),
    ("read_with", {"split": 3}, "'read_with.split' must be null or true or false or a string "
                                "of at most 1,000 characters or an array, got 3"),
])
def test_a_value_out_of_the_schema_is_refused_naming_the_field(header, path, value, message):
    with pytest.raises(ModelFileError) as refused:
        check_header(edited(header, path, value), "m.snowpy")
    expected = "m.snowpy: header field " + message.rstrip("*")
    if message.endswith("*"):  # (the start of the line: the rest is in another case)
        assert str(refused.value).startswith(expected)
    else:
        assert str(refused.value) == expected


def test_a_classifier_holds_any_kind_of_network_and_a_rules_parameters(header):
    # (a cloud's or a plugin's network's part is checked as it is restored)
    for kind in ("cloud", "dual"):
        check_header(edited(header, "network", {"kind": kind, "members": [{"a": 1}]}),
                     "m.snowpy")
    with pytest.raises(ModelFileError, match="^m.snowpy: header field 'network.members' is "
                                             "not a field snowpy writes$"):
        check_header(edited(header, "network", {**header["network"], "members": []}),
                     "m.snowpy")
    check_header(edited(header, "classifier.alpha", 1.5), "m.snowpy")
    with pytest.raises(ModelFileError, match="^m.snowpy: header field 'classifier.alpha' must "
                                             "be true or false or null"):
        check_header(edited(header, "classifier.alpha", [1.5]), "m.snowpy")


def test_values_are_shown_whole_up_to_60_characters():
    def message(value):
        with pytest.raises(ModelFileError) as refused:
            check_header({"kind": "cloud", "cloud": {}, "format_version": value}, "m.snowpy")
        return str(refused.value).split(", got ")[1]

    assert message("x" * 58) == "'" + "x" * 58 + "'"  # (60 characters)
    assert message("x" * 59) == "'" + "x" * 56 + "..."
    assert message({"a": 1}) == "an object" and message([1]) == "an array"
    with pytest.raises(ModelFileError, match="^m.snowpy: the header must be an object, got "
                                             "an array$"):
        check_header([{"kind": "network"}], "m.snowpy")  # type: ignore[arg-type]


def test_each_kind_requires_its_own_part():
    for kind in ("network", "cloud", "dual", "tree"):  # (a kind no class restores: at load)
        with pytest.raises(ModelFileError, match=f"^m.snowpy: header field '{kind}' is "
                                                 "missing$"):
            check_header({"kind": kind}, "m.snowpy")
    with pytest.raises(ModelFileError, match="^m.snowpy: header field 'kind' is missing$"):
        check_header({}, "m.snowpy")
    with pytest.raises(ModelFileError, match="^m.snowpy: header field 'featurizer' is "
                                             "missing$"):
        check_header({"kind": "classifier", "network": {"kind": "cloud"}}, "m.snowpy")
    check_header({"kind": "cloud", "cloud": {"anything": [1]}}, "m.snowpy")


def test_an_array_of_the_wrong_kind_of_number_is_refused(header):
    arrays = {"feature_ids": {"dtype": "float64"}, "other": {"dtype": "float16"}}
    with pytest.raises(ModelFileError) as refused:
        check_header({**header, "arrays": arrays}, "m.snowpy")
    assert str(refused.value) == ("m.snowpy: array 'feature_ids' must hold int32 or int64 or "
                                  "uint16 or uint32 or uint8, not 'float64'")
    arrays = {"link_weights": {"dtype": "int64"}}
    with pytest.raises(ModelFileError, match="array 'link_weights' must hold float32 or "
                                             "float64, not 'int64'$"):
        check_header({**header, "arrays": arrays}, "m.snowpy")
    check_header({**header, "arrays": {"link_weights": {"dtype": "float32"},
                                       "feature_ids": {"dtype": "uint32"},
                                       "other": {"dtype": "float16"}}}, "m.snowpy")
