"""Every reply kind, read as a reader reads it (issue 26, «Done when»: "a review of every reply
kind (es and en, BBCode, Markdown and HTML) rendered on the live FlaskBB and MyBB forums shows
no raw key, no escaped bracket, no English in a Spanish game").

For a Spanish and an English game, a player (with a sheet imported by ``narrador sheets
import``) and a second member write one post per reply kind in one thread: a plain roll with
Willpower and a specialty, refusals that show the corrected tag, the cheat sheet, a teamwork
effort started and finished, an extended action across two posts, a contest opened and
answered, a contest with an NPC, a downtime notice and a bad one, a multiple action past its
declared count, a secret roll and a botch. ``narrador poll`` answers them; each reply is read
back from the forum **as rendered HTML** and its visible text must show:

* no raw catalogue or event key (every snake_case key of ``core.messages``, ``core.render``
  and ``core.tags.messages``, the record flags, and any snake_case identifier at all);
* no escaped bracket or entity (``&#91;``, ``\\[``, ``&amp;#91;``), no Markdown or BBCode of the
  reply shown as written (``**``, ``~~``, a backtick, ``[b]``), no U+FFFD;
* every roll tag the player wrote, as ``[tirada]...[/tirada]`` (``[roll]...[/roll]``);
* in the Spanish game no word that only the English catalogue has (the words of
  ``core/locale/en`` translations that no Spanish message uses: words the two languages share
  are not evidence), and in the English game no word only the Spanish messages have.

Forums: FlaskBB 2.2 (Markdown, the session's local forum) and MyBB 1.8 (BBCode, the kit:
``NARRADOR_MYBB_ENV``; skipped with how to get one outside CI, failed under ``CI=true``).
No live forum here renders HTML replies (every shipped profile writes BBCode, FlaskBB and
Spirit Markdown), so the **HTML flavour** is reviewed without a forum: the same posts go
through the worker (``process_post`` / ``send_reply``, the game state in memory) to a
``FakeForum`` whose reply markup is ``html``, and each reply -- ``core.render``'s html
flavour -- is parsed with lxml to the same assertions.

The dice are the day seed's: the script asks for outcomes that do not depend on them (a
teamwork effort and an extended action of 40 successes that 15 dice at difficulty 2 cannot
reach and 60 more all but surely do), except the botch, which is posted again, at most four
times, until one of its ten tags botches.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Protocol

import pytest
from lxml import html as lxml_html

from tests.conftest import FIXED_NOW, redis_url

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
WORD_JOINER = "\u2060"


# --------------------------------------------------------------------------- the script


@dataclass(frozen=True)
class Post:
    """One post of the script: who writes it (``player``, the sheet's owner, or ``rival``, a
    second member who answers the contest and joins the teamwork), its text, and what its
    reply must show besides the echoed roll tags (so the review reads the kind it names)."""

    who: str
    body: str
    shows: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kind:
    name: str
    posts: tuple[Post, ...]


@dataclass(frozen=True)
class Script:
    """One game's posts: its language, the character sheet of its player, its reply kinds."""

    lang: str
    traits: dict[str, dict[str, int]]
    kinds: tuple[Kind, ...]
    botch: str = ""  # the verdict a botch shows
    character: str = "Lucía"

    def sheet(self, owner: str) -> dict[str, object]:
        return {"characters": [{"name": self.character, "owner": owner, "willpower": 5, **self.traits}]}


def _kind(name: str, *posts: Post) -> Kind:
    return Kind(name, posts)


