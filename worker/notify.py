"""Notifications to the Storyteller outside the forum: e-mail (SMTP) and a chat webhook.

A forum that stops working for the bot (a refused login, replies refused, the forum down)
is a problem the masters must fix, and the forum is the one place the bot cannot tell them
(issue 25). When a forum changes state (``worker.health``: failing, or working again), every
game played there with ``notify_email`` or ``notify_webhook`` set is told:

- **e-mail** to each address of ``[games.<id>] notify_email`` through the SMTP server of
  ``[narrador] smtp_*`` (``smtplib``, STARTTLS when ``smtp_starttls``, a login when
  ``smtp_user`` is set; every connection with a timeout);
- **a webhook**: ``POST [games.<id>] notify_webhook`` with JSON ``{"content": text, "text":
  text, "event": ..., "game": ..., "forum": ...}``: ``content`` is what Discord's webhooks
  read, ``text`` what Slack's and Matrix's (hookshot) read; any other receiver gets the
  fields.

What a notification carries: the game, the forum, what fails and since when, in the game's
language. Never a roll, its dice or a secret roll's content. Rate limit: one notification per
game, forum and kind of change per :data:`RATE_LIMIT` seconds (a Redis ``SET NX`` with that
expiry, shared by every worker), so a forum that flaps sends a few a hour, not one a poll.
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

import requests

from core.i18n import tr
from worker.health import HealthChange
from worker.settings import GameSettings, Settings

__all__ = ["RATE_LIMIT", "Notification", "NotifyError", "deliver", "health_notifications", "send_health"]

log = logging.getLogger(__name__)

#: Seconds between two notifications of the same game, forum and kind of change.
RATE_LIMIT = 900
#: Seconds for each SMTP or webhook request.
TIMEOUT = 10.0


class NotifyError(Exception):
    """A notification could not be delivered (``transient``: worth trying again)."""

    def __init__(self, message: str, *, transient: bool = True) -> None:
        super().__init__(message)
        self.transient = transient


@dataclass(frozen=True)
class Notification:
    """One message for one game's Storytellers.

    Attributes:
        game: the game's id.
        event: ``forum_failing`` or ``forum_ok``.
        forum: the forum's configured name.
        subject: one line (the e-mail's subject).
        text: the message, in the game's language.
    """

    game: str
    event: str
    forum: str
    subject: str
    text: str


def health_notifications(settings: Settings, change: HealthChange) -> list[Notification]:
    """The notifications a forum's change of state makes: one per game played on the forum
    that has a notification channel. Only ``failing`` and a return from ``failing`` count."""
    if change.new != "failing" and change.old != "failing":
        return []
    fs = settings.forums.get(change.forum)
    if fs is None or fs.game not in settings.games:
        return []
    game = settings.games[fs.game]
    if not game.notify_email and not game.notify_webhook:
        return []
    lang = game.language
    if change.new == "failing":
        what = tr(lang, "leer") if change.direction == "read" else tr(lang, "responder")
        subject = tr(lang, "Narrador no puede {what} en el foro {forum}").format(what=what, forum=change.forum)
        text = tr(lang, "Partida «{title}»: Narrador no puede {what} en el foro {forum}: {error}. "
                        "Las tiradas esperan; cuando se arregle, se responden solas. "
                        "Detalles: narrador status, o la página de estado de la partida.").format(
            title=game.title, what=what, forum=change.forum, error=change.error or "?")
        return [Notification(game.id, "forum_failing", change.forum, subject, text)]
    subject = tr(lang, "El foro {forum} vuelve a funcionar").format(forum=change.forum)
    text = tr(lang, "Partida «{title}»: Narrador vuelve a leer y responder en el foro {forum}.").format(
        title=game.title, forum=change.forum)
    return [Notification(game.id, "forum_ok", change.forum, subject, text)]


def _rate_key(note: Notification) -> str:
    return f"nr:notify:{{{note.game}}}:{note.forum}:{note.event}"


def _email(settings: Settings, game: GameSettings, note: Notification) -> None:
    ns = settings.narrador
    if not ns.smtp_host:
        raise NotifyError("notify_email is set but [narrador] smtp_host is not", transient=False)
    msg = EmailMessage()
    msg["Subject"] = note.subject
    msg["From"] = ns.smtp_from
    msg["To"] = ", ".join(game.notify_email)
    msg.set_content(note.text)
    try:
        with smtplib.SMTP(ns.smtp_host, ns.smtp_port, timeout=TIMEOUT) as smtp:
            if ns.smtp_starttls:
                smtp.starttls(context=ssl.create_default_context())
            if ns.smtp_user:
                smtp.login(ns.smtp_user, ns.smtp_password)
            smtp.send_message(msg)
    except smtplib.SMTPAuthenticationError as exc:
        raise NotifyError(f"the SMTP server refused the login of {ns.smtp_user}: {exc}", transient=False) from None
    except (smtplib.SMTPException, OSError) as exc:
        raise NotifyError(f"e-mail to {msg['To']} not sent: {exc}") from None


def _webhook(game: GameSettings, note: Notification) -> None:
    body = {"content": note.text, "text": note.text, "event": note.event, "game": note.game, "forum": note.forum}
    try:
        resp = requests.post(game.notify_webhook, json=body, timeout=TIMEOUT)
    except requests.RequestException as exc:
        raise NotifyError(f"webhook not reached: {type(exc).__name__}") from None
    if resp.status_code >= 400:
        raise NotifyError(f"webhook answered HTTP {resp.status_code}", transient=resp.status_code >= 500
                          or resp.status_code == 429)


def deliver(settings: Settings, redis: Any, note: Notification) -> bool:
    """Send ``note`` by every channel of its game, unless one of the same kind went out less
    than :data:`RATE_LIMIT` seconds ago. True when sent, False when rate-limited.

    Raises:
        NotifyError: a channel failed (the rate-limit mark is dropped so a retry can send).
    """
    game = settings.games[note.game]
    if not redis.set(_rate_key(note), "1", nx=True, ex=RATE_LIMIT):
        return False
    try:
        if game.notify_email:
            _email(settings, game, note)
        if game.notify_webhook:
            _webhook(game, note)
    except NotifyError:
        redis.delete(_rate_key(note))
        raise
    log.info("notification sent", extra={"game": note.game, "forum": note.forum, "event": note.event})
    return True


def send_health(settings: Settings, redis: Any, change: HealthChange) -> int:
    """Deliver now (no queue: ``narrador poll``) the notifications of a change; a failure is
    logged, never raised. Returns how many were sent."""
    sent = 0
    for note in health_notifications(settings, change):
        try:
            sent += deliver(settings, redis, note)
        except NotifyError as exc:
            log.error("notification to game %s not sent: %s", note.game, exc)
    return sent
