"""A local Foroactivo (Forumotion) board for tests: the pages a hosted board serves, rendered
from the default templates of its versions (``tests/foroactivo/templates/<version>/``, each
file's header names the public template it follows), with their real variables filled in.

What it does as a live board does (issue 27, item 1):

- login at ``/login`` (hidden ``redirect`` field, ``username``, ``password``, ``autologin``,
  the localised ``login`` button), a session cookie, logout at ``/login?logout=1``; a wrong
  password answers the login page with its error; with ``captcha`` on, the login page asks a
  CAPTCHA and refuses every login;
- boards at ``/f<id>-<slug>`` with offset paging ``/f<id>p<start>-<slug>``, topics at
  ``/t<id>-<slug>`` and ``/t<id>p<start>-<slug>`` (any slug: only the id counts),
  ``/viewtopic?t=<id>&start=<n>`` and ``/viewtopic?p=<post id>`` answered with a redirect to
  the topic page holding the post (``#<post id>``);
- quotes and code as each version renders them, signatures, the RPG profile fields under the
  avatar, dates in Spanish in the member's own format and zone ("Hoy a las 13:52");
- the reply form ``/post?t=<id>&mode=reply`` (hidden ``t``, ``mode``, ``lt``, ``auth[]``, a
  per-form ``tid``; the submit button ``post`` valued "Enviar", and a post without that exact
  value is refused as a browser that did not click it), the "message registered" page with a
  meta refresh to ``/viewtopic?p=<id>#<id>``; a flood refusal when a member posts again within
  ``flood_seconds``; members-only boards (``hidden_boards``) that guests see as "no tienes
  permiso"; a 502 Bad Gateway every ``fail_every`` requests (``fail_posts``: after storing).

It runs as its own process (:class:`ForoactivoSite`), so a test can SIGKILL a worker while
the board keeps what it stored; ``/_test/*`` (JSON) lets a test seed topics, read what was
stored and change the board's settings.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import requests

__all__ = ["BOT", "PLAYER", "VERSIONS", "ForoactivoSite"]

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).resolve().parent / "templates"
VERSIONS = ("phpbb2", "phpbb3", "modernbb")

PLAYER = ("jugadora", "jugadora-pass-fa")
OTHER = ("lucia", "lucia-pass-fa")
BOT = ("Narrador", "narrador-pass-fa")
#: What a board or topic the viewer may not read answers (message_body, as live Spanish boards word it).
NO_PERMISSION = ("Lo sentimos pero solamente los <strong>usuarios que tengan permisos</strong> pueden leer "
                 "temas en este foro")

# Spanish day and month abbreviations as Foroactivo prints them (its Spanish language pack)
_DAYS = ("Lun", "Mar", "Miér", "Jue", "Vie", "Sáb", "Dom")
_MONTHS = ("Ene", "Feb", "Mar", "Abr", "Mayo", "Jun", "Jul", "Ago", "Sep", "Oct", "Nov", "Dic")
#: The member date formats a test may give an account (Profile > Preferences > date format).
DATE_FORMATS = {
    "D d M Y - H:i": lambda t: f"{_DAYS[t.weekday()]} {t:%d} {_MONTHS[t.month - 1]} {t:%Y} - {t:%H:%M}",
    "D M d, Y g:i a": lambda t: (f"{_DAYS[t.weekday()]} {_MONTHS[t.month - 1]} {t:%d}, {t:%Y} "
                                 f"{t.hour % 12 or 12}:{t:%M} {'am' if t.hour < 12 else 'pm'}"),
    "d/m/Y, H:i": lambda t: f"{t:%d/%m/%Y}, {t:%H:%M}",
}


def slug(title: str) -> str:
    """Forumotion's URL slug of a title: lower case ASCII words joined by ``-``."""
    table = str.maketrans("áéíóúüñÁÉÍÓÚÜÑ", "aeiouunAEIOUUN")
    words = re.findall(r"[a-z0-9]+", title.translate(table).lower())
    return "-".join(words)[:60]


# --------------------------------------------------------------------------- the board's data


@dataclass
class Member:
    name: str
    password: str
    user_id: int
    date_format: str = "D d M Y - H:i"
    timezone: str = "Europe/Madrid"
    today_words: bool = True  # "Hoy a las" / "Ayer a las"
    signature: str = ""
    last_post: float = 0.0


@dataclass
class Post:
    post_id: int
    topic_id: int
    author: str
    bbcode: str
    created: datetime
    edited: datetime | None = None


@dataclass
class Topic:
    topic_id: int
    board_id: int
    title: str
    posts: list[Post] = field(default_factory=list)


@dataclass
class Board:
    board_id: int
    title: str
    hidden: bool = False  # members only