SPANISH = Script(
    lang="es",
    traits={"attributes": {"Destreza": 3, "Fuerza": 3, "Astucia": 3},
            "abilities": {"Atletismo": 2, "Pelea": 2, "Sigilo": 2}},
    botch="Fracaso",
    kinds=(
        _kind("plain roll with Willpower and a specialty",
              Post("player", "Salto la tapia: [tirada]Destreza+Atletismo dif 6 fv esp[/tirada]",
                   ("FV de Lucía: 4/5", "+FV"))),
        _kind("refusals with the corrected tag",
              Post("player", "[tirada]Destreza+Atletismo dific siete[/tirada] y [tirada]Destreza y FV dif 6[/tirada]",
                   ("No se ha tirado", "¿Quisiste decir [tirada]Destreza+Atletismo dific 7[/tirada]?",
                    "¿Quisiste decir [tirada]Destreza fv dif 6[/tirada]?")),
              Post("player", "[tirada]Des+Atl dif 7[/tirada], [tirada]Destrezza+Atletismo[/tirada] y "
                             "[tirada]Destreza 4+Atletismo 2[/tirada]",
                   ("«Des» es una abreviatura de Destreza (Lucía)",
                    "¿Quisiste decir [tirada]Destreza+Atletismo dif 7[/tirada]?",
                    "¿Quisiste decir [tirada]Destreza+Atletismo[/tirada]?", "Lucía tiene Destreza 3, no 4"))),
        _kind("help",
              Post("player", "¿Cómo se tiraba? [tirada]ayuda[/tirada]",
                   ("[tirada]Destreza+Atletismo dif 7 fv[/tirada]", "[ausencia hasta=2026-12-24]motivo[/ausencia]"))),
        _kind("teamwork started and finished",
              Post("player", 'Empujo: [tirada]15 dif 2 equipo "puerta" ext 40[/tirada]',
                   ("esfuerzo de equipo «puerta»: hacen falta 40 éxitos",)),
              Post("rival", 'Ayudo: [tirada]60 dif 2 equipo "puerta" ext 40[/tirada]', ("¡completada!",))),
        _kind("extended action across two posts",
              Post("player", 'Cavo: [tirada]15 dif 2 ext 40 "muro"[/tirada]',
                   ("acción extendida «muro»: hacen falta 40 éxitos",)),
              Post("player", 'Sigo cavando: [tirada]60 dif 2 ext 40 "muro"[/tirada]', ("¡completada!", "en 2 tiradas"))),
        _kind("contest opened and answered",
              Post("player", 'Echamos un pulso: [tirada]Fuerza+Pelea vs "pulso"[/tirada]',
                   ("enfrentamiento «pulso» abierto por Lucía: falta la tirada del rival",)),
              Post("rival", 'Acepto: [tirada]5 vs "pulso"[/tirada]', ("ha tirado",))),
        _kind("contest with an NPC",
              Post("player", "Forcejeo con el guardia: [tirada]Destreza+Pelea dif 7 vs 4 dif 6[/tirada]",
                   ("PNJ (dif 6)",))),
        _kind("downtime notice",
              Post("player", "[ausencia hasta=24/12]Me voy de viaje[/ausencia]", ("Anotada la ausencia de",))),
        _kind("downtime notice with an impossible date",
              Post("player", "[ausencia hasta=32/13]viaje[/ausencia]",
                   ("[ausencia hasta=32/13]viaje[/ausencia]", "no es una fecha que exista"))),
        _kind("multiple action past its declared count",
              Post("player", "[tirada]8 acciones 2[/tirada] [tirada]8 acciones 2[/tirada] [tirada]8 acciones 2[/tirada]",
                   ("acción 1 de 2: −2 dados", "acción 2 de 2: −3 dados",
                    "las 2 acciones declaradas de este turno ya se tiraron"))),
        _kind("secret roll",
              Post("player", "Me escondo: [tirada]Astucia+Sigilo secreta[/tirada]", ("Tirada secreta. Compromiso:",))),
        _kind("botch",
              Post("player", "Todo o nada: " + " ".join(["[tirada]6 dif 10[/tirada]"] * 10), ("Fracaso",))),
    ),
)

