"""Notifications to the Storyteller outside the forum: e-mail (SMTP) and a chat webhook.

A forum that stops working for the bot (a refused login, replies refused, the forum down)
is a problem the masters must fix, and the forum is the one place the bot cannot tell them
(issue 25). Every game with ``notify_email`` or ``notify_webhook`` set is told, by kind
(``Notification.event``):

- ``forum_failing`` / ``forum_ok``: a forum it is played on changes state (``worker.ports.health``:
  failing, or working again; :func:`health_notifications`);
- ``reply_failed``: Narrador gave up replying to posts after about a day of tries
  (``worker.service.replies.stranded_replies``; :func:`reply_failed_notifications`): the
  players' posts are named, the reply and its rolls are not;
- ``secret_waiting``: secret rolls wait for a master's reveal longer than the game's
  ``notify_secret_after_hours`` (default 24; 0: never; :func:`reveal_waits`, the beat job
  ``narrador.notify_tick``): each roll once, named by its post, never its dice or its tag.

Every channel:

- **e-mail** to each address of ``[games.<id>] notify_email`` through the SMTP server of
  ``[narrador] smtp_*`` (``smtplib``, STARTTLS when ``smtp_starttls``, a login when
  ``smtp_user`` is set; every connection with a timeout);
- **a webhook**: ``POST [games.<id>] notify_webhook`` with JSON ``{"content": text, "text":
  text, "event": ..., "game": ..., "forum": ...}``: ``content`` is what Discord's webhooks
  read, ``text`` what Slack's and Matrix's (hookshot) read; any other receiver gets the
  fields.

What a notification carries: the game, the forum, what fails and since when, the posts
concerned, in the game's language (the one catalogue, ``core.i18n``). Never a roll's dice or
result, and never a secret roll's tag or content. Rate limit: one notification per game,
forum and kind per :data:`RATE_LIMIT` seconds (a Redis ``SET NX`` with that expiry, shared by
every worker), so a forum that flaps sends a few a hour, not one a poll; what a rate-limited
``secret_waiting`` would have said is kept and said by the next one.

Redis keys (besides the rate-limit marks ``nr:notify:{<game>}:<forum>:<event>``, through the port
:mod:`worker.ports.notify`):

=======================================  ======  ============================================
``nr:notify:{<game>}:reveal:through``    string  epoch ms up to which the game's rolls were
                                                 examined for :func:`reveal_waits`
``nr:notify:{<game>}:reveal:due``        zset    secret rolls found waiting and not told yet
                                                 (roll id, score = the roll's time, epoch ms)
=======================================  ======  ============================================
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage

import requests

from core.i18n import tr, trn
from core.messages import duration_words
from worker.config.games import GameSettings
from worker.config.settings import Settings
from worker.ports.health import HealthChange
from worker.ports.notify import NotificationMarks, RevealWatch

__all__ = ["RATE_LIMIT", "Notification", "NotifyError", "clear_told", "deliver", "health_notifications",
           "reply_failed_notifications", "reveal_waits", "send", "send_health"]

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
        event: ``forum_failing``, ``forum_ok``, ``reply_failed`` or ``secret_waiting``.
        forum: the forum's configured name ("" for ``secret_waiting``: the game's).
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


#: Posts named in one notification (the rest are counted).
MAX_NAMED = 5


def _named_posts(lang: str, posts: list[tuple[str, str]]) -> str:
    """``author (url)`` of the first :data:`MAX_NAMED` posts, and how many more."""
    named = "; ".join(f"{author} ({url})" if url else author for author, url in posts[:MAX_NAMED])
    more = len(posts) - MAX_NAMED
    if more > 0:
        named += " " + trn(lang, "y {n} más", "y {n} más", more).format(n=more)
    return named


def reply_failed_notifications(settings: Settings, forum: str, posts: Iterable[Mapping[str, str]],
                               error: str = "") -> list[Notification]:
    """What replies given up make (``worker.service.replies.stranded_replies``): one
    notification for the game played on ``forum``, naming the players' posts (``author``,
    ``url`` of each post's state) and the forum's last reply error, if it has a channel.
    Never the reply's text: it holds the rolls."""
    fs = settings.forums.get(forum)
    named = [(str(p.get("author", "")), str(p.get("url", ""))) for p in posts]
    if fs is None or fs.game not in settings.games or not named:
        return []
    game = settings.games[fs.game]
    if not game.notify_email and not game.notify_webhook:
        return []
    lang, n = game.language, len(named)
    subject = trn(lang, "Narrador dejó de intentar una respuesta en el foro {forum}",
                  "Narrador dejó de intentar {n} respuestas en el foro {forum}", n).format(n=n, forum=forum)
    text = trn(lang, "Partida «{title}»: Narrador dejó de intentar publicar la respuesta a un mensaje en el "
                     "foro {forum} tras un día de intentos: {posts}.",
               "Partida «{title}»: Narrador dejó de intentar publicar las respuestas a {n} mensajes en el "
               "foro {forum} tras un día de intentos: {posts}.", n).format(
        title=game.title, n=n, forum=forum, posts=_named_posts(lang, named))
    if error:
        text += " " + tr(lang, "Último error: {error}.").format(error=error)
    text += " " + tr(lang, "Las tiradas están registradas y firmadas; un máster puede reintentar la respuesta "
                           "desde la página de auditoría de la partida.")
    return [Notification(game.id, "reply_failed", forum, subject, text)]


