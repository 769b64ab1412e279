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
from worker.adapters.files.keystore import Keystore
from worker.adapters.memory.gamestate import MemoryGameState
from worker.adapters.redis.notify import RedisNotificationMarks
from worker.config.settings import settings_from_mapping
from worker.forums.base import ForumError
from worker.forums.fake import FakeForum
from worker.service.notify import RATE_LIMIT, send_health

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
    svc.on_health_change = lambda change: send_health(settings, RedisNotificationMarks(redis_client), change)
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
    from worker.config.settings import ConfigError

    base = {"narrador": {"instance_dir": str(tmp_path)}, "games": {"g": {"ruleset": "vampiro"}}}
    with pytest.raises(ConfigError, match="not an e-mail address: 'storyteller'"):
        settings_from_mapping({**base, "games": {"g": {"notify_email": ["storyteller"]}}}, base_dir=tmp_path, environ={})
    with pytest.raises(ConfigError, match="must be an http:// or https:// URL"):
        settings_from_mapping({**base, "games": {"g": {"notify_webhook": "discord"}}}, base_dir=tmp_path, environ={})
    with pytest.raises(ConfigError, match="notify_mail"):
        settings_from_mapping({**base, "games": {"g": {"notify_mail": ["a@b.c"]}}}, base_dir=tmp_path, environ={})


def _channels(tmp_path, smtp_port, hook, game, forum_name, *, language="es", **game_extra):
    return settings_from_mapping({
        "narrador": {"instance_dir": str(tmp_path / "inst"), "smtp_host": "127.0.0.1", "smtp_port": smtp_port,
                     "smtp_from": "narrador@partida.test", "public_url": "http://narrador.test"},
        "games": {game: {"ruleset": "vampiro", "title": "Noches de Madrid", "language": language,
                         "notify_email": ["st@partida.test"], "notify_webhook": hook, **game_extra}},
        "forums": {forum_name: {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador",
                                "password": "x", "game": game, "watch_threads": ["1"], "answer_since": "all"}},
    }, base_dir=tmp_path, environ={})


def test_a_reply_given_up_is_one_message_in_the_games_language_naming_the_post_not_the_roll(
        tmp_path, unique, redis_client, cleanup_keys, mailbox, webhook, monkeypatch):
    """Issue 25: after its re-queues (about a day) a reply is given up (``reply_failed``); the
    Storytellers hear of it outside the forum, in the game's language (English here), with the
    player's post and the last error: never the reply, which holds the dice."""
    from datetime import timedelta

    from worker.service import replies
    from worker.service.notify import send

    box, smtp_port = mailbox
    received, hook = webhook
    game, forum_name = f"g-{unique}", f"f-{unique}"
    settings = _channels(tmp_path, smtp_port, hook, game, forum_name, language="en")
    forum = FakeForum(forum_name)
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    now = [FIXED_NOW]
    svc = service.Services(settings=settings, store=MemoryGameState(clock=lambda: now[0]), keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: now[0])
    svc.on_notification = lambda note: send(settings, RedisNotificationMarks(redis_client), note)
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    for post in service.poll_thread(svc, forum_name, thread_id):
        service.process_post(svc, post)
    refused = ForumError("forbidden", "the thread is locked", transient=False)
    forum.fail_next("post_reply", refused)
    with pytest.raises(ForumError):
        service.send_reply(svc, forum_name, post_id)
    reply = svc.store.get_post(forum_name, post_id).fields["reply"]
    monkeypatch.setattr(replies, "MAX_REQUEUES", 2)  # a day of re-queues, shortened
    for minute in range(6, 9):
        now[0] = FIXED_NOW + timedelta(minutes=minute)
        assert service.stranded_replies(svc) == ([(forum_name, post_id)] if minute < 8 else [])
        assert len(box.messages) == (0 if minute < 8 else 1)
    assert svc.store.get_post(forum_name, post_id).status == "reply_failed"
    assert len(box.messages) == 1 and len(received) == 1
    to, mail = box.messages[0]
    assert to == ["st@partida.test"]
    assert mail["Subject"] == f"Narrador stopped trying one reply on the forum {forum_name}"
    body = mail.get_content()
    url = forum.post(post_id).url
    assert "Game “Noches de Madrid”" in body and f"jugadora ({url})" in body, body
    assert "Last error: the thread is locked." in body and "audit page" in body, body
    assert "5 dif 6" not in body and "[tirada]" not in body and reply not in body  # never the roll
    assert received[0]["event"] == "reply_failed" and received[0]["content"] == body.strip()
    assert (received[0]["game"], received[0]["forum"]) == (game, forum_name)