ENGLISH = Script(
    lang="en",
    traits={"attributes": {"Dexterity": 3, "Strength": 3, "Wits": 3},
            "abilities": {"Athletics": 2, "Brawl": 2, "Stealth": 2}},
    botch="Botch",
    kinds=(
        _kind("plain roll with Willpower and a specialty",
              Post("player", "I vault the wall: [roll]Dexterity+Athletics diff 6 wp spec[/roll]",
                   ("Lucía's Willpower: 4/5", "+WP"))),
        _kind("refusals with the corrected tag",
              Post("player", "[roll]Dexterity+Athletics diff seven[/roll], [roll]Dexterity and WP diff 6[/roll] and "
                             "[roll]Dexterity+Athletics with 1 WP[/roll]",
                   ("Not rolled", "Did you mean [roll]Dexterity+Athletics diff 7[/roll]?",
                    "Did you mean [roll]Dexterity wp diff 6[/roll]?", "just write wp")),
              Post("player", "[roll]Dex+Ath diff 7[/roll], [roll]Dextrity+Athletics[/roll] and "
                             "[roll]Dexterity 4+Athletics 2[/roll]",
                   ("'Dex' abbreviates Dexterity (Lucía)", "Did you mean [roll]Dexterity+Athletics diff 7[/roll]?",
                    "Did you mean [roll]Dexterity+Athletics[/roll]?", "Lucía has Dexterity 3, not 4"))),
        _kind("help",
              Post("player", "How was it? [roll]help[/roll]",
                   ("[roll]Dexterity+Athletics diff 7 wp[/roll]", "[absence until=2026-12-24]reason[/absence]",
                    "stunt N (Exalted)"))),
        _kind("teamwork started and finished",
              Post("player", 'I push: [roll]15 diff 2 team "door" ext 40[/roll]', ("40 successes needed",)),
              Post("rival", 'I help: [roll]60 diff 2 team "door" ext 40[/roll]', ("completed!",))),
        _kind("extended action across two posts",
              Post("player", 'I dig: [roll]15 diff 2 ext 40 "wall"[/roll]', ("extended action",)),
              Post("player", 'Still digging: [roll]60 diff 2 ext 40 "wall"[/roll]', ("completed!", "in 2 rolls"))),
        _kind("contest opened and answered",
              Post("player", 'Arm wrestling: [roll]Strength+Brawl vs "arm"[/roll]',
                   ("opened by Lucía: waiting for the opponent's roll",)),
              Post("rival", 'Deal: [roll]5 vs "arm"[/roll]', ("rolled",))),
        _kind("contest with an NPC",
              Post("player", "I wrestle the guard: [roll]Dexterity+Brawl diff 7 vs 4 diff 6[/roll]", ("NPC (diff 6)",))),
        _kind("downtime notice",
              Post("player", "[absence until=24/12]Travelling[/absence]", ("noted until",))),
        _kind("downtime notice with an impossible date",
              Post("player", "[absence until=32/13]trip[/absence]",
                   ("[absence until=32/13]trip[/absence]", "is not a date that exists"))),
        _kind("multiple action past its declared count",
              Post("player", "[roll]8 actions 2[/roll] [roll]8 actions 2[/roll] [roll]8 actions 2[/roll]",
                   ("action 1 of 2: −2 dice", "action 2 of 2: −3 dice"))),
        _kind("secret roll",
              Post("player", "I hide: [roll]Wits+Stealth secret[/roll]", ("Secret roll. Commitment:",))),
        _kind("botch",
              Post("player", "All or nothing: " + " ".join(["[roll]6 diff 10[/roll]"] * 10), ("Botch",))),
    ),
)

SCRIPTS = {"es": SPANISH, "en": ENGLISH}

#: A roll tag as a player writes it, and the downtime notices.
_ROLL_TAG = re.compile(r"\[(tirada|roll)\](.*?)\[/\1\]", re.IGNORECASE | re.DOTALL)
_ABSENCE_TAG = re.compile(r"\[(ausencia|absence)\b[^\]]*\].*?\[/\1\]", re.IGNORECASE | re.DOTALL)
_HELP = {"ayuda", "help", "?"}


