"""One schema for a model file's header: every field's type and range, checked at load.

A header that passes its checksum can still hold values no snowpy wrote: a hand edit
with the checksum recomputed, a file from someone else. Before anything is built from
it, :func:`check_header` walks the header against the schema below and refuses, in one
line naming the field, a value of the wrong type (``featurizer.fields`` as an object),
out of range (``n_jobs`` 100000, a negative ``chunk_bytes``, ``alpha`` 1e308, a NaN
``eligible_percent``), not among the choices (``precision`` float16), or a field no
snowpy writes. The estimators check their options again when they are built; this is
the file's contract, in one place.

>>> check_header({"kind": "network"}, "m.snowpy")
Traceback (most recent call last):
...
snowpy.exceptions.ModelFileError: m.snowpy: header field 'network' is missing
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from snowpy.exceptions import ModelFileError

__all__ = ["check_header"]

_MAX_SEED = 2**32 - 1
_BIG = 2**62
#: The largest magnitude of a rule parameter: the largest weight kept (float32). A factor
#: or threshold beyond it is no setting (alpha 1e308 overflows on the first promotion).
_MAX_PARAM = 1e30


@dataclass(frozen=True)
class Obj:
    """A JSON object: its fields (``required`` must be present), and whether others may
    appear (``extra``: the spec of every other field's value, as a plugin rule's
    parameters; None: refused)."""

    fields: Mapping[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    extra: Any = None
    null: bool = False
    says: str = "an object"


@dataclass(frozen=True)
class Items:
    """A JSON array of ``item`` of ``low`` to ``high`` elements."""

    item: Any
    low: int = 0
    high: int = _BIG
    null: bool = False
    says: str = "an array"


# The other specs are values (:class:`Value`), made by the functions below, which are
# named as the schema's words (``Int(1, 31)``), as Obj and Items are.

@dataclass(frozen=True)
class Value:
    """A value: whether it ``fits``, and what that is (``says``)."""

    fits: Callable[[Any], bool]
    says: str


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def Kind(types: tuple[type, ...], says: str) -> Value:
    """A value of one of ``types`` (any value when there are none)."""
    return Value(lambda value: not types or isinstance(value, types), says)


def Int(low: int, high: int) -> Value:
    """An integer (not a boolean) from ``low`` to ``high``."""
    return Value(lambda value: _is_int(value) and low <= value <= high,
                 f"an integer from {low:,} to {high:,}" if low != high else f"{low}")


def Number(low: float, high: float, infinite: bool = False) -> Value:
    """A number (not NaN, not a boolean) from ``low`` to ``high``, or infinite when
    ``infinite``."""
    def fits(value: Any) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False  # (NaN is within no range)
        return (infinite and math.isinf(value)) or low <= value <= high

    return Value(fits, f"a number from {low:g} to {high:g}"
                 + (" or infinity" if infinite else ""))


def Choice(choices: tuple[Any, ...]) -> Value:
    """One of ``choices``, of the same type (``1`` is not ``True``)."""
    return Value(lambda value: any(value == c and type(value) is type(c) for c in choices),
                 "one of " + ", ".join("null" if c is None else repr(c) for c in choices))


def Text(high: int = 100_000) -> Value:
    """A string of at most ``high`` characters."""
    return Value(lambda value: isinstance(value, str) and len(value) <= high,
                 f"a string of at most {high:,} characters")


def AnyOf(specs: tuple[Any, ...]) -> Value:
    """A value that one of ``specs`` takes."""
    return Value(lambda value: any(_problem(value, spec, "") is None for spec in specs),
                 " or ".join(spec.says for spec in specs))


def Size(high: int) -> Value:
    """An n-gram size: ``n`` or ``[min, max]`` with ``1 <= min <= max <= high``, or null."""
    def fits(value: Any) -> bool:
        if value is None or (_is_int(value) and 1 <= value <= high):
            return True
        return isinstance(value, list) and len(value) == 2 and all(map(_is_int, value)) \
            and 1 <= value[0] <= value[1] <= high

    return Value(fits, f"null, an integer from 1 to {high} or [min, max] within it")


_ANY = Kind((), "anything")
_BOOL = Kind((bool,), "true or false")
_NULL = Kind((type(None),), "null")
_COUNT = Int(0, _BIG)
_LABEL = AnyOf((Text(10_000), Int(-_BIG, _BIG), _BOOL))

FEATURIZER = Obj({
    "ngrams": Size(64), "char_ngrams": Size(64),
    "char_boundaries": Choice(("within", "across")),
    "skipgrams": AnyOf((_NULL, Int(0, 64))), "affixes": Size(64),
    "extractors": Items(Items(AnyOf((Text(200), Obj(extra=_ANY))), 2, 2), 0, 64),
    "bits": Int(1, 31), "lowercase": _BOOL,
    "unicode_form": Choice((None, "NFC", "NFKC", "NFD", "NFKD")), "strip_accents": _BOOL,
    "token_pattern": AnyOf((_NULL, Text(10_000))),
    "values": Choice(("binary", "count", "log")), "idf": _BOOL,
    "relevance": Number(0, 1), "evidence": _BOOL, "norm": Choice((None, "l2")),
    "fields": Items(Text(1000), 1, 256, null=True), "keep_names": _BOOL,
    "hash_seed": Int(0, _MAX_SEED), "errors": Choice(("replace", "strict")),
    "chunk_bytes": Int(1, 2**31), "n_jobs": AnyOf((Int(-1, -1), Int(1, 4096))),
})

_NETWORK_OPTIONS = {
    "rule": Text(200), "epochs": Int(1, 1_000_000), "average": _BOOL, "shuffle": _BOOL,
    "seed": AnyOf((_NULL, Int(0, _MAX_SEED))),
    "bias": AnyOf((_BOOL, Number(0, _MAX_PARAM))), "early_stop": _BOOL,
    "links": Choice(("signed", "positive", "touched", "all")),
    "eligibility": AnyOf((Int(1, _BIG), Text(40))),  # (k, "count:k" or "percent:p")
    "discard": AnyOf((_NULL, Number(0, _MAX_PARAM))),
    "precision": Choice(("float32", "float64")), "multiclass": Choice(("ova", "constraint")),
    "calibrate": AnyOf((_NULL, Text(40))),  # ("cv", "cv:k"...: checked as options are)
    # (snowpy 0.1's files: eligibility "percent:p" and the folds of "cv:k" were these)
    "eligible_percent": AnyOf((_NULL, Number(1e-12, 100))), "calibration_folds": Int(2, 1000),
    "storage": AnyOf((_NULL, Text(100))),  # (format 1)
}
_RULE_PARAM = AnyOf((_BOOL, _NULL, Text(200), Number(-_MAX_PARAM, _MAX_PARAM, infinite=True)))
_STATS = Obj({"mistakes": Items(_COUNT), "updates": Items(_COUNT),
              "n_examples_seen": _COUNT, "overflows": _COUNT, "underflows": _COUNT})
NETWORK = Obj({
    "options": Obj(_NETWORK_OPTIONS, required=("rule",)),
    "params": Obj(_NETWORK_OPTIONS, extra=_RULE_PARAM, null=True),
    "rule_params": Obj(extra=_RULE_PARAM),
    "labels": Items(_LABEL, 0, 1_000_000), "multilabel": _BOOL, "indicator": _BOOL,
    "n_features": Int(0, 2**40), "open_features": _BOOL, "seen": _COUNT,
    "stats": _STATS,
    "calibration": Obj(extra=_ANY, null=True),
    "inference_only": _BOOL,
    "links": Obj({"policy": Choice(("signed", "positive", "touched", "all")),
                  "precision": Choice(("float32", "float64")),
                  "absent": Number(-_MAX_PARAM, _MAX_PARAM)}),
    "progressive": Obj(extra=_ANY),
    "storage": _ANY,  # (format 1: what the table held)
}, required=("options", "rule_params", "labels", "n_features", "stats"))

_CLASSIFIER_OPTIONS = {**FEATURIZER.fields, **_NETWORK_OPTIONS,
                       "thickness": AnyOf((_NULL, Number(0, _MAX_PARAM, infinite=True))),
                       "rule": AnyOf((Text(200), Items(_ANY, 1, 64)))}
_TOP = {
    "magic": Text(100), "format_version": Int(1, 1000), "snowpy_version": Text(100),
    "kind": Text(100),  # (a plugin's kind too: a kind no class restores is refused then)
    "arrays": Obj(extra=Obj(extra=_ANY)),
    "names": Obj(extra=_ANY, null=True),
    "frequencies": Obj({"documents": _COUNT,
                        # (the log-count ratios by label: each class's n_c, and N)
                        "evidence": Obj({"sizes": Items(Number(0, 2.0**62), 0, 1_000_000),
                                         "every": Number(0, 2.0**62)},
                                        required=("sizes", "every"))}, null=True),
    # how the training corpus was read (the command line's layout options and format)
    "read_with": Obj(extra=AnyOf((_NULL, _BOOL, Text(1000), Items(Text(1000), 0, 256))),
                     null=True),
}
#: Kinds whose network part has a structure of its own, checked as it is restored
#: (:mod:`snowpy.network.cloud`, and the kinds plugins bring).
_OWN = Obj(extra=_ANY)


#: The arrays of a network and the kind of number each holds (a float64 ``feature_ids``
#: loaded, and its ids were floats).
_INTEGER = frozenset({"uint8", "uint16", "uint32", "int32", "int64"})
_ARRAY_KINDS = {
    **dict.fromkeys(("feature_ids", "row_sizes", "link_targets", "row_counts", "link_counts",
                     "promotions", "demotions", "frequency_ids", "frequency_counts",
                     "evidence_positions", "evidence_counts", "evidence_begins"),
                    _INTEGER),
    "calibration_evidence": frozenset({"float64"}),
    "frequency_set": frozenset({"uint8"}),
    **dict.fromkeys(("link_weights", "link_averaging", "state", "frequency_factors"),
                    frozenset({"float32", "float64"})),
}


def check_header(header: Mapping[str, Any], where: str) -> None:
    """Refuse, naming the field, a header that does not meet the schema."""
    kind = header.get("kind") if isinstance(header, Mapping) else None
    fields: dict[str, Any] = dict(_TOP)
    required = ["kind"]
    if kind == "network":
        fields["network"] = NETWORK
        required.append("network")
    elif kind == "classifier":
        described = header.get("network")
        inner = described.get("kind") if isinstance(described, Mapping) else None
        fields.update(network=NETWORK if inner is None else _OWN, featurizer=FEATURIZER,
                      classifier=Obj(_CLASSIFIER_OPTIONS, extra=_RULE_PARAM))
        required += ["network", "featurizer"]
    elif isinstance(kind, str):
        fields[kind] = _OWN
        required.append(kind)
    problem = _problem(header, Obj(fields, required=tuple(required)), "")
    if problem is not None:
        raise ModelFileError(f"{where}: " + (problem if problem.startswith("the header")
                                             else f"header field {problem}"))
    for name, spec in header.get("arrays", {}).items():
        allowed = _ARRAY_KINDS.get(name)
        if allowed is not None and spec.get("dtype") not in allowed:
            raise ModelFileError(f"{where}: array {name!r} must hold " + " or ".join(
                sorted(allowed)) + f", not {spec.get('dtype')!r}")


def _problem(value: Any, spec: Any, path: str) -> str | None:
    """What is wrong with ``value`` at ``path`` (``'a.b' must be ...``), or None."""
    shown = repr(path) if path else "the header"
    if not isinstance(spec, (Obj, Items)):
        if spec.fits(value):
            return None
        return f"{shown} must be {spec.says}, got {_short(value)}"
    if value is None and spec.null:
        return None
    if isinstance(spec, Items):
        if not isinstance(value, list):
            return f"{shown} must be an array, got {_short(value)}"
        if not spec.low <= len(value) <= spec.high:
            return f"{shown} must hold {spec.low:,} to {spec.high:,} items, holds {len(value):,}"
        for number, item in enumerate(value):
            found = _problem(item, spec.item, f"{path}[{number}]")
            if found:
                return found
        return None
    if not isinstance(value, Mapping):
        return f"{shown} must be an object, got {_short(value)}"
    for name in spec.required:
        if name not in value:
            return f"{(path + '.' if path else '') + name!r} is missing"
    for name, item in value.items():
        inner = f"{path}.{name}" if path else str(name)
        rule = spec.fields.get(name, spec.extra)
        if rule is None:
            return f"{inner!r} is not a field snowpy writes"
        found = _problem(item, rule, inner)
        if found:
            return found
    return None


def _short(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
