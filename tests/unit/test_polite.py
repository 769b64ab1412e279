"""Polite HTTP: shared rate limit, host backoff, conditional GETs (worker.forums.polite)."""

from __future__ import annotations

import logging
import random
import re

import pytest
import requests

from tests.unit.fakeweb import FakeWeb, Reply
from worker.forums.base import ForumError, log_forum_alert
from worker.forums.polite import (
    Politeness,
    content_digest,
    parse_retry_after,
    request,
)
from worker.forums.politestate import MemoryBackend, RedisBackend


class Clock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds

    slept: list[float]


def polite(clock: Clock | None = None, **kw) -> tuple[Politeness, Clock]:
    clock = clock or Clock()
    clock.slept = []
    p = Politeness(MemoryBackend(clock), "foro", sleep=clock.sleep, clock=clock,
                   rng=random.Random(1), **kw)
    return p, clock


def test_requests_to_one_host_are_spaced_by_the_interval():
    p, clock = polite(min_interval=2.0)
    for _ in range(3):
        p.throttle("http://a.test/x")
    assert clock.slept == [2.0, 2.0]
    p.throttle("http://b.test/x")  # another host has its own slots
    assert clock.slept == [2.0, 2.0]


def test_a_slot_too_far_away_is_refused_without_reserving_it():
    p, clock = polite(min_interval=10.0, max_wait=5.0)
    p.throttle("http://a.test/")
    with pytest.raises(ForumError) as err:
        p.throttle("http://a.test/")
    assert err.value.reason == "throttled" and err.value.transient
    assert err.value.retry_after == pytest.approx(10.0, abs=0.01)
    clock.t += 10
    p.throttle("http://a.test/")  # the refused call did not push the slot further
    assert clock.slept == []


def test_flood_slot_waits_then_refuses_with_retry_after():
    p, clock = polite(max_wait=20.0)
    p.flood_slot(15.0)
    p.flood_slot(15.0)
    assert clock.slept == [15.0]
    clock.t += 1  # posted 1 s ago; the next slot is 14 s + 15 s away
    p.flood_slot(15.0, max_wait=30)
    with pytest.raises(ForumError) as err:
        p.flood_slot(15.0, max_wait=5)
    assert err.value.reason == "flood" and err.value.retry_after == pytest.approx(15.0, abs=0.01)


def test_host_failures_back_off_exponentially_with_jitter_and_success_clears():
    p, clock = polite(backoff_base=4.0, backoff_cap=100.0)
    delays = [p.host_failed("http://a.test/t") for _ in range(6)]
    spans = [4, 8, 16, 32, 64, 100]
    for delay, span in zip(delays, spans, strict=False):
        assert span / 2 <= delay <= span
    with pytest.raises(ForumError) as err:
        p.throttle("http://a.test/other")
    assert err.value.reason == "throttled" and 50 <= err.value.retry_after <= 100
    clock.t += 101
    p.throttle("http://a.test/other")  # backoff over
    p.host_ok("http://a.test/")
    assert p.backend.get("nr:host:{a.test}:down") == {}


def test_request_maps_transport_faults_and_puts_the_host_in_backoff():
    web = FakeWeb()
    web.route("GET", "/down", requests.ConnectionError("refused"))
    web.route("GET", "/slow", requests.ReadTimeout("slow"))
    web.route("GET", "/err", Reply(503, "maintenance"))
    web.route("GET", "/busy", Reply(429, '{"extras": {"wait_seconds": 42}}'))
    session = web.session()
    for path, reason in [("/down", "connection"), ("/slow", "timeout"), ("/err", "http_5xx")]:
        p, clock = polite()
        with pytest.raises(ForumError) as err:
            request(session, "GET", f"http://forum.test{path}", timeout=2.0, polite=p)
        assert err.value.reason == reason and err.value.transient
        calls = len(web.log)
        with pytest.raises(ForumError) as err:  # backoff: no request at all
            request(session, "GET", "http://forum.test/ok", timeout=2.0, polite=p)
        assert err.value.reason == "throttled" and len(web.log) == calls
    with pytest.raises(ForumError) as err:
        request(session, "GET", "http://forum.test/busy", timeout=2.0)
    assert err.value.reason == "flood" and err.value.retry_after == 42


@pytest.mark.parametrize("value, seconds", [
    ("120", 120.0), ("0", 0.0), ("-5", 0.0), ("999999", 3600.0), ("soon", None), (None, None),
    ("Wed, 21 Oct 2015 07:28:30 GMT", 30.0),
])
def test_parse_retry_after(value, seconds):
    now = 1445412480.0  # 2015-10-21 07:28:00 UTC
    assert parse_retry_after(value, now=now) == seconds


def test_digest_ignores_volatile_parts():
    token = re.compile(r'content="[^"]*"')
    a = '<meta name="csrf-token" content="abc"><p>hola</p>'
    b = '<meta name="csrf-token" content="xyz"><p>hola</p>'
    assert content_digest(a, [token]) == content_digest(b, [token])
    assert content_digest(a) != content_digest(b)


def _conditional_web(etag: str | None):
    web = FakeWeb()
    state = {"body": "<p>v1</p>"}

    def topic(seen):
        headers = {"ETag": etag} if etag else {}
        if etag and seen.headers.get("If-None-Match") == etag:
            return Reply(304, "", headers)
        return Reply(200, state["body"], headers)

    web.route("GET", "/topic/1", topic)
    return web, state