class Forum:
    """The board's state (in memory, behind one lock)."""

    def __init__(self, version: str, *, posts_per_page: int, topics_per_page: int,
                 custom: Path | None = None) -> None:
        self.version = version
        self.custom = custom  # a folder of admin-edited templates that replace the defaults
        self.lock = threading.RLock()
        self.posts_per_page = posts_per_page
        self.topics_per_page = topics_per_page
        self.flood_seconds = 0.0
        self.fail_every = 0  # a 502 every N requests (0: never)
        self.fail_posts = 0  # a 502 after storing every N-th post (0: never)
        self.captcha = False
        self.requests = 0
        self.posts_stored = 0
        self.log: list[str] = []  # "GET /t1-x" lines, for tests counting requests
        self.members = {m.name.lower(): m for m in (
            Member(*PLAYER, user_id=2, signature="[i]Una sombra más en la noche[/i]"),
            Member(*OTHER, user_id=3, date_format="D M d, Y g:i a", timezone="UTC", today_words=False),
            Member(*BOT, user_id=4))}
        self.boards = {1: Board(1, "Partidas"), 2: Board(2, "Cripta de los miembros", hidden=True)}
        self.topics: dict[int, Topic] = {}
        self.sessions: dict[str, str] = {}  # sid -> member name (lower case)
        self.form_tids: dict[str, int] = {}  # tid -> topic id of a reply form handed out
        self._next_topic = 1
        self._next_post = 1

    def add_topic(self, board_id: int, title: str, author: str, bbcode: str, created: datetime) -> Topic:
        with self.lock:
            topic = Topic(self._next_topic, board_id, title)
            self._next_topic += 1
            self.topics[topic.topic_id] = topic
            self.add_post(topic, author, bbcode, created)
            return topic

    def add_post(self, topic: Topic, author: str, bbcode: str, created: datetime) -> Post:
        with self.lock:
            post = Post(self._next_post, topic.topic_id, author, bbcode, created)
            self._next_post += 1
            topic.posts.append(post)
            self.posts_stored += 1
            return post

    def find_post(self, post_id: int) -> tuple[Topic, int] | None:
        for topic in self.topics.values():
            for i, post in enumerate(topic.posts):
                if post.post_id == post_id:
                    return topic, i
        return None


# --------------------------------------------------------------------------- BBCode


_QUOTE_OPEN = re.compile(r'\[quote(?:="([^"\]]{0,60})"|=([^\]]{0,60}))?\]', re.IGNORECASE)


def render_bbcode(text: str, version: str) -> str:
    """A post's BBCode as Forumotion renders it (its quote and code boxes; bold, italics,
    underline, ``[strike]``, links; line breaks as ``<br />``; ``[s]``, which Forumotion does
    not know, stays as written)."""
    codes: list[str] = []

    def keep_code(m: re.Match[str]) -> str:
        codes.append(html.escape(m.group(1)))
        return f"\x00{len(codes) - 1}\x00"

    text = re.sub(r"\[code\](.*?)\[/code\]", keep_code, text, flags=re.IGNORECASE | re.DOTALL)
    out = html.escape(text, quote=False)
    out = re.sub(r"\[b\](.*?)\[/b\]", r"<strong>\1</strong>", out, flags=re.DOTALL)
    out = re.sub(r"\[i\](.*?)\[/i\]", r"<i>\1</i>", out, flags=re.DOTALL)
    out = re.sub(r"\[u\](.*?)\[/u\]", r"<u>\1</u>", out, flags=re.DOTALL)
    # Forumotion strikes with [strike]; an [s] has no meaning there and shows as written
    out = re.sub(r"\[strike\](.*?)\[/strike\]", r"<strike>\1</strike>", out, flags=re.DOTALL)
    out = re.sub(r"\[url=([^\]\s]+)\](.*?)\[/url\]", r'<a href="\1" target="_blank" rel="nofollow">\2</a>', out)
    for _ in range(10):  # nested quotes, innermost last
        opened = list(_QUOTE_OPEN.finditer(out))
        if not opened:
            break
        m = opened[-1]
        close = out.find("[/quote]", m.end())
        if close < 0:
            break
        who = m.group(1) or m.group(2)
        cite = f"<cite>{who} escribió:</cite>" if who else ""
        out = out[:m.start()] + f"<blockquote><div>{cite}{out[m.end():close]}</div></blockquote>" + out[close + 8:]
    out = out.replace("\r\n", "\n").replace("\n", "<br />")
    for i, code in enumerate(codes):
        code = code.replace("\n", "<br />")
        box = (f'<dl class="codebox"><dt>Código:</dt><dd><code>{code}</code></dd></dl>' if version != "modernbb"
               else f'<div class="codebox"><dl><dt>Código:</dt><dd><code>{code}</code></dd></dl></div>')
        out = out.replace(f"\x00{i}\x00", box)
    return out


