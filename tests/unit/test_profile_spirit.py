"""An engine Narrador does not ship, through a profile written only from docs/forums.md:
Spirit 0.14.3 (a Django forum from PyPI), on pages saved from live Spirit sites in Spanish
and English (tests/fixtures/spirit, captured by its capture.py).

Issue 13, "Done when": the profile reads every page of a long topic (page numbers only in
``href="?page=N"``, "Página X de Y", the 301 to the slug URL that drops ``?page=`` learnt and
remembered: one request per poll), replies in Markdown, and reads the dates in es and en.
"""

from __future__ import annotations

import json
import random
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.unit.fakeweb import FakeWeb, Reply
from worker.forums.extract import author_text
from worker.forums.polite import Politeness
from worker.forums.politestate import MemoryBackend
from worker.forums.profile import ProfileClient, load_profile, parse_topic_page, profile_from_mapping

SPIRIT = Path(__file__).resolve().parents[1] / "fixtures" / "spirit"
ES = load_profile(str(SPIRIT / "spirit.toml"))
#: the English board's admin: the same file with the board's language
EN = profile_from_mapping({**tomllib.loads((SPIRIT / "spirit.toml").read_text()), "locale": "en"}, where="spirit-en")
NOW = datetime(2026, 12, 1, 10, 30, tzinfo=UTC)


def page(lang: str, name: str) -> str:
    return (SPIRIT / lang / name).read_text(encoding="utf-8")


def parse(lang: str, number: int):  # type: ignore[no-untyped-def]
    return parse_topic_page(page(lang, f"topic_p{number}.html"), ES if lang == "es" else EN, "http://spirit.test",
                            forum="spirit", thread_id="1", now=NOW)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_every_page_says_where_it_is_and_how_many_there_are(lang):
    for number in range(1, 6):
        _, info = parse(lang, number)
        assert (info.page, info.last_page, info.title, info.logged_in) == (number, 5, "La cripta", True)
        assert info.problems == ()


@pytest.mark.parametrize("lang, dates", [
    ("es", ["3 de septiembre de 2026 a las 00:00", "3 de septiembre de 2026 a las 12:00",
            "29 de noviembre de 2026 a las 13:52"]),
    ("en", ["Sept. 3, 2026, midnight", "Sept. 3, 2026, noon", "Nov. 29, 2026, 1:52 p.m."]),
])
def test_localized_dates_as_the_live_sites_printed_them(lang, dates):
    html = page(lang, "topic_p1.html") + page(lang, "topic_p2.html")
    for shown in dates:
        assert f'title="{shown}"' in html  # what Spirit printed, in that language
    p1, _ = parse(lang, 1)
    p2, _ = parse(lang, 2)
    assert [p.created_utc for p in p1] == [datetime(2026, 9, 3, 0, 0, tzinfo=UTC), datetime(2026, 9, 3, 12, 0, tzinfo=UTC)]
    assert p2[0].created_utc == datetime(2026, 11, 29, 13, 52, tzinfo=UTC)
    # the other comments were posted at capture time: a real date, not "now" (the clock)
    assert p2[1].created_utc < NOW and p2[1].created_utc.date() == NOW.date()


@pytest.mark.parametrize("lang", ["es", "en"])
def test_markdown_bodies_quotes_and_code_as_the_bot_reads_them(lang):
    p1, _ = parse(lang, 1)
    p2, _ = parse(lang, 2)
    assert [(p.post_id, p.author) for p in p1] == [("1", "jugadora"), ("2", "jugadora")]
    assert author_text(p1[0].body_html, "html") == "Entro en la cripta. [tirada]5 dif 6 con cuidado[/tirada]"
    assert author_text(p1[1].body_html, "html") == "Te sigo: [tirada]3 dif 7[/tirada]"  # the quote is gone
    assert author_text(p2[0].body_html, "html") == "Así se escribe:\n\nsin tirar"
    assert p1[0].url == "http://spirit.test/comment/1/find/"


