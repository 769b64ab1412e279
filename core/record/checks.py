"""The checks of a signed record, one function each, in the order
:func:`core.record.verify_signed` makes them: ``envelope``, ``format``, ``key_id``,
``signature``, ``roll_id``, ``game_day``, ``published_day``, ``seed``, ``vrf``, ``dice``,
``rules``, ``secret_hash``.  Each returns ``(name, ok, reason)``: ``ok`` is ``True``
(holds), ``False`` (fails) or ``None`` (not checked), ``reason`` one English sentence.
Source: issue 5; issue 19; ``docs/verification.md`` §9.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PublicKey,
)

from core import calendar, vrf
from core.derive import SEED_BYTES, DiceStreamExhausted, derive_faces, secret_roll_seed
from core.errors import NarradorError
from core.record.canonical import _UTC_TIME, _format_local, canonical_json
from core.record.keys import commitment, key_id_for, keyed_roll_id, roll_id, vrf_key_id_for
from core.record.schema import (
    _HEX128,
    _HEX_PROOF,
    _NONCE,
    _SHORT_HASH_NOTE,
    record_hash,
    record_problems,
)

#: One check's outcome: its name, ``True`` / ``False`` / ``None`` (not checked), the reason.
CheckResult = tuple[str, bool | None, str]


def published_day_checks(record: Mapping[str, object], published_day: Mapping[str, object] | None
                         ) -> list[CheckResult]:
    """:func:`check_published_day` with the day's ``/seeds`` entry; without it the check is
    skipped for a secret record (any published VRF key would pass) and left out for a public
    one."""
    if published_day is not None:
        return [check_published_day(record, published_day)]
    if _is_secret(record):
        return [("published_day", None,
                 "not checked: without the day's /seeds entry any published VRF key would pass "
                 "(pass the saved /seeds.json)")]
    return []


def dice_checks(record: Mapping[str, object], rkey: bytes | None, seed: bytes | bytearray | None,
                seed_ok: bool | None, vrf_keys: Mapping[str, bytes] | None) -> list[CheckResult]:
    """``vrf`` (secret format-2 records only) and ``dice``: the faces are the dice of the
    seed they come from, the day seed (public rolls, format-1 records) or
    ``secret_roll_seed(beta)`` of the verified VRF proof (secret format-2 records); ``dice``
    is skipped when that seed is not available."""
    results: list[CheckResult] = []
    vrf_dice = _uses_vrf(record)
    if vrf_dice:
        beta = _check_vrf(record, rkey, vrf_keys, lambda *result: results.append(result))
        dice_seed = secret_roll_seed(beta) if beta is not None else None
        if dice_seed is None:
            results.append(("dice", None, "not checked: no verified VRF output (secret rolls draw from it)"))
    else:
        dice_seed, why_not = _day_dice_seed(seed, seed_ok)
        if dice_seed is None:
            results.append(("dice", None, why_not))
    if dice_seed is not None:
        source = "the VRF output" if vrf_dice else "the day seed"
        results.append(check_dice(dice_seed, rkey, record.get("faces"), source))
    return results


def check_envelope(signed: Mapping[str, object]) -> CheckResult:
    """``envelope``: ``signed`` has ``record`` (an object), ``signature`` (128 lowercase hex
    digits) and ``key_id``; if not, :func:`core.record.verify_signed` makes no other check."""
    problems = []
    if not isinstance(signed.get("record"), Mapping):
        problems.append("no record object")
    signature = signed.get("signature")
    if not (isinstance(signature, str) and _HEX128.fullmatch(signature)):
        problems.append("signature is not 128 lowercase hex digits")
    if not isinstance(signed.get("key_id"), str):
        problems.append("no key_id")
    if problems:
        return "envelope", False, "; ".join(problems)
    return "envelope", True, "record, signature and key id present"


def check_format(record: Mapping[str, object]) -> CheckResult:
    """``format``: :func:`record_problems` finds nothing."""
    problems = record_problems(record)
    return "format", not problems, "; ".join(problems) or f"well-formed format {record.get('format')} record"


def check_key(record: Mapping[str, object], env_key_id: str, public_keys: Mapping[str, Ed25519PublicKey]
               ) -> tuple[CheckResult, Ed25519PublicKey | None]:
    """``key_id``: the envelope's key id is among ``public_keys``, maps to a key with that id,
    and equals the record's ``key_id`` (skipped if ``public_keys`` is empty); with the key to
    check the signature with (None when there is none to use)."""
    if not public_keys:
        return ("key_id", None, f"no public keys given; record says key {env_key_id}"), None
    if env_key_id not in public_keys:
        return ("key_id", False, f"key {env_key_id} is not a known public key"), None
    if key_id_for(public_keys[env_key_id]) != env_key_id:
        return ("key_id", False, f"the key given as {env_key_id} has another id"), None
    if record.get("key_id") != env_key_id:
        return ("key_id", False, f"record names key {record.get('key_id')!r}, envelope {env_key_id}"), \
            public_keys[env_key_id]
    return ("key_id", True, f"key {env_key_id} is known"), public_keys[env_key_id]


def check_signature(record: Mapping[str, object], signature: str, env_key_id: str,
                     key: Ed25519PublicKey | None) -> CheckResult:
    """``signature``: Ed25519 over ``canonical_json(record)`` (skipped without a key)."""
    if key is None:
        return "signature", None, "not checked: no usable public key"
    try:
        message = canonical_json(record)
    except ValueError as exc:
        return "signature", False, f"record cannot be canonicalised: {exc}"
    try:
        key.verify(bytes.fromhex(signature), message)
    except InvalidSignature:
        return ("signature", False,
                f"signature does not match: the record was altered or not signed by key {env_key_id}")
    return "signature", True, f"Ed25519 signature by key {env_key_id} holds"


def check_roll_id(record: Mapping[str, object], rkey: bytes | None) -> CheckResult:
    """``roll_id``: the record's id follows from the roll key rebuilt from its fields: keyed
    with the record's nonce (``keyed_roll_id``, every roll made since issue 25), or, for a
    roll made before, the key alone (``roll_id``). Nothing else passes."""
    rid = record.get("roll_id") if isinstance(record.get("roll_id"), str) else None
    if rkey is None:
        return "roll_id", False, "cannot rebuild the roll key from game/forum/thread/post/tag_index"
    nonce = record.get("nonce")
    keyed = keyed_roll_id(rkey, nonce) if isinstance(nonce, str) and _NONCE.fullmatch(nonce) else None
    if keyed is not None and rid == keyed:
        return "roll_id", True, f"roll id {rid} matches the roll key and the record's nonce"
    if rid == roll_id(rkey):
        return "roll_id", True, f"roll id {rid} matches the roll key (an id made before ids were keyed)"
    should = f"{keyed} (keyed with the nonce)" if keyed is not None else roll_id(rkey)
    return "roll_id", False, f"roll id should be {should}, record says {rid!r}"


def check_seed(record: Mapping[str, object], seed: bytes | bytearray | None) -> CheckResult:
    """``seed``: ``commitment(seed) == seed_commitment`` (skipped without a seed)."""
    committed = record.get("seed_commitment")
    if seed is None:
        return "seed", None, "seed not given (not revealed yet?)"
    if len(seed) != SEED_BYTES:
        return "seed", False, f"seed must be {SEED_BYTES} bytes, got {len(seed)}"
    if commitment(bytes(seed)) != committed:
        return "seed", False, f"seed does not match the record's commitment {committed!r}"
    return "seed", True, "seed matches the commitment"


def _day_dice_seed(seed: bytes | bytearray | None, seed_ok: bool | None) -> tuple[bytes | None, str]:
    """The seed a public roll's dice come from (the day seed once it checked), or None and why not."""
    if seed is None:
        return None, "not checked: no seed"
    if not seed_ok:
        reason = "unusable seed" if len(seed) != SEED_BYTES else "seed does not match its commitment"
        return None, f"not checked: {reason}"
    return bytes(seed), ""


