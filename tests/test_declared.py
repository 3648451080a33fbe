"""snowpy.declared: each estimator's parameters declared once. The signatures, the
docstrings and the options of `snowpy train` all agree with the tables."""

from __future__ import annotations

import inspect
import re

import pytest
import typer.main

import snowpy
from snowpy import declared
from snowpy.cli import app

ESTIMATORS = [(snowpy.Featurizer, declared.FEATURIZER), (snowpy.Network, declared.NETWORK),
              (snowpy.SnowClassifier, declared.CLASSIFIER)]


def _signature(cls):
    return {name: p.default for name, p in inspect.signature(cls).parameters.items()
            if p.kind is not p.VAR_KEYWORD}


@pytest.mark.parametrize(("cls", "table"), ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_every_parameter_is_declared_with_the_signatures_default(cls, table):
    assert _signature(cls) == declared.defaults(table)
    assert list(_signature(cls)) == list(table)  # (in the same order)


def _stated_defaults(cls):
    """``name : type, default VALUE`` lines of the numpydoc Parameters section."""
    stated = {}
    for match in re.finditer(r"^    (\w+) : [^\n]*?, default ([^\n]+)$", cls.__doc__, re.M):
        stated[match[1]] = match[2].strip()
    return stated


def _spelled(value):
    if isinstance(value, str):
        return f'"{value}"'
    if value == 1 << 20 and not isinstance(value, bool):
        return "1 MiB"
    return repr(value)


@pytest.mark.parametrize(("cls", "table"), ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_the_docstrings_state_the_declared_defaults(cls, table):
    stated = _stated_defaults(cls)
    assert stated, f"{cls.__name__}'s docstring states no default"
    for name, text in stated.items():
        assert text == _spelled(table[name].default), (cls.__name__, name)


def test_a_classifier_default_that_differs_says_why():
    """The classifier is its front end and its network: where its default is not
    theirs, the table gives the reason."""
    below = {**declared.FEATURIZER, **declared.NETWORK}
    differs = sorted(name for name, setting in declared.CLASSIFIER.items()
                     if name in below and below[name].default != setting.default)
    assert differs == ["bias", "bits", "calibrate", "idf", "links", "n_jobs", "ngrams", "norm",
                       "relevance", "rule", "values"]
    assert all(declared.CLASSIFIER[name].why for name in differs)


def test_train_options_are_built_from_the_classifiers_table():
    """`snowpy train --help` says what the table says, and the options default to the
    table's values (in the command line's spelling)."""
    command = typer.main.get_command(app).commands["train"]  # type: ignore[attr-defined]
    options = {param.name: param for param in command.params}
    span = lambda v: "none" if v is None else "-".join(map(str, v))  # noqa: E731
    spelled = {"ngrams": span, "char_ngrams": span, "discard": str, "eligibility": str,
               "bias": lambda v: "1" if v is True else str(v)}
    options["norm"] = options.pop("l2")  # (a switch: --l2)
    built = [name for name in declared.CLASSIFIER if name in options]
    assert built == ["rule", "thickness", "ngrams", "char_ngrams", "skipgrams", "bits",
                     "values", "idf", "relevance", "evidence", "norm",
                     "keep_names", "n_jobs", "epochs", "average", "seed", "bias", "early_stop",
                     "links",
                     "eligibility", "discard", "precision", "multiclass", "calibrate"]
    for name in built:
        setting, option = declared.CLASSIFIER[name], options[name]
        assert option.help.startswith(setting.doc), name
        if option.default is not None and name != "norm":  # (None: the mode decides)
            assert option.default == spelled.get(name, lambda v: v)(setting.default), name
