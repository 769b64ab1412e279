"""Verifying a signed record offline: one function per check (envelope, format, key,
signature, roll id, game day, published day, seed, VRF, dice, rules, secret hash), a
:class:`VerificationReport` of them all.  Source: issue 5; issue 19; ``docs/verification.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PublicKey,
)

from core import calendar, vrf
from core.derive import SEED_BYTES, DiceStreamExhausted, derive_faces, secret_roll_seed
from core.errors import NarradorError, VerificationError
from core.record.canonical import _UTC_TIME, _format_local, canonical_json
from core.record.keys import commitment, key_id_for, keyed_roll_id, roll_id, roll_key_of, vrf_key_id_for
from core.record.schema import (
    _HASH_PREFIX,
    _HEX128,
    _HEX_PROOF,
    _NONCE,
    _SHORT_HASH_NOTE,
    record_hash,
    record_problems,
)


@dataclass(frozen=True)
class Check:
    """One verification check.

    Attributes:
        name: stable id: ``envelope``, ``format``, ``key_id``, ``signature``,
            ``roll_id``, ``game_day``, ``published_day``, ``seed``, ``vrf``, ``dice``,
            ``rules``, ``secret_hash``.
        ok: ``True`` holds, ``False`` fails, ``None`` not checked.
        reason: one English sentence saying what was found.
    """

    name: str
    ok: bool | None
    reason: str

    @property
    def status(self) -> str:
        """``"OK"``, ``"FAIL"`` or ``"SKIP"``."""
        return {True: "OK", False: "FAIL", None: "SKIP"}[self.ok]


@dataclass(frozen=True)
class VerificationReport:
    """What :func:`verify_signed` found, check by check (immutable).

    Attributes:
        checks: the checks in the order they were made.
        roll_id: the record's roll id when it had one, else ``None``.
    """

    checks: tuple[Check, ...]
    roll_id: str | None = None

    @property
    def ok(self) -> bool:
        """True when no check failed and the signature was checked and holds."""
        signature = self.check("signature")
        return not self.failures and signature is not None and bool(signature.ok)

    @property
    def failures(self) -> tuple[Check, ...]:
        """The checks that failed."""
        return tuple(c for c in self.checks if c.ok is False)

    @property
    def skipped(self) -> tuple[Check, ...]:
        """The checks that could not be made (missing key, seed not revealed, ...)."""
        return tuple(c for c in self.checks if c.ok is None)

    def check(self, name: str) -> Check | None:
        """The check with that name, or ``None`` if it was not made."""
        return next((c for c in self.checks if c.name == name), None)

    def lines(self) -> list[str]:
        """One human-readable line per check: ``"OK   signature: ..."``."""
        return [f"{c.status:<4} {c.name}: {c.reason}" for c in self.checks]


def _fields_for_key(record: Mapping[str, object]) -> bytes | None:
    try:
        return roll_key_of(record)
    except (KeyError, TypeError, ValueError):
        return None


def verify_signed(
    signed: Mapping[str, object],
    public_keys: Mapping[str, Ed25519PublicKey],
    *,
    seed: bytes | None = None,
    recompute: Callable[[Mapping[str, object]], Mapping[str, object]] | None = None,
    expected_hash: str | None = None,
    vrf_keys: Mapping[str, bytes] | None = None,
    published_day: Mapping[str, object] | None = None,
) -> VerificationReport:
    """Check a signed record (format 1 or 2) and report every check with its reason.

    Checks, in order (each ``ok``, ``fail`` or ``skip``):

    - ``envelope``: ``signed`` has ``record`` (object), ``signature`` (128 hex) and
      ``key_id``; if not, the other checks are skipped.
    - ``format``: :func:`record_problems` finds nothing.
    - ``key_id``: the envelope's key id is among ``public_keys``, maps to a key with
      that id, and equals the record's ``key_id`` (skipped if ``public_keys`` is empty).
    - ``signature``: Ed25519 over ``canonical_json(record)`` (skipped if no key).
    - ``roll_id``: equals :func:`keyed_roll_id` of the key rebuilt from the record and of its
      nonce (rolls made since issue 25), or :func:`roll_id` of that key (rolls made before).
    - ``game_day``: ``game_day`` and ``time_local`` agree with ``time_utc`` in ``tz``.
    - ``published_day``: the day's entry published on ``/seeds`` is the record's game day
      and names its seed commitment and, for a secret format-2 record, its VRF key: the key
      was committed for that day in advance.  A secret format-1 record (day-seed dice) fails
      on a day that has a VRF key (else a server could pick either format's outcome).
      Without ``published_day`` it is skipped for a secret record (any published VRF key
      would pass) and left out for a public one.
    - ``seed``: ``commitment(seed) == seed_commitment`` (skipped without a seed).
    - ``vrf`` (secret format-2 records only): ``vrf_proof`` is a valid RFC 9381 proof on
      the roll key under the VRF public key ``vrf_keys[vrf_key_id]`` (skipped without
      ``vrf_keys``).
    - ``dice``: ``derive_faces(dice_seed, key, len(faces)) == faces``, where the dice
      seed is the day seed (public rolls, format-1 records) or
      ``secret_roll_seed(beta)`` of the verified proof (secret format-2 records);
      skipped when that seed is not available.
    - ``rules``: every field returned by ``recompute(record)`` (e.g. successes,
      outcome, degree recomputed by ``core.rules`` from the record's ruleset,
      options, params and faces) equals the record's (skipped without it).
    - ``secret_hash``: ``record_hash(record)`` starts with ``expected_hash`` (only if
      given): the hash, or the part of it, that the reply showed.

    Args:
        signed: the envelope from :func:`sign_record` (``/v/<roll_id>.json``);
            extra envelope keys are ignored (they are not signed).
        public_keys: ``{key_id: Ed25519PublicKey}`` the verifier trusts.
        seed: the revealed 32-byte seed of the record's game day, if known.
        recompute: optional rules check, ``record -> {field: expected value}``;
            exceptions it raises are reported as a failed ``rules`` check.
        expected_hash: for a revealed secret roll, the record hash its reply published:
            16 to 64 lowercase hex digits (replies show all 64; those made before the review
            of issue 19 showed 16).
        vrf_keys: ``{vrf_key_id: raw 32-byte VRF public key}`` the verifier trusts
            (``/keys``, ``"vrf_keys"``).
        published_day: the entry of the record's game and day in ``/seeds.json``
            (``{"day", "commitment", "revealed_seed", "vrf_key_id"}``).

    Returns:
        a :class:`VerificationReport`; ``report.ok`` is the overall verdict.

    Raises:
        VerificationError: only for unusable input — ``signed`` or ``public_keys``
            not a mapping, a value of ``public_keys`` that is not an Ed25519 public
            key, ``seed`` not bytes, ``recompute`` not callable, ``vrf_keys`` not a
            mapping of bytes, ``published_day`` not a mapping, ``expected_hash`` not 16
            to 64 lowercase hex digits.  A bad record never
            raises: it is reported.

    Source: issue 5, "Signed records" and "Secret rolls, edits, deletes"; issue 19.
    """
    _check_arguments(signed, public_keys, seed, recompute, vrf_keys, published_day, expected_hash)
    checks: list[Check] = []

    def add(name: str, ok: bool | None, reason: str) -> None:
        checks.append(Check(name, ok, reason))

    envelope = _check_envelope(signed)
    add(*envelope)
    if not envelope[1]:
        return VerificationReport(tuple(checks))
    record, signature, env_key_id = signed["record"], str(signed["signature"]), str(signed["key_id"])
    assert isinstance(record, Mapping)
    add(*_check_format(record))
    key_check, key = _check_key(record, env_key_id, public_keys)
    add(*key_check)
    add(*_check_signature(record, signature, env_key_id, key))
    rkey = _fields_for_key(record)
    add(*_check_roll_id(record, rkey))
    add(*_check_game_day(record))
    if published_day is not None:
        add(*_check_published_day(record, published_day))
    elif _is_secret(record):
        add("published_day", None,
            "not checked: without the day's /seeds entry any published VRF key would pass "
            "(pass the saved /seeds.json)")
    seed_check = _check_seed(record, seed)
    add(*seed_check)
    vrf_dice = _uses_vrf(record)
    if vrf_dice:
        beta = _check_vrf(record, rkey, vrf_keys, add)
        dice_seed = secret_roll_seed(beta) if beta is not None else None
        if dice_seed is None:
            add("dice", None, "not checked: no verified VRF output (secret rolls draw from it)")
    else:
        dice_seed, why_not = _day_dice_seed(seed, seed_check[1])
        if dice_seed is None:
            add("dice", None, why_not)
    if dice_seed is not None:
        add(*_check_dice(dice_seed, rkey, record.get("faces"), "the VRF output" if vrf_dice else "the day seed"))
    add(*_check_rules(record, recompute))
    if expected_hash is not None:
        add(*_check_secret_hash(record, expected_hash))
    rid = record.get("roll_id") if isinstance(record.get("roll_id"), str) else None
    return VerificationReport(tuple(checks), rid)


CheckResult = tuple[str, bool | None, str]


def _check_arguments(signed: object, public_keys: object, seed: object, recompute: object, vrf_keys: object,
                     published_day: object, expected_hash: object) -> None:
    """Refuse unusable input (:class:`VerificationError`); a bad record is reported, not refused."""
    if not isinstance(signed, Mapping):
        raise VerificationError(f"signed record must be an object, got {type(signed).__name__}")
    if not isinstance(public_keys, Mapping) or not all(
        isinstance(k, Ed25519PublicKey) for k in public_keys.values()
    ):
        raise VerificationError("public_keys must map key ids to Ed25519 public keys")
    if seed is not None and not isinstance(seed, (bytes, bytearray)):
        raise VerificationError(f"seed must be bytes, got {type(seed).__name__}")
    if recompute is not None and not callable(recompute):
        raise VerificationError("recompute must be callable")
    if vrf_keys is not None and not (
        isinstance(vrf_keys, Mapping) and all(isinstance(k, (bytes, bytearray)) for k in vrf_keys.values())
    ):
        raise VerificationError("vrf_keys must map VRF key ids to raw public keys (bytes)")
    if published_day is not None and not isinstance(published_day, Mapping):
        raise VerificationError("published_day must be an object (an entry of /seeds.json)")
    if expected_hash is not None and not (isinstance(expected_hash, str) and _HASH_PREFIX.fullmatch(expected_hash)):
        raise VerificationError("expected_hash must be 16 to 64 lowercase hex digits (the hash the reply showed)")


def _check_envelope(signed: Mapping[str, object]) -> CheckResult:
    """``envelope``: a record object, a 128-hex signature and a key id."""
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


def _check_format(record: Mapping[str, object]) -> CheckResult:
    """``format``: :func:`record_problems` finds nothing."""
    problems = record_problems(record)
    return "format", not problems, "; ".join(problems) or f"well-formed format {record.get('format')} record"


def _check_key(record: Mapping[str, object], env_key_id: str, public_keys: Mapping[str, Ed25519PublicKey]
               ) -> tuple[CheckResult, Ed25519PublicKey | None]:
    """``key_id``: the envelope's key is known, has that id and is the record's; the key to
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


def _check_signature(record: Mapping[str, object], signature: str, env_key_id: str,
                     key: Ed25519PublicKey | None) -> CheckResult:
    """``signature``: Ed25519 over ``canonical_json(record)``."""
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


def _check_roll_id(record: Mapping[str, object], rkey: bytes | None) -> CheckResult:
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


def _check_seed(record: Mapping[str, object], seed: bytes | bytearray | None) -> CheckResult:
    """``seed``: the revealed seed matches the record's commitment."""
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


def _check_rules(record: Mapping[str, object],
                 recompute: Callable[[Mapping[str, object]], Mapping[str, object]] | None) -> CheckResult:
    """``rules``: every field ``recompute(record)`` returns equals the record's."""
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


def _check_secret_hash(record: Mapping[str, object], expected_hash: str) -> CheckResult:
    """``secret_hash``: :func:`record_hash` starts with the hash the reply published."""
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
    """Add the ``vrf`` check of a secret format-2 record; the verified output, or None."""
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


def _check_dice(seed: bytes, rkey: bytes | None, faces: object, source: str) -> tuple[str, bool, str]:
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


def _check_published_day(record: Mapping[str, object], entry: Mapping[str, object]) -> tuple[str, bool, str]:
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


def _check_game_day(record: Mapping[str, object]) -> tuple[str, bool, str]:
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


def recompute_with_rules(record: Mapping[str, object]) -> dict[str, object]:
    """What the rules say a record's faces give: ``{"successes", "outcome", "degree"}``.

    For :func:`verify_signed`'s ``recompute``: evaluates the record's ``faces`` with its
    ruleset, options and parameters (``params``: pool, difficulty, willpower, specialty,
    stress, automatic, successes_required, and the stunt dice applied -- ``stunt_dice``, or the
    tag's stunt in records older than it) through ``core.rules.evaluate``, so anyone can
    check that the stated result follows from the dice.  A combat record (``params.combat``,
    issue 29) is recomputed by :mod:`core.record.combat`: initiative, damage and soak by their
    own rules (no botch), an attack or a wounded roller's action as above plus its pool after
    the wound penalty and its extra successes; then ``params`` is compared too.

    Raises:
        KeyError / TypeError / RulesError: a record without the fields or with values the
            rules reject (:func:`verify_signed` reports it as a failed ``rules`` check).
    """
    from core import rules
    from core.record import combat as combat_record

    params = record["params"]
    assert isinstance(params, Mapping)
    spec = params.get("spec") or {}
    stored_options, faces = record.get("options"), record["faces"]
    if not isinstance(faces, list) or not (stored_options is None or isinstance(stored_options, Mapping)):
        raise TypeError("faces must be a list and options a mapping")
    options = rules.RulesOptions.from_mapping(dict(stored_options or {}))
    fight = params.get("combat")
    if isinstance(fight, Mapping) and fight.get("kind") in combat_record.COMBAT_KINDS:
        return combat_record.recompute_combat(record, options)
    result = rules.evaluate(
        rules.get_ruleset(str(record["ruleset"])), list(faces),
        difficulty=params["difficulty"], willpower=bool(params.get("willpower")),
        specialty=bool(params.get("specialty")), stress=bool(params.get("stress")),
        automatic=bool(params.get("automatic")), options=options, pool=params.get("pool"),
        stunt=int(params["stunt_dice"]) if "stunt_dice" in params else (
            int(spec.get("stunt") or 0) if isinstance(spec, Mapping) else 0),
        successes_required=params.get("successes_required"),
    )
    out: dict[str, object] = {"successes": result.successes, "outcome": result.outcome,
                              "degree": result.degree_label or None}
    if isinstance(fight, Mapping):
        out["params"] = combat_record.check_action(params, result)
    return out
