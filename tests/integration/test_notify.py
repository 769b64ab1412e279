"""The Storytellers hear of a forum that stops working, outside the forum (issue 25).

A real SMTP server (aiosmtpd on 127.0.0.1) and a real webhook receiver (``http.server`` on
127.0.0.1) stand for the Storyteller's mailbox and chat channel; the service layer runs on
the in-memory game state and the fake forum, with the rate limit in the test's Redis.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller

from tests.conftest import FIXED_NOW
from worker import service
from worker.forums.base import ForumError
from worker.forums.fake import FakeForum
from worker.gamestate import MemoryGameState
from worker.keystore import Keystore
from worker.notify import RATE_LIMIT, send_health
from worker.settings import settings_from_mapping

pytestmark = pytest.mark.integration


class Mailbox:
    def __init__(self) -> None:
        self.messages: list = []

    async def handle_DATA(self, server, session, envelope):
        from email import message_from_bytes
        from email.policy import default

        self.messages.append((envelope.rcpt_tos, message_from_bytes(envelope.content, policy=default)))
        return "250 OK"


@pytest.fixture
def mailbox() -> Iterator[tuple[Mailbox, int]]:
    import socket

    with socket.socket() as probe:  # aiosmtpd checks its own start on the port it was given
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield box, port
    finally:
        controller.stop()


def test_a_wrong_password_is_one_email_and_one_chat_message_and_so_is_the_fix(
        tmp_path, unique, redis_client, cleanup_keys, mailbox, webhook):
    box, smtp_port = mailbox
    received, hook = webhook
    game, forum_name = f"g-{unique}", f"f-{unique}"
    settings = settings_from_mapping({
        "narrador": {"instance_dir": str(tmp_path / "inst"), "smtp_host": "127.0.0.1", "smtp_port": smtp_port,
                     "smtp_from": "narrador@partida.test"},
        "games": {game: {"ruleset": "vampiro", "title": "Noches de Madrid", "notify_email": ["st@partida.test"],
                         "notify_webhook": hook}},
        "forums": {forum_name: {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador",
                                "password": "x", "game": game, "watch_threads": ["1"], "answer_since": "all"}},
    }, base_dir=tmp_path, environ={})
    forum = FakeForum(forum_name)
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(settings=settings, store=MemoryGameState(clock=lambda: FIXED_NOW), keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
    svc.on_health_change = lambda change: send_health(settings, redis_client, change)
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    for post in service.poll_thread(svc, forum_name, thread_id):
        service.process_post(svc, post)
    refused = ForumError("auth", "narrador: invalid username or password", transient=False)
    for _ in range(3):  # the worker's retries, then the re-queues: one notification
        forum.fail_next("post_reply", refused)
        with pytest.raises(ForumError):
            service.send_reply(svc, forum_name, post_id)
    assert len(box.messages) == 1 and len(received) == 1
    to, mail = box.messages[0]
    assert to == ["st@partida.test"] and mail["From"] == "narrador@partida.test"
    assert mail["Subject"] == f"Narrador no puede responder en el foro {forum_name}"
    body = mail.get_content()
    assert "Partida «Noches de Madrid»" in body and "login refused: narrador: invalid username or password" in body
    assert "5 dif 6" not in body  # never a roll's content
    assert received[0]["event"] == "forum_failing" and received[0]["content"] == received[0]["text"] == body.strip()
    assert (received[0]["game"], received[0]["forum"]) == (game, forum_name)

    assert service.send_reply(svc, forum_name, post_id)  # the password is fixed
    assert len(box.messages) == 2 and len(received) == 2
    assert box.messages[1][1]["Subject"] == f"El foro {forum_name} vuelve a funcionar"
    assert received[1]["event"] == "forum_ok"

    # flapping within RATE_LIMIT seconds: the state changes, the Storyteller is not told again
    _, other = forum.add_thread("1", "Otra", "[tirada]3 dif 6[/tirada]")
    for post in service.poll_thread(svc, forum_name, "2"):
        service.process_post(svc, post)
    forum.fail_next("post_reply", refused)
    with pytest.raises(ForumError):
        service.send_reply(svc, forum_name, other)
    assert svc.health.get(forum_name).failing and len(box.messages) == 2 and len(received) == 2
    assert 0 < redis_client.ttl(f"nr:notify:{{{game}}}:{forum_name}:forum_failing") <= RATE_LIMIT


def test_notification_settings_are_checked_at_load(tmp_path):
    from worker.settings import ConfigError

    base = {"narrador": {"instance_dir": str(tmp_path)}, "games": {"g": {"ruleset": "vampiro"}}}
    with pytest.raises(ConfigError, match="not an e-mail address: 'storyteller'"):
        settings_from_mapping({**base, "games": {"g": {"notify_email": ["storyteller"]}}}, base_dir=tmp_path, environ={})
    with pytest.raises(ConfigError, match="must be an http:// or https:// URL"):
        settings_from_mapping({**base, "games": {"g": {"notify_webhook": "discord"}}}, base_dir=tmp_path, environ={})
    with pytest.raises(ConfigError, match="notify_mail"):
        settings_from_mapping({**base, "games": {"g": {"notify_mail": ["a@b.c"]}}}, base_dir=tmp_path, environ={})
