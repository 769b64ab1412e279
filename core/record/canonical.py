"""Canonical JSON of records (sorted keys, no floats, bounded depth and size): the bytes
that are signed and hashed.  Source: issue 5, «Signed records»; ``docs/verification.md`` §2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from core import calendar

#: Largest integer allowed in canonical JSON (2**53 - 1) so that every JSON parser,
#: including JavaScript's, reads it exactly.
MAX_SAFE_INT = 2**53 - 1


def _check_json_value(value: object, path: str) -> None:
    if value is None or isinstance(value, (bool, str)):
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"{path}: string is not valid Unicode (lone surrogate)") from exc
        return
    if isinstance(value, int):
        if not -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
            raise ValueError(f"{path}: integer outside +-(2**53 - 1)")
        return
    if isinstance(value, float):
        raise ValueError(f"{path}: floats are not allowed in records (use ints or strings)")
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{path}: object keys must be str, got {type(k).__name__}")
            if not k.isascii():
                raise ValueError(f"{path}: object keys must be ASCII, got {k!r}")
            _check_json_value(v, f"{path}.{k}")
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_json_value(v, f"{path}[{i}]")
        return
    raise ValueError(f"{path}: {type(value).__name__} is not allowed in records")


def canonical_json(obj: object) -> bytes:
    """Serialise a record (or any record-like value) to its canonical bytes.

    Rules: UTF-8; object keys sorted (they must be ASCII, so code-point, UTF-16 and
    byte order agree); no whitespace (separators ``,`` and ``:``); non-ASCII
    characters written as themselves, only ``"``, ``\\`` and U+0000-U+001F escaped
    (``\\b \\t \\n \\f \\r`` short forms, otherwise ``\\u00xx`` lowercase); values are
    ``null``, ``true``/``false``, integers within +-(2**53 - 1), strings, arrays
    (lists or tuples) and objects (mappings).  For the values it accepts this is
    the same as RFC 8785 (JCS).

    Args:
        obj: a JSON-able value built from dict/Mapping, list/tuple, str, int, bool, None.

    Returns:
        the canonical UTF-8 bytes.

    Raises:
        ValueError: a float (NaN and infinities included), a non-str or non-ASCII
            key, an integer outside the safe range, a lone surrogate, or any other
            type.

    Source: issue 5, "Signed records".
    """
    if not _plain_json(obj):
        _check_json_value(obj, "$")  # raises, naming the offending path
    try:
        return _canonical_bytes(obj)
    except UnicodeEncodeError:  # a lone surrogate somewhere: say where
        _check_json_value(obj, "$")
        raise


def _canonical_bytes(obj: object) -> bytes:
    """The serialisation of :func:`canonical_json` without its checks (for values already
    checked, e.g. a record :func:`build_record` returned)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


#: Values with more nodes than this are checked by the careful, recursive check instead.
_PLAIN_JSON_NODES = 100_000


def _plain_json(value: object) -> bool:
    """True when ``value`` holds only what :func:`canonical_json` accepts, strings unchecked.

    The fast path of the check (no path strings, no recursion, bounded by the value's
    size): the precise error, and the lone-surrogate check, come from
    :func:`_check_json_value` when this says no or the final UTF-8 encoding fails.
    """
    stack = [value]
    budget = _PLAIN_JSON_NODES  # a bound on the walk: a cycle or a huge value takes the slow path
    while stack:
        budget -= 1
        if budget < 0:
            return False
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not -MAX_SAFE_INT <= item <= MAX_SAFE_INT:  # type: ignore[operator]
                return False
        elif kind is dict:
            for k in item:  # type: ignore[attr-defined]
                if type(k) is not str or not k.isascii():
                    return False
            stack.extend(item.values())  # type: ignore[attr-defined]
        elif kind is list or kind is tuple:
            stack.extend(item)  # type: ignore[arg-type]
        else:
            return False  # subclasses, other mappings, floats...: the careful check decides
    return True


_UTC_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


def _format_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _format_local(moment: datetime, tz: str) -> str:
    return calendar.local_time(moment, tz).replace(microsecond=0).isoformat()