def test_secret_rolls_waiting_for_a_reveal_are_told_once_each_without_their_content(
        tmp_path, unique, redis_client, cleanup_keys, mailbox, webhook, monkeypatch, request):
    """Issue 25: a secret roll not revealed ``notify_secret_after_hours`` after it was made is
    told (the beat job ``narrador.notify_tick``), once, naming its post and never its dice,
    tag or result; one revealed in time is not told; one the rate limit held back is told by
    the next tick."""
    from datetime import timedelta

    from worker.adapters.redis.gamestate import RedisGameState
    from worker.adapters.redis.masters import MasterAccounts, reveal_key
    from worker.app import tasks
    from worker.service.notify import RATE_LIMIT

    box, smtp_port = mailbox
    received, hook = webhook
    game, forum_name = f"g-{unique}", f"f-{unique}"
    settings = _channels(tmp_path, smtp_port, hook, game, forum_name, notify_secret_after_hours=6)
    assert settings_from_mapping({"narrador": {"instance_dir": str(tmp_path)}, "games": {"g": {}}},
                                 base_dir=tmp_path, environ={}).games["g"].notify_secret_after_hours == 24
    forum = FakeForum(forum_name)
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    now = [FIXED_NOW]
    svc = service.Services(settings=settings, store=RedisGameState(redis_client), keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: now[0])
    monkeypatch.setattr(tasks, "services", lambda: svc)
    keystore.ensure_seeds_ahead(game, FIXED_NOW.date(), days=3)  # the days' VRF keys, bound ahead
    _, first = forum.add_thread("1", "Escena", "Escucho [tirada]10 dif 6 secreta[/tirada], miro "
                                               "[tirada]3 dif 6[/tirada] y [tirada]4 dif 7 secreta[/tirada]")
    ids = list(service.process_post(svc, forum.post(first)).roll_ids)
    records = [svc.store.get_roll(rid)["record"] for rid in ids]
    assert [r["flags"]["secret"] for r in records] == [True, False, True]
    MasterAccounts(redis_client).reveal(ids[2], f"ana-{unique}")  # revealed in time: not told
    request.addfinalizer(lambda: redis_client.delete(reveal_key(ids[2])))  # named by the roll id only

    now[0] = FIXED_NOW + timedelta(hours=5, minutes=59)
    assert tasks.notify_tick() == 0 and box.messages == []  # not 6 hours yet
    now[0] = FIXED_NOW + timedelta(hours=6, minutes=1)
    assert tasks.notify_tick() == 1
    assert len(box.messages) == 1 and len(received) == 1
    mail = box.messages[0][1]
    assert mail["Subject"].strip() == "Una tirada secreta espera que la reveles en la partida Noches de Madrid"
    body = mail.get_content()
    # the whole message: the post, never the tag, its dice or its result
    assert body.strip() == ("Partida «Noches de Madrid»: una tirada secreta espera desde hace más de 6 horas que un "
                            f"máster la revele: jugadora ({forum.post(first).url}). Se revela en la página de "
                            "auditoría de la partida."), body
    assert received[0]["event"] == "secret_waiting" and received[0]["content"] == body.strip()
    assert tasks.notify_tick() == 0 and len(box.messages) == 1  # told once

    # a second secret roll, waiting while the last notification's rate limit still holds
    now[0] = FIXED_NOW + timedelta(hours=7)
    _, second = forum.add_thread("1", "Otra", "[tirada]5 dif 6 secreta[/tirada]")
    service.process_post(svc, forum.post(second))
    now[0] = FIXED_NOW + timedelta(hours=13, minutes=5)
    assert tasks.notify_tick() == 0 and len(box.messages) == 1  # held back, kept
    limit = f"nr:notify:{{{game}}}::secret_waiting"
    assert 0 < redis_client.ttl(limit) <= RATE_LIMIT
    redis_client.delete(limit)  # 15 minutes later
    assert tasks.notify_tick() == 1 and len(box.messages) == 2
    assert forum.post(second).url in box.messages[1][1].get_content()
    assert forum.post(first).url not in box.messages[1][1].get_content()  # each roll told once
