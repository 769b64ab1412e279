"""Verifying a signed record offline: the checks (:mod:`core.record.checks`, one function
each) made in order into a :class:`VerificationReport`, and the rules' recomputation of a
record's result.  Source: issue 5; issue 19; ``docs/verification.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PublicKey,
)

from core.errors import VerificationError
from core.record.checks import (
    check_envelope,
    check_format,
    check_game_day,
    check_key,
    check_roll_id,
    check_rules,
    check_secret_hash,
    check_seed,
    check_signature,
    dice_checks,
    published_day_checks,
)
from core.record.keys import roll_key_of
from core.record.schema import _HASH_PREFIX


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

    The checks are those of :mod:`core.record.checks`, in this order, each ``ok``, ``fail``
    or ``skip``: ``envelope`` (when it fails the others are not made), ``format``,
    ``key_id``, ``signature``, ``roll_id``, ``game_day``, ``published_day``, ``seed``,
    ``vrf`` (secret format-2 records), ``dice``, ``rules``, ``secret_hash`` (only with
    ``expected_hash``).

    Args:
        signed: the envelope from :func:`sign_record` (``/v/<roll_id>.json``);
            extra envelope keys are ignored (they are not signed).
        public_keys: ``{key_id: Ed25519PublicKey}`` the verifier trusts.
        seed: the revealed 32-byte seed of the record's game day, if known.
        recompute: optional rules check, ``record -> {field: expected value}``
            (:func:`recompute_with_rules`); exceptions it raises are reported as a failed
            ``rules`` check.
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
        VerificationError: only for unusable input (:func:`_check_arguments`).  A bad record
            never raises: it is reported.

    Source: issue 5, "Signed records" and "Secret rolls, edits, deletes"; issue 19.
    """
    _check_arguments(signed, public_keys, seed, recompute, vrf_keys, published_day, expected_hash)
    envelope = check_envelope(signed)
    if not envelope[1]:
        return VerificationReport((Check(*envelope),))
    record, signature, env_key_id = signed["record"], str(signed["signature"]), str(signed["key_id"])
    assert isinstance(record, Mapping)
    key_check, key = check_key(record, env_key_id, public_keys)
    rkey = _fields_for_key(record)
    results = [envelope, check_format(record), key_check, check_signature(record, signature, env_key_id, key),
               check_roll_id(record, rkey), check_game_day(record), *published_day_checks(record, published_day)]
    seed_check = check_seed(record, seed)
    results += [seed_check, *dice_checks(record, rkey, seed, seed_check[1], vrf_keys), check_rules(record, recompute)]
    if expected_hash is not None:
        results.append(check_secret_hash(record, expected_hash))
    rid = record.get("roll_id") if isinstance(record.get("roll_id"), str) else None
    return VerificationReport(tuple(Check(*result) for result in results), rid)


def _check_arguments(signed: object, public_keys: object, seed: object, recompute: object, vrf_keys: object,
                     published_day: object, expected_hash: object) -> None:
    """Refuse unusable input; a bad record is reported, not refused.

    Raises:
        VerificationError: ``signed`` or ``public_keys`` not a mapping, a value of
            ``public_keys`` that is not an Ed25519 public key, ``seed`` not bytes,
            ``recompute`` not callable, ``vrf_keys`` not a mapping of bytes,
            ``published_day`` not a mapping, ``expected_hash`` not 16 to 64 lowercase hex
            digits.
    """
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
