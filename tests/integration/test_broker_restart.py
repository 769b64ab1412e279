"""kombu's Redis transport after a lost connection (issue 14, item 1; ``worker.app.brokerfix``).

The state Celery's consumer leaves after a Redis restart, built directly on a private Redis:
a channel holding an unacknowledged message, its pools dropped (its socket died) and its
transport's ``client`` cleared (``Connection.collect``).  Closing it restores the message,
which needs a new pool: stock kombu 5.7 raises ``AttributeError: 'NoneType' object has no
attribute 'hostname'`` there, an error Celery does not treat as a lost connection (the
worker exits with "Unrecoverable error").  Patched, it is a ``ConnectionError``, which
``Connection.maybe_close_channel`` and Celery's ``ignore_errors`` absorb, and the message
stays in Redis's unacknowledged index for the visibility-timeout restore.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration


@pytest.fixture
def private_redis(tmp_path):
    from worker.devtools.redisproc import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "redis").start()
    yield server
    server.stop()


def _channel_after_lost_connection(server):
    """(connection, channel) as Celery's consumer leaves them: one unacknowledged delivery,
    the channel's pools dropped, the transport's client cleared."""
    import kombu

    conn = kombu.Connection(server.broker_url)
    queue = kombu.Queue("restart-test", routing_key="restart-test")
    with conn.Producer() as producer:
        producer.publish({"n": 1}, routing_key="restart-test", declare=[queue])
    channel = conn.channel()
    message = channel.basic_get("restart-test", no_ack=False)
    assert message is not None and json.loads(message.body) == {"n": 1}
    channel._disconnect_pools()  # what Channel.close does for the channel whose socket died
    channel.connection.client = None  # what Connection._do_close_transport does
    return conn, channel


def test_closing_a_channel_of_a_lost_connection_is_a_connection_error(private_redis):
    import redis

    import worker.celery_app  # noqa: F401 - installs the patch, as every Narrador process does

    conn, channel = _channel_after_lost_connection(private_redis)
    with pytest.raises(redis.exceptions.ConnectionError, match="closed"):
        channel.close()
    assert isinstance(redis.exceptions.ConnectionError("x"), conn.connection_errors)
    # nothing lost: the delivery is still in the unacknowledged index, for the restore of the
    # visibility timeout
    client = redis.Redis(unix_socket_path=str(private_redis.socket_path))
    assert client.hlen("unacked") == 1
    assert client.zcard("unacked_index") == 1
    assert client.llen("restart-test") == 0


def test_celery_ignores_that_error_while_closing(private_redis):
    """Celery closes a consumer's channel with ``ignore_errors(connection, channel.close)``."""
    from kombu.common import ignore_errors

    import worker.celery_app  # noqa: F401

    conn, channel = _channel_after_lost_connection(private_redis)
    ignore_errors(conn, channel.close)  # stock kombu: AttributeError escapes here
    assert channel.closed


def test_the_patch_is_installed_once():
    from kombu.transport import redis as kombu_redis

    import worker.celery_app  # noqa: F401
    from worker.app import brokerfix

    patched = kombu_redis.Channel._connparams
    assert brokerfix.install() is False
    assert kombu_redis.Channel._connparams is patched
