"""Where an action stands: one enum for every state machine's ``status``.

Each machine allows its own members (its field's :func:`core.codec.choice`):

* :class:`core.actions.ExtendedAction`: ``open``, ``completed``, ``failed``;
* :class:`core.actions.Teamwork`: ``open``, ``completed``, ``botched``;
* :class:`core.actions.Contest`: ``open``, ``resolved``;
  :class:`core.actions.ExtendedContest`: ``open``, ``resolved``, ``abandoned``;
* a contest's envelope in the game state (:func:`core.post.actions.roll_contest`) is also
  ``expired`` once nobody answered it in time.

A ``StrEnum``: each member equals the text stored in the game state and in the records, so the
key schema did not change.  Source: issue 17, item 7 ("bare status strings").
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ActionStatus"]


class ActionStatus(StrEnum):
    """The status of an action (see the module docstring for which machine allows which)."""

    OPEN = "open"
    COMPLETED = "completed"
    FAILED = "failed"
    BOTCHED = "botched"
    RESOLVED = "resolved"
    ABANDONED = "abandoned"
    EXPIRED = "expired"
