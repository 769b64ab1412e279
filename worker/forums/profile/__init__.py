"""Configurable HTML forums: CSS selectors and form recipes as data, no code per engine.

Source: issue 6, "Configurable HTML profile", completed by issue 13. Hosted forums (MyBB,
SMF, Foroactivo...) differ in markup but not in shape: a topic page lists posts, each with an
id, an author, a time and a body; replying means fetching a form, keeping its hidden token
fields and posting it back. A :class:`Profile` says where each of those is
(:mod:`.spec`), pure functions read saved or live pages with it (:mod:`.parse`), and
:class:`ProfileClient` does the HTTP (:mod:`.client`). Profiles ship as TOML files in
``profiles/`` (``mybb18``, ``smf21``); a forum may also name its own file
(``profile = "/etc/narrador/foro.toml"``). ``docs/forums.md`` documents every key.
"""

from worker.forums.profile.client import ProfileClient
from worker.forums.profile.parse import (
    BoardPage,
    PageProblem,
    SubmitAnswer,
    TopicInfo,
    classify_answer,
    find_id,
    parse_board_page,
    parse_topic_page,
)
from worker.forums.profile.spec import (
    MARKUPS,
    PROFILES_DIR,
    BoardSpec,
    FormRecipe,
    Profile,
    ProfileError,
    TopicSpec,
    load_profile,
    profile_from_mapping,
)

__all__ = [
    "MARKUPS",
    "PROFILES_DIR",
    "BoardPage",
    "BoardSpec",
    "FormRecipe",
    "PageProblem",
    "Profile",
    "ProfileClient",
    "ProfileError",
    "SubmitAnswer",
    "TopicInfo",
    "TopicSpec",
    "classify_answer",
    "find_id",
    "load_profile",
    "parse_board_page",
    "parse_topic_page",
    "profile_from_mapping",
]