@pytest.mark.parametrize("etag", ['"v1"', None])
def test_idle_resource_is_unchanged_until_revalidation(etag):
    web, state = _conditional_web(etag)
    session = web.session()
    p, clock = polite(revalidate_after=600)
    url = "http://forum.test/topic/1"

    def send(headers):
        return request(session, "GET", url, timeout=2.0, polite=p, headers=headers)

    first = p.conditional(url, send)
    assert not first.unchanged and first.response.text == "<p>v1</p>"
    again = p.conditional(url, send)
    assert not again.unchanged, "nothing is remembered before commit()"
    again.commit({"last_page": "3"})
    idle = p.conditional(url, send)
    assert idle.unchanged and idle.memo == {"last_page": "3"}
    assert idle.response.status_code == (304 if etag else 200)
    if etag:
        assert web.log[-1].headers["If-None-Match"] == etag
    clock.t += 601  # stale: a full read without validators
    full = p.conditional(url, send)
    assert not full.unchanged and "If-None-Match" not in web.log[-1].headers
    full.commit()
    state["body"] = "<p>v2</p>"
    if etag:  # the forum changed its ETag with the content
        web.routes[("GET", "/topic/1")] = [lambda seen: Reply(200, state["body"], {"ETag": '"v2"'})]
    changed = p.conditional(url, send)
    assert not changed.unchanged and changed.response.text == "<p>v2</p>"


def test_alert_is_logged_at_error_with_structured_fields(caplog):
    with caplog.at_level(logging.ERROR, logger="narrador.alerts"):
        log_forum_alert("foro", ForumError("markup", "no div.post", url="http://f/t"),
                        thread_id="12", thread="shadows-a-logrecord-field")
    rec = caplog.records[-1]
    assert rec.levelno == logging.ERROR and rec.alert == "markup" and rec.forum == "foro"
    assert rec.url == "http://f/t" and rec.thread_id == "12"
    assert rec.ctx_thread == "shadows-a-logrecord-field"


@pytest.mark.integration
def test_redis_backend_shares_slots_between_workers(redis_client, unique):
    a = RedisBackend(redis_client)
    b = RedisBackend(redis_client)
    key = f"nr:host:{{h-{unique}}}:next"
    try:
        waits = [a.reserve(key, 1000, 5000), b.reserve(key, 1000, 5000), a.reserve(key, 1000, 5000)]
        assert waits[0] == 0
        assert 900 <= waits[1] <= 1000 and 1900 <= waits[2] <= 2000
        assert b.reserve(key, 1000, 500) < -2000  # refused: ~3 s away
        assert 2900 <= a.reserve(key, 1000, 5000) <= 3000  # the refusal reserved nothing
        a.put(f"nr:http:{{f-{unique}}}:x", {"digest": "d"}, 60)
        assert b.get(f"nr:http:{{f-{unique}}}:x") == {"digest": "d"}
        assert 0 < redis_client.ttl(f"nr:http:{{f-{unique}}}:x") <= 60
    finally:
        redis_client.delete(key, f"nr:http:{{f-{unique}}}:x")


@pytest.mark.integration
def test_redis_backend_reserves_only_while_the_host_is_up(redis_client, unique):
    backend = RedisBackend(redis_client)
    nxt, down = f"nr:host:{{h-{unique}}}:next", f"nr:host:{{h-{unique}}}:down"
    try:
        assert backend.reserve_if_up(nxt, down, 1000, 5000) == ({}, 0)
        record, wait = backend.reserve_if_up(nxt, down, 1000, 5000)
        assert record == {} and 900 <= wait <= 1000
        backend.put(down, {"failures": "2", "until": "123.000"}, 60)
        assert backend.reserve_if_up(nxt, down, 1000, 5000) == ({"failures": "2", "until": "123.000"}, None)
        # the refusal reserved nothing: the next slot is still the third one
        backend.delete(down)
        assert 1900 <= backend.reserve_if_up(nxt, down, 1000, 5000)[1] <= 2000
    finally:
        redis_client.delete(nxt, down)


class CountingBackend(MemoryBackend):
    def __init__(self, clock) -> None:
        super().__init__(clock)
        self.calls: list[str] = []

    def __getattribute__(self, name):
        if name in ("reserve", "reserve_if_up", "get", "put", "delete"):
            object.__getattribute__(self, "calls").append(name)
        return object.__getattribute__(self, name)


def test_a_request_to_a_healthy_host_costs_one_backend_call():
    clock = Clock()
    clock.slept = []
    backend = CountingBackend(clock)
    p = Politeness(backend, "foro", min_interval=0.0, sleep=clock.sleep, clock=clock)
    web = FakeWeb("http://a.test")
    web.route("GET", "/x", Reply(200, "ok"))
    session = web.session()
    request(session, "GET", "http://a.test/x", timeout=5, polite=p)
    assert backend.calls == ["reserve_if_up"]
    # after a failure, the backoff record is read with the reservation and cleared on success
    p.host_failed("http://a.test/x")
    clock.t += 10  # the backoff (2.5-5 s after one failure) is over; its record is not expired
    backend.calls.clear()
    request(session, "GET", "http://a.test/x", timeout=5, polite=p)
    assert backend.calls == ["reserve_if_up", "reserve", "get", "delete"]
    backend.calls.clear()
    request(session, "GET", "http://a.test/x", timeout=5, polite=p)
    assert backend.calls == ["reserve_if_up"]
