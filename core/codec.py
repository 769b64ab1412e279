"""One codec for the core's stored values: a frozen dataclass <-> a JSON-safe dict.

Source: issue 17, item 4 ("one generic dataclass codec instead of hand-written to_dict /
from_dict").  A class opts in by deriving from :class:`Stored`; its ``to_dict`` and
``from_dict`` then follow the dataclass fields and their type annotations:

* ``int`` -- an integer ``>= minimum`` (0 unless the field says :func:`count` ``(minimum=...)``),
  ``bool`` refused; ``int | None`` also takes None;
* ``str`` -- one of :func:`choice` ``(...)``'s values, or any text (a missing value is ``""``;
  a ruleset id decodes itself: :func:`core.rules.ruleset_id`);
  ``str | None`` is kept as given;
* an ``Enum`` (a ``StrEnum``) -- its member for the stored value, one of :func:`choice`
  ``(...)``'s members when the field gives them;
* ``bool`` -- truthiness, the field's default when missing;
* ``datetime | None`` -- ISO 8601, timezone-aware, kept in UTC;
* ``tuple[X, ...]`` / ``tuple[X, Y]`` -- a list of such values (a fixed tuple's length is
  checked); a dataclass value (or ``X | None``) nests its own dict.

A class with ``KIND`` writes ``"kind": KIND`` first and refuses a dict of another kind.  Every
malformed value raises :class:`core.errors.RulesError` (``bad_value``, ``bad_time``,
``bad_state``) naming the field; a field with ``metadata={"decode": f}`` / ``{"encode": f}``
converts itself.  The dicts are exactly those the game state has always stored.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from typing import Any, ClassVar, TypeVar, Union, cast, get_args, get_origin

from core.errors import RulesError

__all__ = ["Stored", "check_choice", "check_int", "choice", "count", "decode", "encode", "parse_time",
           "utc"]

T = TypeVar("T", bound="Stored")


# --------------------------------------------------------------------------- field checks


def utc(value: datetime | None, name: str = "at") -> datetime | None:
    """``value`` in UTC; None stays None.

    Raises:
        RulesError: ``bad_time`` (not a datetime), ``naive_datetime``.
    """
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise RulesError(f"{name} must be a datetime", code="bad_time", field=name)
    if value.tzinfo is None or value.utcoffset() is None:
        raise RulesError(f"{name} must be timezone-aware (UTC), got a naive datetime", code="naive_datetime",
                         field=name)
    return value.astimezone(UTC)


def parse_time(value: object, name: str = "at") -> datetime | None:
    """An aware datetime from ISO 8601 text (or a datetime), in UTC; None stays None.

    Raises:
        RulesError(code="bad_time").
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        return utc(value, name)
    if not isinstance(value, str):
        raise RulesError(f"{name} must be an ISO 8601 string", code="bad_time", field=name)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise RulesError(f"{name} is not ISO 8601: {value!r}", code="bad_time", field=name) from None
    return utc(parsed, name)


def check_int(value: object, name: str, *, minimum: int = 0) -> int:
    """``value`` if it is an integer ``>= minimum`` (not a bool).

    Raises:
        RulesError(code="bad_value").
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RulesError(f"{name} must be an integer >= {minimum}, got {value!r}", code="bad_value", field=name)
    return value


def check_choice(value: object, name: str, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``.

    Raises:
        RulesError(code="bad_value").
    """
    if value not in allowed:
        raise RulesError(f"{name} must be one of {tuple(allowed)}, got {value!r}", code="bad_value", field=name)
    return str(value)


def count(*, minimum: int = 0) -> dict[str, Any]:
    """Field metadata: an integer of at least ``minimum``."""
    return {"minimum": minimum}


def choice(*allowed: str) -> dict[str, Any]:
    """Field metadata: one of ``allowed``."""
    return {"choices": tuple(allowed)}


# --------------------------------------------------------------------------- the codec