#: How far back the first look at a game goes for secret rolls still waiting (ms): an
#: instance upgraded with rolls already waiting is told of them once.
REVEAL_LOOKBACK_MS = 7 * 24 * 3600 * 1000
#: Rolls of one game examined per :func:`reveal_waits` call (the next call goes on).
REVEAL_SCAN_LIMIT = 2000


def reveal_waits(settings: Settings, watch: RevealWatch, now: datetime) -> list[tuple[Notification, list[str]]]:
    """The ``secret_waiting`` notifications due now, each with the roll ids it tells of
    (:func:`clear_told` them once it was delivered).

    For each game with a channel and ``notify_secret_after_hours`` N > 0: the rolls stored
    since the last call that are now more than N hours old are examined once
    (:meth:`~worker.ports.notify.RevealWatch.look`, at most :data:`REVEAL_SCAN_LIMIT` a call;
    the first call looks back :data:`REVEAL_LOOKBACK_MS`); the secret ones not revealed are
    noted as waiting; a notification names the posts of the waiting rolls still not revealed
    (those revealed since stop waiting). Never the rolls' dice, results or tags.
    """
    out = []
    now_ms = int(now.timestamp() * 1000)
    for game in settings.games.values():
        hours = game.notify_secret_after_hours
        if not hours or not (game.notify_email or game.notify_webhook):
            continue
        line = now_ms - hours * 3600 * 1000
        through = watch.looked_through(game.id)
        if through is None:
            through = line - REVEAL_LOOKBACK_MS
        if through < line:
            watch.look(game.id, through, line, REVEAL_SCAN_LIMIT)
        waiting = watch.waiting(game.id)
        if not waiting:
            continue
        posts = [(author, url) for _rid, author, url in waiting]
        lang, n = game.language, len(waiting)
        subject = trn(lang, "Una tirada secreta espera que la reveles en la partida {title}",
                      "{n} tiradas secretas esperan que las reveles en la partida {title}", n).format(
            n=n, title=game.title)
        text = trn(lang, "Partida «{title}»: una tirada secreta espera desde hace más de {hours} que un máster "
                         "la revele: {posts}. Se revela en la página de auditoría de la partida.",
                   "Partida «{title}»: {n} tiradas secretas esperan desde hace más de {hours} que un máster "
                   "las revele: {posts}. Se revelan en la página de auditoría de la partida.", n).format(
            title=game.title, n=n, hours=duration_words(hours * 3600, lang), posts=_named_posts(lang, posts))
        out.append((Notification(game.id, "secret_waiting", "", subject, text), [rid for rid, _a, _u in waiting]))
    return out


def clear_told(watch: RevealWatch, game: str, roll_ids: Iterable[str]) -> None:
    """The secret rolls a delivered ``secret_waiting`` told of stop waiting."""
    watch.told(game, list(roll_ids))


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


def deliver(settings: Settings, marks: NotificationMarks, note: Notification) -> bool:
    """Send ``note`` by every channel of its game, unless one of the same kind went out less
    than :data:`RATE_LIMIT` seconds ago (``marks``: ``worker.app.bootstrap.notification_marks``).
    True when sent, False when rate-limited.

    Raises:
        NotifyError: a channel failed (the rate-limit mark is dropped so a retry can send).
    """
    game = settings.games[note.game]
    if not marks.claim(note.game, note.forum, note.event, RATE_LIMIT):
        return False
    try:
        if game.notify_email:
            _email(settings, game, note)
        if game.notify_webhook:
            _webhook(game, note)
    except NotifyError:
        marks.release(note.game, note.forum, note.event)
        raise
    log.info("notification sent", extra={"game": note.game, "forum": note.forum, "event": note.event})
    return True


def send(settings: Settings, marks: NotificationMarks, note: Notification) -> bool:
    """Deliver ``note`` now (no queue: ``narrador poll``, the tests); a failure is logged,
    never raised. True when sent."""
    try:
        return deliver(settings, marks, note)
    except NotifyError as exc:
        log.error("notification to game %s not sent: %s", note.game, exc)
        return False


def send_health(settings: Settings, marks: NotificationMarks, change: HealthChange) -> int:
    """Deliver now the notifications of a change (:func:`send`). Returns how many were sent."""
    return sum(send(settings, marks, note) for note in health_notifications(settings, change))
