"""A forum engine described as data: the profile's keys, their defaults and their checks.

Every key is documented with an example in ``docs/forums.md`` ("Configurable HTML
profile"); the shipped profiles (``profiles/mybb18.toml``, ``profiles/smf21.toml``) are
worked examples. A profile is validated when it is loaded: an unknown key, a selector or
regex that does not compile, a 12-hour date format without ``%p`` or an unknown markup is a
:class:`ProfileError` naming the key, so a typo fails the start instead of a poll.

Selectors are CSS: on topic and board pages as cssselect reads them (those pages are read with
lxml), in forms as soupsieve reads them (BeautifulSoup). A selector *group* (``"a.x, a.y"`` or a TOML list) is tried
in the order written: the first member that matches anything wins, whatever the order of the
elements in the page (``worker.forums.markup.first_match``).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bs4 import BeautifulSoup
from soupsieve import SelectorSyntaxError

from worker.forums.dates import DATE_LOCALES, DateStyle, check_formats
from worker.forums.markup import selector_group
from worker.forums.tree import CSSError, check_selector

__all__ = [
    "MARKUPS",
    "PROFILES_DIR",
    "BoardSpec",
    "FormRecipe",
    "Profile",
    "ProfileError",
    "TopicSpec",
    "load_profile",
    "profile_from_mapping",
]

#: Where the shipped profiles live (``<name>.toml``).
PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
#: Reply markups a profile may name (``core.render.FLAVOURS``).
MARKUPS = ("bbcode", "bbcode_strike", "markdown", "markdown_escaped", "html")


class ProfileError(ValueError):
    """A profile file is missing, unreadable or lacks a required key (configuration error)."""


@dataclass(frozen=True)
class TopicSpec:
    """Where things are on a topic page (CSS selector groups unless said otherwise).

    Attributes:
        url: path template of a topic page, with ``{thread_id}`` and ``{page}`` (1-based)
            or ``{start}`` (0-based offset: ``(page - 1) * per_page``).
        per_page: posts per page, for ``{start}``.
        page_param: the query parameter that carries the page on a topic's canonical URL
            (learnt from a redirect or the board listing); default: the parameter of
            ``url`` whose value is ``{page}`` or ``{start}``.
        post: one post's container.
        id_attr / id_regex: the attribute of the container holding the post id and a regex
            whose first group is the id (e.g. ``id`` and ``^post_(\\d+)$``).
        author / body: inside the container.
        time: the element holding the post's date. ``time_attr`` names an attribute holding
            the whole date (``datetime``), else the element's text is read, after
            ``time_remove`` (selectors removed from it: edit notes) and after every
            descendant carrying ``time_titles`` (an attribute, e.g. ``title``) is replaced
            by that attribute's value (MyBB: ``<span title="2026-12-01">Today</span>, 08:50``).
        time_regex: a regex over that text (whitespace collapsed) whose group ``date``, else
            its first group, is the date, for an element that holds more than the date
            (Foroactivo phpBB3: ``por jugadora el Lun 10 Nov 2014 - 20:15``); a text it does
            not match is a ``topic.time_regex`` problem.
        edited / edited_regex: the edit note ("last modified: ..."); its date is the first
            group of ``edited_regex`` over the note's text (read like ``time``).
        remove: selectors removed from the body (signatures inside it, edit notes...).
        quote: quote blocks inside the body; they are turned into ``<blockquote>`` so
            extraction drops them whatever the forum calls them.
        page_current: the pagination's current page (its text is the number).
        page_links: the pagination's page links; the number is the link's ``page_attr``
            attribute when set, else the first group of ``page_href_regex`` over its
            ``href`` when set, else its text.
        page_next: the "next page" link: its presence says there is a page after this one.
        page_of_regex: a regex over the page's text giving the last page as its group
            ``last`` (and the current one as ``page``): ``Page (?P<page>\\d+) of (?P<last>\\d+)``.
        title: the topic title.
        post_url: path template of one post's URL (``{post_id}``, ``{thread_id}``).
        logged_in: matches only on pages rendered for a logged-in user.
        not_found_regex: the text of the page a missing topic answers (then the thread is
            reported gone instead of the page being a markup alert).
        volatile: regexes of page parts that change on every request (tokens), ignored when
            deciding whether a page changed.
    """

    url: str
    post: str
    id_regex: str
    author: str
    body: str
    post_url: str
    id_attr: str = "id"
    per_page: int = 10
    page_param: str = ""
    time: str = ""
    time_attr: str = ""
    time_titles: str = ""
    time_remove: tuple[str, ...] = ()
    time_regex: str = ""
    edited: str = ""
    edited_regex: str = ""
    remove: tuple[str, ...] = ()
    quote: str = ""
    page_current: str = ""
    page_links: str = ""
    page_attr: str = ""
    page_href_regex: str = ""
    page_next: str = ""
    page_of_regex: str = ""
    title: str = ""
    logged_in: str = ""
    not_found_regex: str = ""
    volatile: tuple[str, ...] = ()

    @property
    def page_query_param(self) -> str:
        """``page_param``, or the query parameter of ``url`` that holds the page."""
        if self.page_param:
            return self.page_param
        for name, value in parse_qsl(urlsplit(self.url).query.replace(";", "&")):
            if value in ("{page}", "{start}"):
                return name
        return ""


@dataclass(frozen=True)
class BoardSpec:
    """A board page.

    Attributes:
        url: template with ``{forum_id}``, and ``{page}`` (1-based) or ``{start}`` (0-based
            offset, ``(page - 1) * per_page``) for the listing's later pages.
        per_page: topics per listing page, for ``{start}``.
        thread_link: selector of the topic links.
        thread_regex: first group = the topic id in a link's ``href``.
        listing: the topic list's container: when it is there and holds no topic link the
            board is empty (no alert); when it is missing the page is not a board page.
        topic: one topic's entry in the listing (the row around its link).
        replies: inside ``topic``: the topic's reply (or post) count.
        last_post: selector group inside ``topic``: the last post's link, date or author;
            each member that matches adds its value.
        last_post_attr: read this attribute of a ``last_post`` element when it has it (the
            exact date in a ``title``, the post id in an ``href``), else its text.
        page_next: the listing's "next page" link.

    ``replies`` and ``last_post`` make a topic's *activity*: when it is the same as at the
    last poll the topic is not fetched (:mod:`worker.service.boards`).
    """

    url: str
    thread_link: str
    thread_regex: str
    listing: str = ""
    per_page: int = 20
    topic: str = ""
    replies: str = ""
    last_post: str | tuple[str, ...] = ""
    last_post_attr: str = ""
    page_next: str = ""

    @property
    def shows_activity(self) -> bool:
        """True when the listing tells which topics changed (``topic`` with ``replies``
        and/or ``last_post``)."""
        return bool(self.topic and (self.replies or self.last_post))


@dataclass(frozen=True)
class FormRecipe:
    """How to fill and submit one form (login, reply or new topic).

    Attributes:
        url: path template of the page holding the form (``{thread_id}``, ``{forum_id}``).
        form: selector of the form on that page.
        fields: field names by role: ``username``, ``password``, ``message``, ``subject``.
        token_fields: hidden fields that must be present (CSRF tokens such as MyBB's
            ``my_post_key`` or phpBB's ``form_token``); every hidden field of the form is
            sent back anyway.
        submit: selector group of the button a browser clicks to send the form: its
            ``name`` and ``value`` are sent as the click would (a board whose button value is
            localised, "Enviar" or "Send", checks it: Foroactivo); a form without it is a
            ``<part>.submit`` markup alert.
        extra: fields added or overridden (a fixed submit name and value...).
        post_id_regex: first group = the new post's id, searched in the redirect
            ``Location``, then the answer page's meta refresh and links.
        thread_id_regex: the same for a new topic's id.
        error: selector group of the error message on a refused submission, inline or a
            full error page (hidden elements are skipped).
        flood_regex: the error text for "posting too fast"; a group ``wait`` gives the
            seconds the forum asks for (``wait (?P<wait>\\d+) more second``).
        csrf_regex: the error text for "token expired / invalid" (the form is fetched again
            and submitted once more).
        duplicate_regex: the error text for "you already posted this": the forum stored an
            earlier submission; the reply is then looked up by its marker.
        resubmit_regex: the error text of a form re-rendered without storing anything
            because someone posted meanwhile (SMF's "while you were typing"): it is
            submitted once more from the re-rendered form.
    """

    url: str
    form: str
    fields: Mapping[str, str] = field(default_factory=dict)
    token_fields: tuple[str, ...] = ()
    submit: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)
    post_id_regex: str = ""
    thread_id_regex: str = ""
    error: str = ".error"
    flood_regex: str = ""
    csrf_regex: str = ""
    duplicate_regex: str = ""
    resubmit_regex: str = ""


@dataclass(frozen=True)
class Profile:
    """A forum engine described as data (see the module docstring and ``docs/forums.md``).

    Attributes:
        name / description: for people.
        markup: what the forum renders in posts, so what replies are written in:
            ``bbcode``, ``markdown`` or ``html``.
        timezone: IANA zone of times shown without an offset (the board's setting).
        locale: the board's language for dates (``es`` or ``en``).
        time_formats: exact ``strptime`` formats tried first (after ISO 8601), before the
            localized reading.
        date_order: ``DMY``, ``MDY`` or ``YMD`` for all-numeric dates.
        topic / board / login / reply / new_thread: the parts; ``board`` and
            ``new_thread`` are optional (None).
    """

    name: str
    topic: TopicSpec
    login: FormRecipe
    reply: FormRecipe
    description: str = ""
    markup: str = "bbcode"
    timezone: str = "UTC"
    locale: str = "en"
    time_formats: tuple[str, ...] = ()
    date_order: str = ""
    board: BoardSpec | None = None
    new_thread: FormRecipe | None = None

    def for_forum(self, *, timezone: str = "", locale: str = "", per_page: int = 0) -> Profile:
        """This profile with one forum's own settings in place of the engine's defaults
        (``[forums.<name>]`` ``timezone``, ``date_locale``, ``per_page``; empty / 0 keeps
        the profile's value)."""
        from dataclasses import replace

        topic = replace(self.topic, per_page=per_page) if per_page else self.topic
        return replace(self, timezone=timezone or self.timezone, locale=locale or self.locale,
                       topic=topic)

    @property
    def date_style(self) -> DateStyle:
        """How the forum prints dates (``worker.forums.dates``)."""
        return DateStyle(timezone=self.timezone, locale=self.locale, formats=self.time_formats,
                         date_order=self.date_order)


_TOP_KEYS = {"name", "description", "markup", "timezone", "locale", "time_formats", "date_order",
             "topic", "board", "login", "reply", "new_thread", "extends"}
_SECTIONS = ("topic", "board", "login", "reply", "new_thread")
#: How many ``extends`` a profile may chain (a file extending a file extending a shipped one...).
MAX_EXTENDS = 5


def _section(data: Mapping[str, Any], key: str, cls: type, where: str, optional: bool = False):
    raw = data.get(key)
    if raw is None and optional:
        return None
    if not isinstance(raw, Mapping):
        raise ProfileError(f"{where}: [{key}] is required")
    known = {f.name for f in fields(cls)}
    values = {}
    for name, value in raw.items():
        if name not in known:
            close = [k for k in sorted(known) if k.startswith(name[:3])]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ProfileError(f"{where}: unknown key {key}.{name}{hint}")
        values[name] = tuple(value) if isinstance(value, list) else value
    try:
        return cls(**values)
    except TypeError as exc:
        raise ProfileError(f"{where}: [{key}] {exc}") from None


def profile_from_mapping(data: Mapping[str, Any], *, where: str = "profile") -> Profile:
    """Build a :class:`Profile` from parsed TOML, checking keys, selectors and regexes.

    Raises:
        ProfileError: a required key is missing, a key is unknown, or a value does not
            compile or is not one of the allowed ones (the message names the key).
    """
    for key in data:
        if key not in _TOP_KEYS:
            raise ProfileError(f"{where}: unknown key {key!r}")
    topic = _section(data, "topic", TopicSpec, where)
    profile = Profile(
        name=str(data.get("name") or where), description=str(data.get("description", "")),
        markup=str(data.get("markup", "bbcode")), timezone=str(data.get("timezone", "UTC")),
        locale=str(data.get("locale", "en")),
        time_formats=tuple(str(f) for f in data.get("time_formats", ())),
        date_order=str(data.get("date_order", "")),
        topic=topic, login=_section(data, "login", FormRecipe, where),
        reply=_section(data, "reply", FormRecipe, where),
        board=_section(data, "board", BoardSpec, where, optional=True),
        new_thread=_section(data, "new_thread", FormRecipe, where, optional=True),
    )
    _check_values(profile, where)
    _check_regexes(profile, where)
    _check_selectors(profile, where)
    return profile


def _recipes(profile: Profile) -> dict[str, FormRecipe | None]:
    """The profile's form recipes by part (``new_thread`` None when it has none)."""
    return {"login": profile.login, "reply": profile.reply, "new_thread": profile.new_thread}


def _check_values(profile: Profile, where: str) -> None:
    """Raise ``ProfileError`` naming the first value that is not one of the allowed ones
    (markup, locale, date order, time formats, time zone, the topic URL's placeholder)."""
    topic = profile.topic
    if profile.markup not in MARKUPS:
        raise ProfileError(f"{where}: markup must be one of {', '.join(MARKUPS)}, got {profile.markup!r}")
    if profile.locale not in DATE_LOCALES:
        raise ProfileError(f"{where}: locale must be one of {', '.join(DATE_LOCALES)}, got {profile.locale!r}")
    if profile.date_order not in ("", "DMY", "MDY", "YMD"):
        raise ProfileError(f"{where}: date_order must be DMY, MDY or YMD, got {profile.date_order!r}")
    problem = check_formats(profile.time_formats)
    if problem:
        raise ProfileError(f"{where}: time_formats: {problem}")
    try:
        ZoneInfo(profile.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ProfileError(f"{where}: unknown timezone {profile.timezone!r}") from None
    if "{page}" not in topic.url and "{start}" not in topic.url:
        raise ProfileError(f"{where}: topic.url must contain {{page}} or {{start}}")


def _check_regexes(profile: Profile, where: str) -> None:
    """Raise ``ProfileError`` naming the first regex that does not compile (or lacks the
    group it needs), and a board whose activity keys have no ``board.topic`` to be read in."""
    topic = profile.topic
    recipes = _recipes(profile)
    regexes = {"topic.id_regex": topic.id_regex, "topic.time_regex": topic.time_regex,
               "topic.page_href_regex": topic.page_href_regex,
               "topic.page_of_regex": topic.page_of_regex, "topic.edited_regex": topic.edited_regex,
               "topic.not_found_regex": topic.not_found_regex}
    regexes.update({f"topic.volatile[{i}]": v for i, v in enumerate(topic.volatile)})
    for part, recipe in recipes.items():
        if recipe is None:
            continue
        for attr in ("post_id_regex", "thread_id_regex", "flood_regex", "csrf_regex",
                     "duplicate_regex", "resubmit_regex"):
            regexes[f"{part}.{attr}"] = getattr(recipe, attr)
    if profile.board:
        regexes["board.thread_regex"] = profile.board.thread_regex
    for key, rx in regexes.items():
        try:
            re.compile(rx)
        except re.error as exc:
            raise ProfileError(f"{where}: {key}: bad regex {rx!r}: {exc}") from None
    if topic.page_of_regex and "last" not in re.compile(topic.page_of_regex).groupindex:
        raise ProfileError(f"{where}: topic.page_of_regex needs a group (?P<last>...)")
    if profile.board and (profile.board.replies or profile.board.last_post) and not profile.board.topic:
        raise ProfileError(f"{where}: board.replies and board.last_post are read inside board.topic: set it")


def _check_selectors(profile: Profile, where: str) -> None:
    """Raise ``ProfileError`` naming the first CSS selector that does not parse: topic and
    board pages are read with lxml (cssselect), forms with BeautifulSoup (soupsieve)."""
    topic = profile.topic
    recipes = _recipes(profile)
    paged = {f"topic.{name}": getattr(topic, name) for name in (
        "post", "author", "body", "time", "edited", "quote", "page_current", "page_links",
        "page_next", "title", "logged_in")}
    paged.update({f"topic.remove[{i}]": s for i, s in enumerate(topic.remove)})
    paged.update({f"topic.time_remove[{i}]": s for i, s in enumerate(topic.time_remove)})
    if profile.board:
        for name in ("thread_link", "listing", "topic", "replies", "last_post", "page_next"):
            paged[f"board.{name}"] = getattr(profile.board, name)
    for key, sel in paged.items():
        for member in selector_group(sel) if sel else ():
            try:
                check_selector(member)
            except CSSError as exc:
                raise ProfileError(f"{where}: {key}: bad selector {exc}") from None
    probe = BeautifulSoup("<p></p>", "lxml")
    selectors: dict[str, str] = {}
    for part, recipe in recipes.items():
        if recipe is not None:
            selectors[f"{part}.form"] = recipe.form
            selectors[f"{part}.error"] = recipe.error
            selectors[f"{part}.submit"] = recipe.submit
    selectors["topic.logged_in"] = topic.logged_in  # also read on form pages
    for key, sel in selectors.items():
        for member in selector_group(sel) if sel else ():
            try:
                probe.select(member)
            except SelectorSyntaxError as exc:
                raise ProfileError(f"{where}: {key}: bad selector {member!r}: {exc}") from None


def load_profile(name_or_path: str) -> Profile:
    """A shipped profile by name (``mybb18``, ``smf21``, ``foroactivo-phpbb3``...: files in
    :data:`PROFILES_DIR`) or a profile TOML file by path.

    A file may start from another profile with ``extends = "foroactivo-phpbb3"`` (a shipped
    name, or a path relative to the file): its top-level keys replace the base's, and each of
    its tables (``[topic]``, ``[board]``, ``[login]``, ``[reply]``, ``[new_thread]``) replaces
    the base's keys one by one, so a board whose admin edited one template writes only the
    selectors that changed (``docs/foroactivo.md``).

    Raises:
        ProfileError: not found, unreadable, invalid, or an ``extends`` chain that loops or is
            longer than :data:`MAX_EXTENDS`.
    """
    data, where = _profile_data(name_or_path, Path.cwd(), ())
    return profile_from_mapping(data, where=where)


def _profile_path(name_or_path: str, relative_to: Path) -> Path:
    if not name_or_path.endswith(".toml"):
        if not re.fullmatch(r"[a-z0-9_-]{1,40}", name_or_path):
            raise ProfileError(f"bad profile name {name_or_path!r}")
        return PROFILES_DIR / f"{name_or_path}.toml"
    path = Path(name_or_path)
    return path if path.is_absolute() else relative_to / path


def _profile_data(name_or_path: str, relative_to: Path, chain: tuple[Path, ...]) -> tuple[dict[str, Any], str]:
    """A profile's TOML as one mapping, its ``extends`` chain merged in (base first)."""
    path = _profile_path(name_or_path, relative_to)
    if path.resolve() in chain:
        raise ProfileError(f"{path}: extends loops back to {path.name}")
    if len(chain) > MAX_EXTENDS:
        raise ProfileError(f"{chain[0]}: more than {MAX_EXTENDS} profiles in its extends chain")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        shipped = sorted(p.stem for p in PROFILES_DIR.glob("*.toml"))
        raise ProfileError(f"no profile {name_or_path!r} (shipped: {', '.join(shipped)})") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"{path}: {exc}") from None
    base_name = data.pop("extends", None)
    if base_name is None:
        return data, str(path)
    if not isinstance(base_name, str) or not base_name:
        raise ProfileError(f"{path}: extends must be a profile name or a .toml path")
    base, _ = _profile_data(base_name, path.parent, (*chain, path.resolve()))
    merged = dict(base)
    for key, value in data.items():
        if key in _SECTIONS and isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = {**base[key], **value}
        else:
            merged[key] = value
    return merged, str(path)