def check_rules(record: Mapping[str, object],
                 recompute: Callable[[Mapping[str, object]], Mapping[str, object]] | None) -> CheckResult:
    """``rules``: every field returned by ``recompute(record)`` (e.g. successes, outcome,
    degree recomputed by ``core.rules`` from the record's ruleset, options, params and faces)
    equals the record's (skipped without it)."""
    if recompute is None:
        return "rules", None, "not checked: no rules recomputation given"
    try:
        expected = recompute(record)
        wrong = [f"{k}: record {record.get(k)!r}, rules {v!r}" for k, v in dict(expected).items() if record.get(k) != v]
    except (NarradorError, KeyError, TypeError, ValueError) as exc:
        return "rules", False, f"rules cannot evaluate the record: {exc}"
    if wrong:
        return "rules", False, "; ".join(wrong)
    return "rules", True, "result recomputed by the rules: " + ", ".join(sorted(expected))


def check_secret_hash(record: Mapping[str, object], expected_hash: str) -> CheckResult:
    """``secret_hash``: :func:`record_hash` starts with ``expected_hash``, the hash, or the
    part of it, that the reply showed."""
    digits = len(expected_hash)
    try:
        actual_hash = record_hash(record)
    except ValueError as exc:
        return "secret_hash", False, f"cannot hash the record: {exc}"
    if actual_hash.startswith(expected_hash):
        note = _SHORT_HASH_NOTE.format(digits=digits, bits=2 * digits) if digits < 64 else ""
        return "secret_hash", True, f"record matches the {digits} hex digits of the hash published with the roll{note}"
    return "secret_hash", False, f"record does not match the {digits} hex digits of the hash published with the roll"


