"""The roll records' port (``worker.ports.records``): one contract on both implementations,
memory and Redis (issue 28), and the archive's export and restore run on each."""

from __future__ import annotations

import json
from datetime import date

import pytest

from worker.adapters.memory.records import MemoryRollRecords
from worker.adapters.redis.archive import RedisRollRecords
from worker.adapters.redis.store import encode_envelope, roll_index_keys, roll_key_name
from worker.ports.records import RestoredRecord


class Records:
    """A port and a way to put a record in its store as the post pipeline does."""

    def __init__(self, kind: str, request) -> None:  # type: ignore[no-untyped-def]
        if kind == "memory":
            self.port = MemoryRollRecords()
            self.client = None
        else:
            request.getfixturevalue("cleanup_keys")
            self.client = request.getfixturevalue("redis_client")
            self.port = RedisRollRecords(self.client)

    def add(self, envelope: dict, stored_ms: int, revealed: dict | None = None) -> None:
        if self.client is None:
            self.port.add(envelope, stored_ms, revealed)
            return
        rid = envelope["record"]["roll_id"]
        self.client.set(roll_key_name(rid), encode_envelope(envelope))
        for key in roll_index_keys(envelope["record"]):
            self.client.zadd(key, {rid: stored_ms})
        if revealed:
            self.client.hset(f"nr:reveal:{{{rid}}}", mapping=revealed)


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration)])
def records(request) -> Records:
    return Records(request.param, request)


def envelope(game: str, rid: str, day: str = "2026-12-01", secret: bool = False) -> dict:
    return {"key_id": "k1", "signature": "sig", "record": {
        "roll_id": rid, "game": game, "game_day": day, "author": "Ana", "forum": "f", "thread": "1",
        "outcome": "success", "flags": {"secret": True} if secret else {}}}


def test_the_index_reads_in_order_and_in_bounds(records, unique):
    game = f"g-{unique}"
    for i, ms in enumerate([3000, 1000, 2000, 2000]):
        records.add(envelope(game, f"r{i}-{unique}"), ms)
    port = records.port
    assert port.index_size(game) == 4
    assert [rid for rid, _ in port.index_page(game, 0, 10)] == [f"r1-{unique}", f"r2-{unique}", f"r3-{unique}",
                                                               f"r0-{unique}"]
    assert [score for _, score in port.index_page(game, 1, 2)] == [2000.0, 2000.0]
    assert [rid for rid, _ in port.index_between(game, 1000, "(3000", 1, 5)] == [f"r2-{unique}", f"r3-{unique}"]
    assert port.count_between(game, [(1000, "(3000"), (3000, "(4000"), (5000, "(6000")]) == [3, 1, 0]
    assert port.first_record(game)["record"]["roll_id"] == f"r1-{unique}"
    assert port.first_record(f"none-{unique}") is None
    assert port.records([f"r0-{unique}", f"gone-{unique}"])[1] is None


def test_the_archive_book_and_its_lock(records, unique):
    game, port = f"g-{unique}", records.port
    assert port.archive_book(game).counts == {} and port.archive_book(game).dirty == frozenset()
    port.mark_archived(game, "2026-12-01", 3)
    port.mark_swept(game, "2026-12-01")
    assert dict(port.archive_book(game).counts) == {"2026-12-01": "3", "through": "2026-12-01"}
    with port.job_lock(f"archive-{unique}", ttl_ms=10_000) as token:
        assert token is not None
        with port.job_lock(f"archive-{unique}", ttl_ms=10_000) as second:
            assert second is None
    with port.job_lock(f"archive-{unique}", ttl_ms=10_000) as again:
        assert again is not None


def test_a_restore_never_overwrites(records, unique):
    game, port = f"g-{unique}", records.port
    held = envelope(game, f"a-{unique}", secret=True)
    records.add(held, 1000, {"at": "t", "by": "m", "how": "cli"})
    changed = {**held, "signature": "other"}
    fresh = envelope(game, f"b-{unique}", secret=True)
    assert port.existing([f"a-{unique}", f"b-{unique}"]) == [(held, True), (None, False)]
    port.restore([RestoredRecord(f"a-{unique}", changed, 5000, False, None),
                  RestoredRecord(f"b-{unique}", fresh, 2000, True, {"at": "u", "by": "n", "how": "web"})])
    assert port.records([f"a-{unique}", f"b-{unique}"]) == [held, fresh]
    assert port.reveals([f"a-{unique}", f"b-{unique}"]) == [{"at": "t", "by": "m", "how": "cli"},
                                                           {"at": "u", "by": "n", "how": "web"}]
    assert port.index_page(game, 0, 10) == [(f"a-{unique}", 1000.0), (f"b-{unique}", 2000.0)]


def test_an_export_restores_into_an_empty_store(records, unique):
    from worker.service.archive import export_lines
    from worker.service.archive_import import ArchiveEntry, import_entries

    game = f"g-{unique}"
    records.add(envelope(game, f"x-{unique}"), 1000)
    records.add(envelope(game, f"y-{unique}", day="2026-12-02"), 90_000_000)
    lines = list(export_lines(records.port, game, since=None))
    assert len(lines) == 2
    since = list(export_lines(records.port, game, since=date(2026, 12, 2)))
    assert len(since) == 1 and f"y-{unique}" in since[0]
    target = MemoryRollRecords()
    entries = [ArchiveEntry(json.loads(line)["envelope"], json.loads(line)["stored_ms"], None, f"f:{i}")
               for i, line in enumerate(lines, 1)]
    report = import_entries(target, entries)
    assert (report.added, report.same) == (2, 0)
    assert list(export_lines(target, game)) == lines
    assert import_entries(target, entries).same == 2  # idempotent
