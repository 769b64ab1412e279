"""Character sheets per game: import, look-up by owner, pool resolution, Willpower.

Source: issue 7, "Character sheets and willpower".  A character has a display ``name``, an
``owner`` (the forum user name that plays it), whether it is a normal ``human`` (for the
pool-over-10 flag), and traits: attributes, abilities, virtues, Humanity, Willpower
(permanent rating as the trait ``willpower``, temporary points in ``wp_temp``) and any custom
trait.  File format: ``docs/sheets.md``; example: ``examples/sheets.yaml``.

Keys (see :mod:`worker.adapters.redis`): ``chars``, ``char:<char>``, ``owner:<who>``,
``wpturn:<char>:<turn>``.

Rules enforced (core.rules.check_pool; vampiro-reglas.txt «Puntuaciones»): at most two traits
in a roll, a 10-point trait (Humanidad, Fuerza de Voluntad) rolled alone, a normal human's
pool above 10 flagged.  Willpower: one point for an automatic success, once per turn
(vampiro-reglas.txt «Éxitos Automáticos»: "solo puede hacerse una vez por turno";
exaltado-reglas.txt «Éxitos automáticos»: "Sólo podrás gastar un punto de Voluntad por
turno"; gehena-reglas.txt «Éxitos Automáticos»).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from core.combat.stats import CombatStats
from core.errors import SheetError, SheetProblem, StateError
from core.sheetpool import ResolvedPool, resolve_pool
from core.sheets import (
    MAX_CHARACTERS,
    MAX_RATING,
    CharacterSheet,
    TraitRating,
    imported_sheet,
    parse_sheets,
)
from core.tags import normalize_trait
from core.traits import lookup, trait_key
from worker.adapters.redis._tx import transact
from worker.adapters.redis.keys import game_key
from worker.ports.identity import part, who
from worker.ports.table import ImportReport

__all__ = [
    "TEMPORARY_WILLPOWER",
    "CharacterSheet",
    "ImportReport",
    "ResolvedPool",
    "TraitRating",
    "adjust",
    "credit_stunt",
    "delete_character",
    "get_character",
    "import_sheets",
    "list_characters",
    "load_sheets_file",
    "parse_sheets",
    "resolve_pool",
]
from worker.adapters.redis.text import TextRedis

#: Names accepted by :func:`adjust` for temporary Willpower.
TEMPORARY_WILLPOWER = ("willpower_temporary", "fv temporal", "voluntad temporal",
                       "temporary willpower", "wp temp", "fv temp")


def load_sheets_file(path: str | Path) -> Any:
    """Read a sheets file (YAML or JSON -- JSON is YAML) into plain data.

    Raises:
        SheetError: unreadable file or bad YAML/JSON (the parser's error never leaks).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SheetError([SheetProblem(str(path), "cannot_read", {"error": str(exc)})]) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SheetError([SheetProblem(str(path), "bad_file", {"error": str(exc)})]) from None


# --------------------------------------------------------------------------- Redis


def _char_key(game: str, cid: str) -> str:
    return game_key(game, "char", cid)


def sheet_from_hash(cid: str, h: Mapping[str, str]) -> CharacterSheet:
    """A :class:`CharacterSheet` from its stored hash (``char:<cid>``, see the key schema):
    ``npc`` (``"1"``) and the combat fields (:meth:`core.combat.stats.CombatStats.from_fields`;
    a hash stored before issue 29 gives an unhurt sheet that keeps no blood).

    Raises:
        RulesError(code="bad_value"): a combat field that is not a number where one belongs.
    """
    traits = {
        k: TraitRating(key=k, name=v["name"], rating=int(v["rating"]), max_rating=int(v["max"]),
                       category=v["category"])
        for k, v in json.loads(h.get("traits") or "{}").items()
    }
    has_essence = h.get("essence_max") not in (None, "")
    return CharacterSheet(id=cid, name=h.get("name", cid), owner=h.get("owner", ""),
                          human=h.get("human") == "1", traits=traits,
                          willpower_temporary=int(h.get("wp_temp") or 0),
                          essence_motes=int(h.get("essence_motes") or 0) if has_essence else None,
                          essence_max=int(h["essence_max"]) if has_essence else None,
                          npc=h.get("npc") == "1", combat=CombatStats.from_fields(h))


def sheet_fields(sheet: CharacterSheet, now: datetime | None = None) -> dict[str, str]:
    """The stored hash of a sheet (``char:<cid>``); ``now`` is kept as ``updated_at``.  The
    combat fields are flat (``CombatStats.to_fields``: ``health_lethal``, ``blood`` ...), so a
    post's commit changes one with a plain ``HSET`` (docs/state.md «Combat»)."""
    fields = {
        "name": sheet.name, "owner": sheet.owner, "human": "1" if sheet.human else "0",
        "traits": json.dumps({k: t.to_dict() for k, t in sheet.traits.items()}, ensure_ascii=False),
        "wp_temp": str(sheet.willpower_temporary), "updated_at": now.isoformat() if now else "",
        "npc": "1" if sheet.npc else "0", **sheet.combat.to_fields(),
    }
    if sheet.essence_max is not None:
        fields["essence_motes"], fields["essence_max"] = str(sheet.essence_motes or 0), str(sheet.essence_max)
    return fields


def import_sheets(r: TextRedis, game: str, data: Any, *, now: datetime | None = None) -> ImportReport:
    """Validate and store a sheets file's characters (create or replace each one), atomically.

    A re-imported character keeps its current temporary Willpower (capped at the new
    permanent rating) unless the file gives ``willpower.temporary``; a new one starts full.
    Characters not in the file are left alone (see :func:`delete_character`).  An owner may
    play several characters (then a roll naming traits asks which one: ``core.post``).

    Args:
        data: parsed file (see :func:`parse_sheets`).
        now: aware UTC time stored as ``updated_at`` (optional).

    Raises:
        SheetError: the file does not validate (nothing is written).
        StateError(code="busy"): contention.
    """
    parsed = parse_sheets(data, game=game)
    chars_key = game_key(game, "chars")
    keys = [chars_key] + [_char_key(game, part(c["name"])) for c in parsed]

    def fn(pipe: Any) -> ImportReport:
        existing = {k: pipe.hgetall(k) for k in keys[1:]}
        pipe.multi()
        created: list[str] = []
        updated: list[str] = []
        for c, key in zip(parsed, keys[1:], strict=True):
            cid = part(c["name"])
            old = existing[key]
            sheet = imported_sheet(cid, c, sheet_from_hash(cid, old) if old else None)
            if old and old.get("owner") and who(old["owner"]) != who(c["owner"]):
                pipe.srem(game_key(game, "owner", who(old["owner"])), cid)
            pipe.delete(key)
            pipe.hset(key, mapping=sheet_fields(sheet, now))
            pipe.hset(chars_key, cid, c["name"])
            pipe.sadd(game_key(game, "owner", who(c["owner"])), cid)
            (updated if old else created).append(c["name"])
        return ImportReport(tuple(created), tuple(updated))

    return transact(r, keys, fn)


def get_character(r: TextRedis, game: str, name: str) -> CharacterSheet | None:
    """The character called ``name`` (accents/case ignored), or ``None``."""
    cid = part(name)
    h = r.hgetall(_char_key(game, cid))
    return sheet_from_hash(cid, h) if h else None


def list_characters(r: TextRedis, game: str) -> list[CharacterSheet]:
    """Every character of the game, sorted by id (bounded by the import limit)."""
    out = []
    for cid in sorted(r.hkeys(game_key(game, "chars")))[:MAX_CHARACTERS * 4]:
        h = r.hgetall(_char_key(game, cid))
        if h:
            out.append(sheet_from_hash(cid, h))
    return out


def owned_key(game: str, author: str) -> str:
    """Redis key of the set of character ids owned by forum user ``author``."""
    return game_key(game, "owner", who(author))


def delete_character(r: TextRedis, game: str, name: str) -> bool:
    """Remove a character (master action); True when it existed."""
    cid = part(name)
    key = _char_key(game, cid)

    def fn(pipe: Any) -> bool:
        owner = pipe.hget(key, "owner")
        if owner is None:
            return False
        pipe.multi()
        pipe.delete(key)
        pipe.hdel(game_key(game, "chars"), cid)
        pipe.srem(game_key(game, "owner", who(owner)), cid)
        return True

    return transact(r, [key], fn)


def adjust(
    r: TextRedis, game: str, character: str, field: str, *, delta: int | None = None,
    value: int | None = None,
) -> int:
    """Change a trait rating or temporary Willpower (master action), atomically.

    Args:
        field: a trait name (Spanish/English; a custom trait is created when ``value`` is
            given) or one of :data:`TEMPORARY_WILLPOWER` (``"fv temporal"``...).
        delta: add this (may be negative); or
        value: set this.

    Returns:
        the new value.  Temporary Willpower is kept within 0..permanent; lowering the
        permanent rating lowers the temporary points to match.

    Raises:
        StateError: ``unknown_character``, ``unknown_trait`` (delta on a missing trait),
        ``bad_rating`` (result outside 0..max, or neither/both of delta and value).
    """
    if (delta is None) == (value is None):
        raise StateError("give delta or value", code="bad_rating", field=field, value="?",
                         minimum=0, maximum=MAX_RATING)
    cid = part(character)
    key = _char_key(game, cid)
    temporary = normalize_trait(field) in {normalize_trait(n) for n in TEMPORARY_WILLPOWER}
    given = value if value is not None else 0  # used only when delta is None, so value is given

    def fn(pipe: Any) -> int:
        h = pipe.hgetall(key)
        if not h:
            raise StateError(f"no character {character!r}", code="unknown_character", character=character)
        sheet = sheet_from_hash(cid, h)
        if temporary:
            maximum = sheet.willpower_permanent
            new = (sheet.willpower_temporary + delta) if delta is not None else given
            if not 0 <= new <= maximum:
                raise StateError("temporary Willpower out of range", code="bad_rating",
                                 field=field, value=new, minimum=0, maximum=maximum)
            pipe.multi()
            pipe.hset(key, "wp_temp", str(new))
            return new
        rating = _adjusted(sheet, field, delta, given)
        tkey, new = rating.key, rating.rating
        traits = {k: t.to_dict() for k, t in sheet.traits.items()}
        traits[tkey] = rating.to_dict()
        pipe.multi()
        pipe.hset(key, "traits", json.dumps(traits, ensure_ascii=False))
        if tkey == "willpower" and sheet.willpower_temporary > new:
            pipe.hset(key, "wp_temp", str(new))
        return new

    return transact(r, [key], fn)


def _adjusted(sheet: CharacterSheet, field: str, delta: int | None, given: int) -> TraitRating:
    """The trait ``field`` of ``sheet`` rated anew: its rating plus ``delta``, or ``given``
    (a trait the sheet lacks is created, named from the trait table, when it is set).

    Raises:
        StateError: ``unknown_trait`` (``delta`` on a missing trait), ``bad_rating`` (outside
            0..:data:`MAX_RATING`).
    """
    tkey = trait_key(field)
    current = sheet.traits.get(tkey)
    if current is None and delta is not None:
        raise StateError(f"{sheet.name} has no trait {field!r}", code="unknown_trait",
                         trait=field, character=sheet.name)
    new = (current.rating + delta) if (current and delta is not None) else given
    if not 0 <= new <= MAX_RATING:
        raise StateError("rating out of range", code="bad_rating", field=field, value=new,
                         minimum=0, maximum=MAX_RATING)
    info = lookup(field)
    return TraitRating(
        key=tkey, name=current.name if current else (info.es if info else " ".join(field.split())),
        rating=new, max_rating=current.max_rating if current else (info.max_rating if info else 5),
        category=current.category if current else (info.category if info else "other"),
    )


_CREDIT = """
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'duplicate', tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')}
end
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw or raw == '' then return {'untracked', 0} end
local new = math.min(tonumber(ARGV[2]), tonumber(raw) + tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], ARGV[1], tostring(new))
redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
return {'credited', new}
"""


def credit_stunt(
    r: TextRedis, game: str, sheet: CharacterSheet, kind: str, amount: int, *, op_id: str,
    ttl_seconds: int = 30 * 24 * 3600,
) -> tuple[str, int]:
    """Credit a secret roll's successful stunt to ``sheet`` when the roll is revealed
    (exaltado-reglas.txt «Acrobacias»: "recuperará un poco de Esencia por cada dado ... o
    recuperar un punto temporal de Voluntad"), atomically and once per ``op_id`` (one Lua
    script; the marker is ``reward:<op_id>``).  A public roll's reward is written with its post.

    Args:
        kind: ``"essence"`` (``amount`` motes, up to the sheet's maximum) or ``"willpower"``
            (``amount`` temporary points, up to the permanent rating).
        op_id: the rewarded tag, ``"<forum>:<post>:<tag index>"``.

    Returns:
        ``(status, value)``: ``credited`` or ``duplicate`` with the new motes / points, or
        ``untracked`` (the sheet has no such pool).
    """
    if kind not in ("essence", "willpower"):
        raise StateError(f"unknown reward {kind!r}", code="bad_name", name=kind)
    field = "essence_motes" if kind == "essence" else "wp_temp"
    cap = (sheet.essence_max or 0) if kind == "essence" else sheet.willpower_permanent
    marker = game_key(game, "reward", part(op_id, fold=False))
    status, value = r.eval(_CREDIT, 2, _char_key(game, sheet.id), marker, field, cap, int(amount),
                           max(1, int(ttl_seconds)) * 1000)
    return str(status), int(value)