def _is_secret(record: Mapping[str, object]) -> bool:
    flags = record.get("flags")
    return isinstance(flags, Mapping) and flags.get("secret") is True


def _uses_vrf(record: Mapping[str, object]) -> bool:
    """True for a format-2 secret record: its dice come from the VRF, not the day seed."""
    return record.get("format") == 2 and _is_secret(record)


def _check_vrf(
    record: Mapping[str, object],
    rkey: bytes | None,
    vrf_keys: Mapping[str, bytes] | None,
    add: Callable[[str, bool | None, str], None],
) -> bytes | None:
    """Add the ``vrf`` check of a secret format-2 record: ``vrf_proof`` is a valid RFC 9381
    proof on the roll key under the VRF public key ``vrf_keys[vrf_key_id]`` (skipped without
    ``vrf_keys``); the verified output, or None."""
    vkid, proof = record.get("vrf_key_id"), record.get("vrf_proof")
    if not (isinstance(vkid, str) and isinstance(proof, str) and _HEX_PROOF.fullmatch(proof)):
        add("vrf", False, "the record has no well-formed VRF key id and proof")
        return None
    if not vrf_keys:
        add("vrf", None, f"no VRF public keys given; record says VRF key {vkid}")
        return None
    public = vrf_keys.get(vkid)
    if public is None:
        add("vrf", False, f"VRF key {vkid} is not a known VRF public key")
        return None
    if len(public) != vrf.PUBLIC_KEY_BYTES or vrf_key_id_for(bytes(public)) != vkid:
        add("vrf", False, f"the VRF key given as {vkid} has another id")
        return None
    if rkey is None:
        add("vrf", False, "cannot rebuild the roll key (the VRF input)")
        return None
    beta = vrf.verify(bytes(public), rkey, bytes.fromhex(proof))
    if beta is None:
        add("vrf", False, f"the VRF proof does not verify under key {vkid} for this roll key")
        return None
    add("vrf", True, f"RFC 9381 proof by VRF key {vkid} holds for this roll key")
    return beta


