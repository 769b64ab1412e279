"""Benchmark (issue 5): records derived + signed + verified per second vs the bare crypto.

Run: ``/work/venv/bin/pytest tests/bench/test_bench_records.py -q -s -p no:cacheprovider``.
Prints both rates from the same run; the overhead of canonical JSON, record checks and
dice derivation is the difference.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.derive import derive_faces, roll_key
from core.record import (
    build_record,
    canonical_json,
    commitment,
    key_id_for,
    sign_record,
    verify_signed,
)

N = 2000


@pytest.mark.bench
def test_records_per_second_against_bare_ed25519():
    private = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    public = private.public_key()
    kid = key_id_for(public)
    keys = {kid: public}
    seed = bytes(32)
    when = datetime(2027, 3, 28, 12, tzinfo=UTC)

    start = time.perf_counter()
    for i in range(N):
        key = roll_key("bench", "f", "1", str(i), 0)
        faces = derive_faces(seed, key, 7)
        record = build_record(
            key_id=kid, game="bench", ruleset="vampiro", options={}, forum="f", thread="1",
            post=str(i), post_url="u", author="a", character=None, tag="[tirada 7]",
            tag_index=0, params={"pool": 7}, seed_commitment=commitment(seed), faces=faces,
            successes=1, outcome="success", degree=1, processed_at=when,
        )
        report = verify_signed(sign_record(record, private, kid), keys, seed=seed)
        assert report.ok
    full = N / (time.perf_counter() - start)

    message = canonical_json(record)
    start = time.perf_counter()
    for _ in range(N):
        public.verify(private.sign(message), message)
    bare = N / (time.perf_counter() - start)

    print(f"\nrecords derived+signed+verified: {full:,.0f}/s; bare Ed25519 sign+verify: "
          f"{bare:,.0f}/s; overhead x{bare / full:.1f}")
    assert full > 100  # a generous floor: one forum will never come near it
