"""Saving and loading networks and classifiers (see :mod:`snowpy.model_file`).

Each kind of model describes itself as plain data (``to_state``: a header and
named arrays; :mod:`snowpy.network.state`, :meth:`snowpy.SnowClassifier.to_state`) and is
restored by its class's ``from_state``, found in one registry
(:mod:`snowpy.model_kinds`); :mod:`snowpy.model_file` writes and validates the file. Everything needed to
reproduce predictions and to continue training exactly is stored. A loaded
model predicts bit for bit like the saved one, and ``partial_fit`` continues
where the saved model would have.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import snowpy.classifier  # noqa: F401 - registers the kinds of model (and the networks')
from snowpy import model_kinds
from snowpy.exceptions import ModelFileError
from snowpy.model_file import read_model
from snowpy.model_schema import check_header

__all__ = ["ModelFileError", "load", "save"]


def save(model: Any, path: str | os.PathLike, *, inference_only: bool = False,
         key: bytes | None = None) -> Path:
    """Save a trained :class:`Network` or :class:`SnowClassifier` atomically.

    With ``inference_only`` the file keeps only what prediction needs: the
    effective weight of each link (averaged, planes combined) and no
    averaging sums, counts or progressive-calibration window. Its
    predictions and probabilities are bit-identical to the full model's; it
    cannot continue training (``partial_fit`` refuses; ``fit`` starts afresh).

    ``key`` (bytes, at least 16) signs the file with an HMAC-SHA256; ``load(path,
    key=key)`` then refuses a file that was not signed with it. Without a key, a
    file's checksums detect damage, not tampering.

    >>> import snowpy, tempfile, os
    >>> clf = snowpy.SnowClassifier(epochs=2).fit(["a b", "c d"], ["x", "y"])
    >>> path = snowpy.save(clf, os.path.join(tempfile.mkdtemp(), "m.snowpy"))
    >>> snowpy.load(path).predict(["a"]).tolist()
    ['x']
    """
    model_kinds.kind_of(model)  # (a ConfigurationError for what no kind describes)
    return model.save(path, inference_only=inference_only, key=key)


def load(path: str | os.PathLike, *, mmap: bool = False, verify: bool = True,
         key: bytes | None = None) -> Any:
    """Load a model file written by :func:`save`, validating it.

    ``mmap=True`` maps the weights from the file (copy-on-write) instead of
    reading them: fast to load, memory shared between processes.
    ``verify=False`` skips the arrays' checksums (for a trusted file): with
    ``mmap=True``, loading then costs the header only. ``key``: the file must be
    signed with it (``save(..., key=key)``); a file from others is trusted only so.
    A custom ``token_pattern`` read from the file runs under a time budget per
    document, in any thread (:mod:`snowpy.text.patterns`).

    Raises
    ------
    ModelFileError
        The file is not a valid snowpy model; the message says why.
    """
    header, arrays = read_model(path, mmap=mmap, verify=verify, key=key)
    check_header(header, str(path))
    # (mapped arrays come copy-on-write, from the file as it was opened: training a
    # loaded model never writes into the file, and a save racing the load cannot mix in)
    where = str(path)
    try:
        return model_kinds.restore(header, arrays, where)
    except ModelFileError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # a header whose fields have the wrong types: one line, never a traceback
        raise ModelFileError(f"{where}: the header is malformed ({type(exc).__name__}: "
                             f"{exc})") from None
