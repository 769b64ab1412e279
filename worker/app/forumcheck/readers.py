"""Each engine's pages as ``narrador forums check`` reads them: the paths to fetch (live) and
pure readers of a page's text into the views of :mod:`worker.app.forumcheck.report`."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from worker.app.forumcheck.report import FormView, Problem, TopicView
from worker.forums.base import BoardListing, ForumError

if TYPE_CHECKING:
    from worker.config.forums import ForumSettings
    from worker.config.settings import Settings


class Reader:
    """One engine's pages: paths to fetch and pure readers of saved text."""

    kind = ""
    keys: ClassVar[dict[str, str]] = {}  # what a key is called in this engine's messages

    def __init__(self, fs: ForumSettings, profile: Any = None) -> None:
        self.fs = fs
        self.base_url = str(fs.base_url).rstrip("/")
        self.profile = profile

    def key(self, name: str) -> str:
        """The key a problem with ``name`` (``"author"``...) names in this engine ("" when the
        engine is in code and has no keys)."""
        return self.keys.get(name, "")

    # paths (live)
    def topic_path(self, client: Any, thread_id: str, page: int, per_page: int | None) -> str:
        """The path of the topic's page ``page`` (``per_page``: the size the forum showed)."""
        raise NotImplementedError

    def board_path(self, client: Any, board: str) -> str:
        """The path of the board's listing (its first page)."""
        raise NotImplementedError

    def reply_path(self, thread_id: str) -> str:
        """The path of the page with the topic's reply form."""
        raise NotImplementedError

    # readers (pure)
    def topic(self, html: str, thread_id: str, now: datetime) -> TopicView:
        """A topic page (``now``: when it was read, for relative dates).

        Raises:
            ForumError: the page is not a topic page, or a part of it does not fit.
        """
        raise NotImplementedError

    def board(self, html: str) -> tuple[BoardListing, list[Problem], bool]:
        """(listing, problems, whether the listing shows activity at all)."""
        raise NotImplementedError

    def resolve(self, client: Any, listing: BoardListing) -> BoardListing:
        """Live: name the entries the page alone could not (FlaskBB's unread topics)."""
        return listing

    def form(self, html: str) -> FormView | None:
        """The page's reply form, else None."""
        raise NotImplementedError

    def login_form(self, html: str) -> FormView | None:
        """The login form of a saved login page (profile forums), else None."""
        return None


class _FlaskBB(Reader):
    kind = "flaskbb"

    def topic_path(self, client, thread_id, page, per_page):
        return f"/topic/{thread_id}?page={page}"

    def board_path(self, client, board):
        return f"/forum/{board}?page=1"

    def reply_path(self, thread_id: str) -> str:
        return f"/topic/{thread_id}?page=1"  # the quick reply form is under the posts

    def topic(self, html: str, thread_id: str, now: datetime) -> TopicView:
        from worker.forums.flaskbb import parse_topic_page

        posts, info = parse_topic_page(html, self.base_url, forum=self.fs.name, thread_id=thread_id or None)
        return TopicView(posts, info.page, info.last_page, info.raw_times, info.page_links, title=info.title)

    def board(self, html: str) -> tuple[BoardListing, list[Problem], bool]:
        from worker.forums.flaskbb import parse_board_page

        listing = parse_board_page(html)
        return listing, [], True

    def resolve(self, client: Any, listing: BoardListing) -> BoardListing:
        from dataclasses import replace

        entries = tuple(replace(e, thread_id=e.thread_id or client.topic_of_post(e.href)) for e in listing.entries)
        return replace(listing, entries=entries)

    def form(self, html: str) -> FormView | None:
        from bs4 import BeautifulSoup

        from worker.forums.markup import form_fields

        soup = BeautifulSoup(html, "lxml")
        textarea = soup.select_one('form textarea[name="content"]')
        form = textarea.find_parent("form") if textarea is not None else None
        if form is None:
            return None
        fields = form_fields(form)
        problems = [] if fields.get("csrf_token") else [Problem("", "the reply form has no csrf_token")]
        return FormView(str(form.get("action") or ""), fields, "content", ("csrf_token",), problems)


class _PhpBB(Reader):
    kind = "phpbb"

    def topic_path(self, client, thread_id, page, per_page):
        start = (page - 1) * (per_page or client.posts_per_page)
        return f"viewtopic.php?t={thread_id}" + (f"&start={start}" if page > 1 else "")

    def board_path(self, client, board):
        return f"viewforum.php?f={board}"

    def reply_path(self, thread_id: str) -> str:
        return f"posting.php?mode=reply&t={thread_id}"

    def topic(self, html: str, thread_id: str, now: datetime) -> TopicView:
        from worker.forums.phpbb import parse_topic_page

        posts, info = parse_topic_page(html, self.base_url, forum=self.fs.name, thread_id=thread_id or None)
        return TopicView(posts, info.page, info.last_page, info.raw_times, info.page_links, title=info.title,
                         per_page=info.per_page)

    def board(self, html: str) -> tuple[BoardListing, list[Problem], bool]:
        from worker.forums.phpbb import parse_board_page

        return parse_board_page(html), [], True

    def form(self, html: str) -> FormView | None:
        from worker.forums.phpbb import parse_posting_form

        form = parse_posting_form(html)
        if form is None:
            return None
        missing = [t for t in ("form_token", "creation_time") if t not in form.fields]
        problems = [Problem("", f"the posting form has no {', '.join(missing)}")] if missing else []
        return FormView(form.action, form.fields, "message", ("form_token", "creation_time"), problems)