def spirit_web(lang: str) -> FakeWeb:
    """Replays the live site: topic/1/?page=N answers what Spirit answered (301 to the slug
    URL without the page); the slug URL answers the saved page N."""
    redirects = json.loads(page(lang, "redirects.json"))
    web = FakeWeb("http://spirit.test")
    moved = redirects["/topic/1/?page=3"]
    assert moved["status"] == 301 and "page" not in moved["location"]
    web.route("GET", "/topic/1/", Reply(moved["status"], "", {"Location": moved["location"]}))

    def canonical(seen):  # type: ignore[no-untyped-def]
        number = int(dict(parse_qsl(urlsplit(seen.path).query)).get("page", "1"))
        return Reply(200, page(lang, f"topic_p{number}.html"))

    web.route("GET", moved["location"], canonical)
    return web


def client(web: FakeWeb, lang: str = "es", **kw) -> ProfileClient:  # type: ignore[no-untyped-def]
    clock = iter(range(1_796_000_000, 1_796_000_000 + 10**6))
    return ProfileClient(ES if lang == "es" else EN, "http://spirit.test", "narrador", "pw", session=web.session(),
                         name="spirit", sleep=lambda s: None, clock=lambda: float(next(clock)), **kw)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_every_page_of_the_long_topic_is_read_through_the_learnt_canonical_url(lang):
    """Finding 1 (user trial): page 1 was read forever; now every later page is too."""
    web = spirit_web(lang)
    reader = client(web, lang)
    thread = reader.list_posts("1")
    assert [p.post_id for p in thread.posts] == [str(i) for i in range(1, 10)]
    assert [p.page for p in thread.posts] == [1, 1, 2, 2, 3, 3, 4, 4, 5]
    assert (thread.first_page, thread.last_page) == (1, 5)
    asked = [s.path for s in web.log]
    assert asked[0] == "/topic/1/?page=1" and asked[1] == "/topic/1/la-cripta/"
    assert asked[2:] == [f"/topic/1/la-cripta/?page={n}" for n in range(2, 6)]
    assert reader.canonical_url("1") == "http://spirit.test/topic/1/la-cripta/"


def test_a_later_poll_costs_one_request_and_the_redirect_is_remembered_across_workers():
    """Finding 5 (user trial): each poll cost two requests (the 301 every time)."""
    web = spirit_web("es")
    backend = MemoryBackend(lambda: 1000.0)
    first = client(web)
    first.polite = Politeness(backend, "spirit", min_interval=0, clock=lambda: 1000.0, rng=random.Random(1))
    first.list_posts("1", since_page=3)
    assert [s.path for s in web.log][:2] == ["/topic/1/?page=3", "/topic/1/la-cripta/"]
    web.log.clear()
    # another worker (a new client) sharing the same Redis: straight to the canonical URL
    other = client(web)
    other.polite = Politeness(backend, "spirit", min_interval=0, clock=lambda: 1000.0, rng=random.Random(2))
    thread = other.list_posts("1", since_page=5)
    assert [s.path for s in web.log] == ["/topic/1/la-cripta/?page=5"]
    assert [p.post_id for p in thread.posts] == ["9"]


def test_find_reply_reaches_the_last_page_whose_number_is_only_in_an_href():
    web = spirit_web("es")
    assert client(web).find_reply("1", "(ref p1 tok12345)", after_post_id="1") == "9"
    assert [s.path for s in web.log][-1] == "/topic/1/la-cripta/?page=5"


def test_replies_are_markdown_posted_through_spirits_form():
    """Finding 2 (user trial): replies were always BBCode on profile forums."""
    web = FakeWeb("http://spirit.test")
    web.route("GET", "/comment/1/publish/", Reply(200, page("es", "publish.html")))
    web.route("POST", "/comment/1/publish/", Reply(302, "", {"Location": "/comment/10/find/"}))
    bot = client(web)
    bot._logged_in = True
    assert bot.reply_markup == "markdown"
    assert bot.post_reply("1", "**Tiradas de @jugadora** [X](http://n/v/X)") == "10"
    form = web.calls("POST", "/comment/1/publish/")[0].form
    assert form["comment"] == "**Tiradas de @jugadora** [X](http://n/v/X)" and form["csrfmiddlewaretoken"]


def test_the_category_listing_gives_topics_and_their_canonical_urls():
    web = FakeWeb("http://spirit.test")
    web.route("GET", "/category/3/", Reply(200, page("es", "category.html")))
    bot = client(web)
    assert bot.list_threads("3") == ["1"]
    assert bot.canonical_url("1") == "http://spirit.test/topic/1/la-cripta/"