def check_dice(seed: bytes, rkey: bytes | None, faces: object, source: str) -> tuple[str, bool, str]:
    """``dice``: ``derive_faces(seed, rkey, len(faces)) == faces``; ``source`` names the seed
    in the reason."""
    if rkey is None or not isinstance(faces, list) or not all(type(f) is int for f in faces):
        return ("dice", False, "not checked: the record's key fields or faces are malformed")
    try:
        derived = list(derive_faces(seed, rkey, len(faces)))
    except DiceStreamExhausted as exc:
        return ("dice", False, str(exc))
    if derived == faces:
        return ("dice", True, f"{len(faces)} faces recomputed from {source} and equal")
    first = next(i for i, (a, b) in enumerate(zip(derived, faces, strict=False)) if a != b)
    return ("dice", False, f"faces differ from the dice of {source} at position {first}: "
                           f"record {faces[first]}, derived {derived[first]}")


def check_published_day(record: Mapping[str, object], entry: Mapping[str, object]) -> tuple[str, bool, str]:
    """``published_day``: the day's entry published on ``/seeds`` is the record's game day
    and names its seed commitment and, for a secret format-2 record, its VRF key: the key
    was committed for that day in advance.  A secret format-1 record (day-seed dice) fails
    on a day that has a VRF key (else a server could pick either format's outcome)."""
    day, listed_day = record.get("game_day"), entry.get("day")
    if not entry:
        return ("published_day", False, f"game day {day!r} is not in the published listing")
    if listed_day != day:
        return ("published_day", False, f"the published entry is for day {listed_day!r}, the record's is {day!r}")
    if entry.get("commitment") != record.get("seed_commitment"):
        return ("published_day", False, f"the seed commitment published for {day} is not the record's")
    listed_key = entry.get("vrf_key_id")
    if _uses_vrf(record):
        if listed_key != record.get("vrf_key_id"):
            return ("published_day", False,
                    f"the VRF key published for {day} is {listed_key!r}, the record used {record.get('vrf_key_id')!r}")
        return ("published_day", True, f"{day}: seed commitment and VRF key {listed_key} as published")
    if _is_secret(record) and listed_key is not None:
        # format 1 draws a secret roll's dice from the day seed: on a day with a VRF key the
        # server could otherwise choose between two outcomes (review of issue 19)
        reason = (f"{day} has VRF key {listed_key!r}: its secret rolls draw from the VRF (format 2), "
                  f"a format {record.get('format')!r} secret record is refused")
        return ("published_day", False, reason)
    return ("published_day", True, f"{day}: seed commitment as published")


def check_game_day(record: Mapping[str, object]) -> tuple[str, bool, str]:
    """``game_day``: ``game_day`` and ``time_local`` agree with ``time_utc`` in ``tz``."""
    time_utc, tz = record.get("time_utc"), record.get("tz")
    day, local = record.get("game_day"), record.get("time_local")
    if not (isinstance(time_utc, str) and _UTC_TIME.fullmatch(time_utc) and isinstance(tz, str)):
        return ("game_day", False, "time_utc or tz malformed")
    try:
        moment = datetime.strptime(time_utc, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        expected_day: date = calendar.game_day(moment, tz)
        expected_local = _format_local(moment, tz)
    except (ValueError, TypeError) as exc:
        return ("game_day", False, f"cannot place time_utc in {tz!r}: {exc}")
    if day != expected_day.isoformat():
        return ("game_day", False, f"{time_utc} is game day {expected_day} in {tz}, not {day!r}")
    if local != expected_local:
        return ("game_day", False, f"time_local should be {expected_local}, not {local!r}")
    return ("game_day", True, f"{time_utc} is {expected_local}, game day {day} in {tz}")