# --------------------------------------------------------------------------- pages


def _load(version: str, custom: Path | None = None) -> dict[str, Any]:
    """The version's default templates, each replaced by the file of the same name in
    ``custom`` when there is one (an admin's edited templates, as ``custom/rol-phpbb3``)."""
    from tests.foroactivo.tpl import Template

    files = {p.stem: p for p in sorted((TEMPLATES / version).glob("*.tpl"))}
    if custom is not None:
        files.update({p.stem: p for p in sorted(custom.glob("*.tpl"))})
    return {stem: Template(p.read_text(encoding="utf-8"), name=f"{p.parent.name}/{p.name}")
            for stem, p in files.items()}


def format_date(when: datetime, member: Member | None, now: datetime) -> str:
    """A date as the viewing member's profile shows it (a guest: the board's default,
    ``D d M Y - H:i`` in Europe/Madrid, with "Hoy a las")."""
    fmt, zone, words = ("D d M Y - H:i", "Europe/Madrid", True) if member is None else (
        member.date_format, member.timezone, member.today_words)
    local, today = when.astimezone(ZoneInfo(zone)), now.astimezone(ZoneInfo(zone)).date()
    if words and local.date() == today:
        return f"Hoy a las {local:%H:%M}"
    if words and local.date() == today - timedelta(days=1):
        return f"Ayer a las {local:%H:%M}"
    return DATE_FORMATS[fmt](local)


