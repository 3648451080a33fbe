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
class Spec:
    """What one field may hold: ``fits(value)``, and ``says`` what that is."""

    fits: Callable[[Any], bool]
    says: str


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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(low: int, high: int) -> Spec:
    return Spec(lambda v: _is_int(v) and low <= v <= high,
                f"an integer from {low:,} to {high:,}" if low != high else f"{low}")


def _float(low: float, high: float, *, infinite: bool = False) -> Spec:
    def fits(value: Any) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
            return False
        return (infinite and math.isinf(value)) or low <= value <= high
    return Spec(fits, f"a number from {low:g} to {high:g}" + (" or infinity" if infinite
                                                               else ""))


def _choice(*choices: Any) -> Spec:
    return Spec(lambda v: any(v == c and type(v) is type(c) for c in choices),
                "one of " + ", ".join("null" if c is None else repr(c) for c in choices))


def _text(high: int = 100_000) -> Spec:
    return Spec(lambda v: isinstance(v, str) and len(v) <= high,
                f"a string of at most {high:,} characters")


def _any_of(*specs: Any) -> Spec:
    return Spec(lambda v: any(_problem(v, spec, "") is None for spec in specs),
                " or ".join(spec.says for spec in specs))


_ANY = Spec(lambda v: True, "anything")
_BOOL = Spec(lambda v: isinstance(v, bool), "true or false")
_NULL = Spec(lambda v: v is None, "null")
_COUNT = _int(0, _BIG)


def _size(high: int) -> Spec:
    """``n`` or ``[min, max]`` with ``1 <= min <= max <= high``, or null."""
    def fits(value: Any) -> bool:
        if value is None or (_is_int(value) and 1 <= value <= high):
            return True
        return isinstance(value, list) and len(value) == 2 and all(map(_is_int, value)) \
            and 1 <= value[0] <= value[1] <= high
    return Spec(fits, f"null, an integer from 1 to {high} or [min, max] within it")


_LABEL = _any_of(_text(10_000), _int(-_BIG, _BIG), _BOOL)

FEATURIZER = Obj({
    "ngrams": _size(64), "char_ngrams": _size(64),
    "char_boundaries": _choice("within", "across"),
    "skipgrams": _any_of(_NULL, _int(0, 64)), "affixes": _size(64),
    "extractors": Items(Items(_any_of(_text(200), Obj(extra=_ANY)), 2, 2),
                        0, 64),
    "bits": _int(1, 31), "lowercase": _BOOL,
    "unicode_form": _choice(None, "NFC", "NFKC", "NFD", "NFKD"), "strip_accents": _BOOL,
    "token_pattern": _any_of(_NULL, _text(10_000)),
    "values": _choice("binary", "count", "log"), "idf": _BOOL, "norm": _choice(None, "l2"),
    "fields": Items(_text(1000), 1, 256, null=True), "keep_names": _BOOL,
    "hash_seed": _int(0, _MAX_SEED), "errors": _choice("replace", "strict"),
    "chunk_bytes": _int(1, 2**31), "n_jobs": _any_of(_int(-1, -1), _int(1, 4096)),
})

_NETWORK_OPTIONS = {
    "rule": _text(200), "epochs": _int(1, 1_000_000), "average": _BOOL, "shuffle": _BOOL,
    "seed": _any_of(_NULL, _int(0, _MAX_SEED)),
    "bias": _any_of(_BOOL, _float(0, _MAX_PARAM)), "early_stop": _BOOL,
    "links": _choice("signed", "positive", "touched", "all"),
    "eligibility": _any_of(_int(1, _BIG), _text(40)),  # (k, "count:k" or "percent:p")
    "discard": _any_of(_NULL, _float(0, _MAX_PARAM)),
    "precision": _choice("float32", "float64"), "multiclass": _choice("ova", "constraint"),
    "calibrate": _any_of(_NULL, _text(40)),  # ("cv", "cv:k"...: checked as options are)
    # (snowpy 0.1's files: eligibility "percent:p" and the folds of "cv:k" were these)
    "eligible_percent": _any_of(_NULL, _float(1e-12, 100)), "calibration_folds": _int(2, 1000),
    "storage": _any_of(_NULL, _text(100)),  # (format 1)
}
_RULE_PARAM = _any_of(_BOOL, _NULL, _text(200), _float(-_MAX_PARAM, _MAX_PARAM, infinite=True))
_STATS = Obj({"mistakes": Items(_COUNT), "updates": Items(_COUNT),
              "n_examples_seen": _COUNT, "overflows": _COUNT, "underflows": _COUNT})
NETWORK = Obj({
    "options": Obj(_NETWORK_OPTIONS, required=("rule",)),
    "params": Obj(_NETWORK_OPTIONS, extra=_RULE_PARAM, null=True),
    "rule_params": Obj(extra=_RULE_PARAM),
    "labels": Items(_LABEL, 0, 1_000_000), "multilabel": _BOOL, "indicator": _BOOL,
    "n_features": _int(0, 2**40), "open_features": _BOOL, "seen": _COUNT,
    "stats": _STATS,
    "calibration": Obj(extra=_ANY, null=True),
    "inference_only": _BOOL,
    "links": Obj({"policy": _choice("signed", "positive", "touched", "all"),
                  "precision": _choice("float32", "float64"),
                  "absent": _float(-_MAX_PARAM, _MAX_PARAM)}),
    "progressive": Obj(extra=_ANY),
    "storage": _ANY,  # (format 1: what the table held)
}, required=("options", "rule_params", "labels", "n_features", "stats"))

_CLASSIFIER_OPTIONS = {**FEATURIZER.fields, **_NETWORK_OPTIONS,
                       "thickness": _float(0, _MAX_PARAM, infinite=True),
                       "rule": _any_of(_text(200), Items(_ANY, 1, 64))}
_TOP = {
    "magic": _text(100), "format_version": _int(1, 1000), "snowpy_version": _text(100),
    "kind": _choice("network", "classifier", "cloud", "dual"),
    "arrays": Obj(extra=Obj(extra=_ANY)),
    "names": Obj(extra=_ANY, null=True),
    "frequencies": Obj({"documents": _COUNT}, null=True),
    # how the training corpus was read (the command line's layout options and format)
    "read_with": Obj(extra=_any_of(_NULL, _BOOL, _text(1000), Items(_text(1000), 0, 256)),
                     null=True),
}
#: Kinds whose network part has a structure of its own, checked as it is restored
#: (:mod:`snowpy.network.cloud`, :mod:`snowpy.network.dual`).
_OWN = Obj(extra=_ANY)


#: The arrays of a network and the kind of number each holds (a float64 ``feature_ids``
#: loaded, and its ids were floats).
_INTEGER = frozenset({"uint8", "uint16", "uint32", "int32", "int64"})
_ARRAY_KINDS = {
    **dict.fromkeys(("feature_ids", "row_sizes", "link_targets", "row_counts", "link_counts",
                     "promotions", "demotions", "frequency_ids", "frequency_counts"),
                    _INTEGER),
    **dict.fromkeys(("link_weights", "link_averaging", "state"),
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
    elif kind in ("cloud", "dual"):
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
    if isinstance(spec, Spec):
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
