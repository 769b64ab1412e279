"""Item 6: Redis memory per stored roll record.

Posts with one tag each go through the real :func:`worker.service.process_post` on a unique
game (spread over 50 threads and 10 authors, so the audit indexes look like a game's), and we
read:

- ``MEMORY USAGE`` of the record keys (``nr:roll:{id}``, sampled), of the post hashes and of
  the reply keys (``nr:reply:...``, alive until the reply is posted; this run posts none);
- the ``INFO memory`` ``used_memory`` delta over the whole batch, divided by the records:
  everything one roll costs (record, post hash, reply key, four index entries, game state);
- the floor: the bytes of the signed envelope's canonical JSON (what ``/v/``, exports and the
  verifier see), whatever form it is stored in (compressed since issue 30).

Every key of the run is deleted afterwards.  ``used_memory`` is server-wide, so other
clients writing at the same time add noise: the figure is the median of the per-key
measurements where possible, and the delta is reported beside it.
"""

from __future__ import annotations

import json
import statistics

from tests.bench.common import ONE_TAG_HTML, Bench, cleanup
from tests.bench.harness import Row, check_size


def run(*, size: str = "full", records: int | None = None) -> list[Row]:
    """Item 6's rows."""
    from worker import service
    from worker.adapters.redis.store import canonical_envelope, decode_envelope, post_key, reply_key, roll_key_name

    n = records or {"full": 10_000, "quick": 2000, "smoke": 20}[check_size(size)]
    with Bench() as bench:
        r = bench.client
        warm = bench.post(ONE_TAG_HTML)
        service.process_post(bench.svc, warm)
        cleanup(r, bench.unique)
        before = int(r.info("memory")["used_memory"])
        posts = [bench.post(ONE_TAG_HTML, thread_id=str(1 + i % 50), author=f"jugadora{i % 10}")
                 for i in range(n)]
        roll_ids: list[str] = []
        for post in posts:
            roll_ids += service.process_post(bench.svc, post).roll_ids
        after = int(r.info("memory")["used_memory"])
        sample = roll_ids[:: max(1, len(roll_ids) // 200)]
        roll_bytes = [int(r.memory_usage(roll_key_name(rid), samples=0)) for rid in sample]
        # the floor is the signed envelope's canonical JSON, however it is stored (compressed)
        payload = [len(canonical_envelope(decode_envelope(r.get(roll_key_name(rid)))).encode("utf-8"))
                   for rid in sample]
        post_bytes = [int(r.memory_usage(post_key(bench.forum_name, p.post_id), samples=0))
                      for p in posts[:: max(1, n // 200)]]
        # the reply text's own key lives until the reply is posted (none is posted here)
        reply_bytes = [int(r.memory_usage(reply_key(bench.forum_name, p.post_id), samples=0) or 0)
                       for p in posts[:: max(1, n // 200)]]
        index_keys = list(r.scan_iter(match=f"nr:game:{{{bench.game}}}:rolls*", count=1000))
        index_bytes = sum(int(r.memory_usage(k, samples=0)) for k in index_keys)
        envelope_example = decode_envelope(r.get(roll_key_name(roll_ids[0])))
    per_record = statistics.median(roll_bytes)
    per_payload = statistics.median(payload)
    per_post = statistics.median(post_bytes)
    per_roll_all = per_record + per_post + index_bytes / len(roll_ids)
    per_reply = statistics.median(reply_bytes)
    delta = (after - before) / len(roll_ids)
    scale = 10_000 / len(roll_ids)
    measured = f"measured on {len(roll_ids):,}" + ("" if scale == 1 else f", ×{scale:g}")
    rows = [
        Row(
            item="6 memory", what="Redis bytes per roll record key (MEMORY USAGE, median)",
            value=f"{per_record:,.0f} B",
            peer=f"stored JSON envelope: {per_payload:,.0f} B",
            ratio=f"{per_record / per_payload:.2f}x the payload",
            limit="Redis 7 string encoding; the floor is the envelope's canonical JSON (record + 128-hex "
                  "signature, ~1.9 KB), stored deflated with a preset dictionary and base64 (issue 30).",
        ),
        Row(
            item="6 memory", what="Redis bytes per stored roll, all keys (record + post hash "
                                  "+ 4 index entries), its reply posted",
            value=f"{per_roll_all:,.0f} B; INFO used_memory delta {delta:,.0f} B",
            peer=f"stored JSON envelope: {per_payload:,.0f} B",
            ratio=f"{per_roll_all / per_payload:.2f}x the payload",
            limit="one-tag posts, so the post hash (a listpack) is not shared between rolls. INFO delta "
                  "is server-wide (noisy) and includes the reply keys and the game state the posts wrote.",
        ),
        Row(
            item="6 memory", what="… while the post's reply is not posted yet (+ its reply key)",
            value=f"{per_roll_all + per_reply:,.0f} B",
            peer=f"stored JSON envelope: {per_payload:,.0f} B",
            ratio=f"{(per_roll_all + per_reply) / per_payload:.2f}x the payload",
            limit="the reply text (~0.3 KB) has its own key from the commit until the reply is posted "
                  "(issue 30, item 4); this run posts no reply, so the INFO delta includes it.",
        ),
        Row(
            item="6 memory", what="per 10,000 rolls",
            value=f"{per_roll_all * 10_000 / 2**20:,.1f} MiB ({measured})",
            peer=f"payload alone: {per_payload * 10_000 / 2**20:,.1f} MiB",
            ratio=f"{per_roll_all / per_payload:.2f}x the payload",
            limit="linear in records; a 10,000-roll game fits any Redis.",
        ),
    ]
    rows[0].extra["envelope_example_bytes"] = len(json.dumps(envelope_example))
    rows[1].extra.update(index_keys=len(index_keys), index_bytes=index_bytes, reply_key_bytes=per_reply)
    return rows
