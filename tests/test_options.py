"""A network's options as read and checked before any data: SNoW's forms, their bounds,
and one line naming the option and the value for each refusal (`snowpy.network.options`)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from snowpy import Network
from snowpy.exceptions import ConfigurationError
from snowpy.network.options import (
    MAX_EPOCHS,
    MAX_FOLDS,
    bias_strength,
    calibrating,
    check_options,
    eligibility_of,
    upgraded,
)


@pytest.mark.parametrize("value, times, percent", [
    (1, 1, None), (3, 3, None), (np.int64(2), 2, None),
    ("count:1", 1, None), ("count:12", 12, None),
    ("percent:100", 1, 100.0), ("percent:0.5", 1, 0.5), ("percent:12.5", 1, 12.5),
])
def test_eligibility_reads_snows_forms(value, times, percent):
    assert eligibility_of(value) == (times, percent)


@pytest.mark.parametrize("value", [0, -1, True, 1.0, "1", "2", "Count:2", "COUNT:2",
                                   "count:0", "count:x", "count:", "percent:0",
                                   "percent:-5", "percent:100.5", "percent:x", "percent:nan",
                                   "percent:"])
def test_eligibility_refuses_what_snow_does_not_write(value):
    with pytest.raises(ConfigurationError) as refused:
        eligibility_of(value)
    assert str(refused.value) == (
        "eligibility must be an integer >= 1 (the times a feature must be active before it "
        "is linked), 'count:K' or 'percent:P' with 0 < P <= 100 (SNoW -e), got "
        f"{value!r}")


@pytest.mark.parametrize("value, method, folds", [
    (None, None, 0), ("none", None, 0), ("progressive", "progressive", 0),
    ("cv", "cv", 3), ("holdout", "holdout", 3), ("cv:2", "cv", 2),
    ("holdout:2", "holdout", 2), ("cv:1000", "cv", 1000), ("holdout:7", "holdout", 7),
])
def test_calibrate_reads_a_method_and_its_folds(value, method, folds):
    read = calibrating(value)
    assert (read.method, read.folds) == (method, folds)
    assert type(read.folds) is int
    assert read.cross_fits == (method in ("cv", "holdout"))


@pytest.mark.parametrize("value", ["None", "NONE", "CV", "Holdout", "HOLDOUT", "cv:1",
                                   "cv:1001", "holdout:1", "cv:x", "cv:", "progressive:3",
                                   "sigmoid", True, 3])
def test_calibrate_refuses_other_values_in_one_line(value):
    with pytest.raises(ConfigurationError) as refused:
        calibrating(value)
    assert str(refused.value) == (
        "calibrate must be 'cv' or 'holdout' (3 folds), 'cv:K' or 'holdout:K' (K folds "
        f"from 2 to {MAX_FOLDS}), 'progressive' or 'none', got {value!r}")


def test_bias_strength_is_a_non_negative_number():
    assert (bias_strength(True), bias_strength(False), bias_strength(0),
            bias_strength(0.25), bias_strength(np.float32(2))) == (1.0, 0.0, 0.0, 0.25, 2.0)
    for value in (-0.5, float("nan"), float("inf"), "1", None):
        with pytest.raises(ConfigurationError, match=re.escape(
                f"bias must be true, false or a non-negative strength, got {value!r}")):
            bias_strength(value)


def _options(**changed):
    return {**{name: value for name, value in Network().get_params().items()
               if name in Network._option_names}, **changed}


@pytest.mark.parametrize("name, value", [
    ("epochs", 1), ("epochs", MAX_EPOCHS), ("seed", None), ("seed", 0), ("seed", 2**32 - 1),
    ("discard", None), ("discard", 0), ("discard", 0.0), ("discard", 3), ("bias", 0),
    ("multiclass", "constraint"), ("links", "all"), ("precision", "float64"),
])
def test_options_at_their_bounds_are_taken(name, value):
    check_options(_options(**{name: value}))


@pytest.mark.parametrize("name, value, message", [
    ("epochs", 0, f"epochs must be an integer from 1 to {MAX_EPOCHS:,}, got 0"),
    ("epochs", MAX_EPOCHS + 1, f"epochs must be an integer from 1 to {MAX_EPOCHS:,}, got "
                               f"{MAX_EPOCHS + 1}"),
    ("epochs", 2.0, f"epochs must be an integer from 1 to {MAX_EPOCHS:,}, got 2.0"),
    ("seed", -1, f"seed must be None or an integer from 0 to {2**32 - 1}, got -1"),
    ("seed", 2**32, f"seed must be None or an integer from 0 to {2**32 - 1}, got {2**32}"),
    ("seed", "3", f"seed must be None or an integer from 0 to {2**32 - 1}, got '3'"),
    ("calibrate", "cv:1", "calibrate must be 'cv' or 'holdout'"),
    ("discard", -0.1, "discard must be None or a finite non-negative number, got -0.1"),
    ("discard", float("nan"), "discard must be None or a finite non-negative number, got nan"),
    ("discard", float("inf"), "discard must be None or a finite non-negative number, got inf"),
    ("discard", True, "discard must be None or a finite non-negative number, got True"),
    ("discard", "0.5", "discard must be None or a finite non-negative number, got '0.5'"),
    ("multiclass", "ovr", "multiclass must be one of 'ova', 'constraint', got 'ovr'"),
    ("links", "some", "links must be one of 'positive', 'touched', 'all', 'signed', got "
                      "'some'"),
    ("precision", "float16", "precision must be one of 'float64', 'float32', got "
                             "'float16'"),
    ("bias", -1, "bias must be true, false or a non-negative strength, got -1"),
    ("eligibility", "percent:10", "eligibility 'percent:P' ranks each target's links by how "
                                  "often the feature was active in the target's positive "
                                  "examples, which only links='positive' counts; got "
                                  "links='signed'"),
])
def test_each_refused_option_is_named_with_its_value(name, value, message):
    options = _options(**{name: value})
    if name == "eligibility":
        options["links"] = "signed"
    with pytest.raises(ConfigurationError) as refused:
        check_options(options)
    assert str(refused.value).startswith(message)


def test_percent_eligibility_is_taken_with_positive_links():
    check_options(_options(eligibility="percent:10", links="positive"))


@pytest.mark.parametrize("old, new", [
    ({"eligibility": 1, "eligible_percent": 50.0}, {"eligibility": "percent:50"}),
    ({"eligibility": 1, "eligible_percent": 12.5}, {"eligibility": "percent:12.5"}),
    ({"eligibility": 2, "eligible_percent": None}, {"eligibility": 2}),
    ({"calibrate": "cv", "calibration_folds": 5}, {"calibrate": "cv:5"}),
    ({"calibrate": "holdout", "calibration_folds": 4}, {"calibrate": "holdout:4"}),
    ({"calibrate": "cv", "calibration_folds": 3}, {"calibrate": "cv"}),
    ({"calibrate": "progressive", "calibration_folds": 5}, {"calibrate": "progressive"}),
    ({"calibrate": None, "calibration_folds": 5}, {"calibrate": None}),
    ({"calibrate": "cv"}, {"calibrate": "cv"}),
])
def test_options_of_snowpy_0_1_files_read_as_todays(old, new):
    assert upgraded(old) == new
    assert upgraded(dict(old)) is not old  # (the caller's dict is left as it was)
