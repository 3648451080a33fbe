"""Checkpoints of a distributed fit: the mixed networks after every round.

A checkpoint is a folder: one model file per network being trained and round
(``network.round-3.snowpy``, ``fold-1.round-3.snowpy``...), each written
atomically, then ``progress.json`` (also atomic) naming the files of the last
complete round and what the run was (data, shards, parameters); the previous
round's files go last. A client killed at any moment leaves either
the previous round's checkpoint or the new one, never a mixture; ``resume``
refuses a checkpoint of other data or other parameters.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from snowpy._atomic import write_bytes
from snowpy.exceptions import ConfigurationError, ModelFileError
from snowpy.model_file import read_model, write_model

__all__ = ["Checkpoint"]

_PROGRESS = "progress.json"
#: A network's file of a round (``fold-1.round-3.snowpy``).
_ROUND = re.compile(r"^[\w-]+\.round-\d+\.snowpy$")


class Checkpoint:
    """The checkpoint folder of one run (``fingerprint``: what the run is)."""

    def __init__(self, folder: Path, fingerprint: dict[str, Any]) -> None:
        self.folder = Path(folder)
        self.fingerprint = orjson.loads(orjson.dumps(fingerprint, default=str))

    def save(self, rounds: int, states: dict[str, Any], done: dict[str, bool]) -> None:
        """Write the networks of ``states`` after ``rounds`` rounds, then the progress.
        A state is ``(header, arrays)``, or a callable that returns it: fetched as it is
        written, one network in memory at a time."""
        self.folder.mkdir(parents=True, exist_ok=True)
        previous = self._progress() or {}
        files = dict(previous.get("files", {}))
        for name, state in states.items():
            header, arrays = state() if callable(state) else state
            files[name] = f"{name}.round-{rounds}.snowpy"
            write_model(self.folder / files[name], {"kind": "network", "network": header},
                        arrays)
            del header, arrays  # (before the next network is fetched)
        record = {"rounds": rounds, "done": done, "run": self.fingerprint, "files": files}
        write_bytes(self.folder / _PROGRESS, orjson.dumps(record, option=orjson.OPT_INDENT_2))
        for old in self.folder.glob("*.snowpy"):  # files of earlier rounds, no longer named
            if old.name not in files.values():
                old.unlink(missing_ok=True)

    def _progress(self) -> dict[str, Any] | None:
        path = self.folder / _PROGRESS
        if not path.is_file():
            return None
        try:
            record = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError as exc:
            raise ConfigurationError(f"{path}: not a snowpy checkpoint ({exc})") from None
        if not isinstance(record, dict) or not isinstance(record.get("rounds"), int):
            raise ConfigurationError(f"{path}: not a snowpy checkpoint (no round count)")
        return record

    def shards(self) -> int | None:
        """How many shards the checkpointed run had (None: no checkpoint, or no count): a
        resumed run reuses them, whatever its number of workers."""
        record = self._progress()
        shards = (record or {}).get("run", {}).get("shards")
        return len(shards) if isinstance(shards, list) and shards else None

    def load(self, names: list[str]) -> tuple[int, dict[str, Any], dict[str, bool]]:
        """``(rounds done, the networks' states, which are finished)`` to resume from."""
        record = self._progress()
        if record is None:
            raise ConfigurationError(f"{self.folder}: no checkpoint to resume from (it holds "
                                     f"no {_PROGRESS})")
        stored = record.get("run", {})
        for key, value in self.fingerprint.items():
            if stored.get(key) != value:
                raise ConfigurationError(
                    f"{self.folder}: the checkpoint is of another run: its {key} differ(s) "
                    f"from this one's; resume with the same data and options, or start afresh "
                    "without --resume")
        states = {}
        files = record.get("files", {})
        for name in names:
            if not isinstance(files.get(name), str):
                raise ConfigurationError(f"{self.folder}: the checkpoint names no file for "
                                         f"{name}")
            path = self.folder / Path(files[name]).name
            try:
                header, arrays = read_model(path)
            except ModelFileError as exc:
                raise ConfigurationError(f"the checkpoint is damaged: {exc}") from None
            states[name] = (header["network"], {k: np.array(v) for k, v in arrays.items()})
        done = {name: bool(record.get("done", {}).get(name, False)) for name in names}
        return int(record["rounds"]), states, done

    def complete(self) -> None:
        """The run ended (its trained model is returned): the checkpoint goes, its files and
        the folder when nothing else is in it (a folder given may hold other files)."""
        if not self.folder.is_dir():
            return
        for path in self.folder.iterdir():
            name = path.name
            if path.is_file() and (name == _PROGRESS or _ROUND.match(name)
                                   or (name.startswith(".") and name.endswith(".tmp"))
                                   or name.startswith(f".{_PROGRESS}.")):
                path.unlink(missing_ok=True)
        try:
            self.folder.rmdir()
        except OSError:  # (not empty: what else the folder holds stays)
            pass