def echoed_tags(body: str) -> list[str]:
    """The roll tags of ``body`` its reply echoes (all but a help request, answered with the
    cheat sheet)."""
    return [m.group(0) for m in _ROLL_TAG.finditer(body) if m.group(2).strip().casefold() not in _HELP]


# --------------------------------------------------------------------------- what a reader sees


_BLOCKS = ("br", "p", "li", "ol", "ul", "div", "blockquote", "tr", "pre")


def visible_text(markup: str) -> str:
    """The text a reader of ``markup`` (a post's rendered HTML) sees: lxml's text of the
    fragment, a line break after each block and ``<br>``, scripts and styles left out."""
    root = lxml_html.fragment_fromstring(markup or "", create_parent="div")
    for hidden in list(root.iter("script", "style")):
        hidden.drop_tree()
    for el in root.iter(*_BLOCKS):
        el.tail = "\n" + (el.tail or "")
    return str(root.text_content())


_WORDS = re.compile(r"[^\W\d_]+")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|%\(\w+\)[sdif]")


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORDS.findall(_PLACEHOLDER.sub(" ", text))}


@cache
def language_words() -> dict[str, frozenset[str]]:
    """Per language, the words only its messages use: ``{"es": words of the Spanish
    messages (the catalogue's msgids) that no English translation uses, "en": words of the
    English translations (``core/locale/en``) that no Spanish message uses}``.  A word both
    use (``no``, ``total``, ``dif``, a message left the same) is evidence of neither."""
    from babel.messages.pofile import read_po

    from core.i18n import LOCALE_DIR

    with (LOCALE_DIR / "en" / "LC_MESSAGES" / "narrador.po").open("rb") as fh:
        catalog = read_po(fh, locale="en")
    spanish: set[str] = set()
    english: set[str] = set()
    for message in catalog:
        if not message.id:
            continue
        ids = [message.id] if isinstance(message.id, str) else list(message.id)
        strings = [message.string] if isinstance(message.string, str) else list(message.string)
        for text in ids:
            spanish |= _words(text)
        for text in strings:
            english |= _words(text or "")
    return {"es": frozenset(spanish - english), "en": frozenset(english - spanish)}


@cache
def message_keys() -> frozenset[str]:
    """Every key of core's message and event tables that is an identifier (``team_started``,
    ``rejected:turn_full``, ``rolled_again``...): what a reader must never see."""
    from core import messages, render
    from core.record.schema import FLAG_NAMES
    from core.tags import messages as tag_messages

    tables = (messages._EVENTS, messages._ERRORS, messages._TEXTS, messages._SHEET_PROBLEMS, messages.TIME_UNITS,
              render._RULES_ERRORS, render._VERDICTS, tag_messages._TEXTS, tag_messages._OPTIONS)
    keys: set[str] = set(FLAG_NAMES)
    for table in tables:
        for key in table:
            keys.add(key)
            keys.update(key.split(":"))
    return frozenset(k for k in keys if "_" in k or ":" in k)


_SNAKE = re.compile(r"(?<![\w/.-])[^\W\d_]+(?:_[^\W_]+)+(?![\w/-])")
#: What shows that a reply's markup was escaped twice, or shown as written.
_ESCAPED = re.compile(r"&#?\w+;|\\[\[\]()*_`#!<>~|\\]")
_RAW_MARKUP = re.compile(r"\*\*|~~|`|\[/?(?:b|i|s|u|url|quote|code)\b[^\]]*\]", re.IGNORECASE)


