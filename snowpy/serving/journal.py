"""Nothing learned is lost: a write-ahead log of the examples a service learns, and
atomic snapshots of its model.

The state folder holds ``snapshot-<seq>.snowpy`` files (the model after the examples up
to ``seq``, each written atomically, the newest kept) and ``journal.jsonl``, one line per
example learned since: ``{"seq": n, "text": ..., "label": ...}``, or label forgotten:
``{"seq": n, "forget": ...}``. An example (or a label forgotten) is appended
and flushed to the disk (``fsync``) *before* it is learned and acknowledged, so a process
killed at any moment (``kill -9``) is recovered by loading the newest snapshot and
learning again the journal's examples after its ``seq`` (and forgetting again its labels
forgotten, in their places); a torn last line (the kill came
mid-write, before the acknowledgement) is dropped. After a snapshot the journal keeps only
the examples after it (rewritten atomically).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from snowpy._atomic import write_bytes

__all__ = ["Journal"]

_SNAPSHOT = re.compile(r"^snapshot-(\d{12})\.snowpy$")
JOURNAL = "journal.jsonl"


class Journal:
    """The state folder of one service (created if missing)."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / JOURNAL
        self._handle: Any = None

    # ---------------------------------------------------------------- snapshots
    def latest_snapshot(self) -> tuple[int, Path] | None:
        """``(seq, path)`` of the newest snapshot, or None."""
        found = sorted((int(m.group(1)), self.folder / name) for name in os.listdir(self.folder)
                       if (m := _SNAPSHOT.match(name)))
        return found[-1] if found else None

    def snapshot(self, seq: int, save: Any) -> Path:
        """Write a snapshot of the model after example ``seq`` (``save(path)`` writes it
        atomically), then drop older snapshots and the journal's examples it holds."""
        path = self.folder / f"snapshot-{seq:012d}.snowpy"
        save(path)
        for name in os.listdir(self.folder):
            match = _SNAPSHOT.match(name)
            if match and int(match.group(1)) < seq:
                (self.folder / name).unlink(missing_ok=True)
        self._compact(seq)
        return path

    # ------------------------------------------------------------------ journal
    def append(self, records: list[dict[str, Any]]) -> None:
        """Append examples and make them durable (flushed and fsynced) before returning."""
        if self._handle is None:
            self._handle = open(self.path, "ab")
        self._handle.write(b"".join(orjson.dumps(r) + b"\n" for r in records))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def replay(self, after: int) -> Iterator[dict[str, Any]]:
        """The journal's examples after ``seq`` ``after``, in order (a torn or damaged
        line, which was never acknowledged, ends the replay)."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as handle:
            for line in handle:
                if not line.endswith(b"\n"):
                    return  # (torn: the process died while writing it)
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    return
                if isinstance(record, dict) and int(record.get("seq", 0)) > after:
                    yield record

    def _compact(self, seq: int) -> None:
        kept = [orjson.dumps(r) + b"\n" for r in self.replay(seq)]
        self.close()
        write_bytes(self.path, b"".join(kept))

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
