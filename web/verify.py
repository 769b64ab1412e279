"""Public verification pages: ``/v/<roll_id>``, ``/v/<roll_id>.json``, ``/keys``.

Source: issue 5 ("the public page ``/v/<roll_id>`` shows the record, whether its signature
verifies against the published key, the seed commitment, and, once the seed is revealed,
the recomputed dice") and issue 8 ("Secret rolls ... with a reveal action").

A secret roll that no master has revealed shows only its id, game, post link and the
record hash published in the reply; its JSON is the same summary.  Once revealed
(:meth:`worker.adapters.redis.masters.MasterAccounts.reveal`) both show the full signed record, and the
page recomputes the record hash so anyone can compare it with the reply's.  A master of the
roll's game always sees the full record.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from flask import Blueprint, abort, jsonify, render_template
from flask_babel import gettext as _
from flask_login import current_user

from core import record as records
from core.derive import SEED_BYTES
from web import deps, i18n
from web.i18n import local_time
from worker.ports.keystore import KeystoreError

bp = Blueprint("verify", __name__)


def load_envelope(roll_id: str) -> dict[str, Any]:
    """The stored envelope of ``roll_id``; 404 for unknown or malformed ids."""
    if not roll_id.isalnum() or len(roll_id) > 64:
        abort(404)
    envelope = deps.store().get_roll(roll_id)
    if envelope is None:
        abort(404)
    return envelope


def revealed_seed_of(record: dict[str, Any]) -> bytes | None:
    """The revealed seed of the record's game day, or ``None`` (not revealed / unknown)."""
    try:
        return deps.keystore().revealed_seed(str(record["game"]), date.fromisoformat(str(record["game_day"])))
    except (KeystoreError, KeyError, ValueError, TypeError):
        return None


def published_day_of(record: dict[str, Any]) -> dict[str, object] | None:
    """The ``/seeds`` entry of the record's game and day (``{}`` if not listed), or ``None``
    when the listing cannot be read (the check is then skipped, not failed)."""
    try:
        entries = deps.keystore().commitments(str(record["game"]))
    except (KeystoreError, KeyError, ValueError, TypeError):
        return None
    return next((e for e in entries if e["day"] == record.get("game_day")), {})


def verify_envelope(envelope: dict[str, Any], seed: bytes | None = None) -> records.VerificationReport:
    """Every check of :func:`core.record.verify_signed` with what this instance publishes:
    signing and VRF public keys (``/keys``), the day's entry on ``/seeds`` and its seed once
    revealed."""
    record = envelope.get("record") or {}
    ks = deps.keystore()
    return records.verify_signed(
        envelope, ks.public_keys(), seed=seed if seed is not None and len(seed) == SEED_BYTES else None,
        recompute=records.recompute_with_rules, vrf_keys=ks.vrf_public_keys(),
        published_day=published_day_of(record),
    )


def hidden_secret(record: dict[str, Any]) -> bool:
    """True if the record is secret, not revealed, and the viewer is not its game's master."""
    if not (record.get("flags") or {}).get("secret"):
        return False
    if current_user.is_authenticated and current_user.masters(str(record.get("game"))):
        return False
    return deps.masters().revealed(str(record.get("roll_id"))) is None


def _secret_summary(record: dict[str, Any]) -> dict[str, Any]:
    try:
        rhash = records.record_hash(record)
    except ValueError:
        rhash = None
    return {"roll_id": record.get("roll_id"), "game": record.get("game"), "secret": True,
            "revealed": False, "record_hash": rhash, "post_url": record.get("post_url")}


@bp.get("/v/<roll_id>.json")
def roll_json(roll_id: str):
    """The signed record envelope (``record``, ``signature``, ``key_id``), or the summary
    of an unrevealed secret roll."""
    envelope = load_envelope(roll_id)
    if hidden_secret(envelope["record"]):
        return jsonify(_secret_summary(envelope["record"]))
    return jsonify(envelope)