class Stored:
    """Base of the core's stored values: ``to_dict`` / ``from_dict`` by :func:`encode` and
    :func:`decode` (see the module docstring).  ``KIND`` (a class variable) tags the dict."""

    KIND: ClassVar[str | None] = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``"kind"`` first when the class has one)."""
        return encode(self)

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any]) -> T:
        """Inverse of :meth:`to_dict`; raises :class:`core.errors.RulesError` on malformed data."""
        return decode(cls, data)


def _encode_value(value: Any) -> Any:
    if value is None or type(value) in _PLAIN:  # most fields: nothing to convert
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return encode(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (tuple, list)):
        return [_encode_value(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _encode_value(v) for k, v in value.items()}
    return value


_PLAIN = frozenset({str, int, bool, float})


def encode(value: Any) -> dict[str, Any]:
    """The JSON-safe dict of a dataclass value (fields in declaration order, ``kind`` first)."""
    out: dict[str, Any] = {}
    kind = getattr(type(value), "KIND", None)
    if kind:
        out["kind"] = kind
    for f in dataclasses.fields(value):
        encoder = f.metadata.get("encode")
        item = getattr(value, f.name)
        out[f.name] = encoder(item) if encoder else _encode_value(item)
    return out


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _optional(hint: Any) -> tuple[bool, Any]:
    """``(True, X)`` for ``X | None``, else ``(False, hint)``."""
    if get_origin(hint) in (Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        if len(args) == 1 and len(get_args(hint)) == 2:
            return True, args[0]
    return False, hint


def _decode_value(hint: Any, value: Any, name: str, meta: Mapping[str, Any]) -> Any:
    optional, hint = _optional(hint)
    if optional and value is None:
        return None
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, Mapping):
            raise RulesError(f"{name} must be an object", code="bad_state", field=name)
        return decode(cast("type[Any]", hint), value)
    if get_origin(hint) is tuple:
        args = get_args(hint)
        items = list(value or ())
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode_value(args[0], v, name, meta) for v in items)
        if len(items) != len(args):
            raise RulesError(f"{name} must have {len(args)} items", code="bad_state", field=name)
        return tuple(_decode_value(a, v, name, meta) for a, v in zip(args, items, strict=True))
    if hint is int:
        return check_int(value, name, minimum=int(meta.get("minimum", 0)))
    if hint is bool:
        return bool(value)
    if hint is datetime:
        return parse_time(value, name)
    if isinstance(hint, type) and issubclass(hint, Enum):
        if value not in (meta.get("choices") or tuple(hint)):
            allowed = tuple(str(c) for c in meta.get("choices") or tuple(hint))
            raise RulesError(f"{name} must be one of {allowed}, got {value!r}", code="bad_value", field=name)
        return hint(value)
    if hint is str:
        if "choices" in meta:
            return check_choice(value, name, meta["choices"])
        if optional:
            return value
        return str(value or "")
    return value


def decode(cls: type[T], data: Mapping[str, Any]) -> T:
    """The ``cls`` value a dict of :func:`encode` describes.

    Raises:
        RulesError: ``bad_state`` (not a dict, another kind, a wrong number of items),
            ``bad_value`` / ``bad_time`` (a field out of range), and whatever the class's own
            checks raise.
    """
    kind = getattr(cls, "KIND", None)
    if not isinstance(data, Mapping) or (kind and data.get("kind") != kind):
        raise RulesError(f"expected a {kind or cls.__name__!r} dict", code="bad_state", expected=kind or cls.__name__,
                         found=repr(data.get("kind") if isinstance(data, Mapping) else data))
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init:
            continue
        if f.name in data:
            raw = data[f.name]
        elif f.default is not dataclasses.MISSING:
            raw = f.default
        elif f.default_factory is not dataclasses.MISSING:
            raw = f.default_factory()
        else:
            raw = None
        decoder: Callable[[Any], Any] | None = f.metadata.get("decode")
        values[f.name] = decoder(raw) if decoder else _decode_value(hints[f.name], raw, f.name, f.metadata)
    return cls(**values)
