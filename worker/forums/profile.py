"""Configurable HTML forums: CSS selectors and a form recipe as data, no code per engine.

Source: issue 6, "Configurable HTML profile". Hosted forums (MyBB, SMF, Foroactivo...) differ
in markup but not in shape: a topic page lists posts, each with an id, an author, a time and
a body; replying means fetching a form, keeping its hidden token fields and posting it back.
A :class:`Profile` says where each of those is; :class:`ProfileClient` does the rest.
Profiles ship as TOML files in ``worker/forums/profiles/`` (``mybb18``, ``smf21``); a forum
may also name its own file (``profile = "/etc/narrador/foro.toml"``). ``docs/forums.md``
documents every key.

This module also holds the generic HTML form helpers the phpBB adapter uses
(:func:`form_fields`, :func:`meta_refresh_url`).
"""

from __future__ import annotations

import re
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import requests
from bs4 import BeautifulSoup, Tag

from worker.forums import polite as politeness
from worker.forums.base import ForumError, ForumPost, ThreadPage, log_forum_alert
from worker.forums.polite import Politeness

__all__ = [
    "PROFILES_DIR",
    "BoardSpec",
    "FormRecipe",
    "Profile",
    "ProfileClient",
    "ProfileError",
    "TopicInfo",
    "TopicSpec",
    "form_fields",
    "load_profile",
    "meta_refresh_url",
    "parse_board_page",
    "parse_topic_page",
]

#: Where the shipped profiles live (``<name>.toml``).
PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
_MAX_POSTS_PER_PAGE = 1000
_MAX_FIELDS = 500
MAX_PAGES = 500


class ProfileError(ValueError):
    """A profile file is missing, unreadable or lacks a required key (configuration error)."""


# --------------------------------------------------------------------------- form helpers


def form_fields(form: Tag) -> dict[str, str]:
    """The fields a browser would submit for ``form`` without clicking any button.

    Includes ``input`` (hidden, text, password, checked checkboxes and radios), ``textarea``
    and ``select`` (the selected option, else the first); leaves out submit/image/button
    inputs, ``button`` elements, unchecked boxes, file inputs and disabled fields. At most
    500 fields are read.

    Args:
        form: a parsed ``<form>`` element.
    Returns:
        ``{name: value}`` (the last value wins for repeated names).
    """
    fields: dict[str, str] = {}
    for el in form.find_all(["input", "textarea", "select"], limit=_MAX_FIELDS):
        name = el.get("name")
        if not name or el.has_attr("disabled"):
            continue
        if el.name == "textarea":
            fields[name] = el.get_text()
        elif el.name == "select":
            chosen = el.find("option", selected=True) or el.find("option")
            if chosen is not None:
                fields[name] = str(chosen.get("value", chosen.get_text()))
        else:
            kind = str(el.get("type", "text")).lower()
            if kind in ("submit", "image", "button", "file", "reset"):
                continue
            if kind in ("checkbox", "radio"):
                if el.has_attr("checked"):
                    fields[name] = str(el.get("value", "on"))
                continue
            fields[name] = str(el.get("value", ""))
    return fields


_REFRESH = re.compile(r"url\s*=\s*['\"]?([^'\"]+)", re.IGNORECASE)


def meta_refresh_url(soup: BeautifulSoup) -> str | None:
    """The target of a ``<meta http-equiv="refresh" content="N; url=...">``, else None."""
    meta = soup.find("meta", attrs={"http-equiv": re.compile("^refresh$", re.IGNORECASE)})
    if meta is None:
        return None
    m = _REFRESH.search(str(meta.get("content", "")))
    return m.group(1).strip() if m else None