def pagination(version: str, base: str, total: int, per_page: int, start: int, slug_: str) -> str:
    """The ``{PAGINATION}`` of a topic or board, as the sample rendered on a live board in
    Etana/template ``var/`` shows it: the "go to page" script (whose ``do_pagination_start``
    names the page count and size), the page links at ``/<base>p<offset>-<slug>`` with the
    current page in ``<b>``, and the previous / next arrows (``a.pag-img``)."""
    pages = max(1, -(-total // per_page))
    if pages == 1:
        return ""
    current = start // per_page + 1
    arrows = {"phpbb2": "subsilver", "phpbb3": "prosilver", "modernbb": "modernbb"}[version]

    def href(page: int) -> str:
        return f"/{base}-{slug_}" if page == 1 else f"/{base}p{(page - 1) * per_page}-{slug_}"

    script = ('<script type="text/javascript">//<![CDATA[\nfunction do_pagination_start()\n{\n'
              f"\tvar start = document.go_page.start.value;\n\tstart = (start > {pages}) ? {pages} : start;\n"
              f"\tstart = (start - 1) * {per_page};\n\tstart = (isNaN(start) || start < 0 ) ? 0 : start;\n"
              f"self.location.href = start ? ['','{base}p'+start+'-{slug_}'].join('/') : ['','{base}-{slug_}'].join('/');\n"
              "}\n//]]></script>")
    links = ", ".join(f"<b>{page}</b>" if page == current else f'<a href="{href(page)}">{page}</a>'
                      for page in range(1, pages + 1))
    prev = (f'<a class="pag-img" href="{href(current - 1)}"><img class="sprite-arrow_{arrows}_left" '
            'src="https://illiweb.com/fa/empty.gif" alt="Anterior" /></a>&nbsp;&nbsp;' if current > 1 else "")
    nxt = (f'&nbsp;&nbsp;<a class="pag-img" href="{href(current + 1)}"><img class="sprite-arrow_{arrows}_right" '
           'src="https://illiweb.com/fa/empty.gif" alt="Siguiente" /></a>' if current < pages else "")
    return (f'{script}<a href="javascript:Pagination();">Ir a la página</a> : {prev}{links}{nxt}')


def goto_pages(base: str, total: int, per_page: int, slug_: str) -> str:
    """A topic row's page links in a board listing (``GOTO_PAGE``): every page, no current."""
    pages = max(1, -(-total // per_page))
    if pages == 1:
        return ""
    return ", ".join(f'<a href="/{base}-{slug_}">1</a>' if page == 1 else
                     f'<a href="/{base}p{(page - 1) * per_page}-{slug_}">{page}</a>' for page in range(1, pages + 1))


def create_app(forum: Forum, *, clock=lambda: datetime.now(UTC)):  # type: ignore[no-untyped-def]
    """The board's WSGI app (Flask)."""
    from flask import Flask, Response, abort, make_response, redirect, request

    app = Flask("foroactivo")
    templates = _load(forum.version, forum.custom)
    cookie = "fa_narrador_test_sid"

    def member() -> Member | None:
        name = forum.sessions.get(request.cookies.get(cookie, ""))
        return forum.members.get(name) if name else None

    def page(body_template: str, title: str, data: dict[str, Any], status: int = 200,
             head: str = "") -> Response:
        who = member()
        common = {
            "SITENAME": "Noches de Madrid", "PAGE_TITLE": title, "S_CONTENT_ENCODING": "utf-8",
            "U_INDEX": "/forum", "U_LOGIN_LOGOUT": "/login?logout=1" if who else "/login",
            "L_LOGIN_LOGOUT": f"Desconectarse [ {who.name} ]" if who else "Conectarse",
            "META": head, "USER_NAME": who.name if who else "Invitado",
            "USER_ID": who.user_id if who else -1, "LOGGED_IN": 1 if who else 0,
            "switch_user_logged_in": [{}] if who else [],
            "switch_user_logged_out": [] if who else [{}],
            "TEMPLATE": f"{forum.version}/{body_template}",
        }
        body = templates[body_template].render({**common, **data})
        text = templates["overall_header"].render(common) + body + templates["overall_footer"].render(common)
        resp = make_response(text, status)
        resp.headers["Content-Type"] = "text/html; charset=utf-8"
        return resp

    def error_box(text: str) -> str:
        return templates["error_body"].render({"ERROR_MESSAGE": text}) if text else ""

    def message(title: str, text: str, *, refresh: str = "", status: int = 200) -> Response:
        head = f'<meta http-equiv="refresh" content="3;url={refresh}">' if refresh else ""
        return page("message_body", title, {"MESSAGE_TITLE": title, "MESSAGE_TEXT": text}, status, head)

    @app.before_request
    def count_and_fail():  # type: ignore[no-untyped-def]
        if request.path.startswith("/_test/"):
            return None
        with forum.lock:
            forum.requests += 1
            forum.log.append(f"{request.method} {request.full_path.rstrip('?')}")
            n = forum.requests
        if forum.fail_every and n % forum.fail_every == 0:
            return Response("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad "
                            "Gateway</h1></center><hr><center>nginx</center></body></html>", 502)
        return None

    # ---------------------------------------------------------------- login

    @app.route("/login", methods=["GET", "POST"])
    def login():  # type: ignore[no-untyped-def]
        if request.args.get("logout"):
            forum.sessions.pop(request.cookies.get(cookie, ""), None)
            resp = redirect("/forum")
            resp.delete_cookie(cookie)
            return resp
        error = ""
        if request.method == "POST":
            who = forum.members.get(request.form.get("username", "").lower())
            if forum.captcha:
                error = "Por favor, confirme que no es un robot (captcha)."
            elif "login" not in request.form:
                error = "Formulario incompleto."
            elif who is None or request.form.get("password") != who.password:
                error = "Has escrito un nombre de usuario incorrecto, inactivo o una contraseña inválida."
            else:
                sid = secrets.token_hex(16)
                forum.sessions[sid] = who.name.lower()
                resp = redirect(request.form.get("redirect") or "/forum")
                resp.set_cookie(cookie, sid, httponly=True)
                return resp
        return page("login_body", "Conectarse", {
            "ERROR_BOX": error_box(error),
            "switch_captcha": [{}] if forum.captcha else [],
            "S_HIDDEN_FIELDS": '<input type="hidden" name="redirect" value="" />',
            "L_LOGIN": "Conectarse"})

    # ---------------------------------------------------------------- reading

    @app.route("/forum")
    @app.route("/")
    def index():  # type: ignore[no-untyped-def]
        who = member()
        rows = [{"FORUM_ID": b.board_id, "FORUM_NAME": b.title, "U_VIEWFORUM": f"/f{b.board_id}-{slug(b.title)}"}
                for b in forum.boards.values() if who or not b.hidden]
        return page("index_body", "Índice", {"catrow": [{"forumrow": rows}]})

    @app.route("/f<int:board_id>-")
    @app.route("/f<int:board_id>-<path:rest>")
    @app.route("/f<int:board_id>p<int:start>-")
    @app.route("/f<int:board_id>p<int:start>-<path:rest>")
    def viewforum(board_id: int, rest: str = "", start: int = 0):  # type: ignore[no-untyped-def]
        board = forum.boards.get(board_id)
        if board is None:
            return message("Información", "El foro que ha seleccionado no existe.", status=404)
        who = member()
        if board.hidden and who is None:
            return message("Informaciones", NO_PERMISSION)
        now = clock()
        with forum.lock:
            topics = sorted((t for t in forum.topics.values() if t.board_id == board_id),
                            key=lambda t: t.posts[-1].created, reverse=True)
        shown = topics[start:start + forum.topics_per_page]
        rows = []
        for n, t in enumerate(shown):
            last = t.posts[-1]
            last_page = (len(t.posts) - 1) // forum.posts_per_page * forum.posts_per_page
            last_href = (f"/t{t.topic_id}-{slug(t.title)}#{last.post_id}" if not last_page
                         else f"/t{t.topic_id}p{last_page}-{slug(t.title)}#{last.post_id}")
            goto = goto_pages(f"t{t.topic_id}", len(t.posts), forum.posts_per_page, slug(t.title))
            rows.append({"header_table": [{}] if n == 0 else [], "topic": [{}],
                         "footer_table": [{}] if n == len(shown) - 1 else [],
                         "L_TITLE": "Temas", "ROW_CLASS": "row1", "ROW_ALT_CLASS": "bg1" if n % 2 == 0 else "bg2",
                         "TOPIC_ID": t.topic_id, "TOPIC_TITLE": html.escape(t.title),
                         "U_VIEW_TOPIC": f"/t{t.topic_id}-{slug(t.title)}", "REPLIES": len(t.posts) - 1,
                         "VIEWS": 3 * len(t.posts), "TOPIC_AUTHOR": author_link(t.posts[0].author),
                         "GOTO_PAGE": f"<br /> [ Ir a la página: {goto}]" if goto else "",
                         "GOTO_PAGE_NEW": f'<strong class="pagination"><span>{goto}</span></strong>' if goto else "",
                         "LAST_POST_TIME": format_date(last.created, who, now),
                         "LAST_POST_AUTHOR": author_link(last.author),
                         "LAST_POST_IMG": f'<a href="{last_href}"><img src="https://illiweb.com/fa/empty.gif" '
                                          'alt="Ver último mensaje" title="Ver último mensaje" /></a>'})
        box = templates["topics_list_box"].render({"topics_list_box": [{"row": rows}] if rows else [],
                                                  "switch_no_topics": [] if rows else [{}]})
        return page("viewforum_body", board.title, {
            "FORUM_ID": board_id, "FORUM_NAME": html.escape(board.title),
            "U_VIEW_FORUM": f"/f{board_id}-{slug(board.title)}",
            "PAGINATION": pagination(forum.version, f"f{board_id}", len(topics), forum.topics_per_page, start,
                                     slug(board.title)),
            "TOPICS_LIST_BOX": box})

    def author_link(name: str) -> str:
        m = forum.members.get(name.lower())
        uid = m.user_id if m else 1
        return f'<a href="/u{uid}"><span style="color:#6699cc"><strong>{html.escape(name)}</strong></span></a>'

    @app.route("/t<int:topic_id>-")
    @app.route("/t<int:topic_id>-<path:rest>")
    @app.route("/t<int:topic_id>p<int:start>-")
    @app.route("/t<int:topic_id>p<int:start>-<path:rest>")
    def viewtopic(topic_id: int, rest: str = "", start: int = 0):  # type: ignore[no-untyped-def]
        topic = forum.topics.get(topic_id)
        if topic is None:
            return message("Información", "El tema que ha seleccionado no existe.", status=404)
        who = member()
        if forum.boards[topic.board_id].hidden and who is None:
            return message("Informaciones", NO_PERMISSION)
        now = clock()
        per = forum.posts_per_page
        with forum.lock:
            posts = list(topic.posts)
        rows = []
        for i, p in enumerate(posts[start:start + per]):
            author = forum.members.get(p.author.lower())
            shown = format_date(p.created, who, now)
            # phpBB2 prints the date alone; phpBB3 and ModernBB's POST_DATE_NEW carries the
            # preposition before an absolute date ("le Ven 19 Fév 2021 - 19:36" on French boards)
            date_new = shown if shown.startswith(("Hoy", "Ayer")) else f"el {shown}"
            edited = (f"Última edición por {html.escape(p.author)} el {format_date(p.edited, who, now)}; "
                      "editado 1 vez" if p.edited else "")
            signature = render_bbcode(author.signature, forum.version) if author and author.signature else ""
            url = (f"/t{topic_id}p{start}-{slug(topic.title)}#{p.post_id}" if start
                   else f"/t{topic_id}-{slug(topic.title)}#{p.post_id}")
            rows.append({"displayed": [{
                "U_POST_ID": p.post_id, "ROW_CLASS": "row1" if i % 2 == 0 else "row2",
                "ROW_COUNT": "row1" if i % 2 == 0 else "row2",
                "POSTER_NAME": author_link(p.author),
                "POSTER_AVATAR": f'<img src="/avatars/{author.user_id if author else 0}.png" alt="" />',
                "POSTER_RANK": "Vástago" if author else "", "POSTER_RANK_NEW": "Vástago" if author else "",
                "POST_SUBJECT": html.escape(topic.title if not (start or i) else f"Re: {topic.title}"),
                "profile_field": [
                    {"LABEL": '<span class="label"><span style="color:#333;">Clan</span>:</span>',
                     "CONTENT": "Toreador", "SEPARATOR": "<br />"},
                    {"LABEL": '<span class="label"><span style="color:#333;">Mensajes</span>:</span>',
                     "CONTENT": str(3 + start + i), "SEPARATOR": "<br />"}],
                "POSTER_RPG": ('<div class="rpg_fields"><span class="label">Generación:</span> 11ª<br />'
                               '<span class="label">Sangre:</span> 10/10</div>'),
                "POST_DATE": shown, "POST_DATE_NEW": date_new,
                "MESSAGE": render_bbcode(p.bbcode, forum.version), "EDITED_MESSAGE": edited,
                "switch_signature": [{}] if signature else [],
                "SIGNATURE": signature, "SIGNATURE_NEW": signature,
                "POST_URL": url,
                "QUOTE_IMG": (f'<a href="/post?p={p.post_id}&amp;mode=quote" title="Responder citando">'
                              '<img src="https://illiweb.com/fa/empty.gif" alt="Responder citando" /></a>'),
                "PROFILE_IMG": f'<a href="/u{author.user_id if author else 1}"><img alt="Ver perfil" '
                               'src="https://illiweb.com/fa/empty.gif" /></a>',
                "first_post_br": [{}] if (i == 0 and start == 0) else []}]})
        pages = pagination(forum.version, f"t{topic_id}", len(posts), per, start, slug(topic.title))
        return page("viewtopic_body", topic.title, {
            "TOPIC_ID": topic_id, "TOPIC_TITLE": html.escape(topic.title),
            "TOPIC_URL": f"/t{topic_id}-{slug(topic.title)}", "FORUM_NAME": forum.boards[topic.board_id].title,
            "U_VIEW_FORUM": f"/f{topic.board_id}-{slug(forum.boards[topic.board_id].title)}",
            "PAGINATION": pages, "topicpagination": [{}] if pages else [],
            "PAGE_NUMBER": f"Página <strong>{start // per + 1}</strong> de <strong>{max(1, -(-len(posts) // per))}"
                           "</strong>",
            "U_POST_REPLY_TOPIC": f"/post?t={topic_id}&amp;mode=reply", "postrow": rows})

    @app.route("/viewtopic")
    def viewtopic_query():  # type: ignore[no-untyped-def]
        if request.args.get("p", "").isdigit():
            found = forum.find_post(int(request.args["p"]))
            if found is None:
                return message("Información", "El tema o mensaje que ha seleccionado no existe.", status=404)
            topic, index = found
            start = index // forum.posts_per_page * forum.posts_per_page
            post_id = topic.posts[index].post_id
            where = f"t{topic.topic_id}p{start}" if start else f"t{topic.topic_id}"
            return redirect(f"/{where}-{slug(topic.title)}#{post_id}")
        if request.args.get("t", "").isdigit():
            topic = forum.topics.get(int(request.args["t"]))
            if topic is None:
                return message("Información", "El tema que ha seleccionado no existe.", status=404)
            start = int(request.args.get("start", "0") or 0) if request.args.get("start", "0").isdigit() else 0
            where = f"t{topic.topic_id}p{start}" if start else f"t{topic.topic_id}"
            return redirect(f"/{where}-{slug(topic.title)}")
        abort(404)

    # ---------------------------------------------------------------- posting

    @app.route("/post", methods=["GET", "POST"])
    def post():  # type: ignore[no-untyped-def]
        who = member()
        args = request.values
        mode = args.get("mode", "")
        if who is None:
            return redirect("/login?redirect=" + requests.utils.quote(request.full_path))
        if mode == "reply":
            topic = forum.topics.get(int(args.get("t", "0"))) if args.get("t", "").isdigit() else None
            if topic is None:
                return message("Información", "El tema que ha seleccionado no existe.", status=404)
            board = None
        elif mode == "newtopic":
            board = forum.boards.get(int(args.get("f", "0"))) if args.get("f", "").isdigit() else None
            if board is None:
                return message("Información", "El foro que ha seleccionado no existe.", status=404)
            topic = None
        else:
            return message("Información", "Modo no válido.", status=400)
        error = ""
        if request.method == "POST":
            sent = request.form
            expect = topic.topic_id if topic else -board.board_id  # type: ignore[union-attr]
            if sent.get("post") != "Enviar":
                error = "Formulario enviado sin su botón."  # a browser always sends the button clicked
            elif forum.form_tids.pop(sent.get("tid", ""), None) != expect:
                error = "Tu sesión ha expirado. Por favor, vuelve a enviar el formulario."
            elif not sent.get("message", "").strip() or (mode == "newtopic" and not sent.get("subject", "").strip()):
                error = "Debe escribir un mensaje antes de enviarlo."
            elif forum.flood_seconds and time.time() - who.last_post < forum.flood_seconds:
                error = (f"El control de flood está activado en este foro, por favor espere "
                         f"{int(forum.flood_seconds)} segundo(s) antes de responder o publicar.")
            else:
                with forum.lock:
                    now = clock()
                    if topic is None:
                        topic = forum.add_topic(board.board_id, sent["subject"], who.name, sent["message"], now)  # type: ignore[union-attr]
                        stored = topic.posts[0]
                    else:
                        stored = forum.add_post(topic, who.name, sent["message"], now)
                    who.last_post = time.time()
                    n = forum.posts_stored
                if forum.fail_posts and n % forum.fail_posts == 0:
                    return Response("<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway"
                                    "</h1></body></html>", 502)
                target = f"/viewtopic?t={stored.topic_id}&topic_name#{stored.post_id}"
                return message("Informaciones", "Tu mensaje ha sido publicado con éxito.<br /><br />"
                                                f'<a href="{target}">Haz click aquí para ver tu mensaje</a>',
                               refresh=target)
        tid = secrets.token_hex(16)
        forum.form_tids[tid] = topic.topic_id if topic else -board.board_id  # type: ignore[union-attr]
        hidden = (f'<input type="hidden" name="mode" value="{mode}" />'
                  + (f'<input type="hidden" name="t" value="{topic.topic_id}" />' if topic else
                     f'<input type="hidden" name="f" value="{board.board_id}" />')  # type: ignore[union-attr]
                  + '<input type="hidden" name="auth[]" value="' + secrets.token_hex(4) + '" />'
                  + '<input type="hidden" name="auth[]" value="' + secrets.token_hex(8) + '" />'
                  + f'<input type="hidden" name="tid" value="{tid}" />')
        return page("posting_body", "Responder" if topic else "Nuevo tema", {
            "S_POST_ACTION": "/post", "S_HIDDEN_FORM_FIELDS": hidden, "L_SUBMIT": "Enviar", "L_PREVIEW": "Previsualizar",
            "MESSAGE": html.escape(request.form.get("message", "")) if error else "",
            "SUBJECT": "" if topic else html.escape(request.form.get("subject", "")),
            "TOPIC_TITLE": html.escape(topic.title) if topic else "",
            "switch_subject": [] if topic else [{}],
            "ERROR_BOX": error_box(error)})

    # ---------------------------------------------------------------- test control

    @app.route("/_test/config", methods=["POST"])
    def test_config():  # type: ignore[no-untyped-def]
        data = request.get_json(force=True)
        for key in ("flood_seconds", "fail_every", "fail_posts", "captcha", "posts_per_page", "topics_per_page"):
            if key in data:
                setattr(forum, key, type(getattr(forum, key))(data[key]))
        for name, changes in data.get("members", {}).items():
            m = forum.members[name.lower()]
            for key, value in changes.items():
                setattr(m, key, value)
        if "password" in data:
            forum.members[BOT[0].lower()].password = data["password"]
        return {"ok": True}

    @app.route("/_test/topic", methods=["POST"])
    def test_topic():  # type: ignore[no-untyped-def]
        data = request.get_json(force=True)
        now = clock()
        posts = data["posts"]
        topic = forum.add_topic(int(data.get("board", 1)), data["title"], data.get("author", PLAYER[0]),
                                posts[0], now - timedelta(seconds=len(posts)))
        for i, body in enumerate(posts[1:], 1):
            forum.add_post(topic, data.get("author", PLAYER[0]), body, now - timedelta(seconds=len(posts) - i))
        return {"topic": str(topic.topic_id), "posts": [str(p.post_id) for p in topic.posts]}

    @app.route("/_test/board", methods=["POST"])
    def test_board():  # type: ignore[no-untyped-def]
        """A new board (``hidden``: members only), so a test that watches a whole board sees only its topics."""
        data = request.get_json(force=True)
        with forum.lock:
            board_id = max(forum.boards) + 1
            forum.boards[board_id] = Board(board_id, data.get("title", f"Partida {board_id}"),
                                           hidden=bool(data.get("hidden", False)))
        return {"board": str(board_id)}

    @app.route("/_test/edit", methods=["POST"])
    def test_edit():  # type: ignore[no-untyped-def]
        data = request.get_json(force=True)
        found = forum.find_post(int(data["post"]))
        assert found is not None
        topic, index = found
        topic.posts[index].bbcode = data["bbcode"]
        topic.posts[index].edited = clock()
        return {"ok": True}

    @app.route("/_test/posts/<int:topic_id>")
    def test_posts(topic_id: int):  # type: ignore[no-untyped-def]
        topic = forum.topics[topic_id]
        return {"posts": [{"id": str(p.post_id), "author": p.author, "bbcode": p.bbcode} for p in topic.posts]}

    @app.route("/_test/log", methods=["GET", "DELETE"])
    def test_log():  # type: ignore[no-untyped-def]
        with forum.lock:
            lines = list(forum.log)
            if request.method == "DELETE":
                forum.log.clear()
        return {"requests": lines}

    return app


# --------------------------------------------------------------------------- the process


class ForoactivoSite:
    """The local Foroactivo as a process on a free 127.0.0.1 port.

    Args:
        version: ``phpbb2``, ``phpbb3`` or ``modernbb`` (the template set).
        folder: where its log goes.
        posts_per_page / topics_per_page: the board's settings.
    """

    def __init__(self, version: str, folder: Path, *, posts_per_page: int = 3, topics_per_page: int = 5,
                 custom: Path | None = None) -> None:
        if version not in VERSIONS:
            raise ValueError(f"version must be one of {VERSIONS}")
        self.version, self.folder, self.custom = version, folder, custom
        self.posts_per_page, self.topics_per_page = posts_per_page, topics_per_page
        self.proc: subprocess.Popen[bytes] | None = None
        self.base_url = ""

    def start(self) -> ForoactivoSite:
        self.folder.mkdir(parents=True, exist_ok=True)
        out = self.folder / f"foroactivo-{self.version}.out"
        out.with_suffix(".url").unlink(missing_ok=True)  # a stopped run's URL is not this one's
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.foroactivo.site", "--version", self.version,
             "--posts-per-page", str(self.posts_per_page), "--topics-per-page", str(self.topics_per_page),
             "--url-file", str(out.with_suffix(".url")),
             *(["--templates", str(self.custom)] if self.custom else [])],
            cwd=ROOT, stdout=out.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
        url_file = out.with_suffix(".url")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if url_file.exists() and url_file.read_text().strip():
                self.base_url = url_file.read_text().strip()
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"the local Foroactivo did not start: {out.read_text()[-2000:]}")
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("the local Foroactivo did not start in 60 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def control(self, path: str, payload: dict[str, Any] | None = None, method: str = "POST") -> Any:
        resp = requests.request(method, f"{self.base_url}/_test/{path}", json=payload, timeout=10)
        resp.raise_for_status()
        return resp.json()

    def configure(self, **settings: Any) -> None:
        self.control("config", settings)

    def seed_topic(self, title: str, posts: list[str], *, board: int = 1, author: str = PLAYER[0]) -> tuple[str, list[str]]:
        got = self.control("topic", {"title": title, "posts": posts, "board": board, "author": author})
        return got["topic"], got["posts"]

    def new_board(self, title: str, *, hidden: bool = False) -> str:
        """A new board's id (``hidden``: members only)."""
        return self.control("board", {"title": title, "hidden": hidden})["board"]

    def posts(self, topic_id: str) -> list[dict[str, str]]:
        return self.control(f"posts/{topic_id}", method="GET")["posts"]

    def requests_log(self, *, clear: bool = False) -> list[str]:
        return self.control("log", method="DELETE" if clear else "GET")["requests"]


def main(argv: list[str] | None = None) -> None:
    from werkzeug.serving import make_server

    ap = argparse.ArgumentParser(description="a local Foroactivo board for tests")
    ap.add_argument("--version", choices=VERSIONS, default="phpbb2")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--posts-per-page", type=int, default=3)
    ap.add_argument("--topics-per-page", type=int, default=5)
    ap.add_argument("--url-file", default="")
    ap.add_argument("--templates", default="", help="a folder of edited templates that replace the defaults")
    ap.add_argument("--seed", action="store_true", help="start with a topic of the player's, as docs/foroactivo.md")
    args = ap.parse_args(argv)
    forum = Forum(args.version, posts_per_page=args.posts_per_page, topics_per_page=args.topics_per_page,
                  custom=Path(args.templates) if args.templates else None)
    if args.seed:
        now = datetime.now(UTC)
        topic = forum.add_topic(1, "La cripta", PLAYER[0], "Entro en la cripta. [tirada]5 dif 7[/tirada]",
                                now - timedelta(minutes=2))
        forum.add_post(topic, OTHER[0], "La sigo de cerca: [tirada]4 dif 6[/tirada]", now - timedelta(minutes=1))
    server = make_server("127.0.0.1", args.port, create_app(forum), threaded=True)
    url = f"http://127.0.0.1:{server.server_port}"
    if args.url_file:
        Path(args.url_file).write_text(url + "\n")
    print(f"local Foroactivo ({args.version}) on {url}", flush=True)
    print(f"accounts: {PLAYER[0]} / {PLAYER[1]}, {OTHER[0]} / {OTHER[1]}, the bot {BOT[0]} / {BOT[1]}; "
          "boards 1 (public) and 2 (members only); Ctrl-C stops it", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(SystemExit(0)))
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
