"""Issue 18, item 2: one Redis URL, a plain server or a Sentinel-managed master, turned into
what each client expects (redis-py, kombu, Flask-Limiter's ``limits``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.adapters.redis.url import RedisUrlError, broker_options, limiter_storage, parse_redis_url, redis_client
from worker.app.celery_app import celery_config
from worker.config.settings import ConfigError, settings_from_mapping

SENTINEL = "redis+sentinel://:s%40cret@10.0.0.1:26379,10.0.0.2:26380,sentinel-3/narrador/2"


def test_a_sentinel_url_names_its_sentinels_master_and_db():
    t = parse_redis_url(SENTINEL)
    assert t.is_sentinel
    assert t.sentinels == (("10.0.0.1", 26379), ("10.0.0.2", 26380), ("sentinel-3", 26379))
    assert (t.master_name, t.db, t.password, t.username) == ("narrador", 2, "s@cret", None)
    assert parse_redis_url("sentinel://h:1/m").sentinels == (("h", 1),)
    assert parse_redis_url("redis+sentinel://h:1/m").db == 0
    assert not parse_redis_url("redis://127.0.0.1:6379/0").is_sentinel
    assert not parse_redis_url("unix:///run/redis.sock").is_sentinel


@pytest.mark.parametrize("url, message", [
    ("redis+sentinel://h:1", "no master name"),
    ("redis+sentinel://h:1/", "no master name"),
    ("redis+sentinel://h:x/m", "bad Sentinel address"),
    ("redis+sentinel://h:1/m/one", "bad database number"),
    ("redis+sentinel://:pw@h:99999/m", "bad Sentinel address"),
    ("memcached://h", "unknown scheme"),
    ("redis://", "no host"),
])
def test_bad_urls_say_what_is_wrong(url, message):
    with pytest.raises(RedisUrlError, match=message):
        parse_redis_url(url)


def test_a_bad_sentinel_url_is_a_configuration_error_without_its_password():
    with pytest.raises(ConfigError) as info:
        settings_from_mapping({"narrador": {"redis_url": "redis+sentinel://:hunter2@h:1"}}, base_dir=Path("/"),
                              environ={})
    assert "no master name" in str(info.value) and "hunter2" not in str(info.value)


def test_kombu_gets_one_sentinel_url_per_address_and_the_master_name():
    url, options = broker_options(SENTINEL)
    assert url == ("sentinel://:s%40cret@10.0.0.1:26379/2;sentinel://:s%40cret@10.0.0.2:26380/2;"
                   "sentinel://:s%40cret@sentinel-3:26379/2")
    assert options == {"master_name": "narrador"}
    assert broker_options("unix:///x/redis.sock") == ("redis+socket:///x/redis.sock", {})
    assert broker_options("redis://h:1/3") == ("redis://h:1/3", {})


def test_celery_is_configured_for_the_sentinels():
    settings = settings_from_mapping({"narrador": {"redis_url": SENTINEL}}, base_dir=Path("/"), environ={})
    conf = celery_config(settings)
    assert conf["broker_url"].startswith("sentinel://")
    assert conf["broker_transport_options"] == {"visibility_timeout": 600, "master_name": "narrador"}


def test_flask_limiter_gets_the_limits_form():
    uri, options = limiter_storage(SENTINEL)
    assert uri == "redis+sentinel://10.0.0.1:26379,10.0.0.2:26380,sentinel-3:26379/narrador"
    assert options["db"] == 2 and options["password"] == "s@cret"
    assert limiter_storage("") == ("memory://", {})
    assert limiter_storage("unix:///s.sock") == ("redis+unix:///s.sock", {})


def test_the_web_app_uses_the_sentinel_storage(tmp_path):
    from web import create_app

    settings = settings_from_mapping({"narrador": {"redis_url": SENTINEL, "instance_dir": str(tmp_path)}},
                                     base_dir=tmp_path, environ={})
    app = create_app({"TESTING": True, "NARRADOR_SETTINGS": settings, "SECRET_KEY": "x" * 40})
    assert app.config["RATELIMIT_STORAGE_URI"].startswith("redis+sentinel://")
    assert app.config["RATELIMIT_STORAGE_OPTIONS"]["db"] == 2


def test_a_sentinel_client_is_a_master_client_that_retries_across_a_failover():
    from redis.sentinel import SentinelConnectionPool

    client = redis_client("redis+sentinel://127.0.0.1:1/narrador/3")  # nothing is contacted yet
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool) and pool.is_master and pool.service_name == "narrador"
    assert pool.connection_kwargs["db"] == 3 and pool.connection_kwargs["decode_responses"] is True
    assert pool.connection_kwargs["retry"].get_retries() >= 10


def test_every_client_answers_text_and_a_bytes_client_is_refused_as_one():
    import redis

    from worker.adapters.redis.text import text_client

    assert redis_client("redis://127.0.0.1:1/0").get_encoder().decode_responses is True
    decoded = redis.Redis(decode_responses=True)
    assert text_client(decoded) is decoded
    with pytest.raises(ValueError, match="decode_responses=True"):
        text_client(redis.Redis())


def test_forums_check_shares_politeness_through_a_sentinel_url_too(monkeypatch):
    # it built its client with redis.Redis.from_url, which refuses redis+sentinel:// (ValueError)
    import redis
    from redis.sentinel import SentinelConnectionPool

    from worker.app.bootstrap import politeness_backend
    from worker.forums.politestate import RedisBackend

    monkeypatch.setattr(redis.Redis, "ping", lambda self: True)
    from types import SimpleNamespace

    backend = politeness_backend(SimpleNamespace(redis_url="redis+sentinel://127.0.0.1:1/narrador"))
    assert isinstance(backend, RedisBackend)
    client = backend.r
    assert isinstance(client.connection_pool, SentinelConnectionPool)
    assert client.connection_pool.service_name == "narrador"


def test_the_text_facade_takes_its_arguments_as_redis_py_does():
    # the Protocols are typing only: a parameter redis-py names or places otherwise would
    # type-check and then fail (or mean something else) at run time
    import inspect

    import redis
    from redis.client import Pipeline

    from worker.adapters.redis import text as redistext

    checked = 0
    for proto, real in ((redistext.TextRedis, redis.Redis), (redistext.TextPipeline, Pipeline)):
        names = {n for klass in proto.__mro__ if klass.__module__ == redistext.__name__ for n in vars(klass)
                 if not n.startswith("_") or n in ("__enter__", "__exit__")}
        for name in sorted(names):
            ours = inspect.signature(getattr(proto, name)).parameters
            # an overload without its implementation reads as (*args, **kwds): nothing to check
            assert list(ours)[:1] == ["self"], f"{proto.__name__}.{name}: give the overloads an implementation"
            theirs = list(inspect.signature(getattr(real, name)).parameters)
            for i, (pname, p) in enumerate(list(ours.items())[1:], start=1):
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    continue
                assert pname in theirs, f"{proto.__name__}.{name}: redis-py has no {pname!r}"
                if p.kind is p.POSITIONAL_OR_KEYWORD:
                    assert theirs.index(pname) == i, f"{proto.__name__}.{name}: {pname!r} is not argument {i}"
            checked += 1
    assert checked >= 45
