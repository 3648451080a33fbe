"""The serve journal in the process (`snowpy.serving.journal`): which snapshot is the
newest, what a snapshot drops, the journal's lines as written and as replayed after a
crash. (`tests/test_serve.py` kills real servers; these read the folder they leave.)"""

from __future__ import annotations

import orjson

from snowpy.serving.journal import JOURNAL, Journal


def test_the_state_folder_is_made_and_opened_again(tmp_path):
    folder = tmp_path / "deep" / "state"
    Journal(folder)
    assert folder.is_dir() and list(folder.iterdir()) == []
    assert Journal(folder).path == folder / JOURNAL  # (a restart finds it there)


def test_the_newest_snapshot_is_found_by_its_number(tmp_path):
    journal = Journal(tmp_path)
    assert journal.latest_snapshot() is None
    for name in ("snapshot-000000000007.snowpy", "snapshot-000000000021.snowpy",
                 "snapshot-000000000003.snowpy", "snapshot-99.snowpy",
                 "snapshot-000000000050.snowpy.tmp", "model.snowpy"):
        (tmp_path / name).write_bytes(b"")
    assert journal.latest_snapshot() == (21, tmp_path / "snapshot-000000000021.snowpy")


def test_a_snapshot_drops_the_older_ones_and_the_examples_it_holds(tmp_path):
    journal = Journal(tmp_path)
    records = [{"seq": n, "text": f"text {n}", "label": "a" if n % 2 else "b"}
               for n in range(1, 8)]
    journal.append(records[:3])
    journal.append(records[3:])
    (tmp_path / "snapshot-000000000002.snowpy").write_bytes(b"old")
    (tmp_path / "unrelated.txt").write_bytes(b"kept")
    saved = []

    def save(path):
        saved.append(path)
        path.write_bytes(b"new")

    path = journal.snapshot(5, save)
    assert path == saved[0] == tmp_path / "snapshot-000000000005.snowpy"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        JOURNAL, "snapshot-000000000005.snowpy", "unrelated.txt"]
    assert path.read_bytes() == b"new"
    assert list(journal.replay(0)) == records[5:]  # only the examples after it
    journal.append([{"seq": 8, "text": "more", "label": "a"}])  # (appends after compacting)
    assert [r["seq"] for r in journal.replay(5)] == [6, 7, 8]


def test_examples_are_written_as_one_json_line_each(tmp_path):
    journal = Journal(tmp_path)
    journal.append([{"seq": 1, "text": "a\\tb \u00e9", "label": ["x", "y"]},
                    {"seq": 2, "text": "", "label": 3}])
    journal.close()
    assert (tmp_path / JOURNAL).read_bytes() == (
        b'{"seq":1,"text":"a\\\\tb \xc3\xa9","label":["x","y"]}\n'
        b'{"seq":2,"text":"","label":3}\n')
    journal.close()  # (closing twice is harmless)


def test_a_replay_skips_what_a_snapshot_holds_and_stops_at_a_damaged_line(tmp_path):
    lines = [orjson.dumps({"seq": n, "text": str(n), "label": "a"}) + b"\n"
             for n in range(1, 5)]
    (tmp_path / JOURNAL).write_bytes(
        lines[0] + lines[1] + b"[1, 2]\n" + b'{"text": "no seq"}\n' + lines[2]
        + b"{not json\n" + lines[3])
    journal = Journal(tmp_path)
    # a line that is not a record, or holds no seq, is not learned; a damaged line ends
    # the replay (what follows it was never acknowledged)
    assert [r["seq"] for r in journal.replay(0)] == [1, 2, 3]
    assert [r["seq"] for r in journal.replay(1)] == [2, 3]
    assert list(journal.replay(3)) == []
    (tmp_path / JOURNAL).write_bytes(lines[0] + lines[1] + lines[2][:-1])  # a torn line
    assert [r["seq"] for r in journal.replay(0)] == [1, 2]
    (tmp_path / JOURNAL).unlink()
    assert list(journal.replay(0)) == []  # (no journal yet: nothing to replay)


def test_an_older_snapshot_gone_already_does_not_fail_the_new_one(tmp_path, monkeypatch):
    # (removed by hand between the listing and the removal: the new snapshot stands)
    import snowpy.serving.journal as module

    journal = Journal(tmp_path)
    listed = module.os.listdir
    monkeypatch.setattr(module.os, "listdir", lambda folder: [
        *listed(folder), "snapshot-000000000001.snowpy"])
    path = journal.snapshot(4, lambda p: p.write_bytes(b"model"))
    assert path.read_bytes() == b"model"


class _Killed(BaseException):
    """The process ending mid-save (no handler of snowpy's runs past it)."""


def test_a_snapshot_whose_save_fails_keeps_the_journal_and_the_older_snapshot(tmp_path):
    """The journal is compacted, and the older snapshot dropped, only after the new
    snapshot is on the disk: a save that fails (a full disk) or dies half-written (a
    temporary file left, as a kill leaves it) leaves every example in the journal and
    the older snapshot the newest; the next save that succeeds compacts as usual."""
    import errno

    journal = Journal(tmp_path)
    records = [{"seq": n, "text": f"text {n}", "label": "a"} for n in range(1, 8)]
    journal.append(records)
    (tmp_path / "snapshot-000000000002.snowpy").write_bytes(b"old")

    def full(path):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    def killed(path):
        (tmp_path / f".{path.name}.4242.tmp").write_bytes(b"PK\x03\x04 half")
        raise _Killed()

    for save, raised in ((full, OSError), (killed, _Killed)):
        try:
            journal.snapshot(6, save)
        except raised:
            pass
        else:
            raise AssertionError("the failed save was not raised")
        assert journal.latest_snapshot() == (2, tmp_path / "snapshot-000000000002.snowpy")
        assert (tmp_path / "snapshot-000000000002.snowpy").read_bytes() == b"old"
        assert list(Journal(tmp_path).replay(2)) == records[2:]  # (as a restart reads it)
    journal.append([{"seq": 8, "text": "more", "label": "b"}])  # (the journal goes on)
    assert [r["seq"] for r in journal.replay(0)] == list(range(1, 9))
    journal.snapshot(8, lambda p: p.write_bytes(b"new"))
    assert journal.latest_snapshot() == (8, tmp_path / "snapshot-000000000008.snowpy")
    assert list(journal.replay(0)) == []