def review_reply(markup: str, body: str, lang: str, shows: tuple[str, ...], names: tuple[str, ...]) -> list[str]:
    """What is wrong with one reply (``markup``: its HTML as the forum renders it) to a post
    of ``body`` in a game in ``lang``; ``shows`` must be seen in it, ``names`` (user and
    character names) are nobody's language.  What the player wrote (the echoed tags, a
    downtime notice quoted) is not Narrador's words: every check but "shown" reads the reply
    without it, so an escaped echo, which no longer reads as written, is still seen."""
    text = visible_text(markup).replace(WORD_JOINER, "")
    flat = " ".join(text.split())
    problems = []
    echoed = echoed_tags(body)
    missing = [s for s in (*echoed, *shows) if " ".join(s.split()) not in flat]
    if missing:
        problems.append(f"not shown {missing}")
    own = flat
    for written in (*echoed, *(m.group(0) for m in _ABSENCE_TAG.finditer(body)), *names):
        own = own.replace(" ".join(written.split()), " ")
    keys = sorted(k for k in message_keys() if re.search(rf"(?<![\w:]){re.escape(k)}(?![\w:])", own))
    snake = sorted(set(_SNAKE.findall(own)) - set(keys))
    if keys or snake:
        problems.append(f"raw keys {keys + snake}")
    escaped = sorted(set(_ESCAPED.findall(own)))
    if escaped or "&amp;#" in markup:
        problems.append(f"escaped characters {escaped or ['&amp;#']}")
    raw = sorted(set(_RAW_MARKUP.findall(own)))
    if raw:
        problems.append(f"markup shown as written {raw}")
    if "\ufffd" in markup or "\ufffd" in text:
        problems.append("U+FFFD")
    # the language: links, codes and numbers left out too
    words = _words(re.sub(r"\(ref p\d+ \w+\)|https?://\S+|\S*\d\S*", " ", own))
    foreign = sorted(words & language_words()["en" if lang == "es" else "es"])
    if foreign:
        problems.append(f"{'English' if lang == 'es' else 'Spanish'} words {foreign}")
    return problems


# --------------------------------------------------------------------------- the review


class Board(Protocol):
    """Where the script is played: a live forum, or the worker with a fake one."""

    player: str
    rival: str

    def start_thread(self, title: str, body: str) -> str: ...
    def write(self, who: str, thread: str, body: str) -> str: ...
    def replies(self, thread: str) -> list[str]: ...


@dataclass
class Played:
    kind: Kind
    post: Post
    post_id: str


@dataclass
class Review:
    board: Board
    script: Script
    answer: Callable[[], None]  # narrador poll, or the worker on the fake forum
    played: list[Played] = field(default_factory=list)

    def run(self, thread: str) -> None:
        for kind in self.script.kinds:
            for post in kind.posts:
                self.played.append(Played(kind, post, self.board.write(post.who, thread, post.body)))
        self.answer()
        botch = next(p for p in self.played if p.kind.name == "botch")
        for attempt in range(1, 5):  # each post of ten tags botches at least once with p > 0.95
            if self.script.botch in visible_text(self.reply_to(thread, botch.post_id)):
                break
            body = f"{botch.post.body} ({attempt + 1})"
            post = Post(botch.post.who, body, botch.post.shows)
            self.played.remove(botch)
            botch = Played(botch.kind, post, self.board.write(post.who, thread, body))
            self.played.append(botch)
            self.answer()

    def reply_to(self, thread: str, post_id: str) -> str:
        found = [r for r in self.board.replies(thread) if f"(ref p{post_id} " in visible_text(r)]
        assert len(found) == 1, f"{len(found)} replies to post {post_id}"
        return found[0]

    def problems(self, thread: str) -> list[str]:
        names = (self.board.player, self.board.rival, self.script.character)
        out = []
        replies = self.board.replies(thread)
        for played in self.played:
            mine = [r for r in replies if f"(ref p{played.post_id} " in visible_text(r)]
            if len(mine) != 1:
                out.append(f"{played.kind.name} (post {played.post_id}): {len(mine)} replies")
                continue
            for problem in review_reply(mine[0], played.post.body, self.script.lang, played.post.shows, names):
                out.append(f"{played.kind.name} (post {played.post_id}): {problem}")
        return out