class _Profile(Reader):
    kind = "profile"
    keys: ClassVar[dict[str, str]] = {"author": "topic.author"}

    def topic_path(self, client, thread_id, page, per_page):
        return client._page_path(thread_id, page)

    def board_path(self, client, board):
        return client.board_path(board, 1)

    def reply_path(self, thread_id: str) -> str:
        return self.profile.reply.url.format(thread_id=thread_id)

    def topic(self, html: str, thread_id: str, now: datetime) -> TopicView:
        from worker.forums.profile import parse_topic_page

        posts, info = parse_topic_page(html, self.profile, self.base_url, forum=self.fs.name,
                                       thread_id=thread_id or "?", now=now)
        problems = [Problem(p.key, p.message) for p in info.problems]
        return TopicView(posts, info.page, info.last_page, info.raw_times, info.page_links, info.has_next,
                         info.page_of, info.title, problems)

    def board(self, html: str) -> tuple[BoardListing, list[Problem], bool]:
        from worker.forums.profile import parse_board_page

        spec = self.profile.board
        if spec is None:
            raise ForumError("forbidden", f"profile {self.profile.name} has no [board]", key="board",
                             transient=False)
        board = parse_board_page(html, spec)
        problems = [Problem(p.key, p.message) for p in board.problems]
        if not board.thread_ids and not spec.listing:
            problems.append(Problem("board.thread_link", f"no topic link matches {spec.thread_link!r}"))
        return board.listing, problems, spec.shows_activity

    def form(self, html: str) -> FormView | None:
        from bs4 import BeautifulSoup

        from worker.forums.markup import first_match, form_fields

        recipe = self.profile.reply
        form = first_match(BeautifulSoup(html, "lxml"), recipe.form)
        if form is None:
            return None
        fields = form_fields(form)
        message = recipe.fields.get("message", "message")
        problems = _button(form, recipe, "reply", fields)
        missing = [t for t in recipe.token_fields if t not in fields]
        if missing:
            problems.append(Problem("reply.token_fields", f"the form has no {', '.join(missing)}"))
        warnings = []
        if message not in fields:  # the client sends it anyway: a box outside the <form> (form= attribute)
            warnings.append(Problem("reply.fields", f"the form has no field {message!r} (fields.message); "
                                    "the reply sends it anyway: try --post"))
        return FormView(str(form.get("action") or ""), fields, message, tuple(recipe.token_fields), problems,
                        warnings)

    def login_form(self, html: str) -> FormView | None:
        from bs4 import BeautifulSoup

        from worker.forums.markup import first_match, form_fields

        recipe = self.profile.login
        form = first_match(BeautifulSoup(html, "lxml"), recipe.form)
        if form is None:
            return None
        fields = form_fields(form)
        problems = _button(form, recipe, "login", fields)
        for role in ("username", "password"):
            name = recipe.fields.get(role, role)
            if name not in fields:
                problems.append(Problem("login.fields", f"the login form has no field {name!r} ({role})"))
        missing = [t for t in recipe.token_fields if t not in fields]
        if missing:
            problems.append(Problem("login.token_fields", f"the login form has no {', '.join(missing)}"))
        return FormView(str(form.get("action") or ""), fields, recipe.fields.get("password", "password"),
                        tuple(recipe.token_fields), problems)


def _button(form: Any, recipe: Any, part: str, fields: dict[str, str]) -> list[Problem]:
    """The recipe's ``submit`` button, added to ``fields`` as a click sends it; a problem
    naming ``<part>.submit`` when the form has none."""
    from worker.forums.markup import clicked_button

    if not recipe.submit:
        return []
    button = clicked_button(form, recipe.submit)
    if button is None:
        return [Problem(f"{part}.submit", f"the form has no button {recipe.submit!r}")]
    fields[button[0]] = button[1]
    return []


def reader_for(fs: ForumSettings) -> Reader:
    """The page reader of a configured forum.

    Raises:
        ValueError: a kind the check does not read (Discourse: a JSON API).
    """
    if fs.kind == "flaskbb":
        return _FlaskBB(fs)
    if fs.kind == "phpbb":
        return _PhpBB(fs)
    if fs.kind == "profile":
        from worker.forums.profile import load_profile

        return _Profile(fs, load_profile(fs.profile))
    raise ValueError(f"forums check reads HTML forums (flaskbb, phpbb, profile); {fs.name} is {fs.kind}, "
                     "read through its JSON API: try `narrador poll` instead")


# --------------------------------------------------------------------------- printing


def game_of(settings: Settings, fs: ForumSettings) -> tuple[str, str]:
    """How the forum's posts are read: its markup flavour and its game's ruleset id."""
    from core.rules import get_ruleset

    game = settings.games.get(fs.game)
    return fs.markup_flavour, get_ruleset(game.ruleset if game else "vampiro").id
