"""A dual network as plain data: header and arrays (model kind ``dual``).

The support vectors are stored without gaps (their feature ids and strengths
one after the other, and each one's length), with their coefficients per
target, the ring position of the oldest, the labels, the options, the
calibration and the progressive window. Loading checks that every part agrees
(lengths, shapes, ids within the feature space, the budget) before any of it
is used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snowpy.exceptions import ModelFileError, SnowpyError
from snowpy.network.calibrating import calibration_from_file, calibration_to_file
from snowpy.network.support import OLDEST
from snowpy.network.options import upgraded
from snowpy.network.state import plain

__all__ = ["dual_state", "restore_dual"]



def dual_state(net: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and arrays that describe a trained :class:`DualNetwork`."""
    engine = net.engine_
    n = engine.n_support
    lengths = engine.lengths[:n].copy()
    part: dict[str, Any] = {
        "options": plain(net.get_params()), "rule_params": plain(net.rule_params_),
        "labels": plain(list(engine.labels.labels)), "multilabel": net.multilabel_,
        "indicator": bool(engine.indicator), "n_features": net.n_features_in_,
        "oldest": int(engine.ring[OLDEST]), "mistakes": list(net.mistakes_),
        "updates": list(net.updates_), "examples_seen": int(net.n_examples_seen_),
        "calibration": None,  # (its place: calibration_to_file fills it)
    }
    arrays = {"sv_ids": engine.held(engine.ids), "sv_vals": engine.held(engine.vals),
              "sv_len": lengths, "sv_alpha": np.ascontiguousarray(net.dual_coef_)}
    calibration_to_file(net.calibration_, engine.progressive, part, arrays)
    return {"kind": "dual", "dual": part}, arrays


def restore_dual(network_class: type, header: dict[str, Any], arrays: dict[str, np.ndarray],
                 where: str) -> Any:
    """A :class:`DualNetwork` from what :func:`dual_state` produced."""
    try:
        options = upgraded(header["options"])
        rule = options.pop("rule")
        labels = list(header["labels"])
        net = network_class(rule, **options)
        net.check_options()
        net.start(int(header["n_features"]), labels, multilabel=bool(header["multilabel"]))
    except (KeyError, TypeError, ValueError, SnowpyError) as exc:
        raise ModelFileError(f"{where}: the dual network description is invalid "
                             f"({type(exc).__name__}: {exc})") from None
    lengths = arrays.get("sv_len")
    alpha = arrays.get("sv_alpha")
    ids, vals = arrays.get("sv_ids"), arrays.get("sv_vals")
    if lengths is None or alpha is None or ids is None or vals is None or \
            lengths.ndim != 1 or alpha.shape != (lengths.size, max(len(labels), 1)) or \
            ids.size != vals.size or ids.size != int(lengths.sum()) or \
            np.any(lengths < 0) or (ids.size and (ids.min() < 0 or
                                                  ids.max() >= net.n_features_in_)):
        raise ModelFileError(f"{where}: the support vectors are inconsistent")
    budget = net.engine_.kernel.budget
    n = int(lengths.size)
    if budget and n > budget:
        raise ModelFileError(f"{where}: {n} support vectors exceed the budget {budget}")
    engine = net.engine_
    engine.adopt(ids, vals, lengths, alpha, int(header.get("oldest", 0)), budget)
    engine.mistakes = [int(v) for v in header.get("mistakes", [])]
    engine.updates = [int(v) for v in header.get("updates", [])]
    engine.n_examples_seen = int(header.get("examples_seen", 0))
    engine.indicator = bool(header.get("indicator", False))
    calibration_from_file(engine, net.calibrate, header, arrays, where)
    return net
