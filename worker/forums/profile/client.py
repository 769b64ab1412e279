"""The HTTP client of profile forums: :class:`ProfileClient` does what a :class:`Profile` says.

Its parts: the session, login and forms (:mod:`worker.forums.profile.session`); reading topics
(:mod:`worker.forums.profile.topics`): a topic page is fetched from its canonical URL once one
is known (learnt from a redirect, e.g. a Django forum's ``topic/5/?page=2`` answering 301 to
``topic/5/slug/`` without the page, or from the board listing's link), so a poll costs one
request; pages are followed while the pagination shows a later one (page links, a "next"
link, "Page X of Y").  This module: board listings, and writing.

Writing: the flood slot is taken before the form is fetched (the form is fresh when it is
sent), the form is filled and posted once; a refused token is fetched and sent once more, a
form re-rendered without storing anything (``resubmit_regex``) is sent once more, and nothing
else is ever resubmitted. An answer that says the post exists (a redirect without an id, a
"you already posted this" error) returns None: the caller finds the reply by its marker.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit, urlunsplit

import requests

from worker.forums.base import BoardListing, ForumError, log_forum_warning
from worker.forums.dates import http_date
from worker.forums.profile.parse import SubmitAnswer, classify_answer, find_id, parse_board_page
from worker.forums.profile.spec import FormRecipe
from worker.forums.profile.topics import CANONICAL_TTL, TopicReader

__all__ = ["ProfileClient"]


class ProfileClient(TopicReader):
    """:class:`worker.forums.base.ForumPort` (and ``CreatesThreads`` when the profile has a
    ``[new_thread]``) for any forum a :class:`Profile` describes.

    Args:
        profile: the forum engine's profile (``load_profile``).
        base_url: the forum's root URL.
        username, password: the bot's account.
        session / timeout / user_agent: as for the other adapters (timeout in seconds on
            every request).
        name: the forum's configured name.
        polite: shared rate limit, host backoff, conditional page reads, flood slot, and
            where learnt canonical topic URLs are kept (``nr:canon:{<forum>}:<thread>``).
        flood_interval: seconds between two posts of the bot (shared through ``polite``).
        max_flood_wait: longest sleep for the flood slot before ``ForumError("flood")``.
        form_age: seconds between fetching a form and submitting it (many engines refuse
            forms submitted too fast).
        sleep / clock: injected for tests (``clock`` in epoch seconds; it also dates the
            pages read, for relative dates).

    Ids are whatever ``id_regex`` / ``thread_regex`` capture (strings).
    """
    def list_threads(self, forum_id: str) -> list[str]:
        """Topic ids of a board (first page), when the profile has a ``[board]``; their
        links are remembered as the topics' canonical URLs. An empty board is ``[]``.

        Raises:
            ForumError: ``forbidden`` (no ``[board]`` in the profile), ``markup``, transport.
        """
        return self.board_listing(forum_id).thread_ids

    def board_listing(self, forum_id: str, *, page: int = 1) -> BoardListing:
        """Page ``page`` of a board's listing (``board.url`` with ``{page}`` or ``{start}``;
        without either only page 1 exists): topics with their activity when the profile
        says where it is (``board.topic``, ``board.replies``, ``board.last_post``; an entry
        where they match nothing is a forum warning naming the key). Topic links are
        remembered as the topics' canonical URLs.

        Raises:
            ForumError: ``forbidden`` (no ``[board]`` in the profile), ``not_found``,
                ``markup`` (alert logged, naming the key), transport.
        """
        spec = self.profile.board
        if spec is None:
            raise ForumError("forbidden", f"profile {self.profile.name} has no [board]",
                             transient=False)
        paged = "{page}" in spec.url or "{start}" in spec.url
        page = max(1, int(page)) if paged else 1
        self._begin_read()
        path = self.board_path(forum_id, page)
        resp = self._request("GET", path)
        if resp.status_code == 404 and page == 1 and self.canonical_url(f"board:{forum_id}"):
            # the URL the board redirected to is gone (renamed, moved): ask its own URL again
            self._forget_board(forum_id)
            path = self.board_path(forum_id, page)
            resp = self._request("GET", path)
        for attempt in (1, 2):
            try:
                if resp.status_code in (401, 403):
                    raise ForumError("forbidden", f"board {forum_id}: the forum refuses it to the bot",
                                     url=resp.url, status=resp.status_code, transient=False)
                if resp.status_code >= 400:
                    raise ForumError("not_found" if resp.status_code == 404 else "http_4xx",
                                     url=resp.url, status=resp.status_code)
                board = parse_board_page(resp.text, spec, page=page)
                break
            except ForumError as exc:
                if attempt == 1 and self._refused_guest(resp, exc):
                    self.login()  # a members-only board (or a dropped session): list it as the bot
                    resp = self._request("GET", path)
                    continue
                if exc.reason not in ("markup", "forbidden"):
                    raise
                raise self._alert(exc, resp.url, board=forum_id) from None
        if page == 1 and resp.history:
            self._remember_board(forum_id, resp)
        for problem in board.problems[:5]:
            log_forum_warning(self.name, problem.message, key=problem.key, url=resp.url,
                              profile=self.profile.name, board=forum_id)
        for thread_id, href in board.links.items():
            if self.profile.topic.page_query_param:
                self._remember_canonical(thread_id, urljoin(resp.url, href))
        return board.listing

    def board_path(self, forum_id: str, page: int = 1) -> str:
        """The path of a board listing's page ``page`` (``board.url``); page 1 at the URL
        the board redirected to before, when it did (a slugged canonical URL)."""
        spec = self.profile.board
        if spec is None:
            raise ForumError("forbidden", f"profile {self.profile.name} has no [board]", transient=False)
        if page == 1:
            canonical = self.canonical_url(f"board:{forum_id}")
            if canonical:
                return canonical
        return spec.url.format(forum_id=forum_id, page=page, start=(page - 1) * spec.per_page)

    def _remember_board(self, forum_id: str, resp: requests.Response) -> None:
        """A board's page 1 that answered with a redirect: its target is where it is read
        from now on (one request per idle cycle instead of two)."""
        url = urlsplit(resp.url)
        clean = urlunsplit((url.scheme, url.netloc, url.path, url.query, ""))
        if self.canonical_url(f"board:{forum_id}") != clean:
            self._canonical[f"board:{forum_id}"] = clean
            if self.polite is not None:
                self.polite.backend.put(self._canonical_key(f"board:{forum_id}"), {"url": clean}, CANONICAL_TTL)

    def _forget_board(self, forum_id: str) -> None:
        """Drop the URL a board once redirected to (it answered 404 since)."""
        self._canonical.pop(f"board:{forum_id}", None)
        if self.polite is not None:
            self.polite.backend.delete(self._canonical_key(f"board:{forum_id}"))
    # ---- writing
    def _submit(self, recipe: FormRecipe, part: str, path: str, fill: dict[str, str], what: str
                ) -> tuple[requests.Response, str | None]:
        """Fetch, fill and submit a form so that at most one post results.

        Returns ``(answer, location)``: ``location`` is the redirect target ("" for an
        answer page), or None when the forum said it already has this post
        (``duplicate_regex``).
        """
        if not self._logged_in:
            self.login()
        self._flood_slot()  # before the form: a form kept waiting may go stale
        relogged = refetched = resubmitted = False
        page = self._request("GET", path)
        while True:
            rendered = self.clock()
            form = self._usable_form(page, recipe, part, what, relogged=relogged)
            if form is None:  # no form, and the page does not show the session: log in once
                relogged = True
                self.login()
                page = self._request("GET", path)
                continue
            action, fields = form
            self._check_button(fields, recipe, part, page.url)
            fields.update({recipe.fields.get(role, role): value for role, value in fill.items()})
            fields.update(recipe.extra)
            self._wait(rendered)
            resp = self._request("POST", urljoin(page.url, action or path), data=fields,
                                 allow_redirects=False)
            location = resp.headers.get("Location", "") if resp.is_redirect else ""
            if location:
                if self.profile.login.url.removeprefix("./") in location and not relogged:
                    relogged = True  # the session was lost: the forum sends us to log in
                    self.login()
                    page = self._request("GET", path)
                    continue
                return resp, location
            answer = classify_answer(resp.text, recipe)
            if answer.kind == "csrf" and not refetched:
                refetched = True
                page = self._request("GET", path)
                continue
            if answer.kind == "resubmit" and not resubmitted and self._form(resp.text, recipe):
                resubmitted = True  # nothing was stored; the answer is the form again
                page = resp
                continue
            return self._submitted(resp, answer, recipe, what)

    def _usable_form(self, page: requests.Response, recipe: FormRecipe, part: str, what: str, *,
                     relogged: bool) -> tuple[str, dict[str, str]] | None:
        """The page's form with its tokens (``_form``); None when it has none but the bot
        should log in and fetch it again (not done yet, and the page shows no session).

        Raises:
            ForumError: ``not_found`` (404), ``forbidden`` (no form: a locked topic, or the
                bot may not post), ``markup`` (a form without its tokens; alert logged).
        """
        if page.status_code == 404:
            raise ForumError("not_found", f"{what}: not found", url=page.url, transient=False)
        form = self._form(page.text, recipe)
        if form is None or any(t not in form[1] for t in recipe.token_fields):
            if not relogged and not self._is_logged_in(page.text):
                return None
            if form is None:
                answer = classify_answer(page.text, recipe)
                raise ForumError("forbidden", f"{what}: no form {recipe.form!r} ("
                                 f"{answer.text or 'locked, or the bot may not post here'})",
                                 url=page.url, transient=False)
            raise self._alert(ForumError("markup", f"{what}: form without "
                                         f"{', '.join(recipe.token_fields)}",
                                         key=f"{part}.token_fields"), page.url)
        return form

    def _submitted(self, resp: requests.Response, answer: SubmitAnswer, recipe: FormRecipe, what: str
                   ) -> tuple[requests.Response, str | None]:
        """What a submitted form's answer page (no redirect) says: ``(resp, None)`` for "you
        already posted this", ``(resp, "")`` for a stored post.

        Raises:
            ForumError: ``flood`` (transient, the wait the forum states), ``rejected`` /
                ``csrf`` (the forum's message), ``http_4xx``, ``rejected`` (the form came back
                without a message).
        """
        if answer.kind == "duplicate":
            return resp, None
        if answer.kind == "flood":
            wait = answer.wait + 1.0 if answer.wait is not None else self.flood_interval
            raise ForumError("flood", f"{what}: {answer.text}", url=resp.url, retry_after=wait)
        if answer.kind != "ok":
            raise ForumError("rejected" if answer.kind != "csrf" else "csrf",
                             f"{what} refused: {answer.text}", url=resp.url, transient=False)
        if resp.status_code >= 400:
            raise ForumError("http_4xx", f"{what} failed", url=resp.url, status=resp.status_code)
        if self._form(resp.text, recipe) is not None and not find_id(
                recipe.post_id_regex, "", resp.text):
            raise ForumError("rejected", f"{what}: the form came back without a message",
                             url=resp.url, transient=False)
        return resp, ""

    def post_reply(self, thread_id: str, content: str) -> str | None:
        """Submit the reply form with ``content`` (in :attr:`reply_markup`); return the new
        post's id (``reply.post_id_regex`` over the redirect or the answer page), or None
        when the forum accepted it without naming it (a redirect to the topic, a "you
        already posted this") - the caller then finds it by its marker.

        Raises:
            ForumError: ``flood`` (transient, ``retry_after`` = the wait the forum states),
                ``rejected``, ``csrf``, ``forbidden``, ``auth``, transport reasons.
        """
        recipe = self.profile.reply
        resp, location = self._submit(recipe, "reply", recipe.url.format(thread_id=thread_id),
                                      {"message": content}, "reply")
        self._posted[thread_id] = http_date(resp.headers.get("Date", "")) or self.clock()
        if location is None:
            return None
        return find_id(recipe.post_id_regex, location, "" if location else resp.text)

    def create_thread(self, forum_id: str, title: str, content: str) -> tuple[str, str]:
        """Open a topic through the profile's ``[new_thread]`` recipe.

        Raises:
            ForumError: ``forbidden`` when the profile has none; ``markup`` when the answer
                names no topic; else as :meth:`post_reply`.
        """
        recipe = self.profile.new_thread
        if recipe is None:
            raise ForumError("forbidden", f"profile {self.profile.name} has no [new_thread]",
                             transient=False)
        resp, location = self._submit(recipe, "new_thread", recipe.url.format(forum_id=forum_id),
                                      {"subject": title, "message": content}, "new topic")
        html = "" if location else resp.text
        thread_id = find_id(recipe.thread_id_regex, location or "", html)
        post_id = find_id(recipe.post_id_regex, location or "", html)
        if thread_id is None:
            raise self._alert(ForumError("markup", "new topic answer names no topic id",
                                         key="new_thread.thread_id_regex"), resp.url)
        if post_id is None:
            post_id = self.list_posts(thread_id).posts[0].post_id
        return thread_id, post_id