@bp.get("/v/<roll_id>")
def roll_page(roll_id: str):
    """The record, whether its signature verifies, its seed commitment, and the recomputed
    dice once the day's seed is revealed."""
    envelope = load_envelope(roll_id)
    record = envelope["record"]
    game = deps.settings().games.get(str(record.get("game")))
    if game is not None:
        i18n.use_game_language(game.language)
    if hidden_secret(record):
        return render_template("verify_secret.html", summary=_secret_summary(record), record=record)
    seed = revealed_seed_of(record)
    report = verify_envelope(envelope, seed)
    secret = bool((record.get("flags") or {}).get("secret"))
    revealed = deps.masters().revealed(str(record.get("roll_id"))) if secret else None
    record_hash = _secret_summary(record)["record_hash"] if secret else None
    return render_template(
        "verify.html", envelope=envelope, record=record, report=report, seed=seed,
        secret=secret, revealed=revealed, record_hash=record_hash,
        revealed_at=local_time(revealed["at"], record.get("tz")) if revealed and revealed.get("at") else "",
        details=roll_details(record),
    )


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is a dict, else an empty one (a record's params as stored)."""
    return value if isinstance(value, dict) else {}


def _ruleset_facts(record: dict[str, Any]) -> tuple[str, int | str]:
    """The record's effective specialty mode (``double``, ``reroll``, ``off``: its options with
    the ruleset's default filled in) and the ruleset's default difficulty (an NPC's when its tag
    gives none); ``("", "?")`` when the record's ruleset or options cannot be read."""
    from core.errors import RulesError
    from core.rules import get_ruleset, options_for

    try:
        ruleset = get_ruleset(str(record.get("ruleset", "")))
        return options_for(ruleset, _mapping(record.get("options"))).specialty_mode(ruleset), ruleset.default_difficulty
    except (RulesError, TypeError, ValueError):
        return "", "?"


def roll_details(record: dict[str, Any]) -> list[str]:
    """What the record's ``params`` add to the dice, in the page's language (the one catalogue):
    Willpower spent, the specialty, the dice added or taken away, stunt dice, the multiple-action
    penalty, a human's capped pool, an automatic success, the successes needed, and an NPC's
    dice rolled beside the roll.

    Without them, counting the faces by hand gives one success fewer than shown after a
    Willpower point (issue 26; vampiro-reglas.txt «Éxitos Automáticos»: spending Willpower gives
    "un éxito automático").  Unknown or malformed params are left out.  Never raises.
    """
    params = _mapping(record.get("params"))
    spec = _mapping(params.get("spec"))
    specialty_mode, default_difficulty = _ruleset_facts(record)
    lines: list[str] = []
    if params.get("willpower") is True:
        lines.append(_("Fuerza de Voluntad gastada: +1 éxito automático, ya sumado en los éxitos"))
    if params.get("specialty") is True:
        lines.append({
            "double": _("Especialidad: cada 10 cuenta dos éxitos"),
            "reroll": _("Especialidad: cada 10 se vuelve a tirar (los dados de más van al final de la lista)"),
        }.get(specialty_mode, _("Especialidad: sin efecto con estas reglas")))
    modifier = spec.get("modifier")
    if isinstance(modifier, int) and not isinstance(modifier, bool) and modifier:
        signed = f"{modifier:+d}".replace("-", "−")
        lines.append(_("Dados añadidos: %(n)s", n=signed))
    action = params.get("action")
    if isinstance(action, dict) and isinstance(action.get("penalty"), int):
        lines.append(_("Acción %(index)s de %(of)s: −%(penalty)s dados", index=action.get("index", "?"),
                       of=action.get("of", "?"), penalty=action["penalty"]))
    stunt = params.get("stunt_dice")
    if isinstance(stunt, int) and stunt:
        lines.append(_("Acrobacia: %(n)s dados más en la reserva", n=stunt))
    pending = params.get("stunt_pending")
    if isinstance(pending, int) and pending:
        lines.append(_("Acrobacia de %(n)s dados pendiente del Narrador: no se tiraron", n=pending))
    marks = params.get("marks")
    marks = marks if isinstance(marks, list) else []
    if "human_pool_capped" in marks:
        lines.append(_("Humano normal: la reserva se limitó a 10 dados"))
    if params.get("automatic") is True:
        lines.append(_("Éxito automático: no se tiran dados"))
    # blood / motes spent in the same tag (sangre 1 ... ataque): the spec carries them
    blood, motes = spec.get("blood"), spec.get("motes")
    if isinstance(blood, int) and not isinstance(blood, bool) and blood > 0:
        lines.append(_("Sangre gastada en la misma etiqueta, antes de tirar: %(n)s", n=blood))
    if isinstance(motes, int) and not isinstance(motes, bool) and motes > 0:
        lines.append(_("Motas de Esencia gastadas en la misma etiqueta, antes de tirar: %(n)s", n=motes))
    needed = params.get("successes_required")
    if isinstance(needed, int) and needed > 1:
        lines.append(_("Éxitos necesarios: %(n)s", n=needed))
    versus = spec.get("versus")
    if isinstance(versus, dict) and isinstance(versus.get("npc_pool"), int):
        npc_difficulty = versus.get("npc_difficulty") or default_difficulty
        lines.append(_("Contra un PNJ de %(n)s dados a dificultad %(d)s: sus dados salen de la misma semilla y "
                       "no están en esta lista", n=versus["npc_pool"], d=npc_difficulty))
    return lines + combat_lines(record)


def combat_lines(record: dict[str, Any]) -> list[str]:
    """:func:`combat_details` of a record, ``[]`` when it is no combat roll or its combat params
    cannot be read (the audit page's row flags).  Never raises."""
    combat = _mapping(_mapping(record.get("params")).get("combat"))
    if not combat:
        return []
    try:
        return combat_details(str(record.get("ruleset", "")), combat)
    except (KeyError, TypeError, ValueError):
        return []


def combat_details(ruleset: str, combat: dict[str, Any]) -> list[str]:
    """A combat record's ``params.combat`` (issue 29, ``docs/verification.md`` §5.1) in the page's
    language: the roll's kind (initiative, attack, damage, soak), the wound penalty taken off
    the pool, the attack's extra successes, the damage pool's parts, the soak, and the health
    change of the target (before → after, and whether it waits for a master).

    Raises:
        KeyError, TypeError, ValueError: malformed combat params (the caller leaves them out).
    """
    from core.combat.labels import level_name

    lang = i18n.page_language()
    kind = combat.get("kind")
    lines: list[str] = []
    label = {"initiative": _("Tirada de combate: iniciativa"), "attack": _("Tirada de combate: ataque"),
             "damage": _("Tirada de combate: daño (no puede fracasar; los 1 no restan)"),
             "soak": _("Tirada de combate: absorción (acción refleja: no puede fracasar, sin penalización por "
                       "heridas)")}.get(str(kind))
    if label:
        lines.append(label)
    penalty = combat.get("penalty")
    if isinstance(penalty, int) and penalty and kind in ("action", "attack"):
        lines.append(_("Heridas (%(level)s): −%(n)s dados", n=penalty,
                       level=level_name(lang, str(combat.get("level", "")))))
    lines += _kind_lines(lang, kind, combat)
    net = combat.get("net")
    if isinstance(net, dict) and net.get("halved"):
        lines.append(_("Daño contundente a un vampiro: se divide a la mitad, %(n)s niveles", n=net.get("levels", 0)))
    health = combat.get("health")
    if isinstance(health, dict) and health.get("before") and health.get("after"):
        lines.append(_health_line(ruleset, lang, health))
    return lines


def _kind_lines(lang: str, kind: object, combat: dict[str, Any]) -> list[str]:
    """What the roll's own kind adds: the initiative's score, the attack's extra successes, the
    damage pool's parts, the soak's result."""
    from core.combat import DamageType
    from core.combat.labels import damage_name

    if kind == "initiative":
        if combat.get("method") == "join_battle":
            return [_("Iniciativa (Unirse a la batalla): %(score)s éxitos", score=combat["score"])]
        return [_("Iniciativa: %(rating)s − %(penalty)s por heridas + el dado = %(score)s",
                  rating=combat["rating"], penalty=combat.get("penalty", 0), score=combat["score"])]
    if kind == "attack":
        return [_("Éxitos de más para el daño: %(n)s", n=combat.get("extra", 0))]
    if kind == "damage":
        dtype = damage_name(lang, DamageType(combat["damage"]))
        lines = [_("Daño %(type)s: %(base)s dados + %(extra)s éxitos de más del ataque",
                   type=dtype, base=combat["base"], extra=combat["extra"])]
        if combat.get("soak"):
            lines.append(_("Absorción restada de los dados: −%(n)s", n=combat["soak"]))
        if combat.get("minimum_applied"):
            lines.append(_("Al menos un dado de daño"))
        return lines
    if kind == "soak":
        net = combat.get("net") or {}
        return [_("Absorbe %(soaked)s de %(rolled)s éxitos de daño: pasan %(after)s",
                  soaked=net.get("soaked", 0), rolled=net.get("rolled", combat.get("damage_successes", 0)),
                  after=net.get("after_soak", 0))]
    return []


def _health_line(ruleset: str, lang: str, health: dict[str, Any]) -> str:
    """The target's health before → after, and whether it waits for a master."""
    from core.combat import Creature, HealthTrack
    from core.post.combat import health_words

    def track(marks: dict[str, Any]) -> HealthTrack:
        return HealthTrack(ruleset=ruleset, creature=Creature(marks["creature"]),
                           aggravated=int(marks["aggravated"]), lethal=int(marks["lethal"]),
                           bashing=int(marks["bashing"]), beyond=marks.get("beyond") or None)

    before, after = track(health["before"]), track(health["after"])
    if health.get("applied") == "pending":
        return _("Salud de %(who)s: %(before)s → %(after)s, pendiente de que un máster lo confirme",
                 who=health.get("character", "?"), before=health_words(lang, before),
                 after=health_words(lang, after))
    return _("Salud de %(who)s: %(before)s → %(after)s", who=health.get("character", "?"),
             before=health_words(lang, before), after=health_words(lang, after))


@bp.get("/keys")
def keys():
    """Published public keys: ``{"keys": {key_id: Ed25519 PEM}, "vrf_keys": {vrf_key_id: hex}}``
    (the VRF keys of secret rolls, raw 32 bytes as 64 hex digits; old ones stay listed)."""
    ks = deps.keystore()
    return jsonify(keys=ks.public_keys_pem(), vrf_keys={k: v.hex() for k, v in ks.vrf_public_keys().items()})