# --------------------------------------------------------------------------- narrador, live


def narrador(config: Path, *args: str, timeout: int = 300) -> str:
    env = dict(os.environ, REDIS_URL=redis_url())
    out = subprocess.run([sys.executable, "-m", "worker.app.cli", *args, "-c", str(config)], capture_output=True,
                         text=True, timeout=timeout, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip()


def live_config(tmp_path: Path, unique: str, script: Script, owner: str, forum: list[str]) -> Path:
    """A config with the game in ``script.lang`` and ``forum`` (its ``[forums.f-<unique>]``
    lines), and the player's sheet imported with ``narrador sheets import``."""
    config = tmp_path / "narrador.toml"
    config.write_text("\n".join([
        "[narrador]", f'instance_dir = "{tmp_path / "instance"}"', 'public_url = "http://narrador.test"', "",
        f"[games.g-{unique}]", 'ruleset = "vampiro"', f'language = "{script.lang}"', "",
        f"[forums.f-{unique}]", f'game = "g-{unique}"', "request_interval = 0", *forum, "",
    ]), encoding="utf-8")
    sheets = tmp_path / "sheets.json"
    sheets.write_text(json.dumps(script.sheet(owner)), encoding="utf-8")
    narrador(config, "sheets", "import", f"g-{unique}", str(sheets), timeout=120)
    return config


class FlaskBBBoard:
    """The session's local FlaskBB: ``jugadora`` plays, the administrator is the rival."""

    def __init__(self, forum) -> None:  # type: ignore[no-untyped-def]
        from worker.forums.flaskbb import FlaskBBClient

        self.forum = forum
        self.player, self.rival = forum.player.username, forum.admin.username
        self.clients = {who: FlaskBBClient(forum.base_url, account.username, account.password, timeout=10,
                                           name=f"review-{who}")
                        for who, account in (("player", forum.player), ("rival", forum.admin), ("bot", forum.bot))}

    def start_thread(self, title: str, body: str) -> str:
        return self.clients["player"].create_thread(self.forum.forum_id, title, body)[0]

    def write(self, who: str, thread: str, body: str) -> str:
        return self.clients[who].post_reply(thread, body)

    def replies(self, thread: str) -> list[str]:
        return [p.body_html for p in self.clients["bot"].list_posts(thread).posts
                if p.author == self.forum.bot.username]


@pytest.mark.parametrize("lang", ["es", "en"])
def test_every_reply_kind_reads_right_on_flaskbb(local_forum, tmp_path, unique, cleanup_keys, lang):
    """FlaskBB 2.2 renders the replies' Markdown (brackets escaped with a backslash, as
    ``markdown_escaped`` writes them)."""
    script = SCRIPTS[lang]
    board = FlaskBBBoard(local_forum)
    thread = board.start_thread(f"Revisión {lang} {unique}", "Empieza la escena.")
    config = live_config(tmp_path, unique, script, board.player, [
        'kind = "flaskbb"', f'base_url = "{local_forum.base_url}"', f'username = "{local_forum.bot.username}"',
        f'password = "{local_forum.bot.password}"', f'watch_threads = ["{thread}"]'])
    review = Review(board, script, lambda: narrador(config, "poll"))
    review.run(thread)
    problems = review.problems(thread)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- MyBB


@pytest.fixture(scope="module")
def mybb():  # type: ignore[no-untyped-def]
    from tests.mybb.kit import HOW_TO, find_mybb

    forum = find_mybb()
    if forum is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {HOW_TO}", pytrace=False)
        pytest.skip(HOW_TO)
    return forum


#: The kit's administrator (``shared/forums/mybb/NOTES.md``): the player's rival.
MYBB_ADMIN = ("admin", "admin-pass-5299")


class MyBBBoard:
    """The kit's MyBB (``mybb18`` profile): ``player1`` plays, the administrator is the
    rival; replies are read as a guest reads them."""

    def __init__(self, forum) -> None:  # type: ignore[no-untyped-def]
        from tests.mybb.kit import BOT, PLAYER
        from worker.forums.profile import ProfileClient, load_profile

        self.forum, self.bot = forum, BOT[0]
        self.player, self.rival = PLAYER[0], MYBB_ADMIN[0]
        profile = load_profile("mybb18")
        self.clients = {who: ProfileClient(profile, forum.base_url, *account, name=f"review-{who}", form_age=0)
                        for who, account in (("player", PLAYER), ("rival", MYBB_ADMIN), ("guest", ("nadie", "")))}

    def start_thread(self, title: str, body: str) -> str:
        return self.clients["player"].create_thread(self.forum.fid, title, body)[0]

    def write(self, who: str, thread: str, body: str) -> str:
        post_id = self.clients[who].post_reply(thread, body)
        assert post_id, f"MyBB did not name the post of {who}"
        return post_id

    def replies(self, thread: str) -> list[str]:
        return [p.body_html for p in self.clients["guest"].list_posts(thread).posts if p.author == self.bot]


@pytest.mark.parametrize("lang", ["es", "en"])
def test_every_reply_kind_reads_right_on_mybb(mybb, tmp_path, unique, cleanup_keys, lang):
    """MyBB 1.8 renders the replies' BBCode (a word joiner after each echoed ``[``)."""
    from tests.mybb.kit import BOT

    script = SCRIPTS[lang]
    board = MyBBBoard(mybb)
    thread = board.start_thread(f"Revisión {lang} {unique}", "Empieza la escena.")
    config = live_config(tmp_path, unique, script, board.player, [
        'kind = "profile"', 'profile = "mybb18"', f'base_url = "{mybb.base_url}"', f'username = "{BOT[0]}"',
        f'password = "{BOT[1]}"', f'watch_threads = ["{thread}"]', "flood_interval = 0"])
    review = Review(board, script, lambda: narrador(config, "poll"))
    review.run(thread)
    problems = review.problems(thread)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- HTML, without a forum


class HtmlBoard:
    """The worker on a :class:`worker.forums.fake.FakeForum` whose reply markup is ``html``
    (what a profile forum that renders HTML is sent), the game state in memory."""

    player, rival = "jugadora", "tomas"

    def __init__(self, tmp_path: Path, unique: str, script: Script) -> None:
        from worker import service
        from worker.adapters.files.keystore import Keystore
        from worker.adapters.memory.gamestate import MemoryGameState
        from worker.config.settings import settings_from_mapping
        from worker.forums.fake import FakeForum

        self.forum_name, game = f"f-{unique}", f"g-{unique}"
        settings = settings_from_mapping({
            "narrador": {"instance_dir": str(tmp_path / "instance"), "redis_url": redis_url(),
                         "public_url": "http://narrador.test"},
            "games": {game: {"ruleset": "vampiro", "language": script.lang}},
            "forums": {self.forum_name: {"kind": "flaskbb", "base_url": "http://forum.invalid",
                                         "username": "narrador", "password": "x", "game": game,
                                         "watch_forums": ["1"]}},
        }, base_dir=tmp_path, environ={})
        self.fake = FakeForum(self.forum_name, clock=lambda: FIXED_NOW - timedelta(minutes=5))
        self.fake.reply_markup = "html"
        keystore = Keystore(settings.instance_dir)
        keystore.init_keys()
        self.svc = service.Services(settings=settings, store=MemoryGameState(clock=lambda: FIXED_NOW),
                                    keystore=keystore, forum_factory=lambda fs: self.fake, clock=lambda: FIXED_NOW)
        self.svc.store.import_sheets(game, script.sheet(self.player), now=FIXED_NOW)
        self.waiting: list[str] = []

    def start_thread(self, title: str, body: str) -> str:
        return self.fake.add_thread("1", title, body, author=self.player)[0]

    def write(self, who: str, thread: str, body: str) -> str:
        post_id = self.fake.add_post(thread, body, author=self.player if who == "player" else self.rival)
        self.waiting.append(post_id)
        return post_id

    def answer(self) -> None:
        from worker import service

        for post_id in self.waiting:
            if service.process_post(self.svc, self.fake.post(post_id)).status == "pending_reply":
                service.send_reply(self.svc, self.forum_name, post_id)
        self.waiting.clear()

    def replies(self, thread: str) -> list[str]:
        return [r.content for r in self.fake.replies if r.thread_id == thread]


@pytest.mark.parametrize("lang", ["es", "en"])
def test_every_reply_kind_reads_right_in_html(tmp_path, unique, lang):
    """No live forum renders HTML replies: core.render's html flavour, through the worker,
    parsed with lxml (see the module docstring)."""
    script = SCRIPTS[lang]
    board = HtmlBoard(tmp_path, unique, script)
    thread = board.start_thread("Revisión", "Empieza la escena.")
    review = Review(board, script, board.answer)
    review.run(thread)
    problems = review.problems(thread)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- the review itself


_GOOD = ("<p><strong>Tiradas de @jugadora (Lucía)</strong></p>\n<ol>\n<li><code>[tirada]5 dif 6[/tirada]</code> → "
         "<strong>Éxito moderado (2)</strong> · 5 dados, dif 6 · dados: <strong>7</strong> 3 <strong>9</strong> 2 4 · "
         'código <a href="http://narrador.test/v/abcdefgh23456789">abcdefgh23456789</a></li>\n</ol>\n'
         "<p>Narrador · dados verificables (ref p12 qwertyui)</p>")


@pytest.mark.parametrize(("defect", "reported"), [
    (("Éxito moderado", "team_started"), "raw keys ['team_started']"),
    (("Éxito moderado", "rejected:turn_full"), "raw keys ['rejected:turn_full', 'turn_full']"),
    (("Éxito moderado", "éxito_moderado"), "raw keys"),
    (("<code>[tirada]5 dif 6[/tirada]</code>", "&amp;#91;tirada&amp;#93;5 dif 6"), "escaped characters"),
    (("<code>[tirada]5 dif 6[/tirada]</code>", "\\[tirada\\]5 dif 6\\[/tirada\\]"), "escaped characters"),
    (("<strong>Éxito moderado (2)</strong>", "**Éxito moderado (2)**"), "markup shown as written"),
    (("<strong>7</strong>", "[b]7[/b]"), "markup shown as written"),
    (("Narrador ·", "Narrador \ufffd"), "U+FFFD"),
    (("<code>[tirada]5 dif 6[/tirada]</code>", "<code>[tirada]5 dif 7[/tirada]</code>"), "not shown"),
    (("Éxito moderado", "Moderate success"), "English words ['moderate', 'success']"),
])
def test_the_review_reports_each_defect_it_looks_for(defect, reported):
    """The review is not vacuous: a reply as a forum renders it, with one defect, is reported;
    the same reply without it is not."""
    assert review_reply(_GOOD, "Salto: [tirada]5 dif 6[/tirada]", "es", (), ("jugadora", "Lucía")) == []
    bad = _GOOD.replace(*defect)
    assert bad != _GOOD
    problems = review_reply(bad, "Salto: [tirada]5 dif 6[/tirada]", "es", (), ("jugadora", "Lucía"))
    assert any(p.startswith(reported) for p in problems), problems


def test_the_review_reports_spanish_in_an_english_game():
    reply = _GOOD.replace("Tiradas de", "Rolls by").replace("dados verificables", "verifiable dice")
    problems = review_reply(reply, "[tirada]5 dif 6[/tirada]", "en", (), ("jugadora", "Lucía"))
    assert any(p.startswith("Spanish words") and "'moderado'" in p for p in problems), problems
