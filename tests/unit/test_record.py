"""Signed roll records (issues 5 and 19): canonical JSON, ids, signatures, tampering, seeds,
secret rolls' VRF dice (format 2) and format-1 records still verifying."""

from __future__ import annotations

import copy
import hashlib
import json
from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from core import vrf
from core.derive import derive_faces, roll_key, secret_roll_seed
from core.errors import RulesError, VerificationError
from core.record import (
    FLAG_NAMES,
    RECORD_FIELDS,
    RECORD_FIELDS_V1,
    build_record,
    build_signed_record,
    canonical_json,
    commitment,
    key_id_for,
    keyed_roll_id,
    public_key_pem,
    public_keys_from_pem,
    record_hash,
    record_problems,
    roll_id,
    roll_nonce,
    sign_record,
    verify_signed,
    vrf_key_id_for,
    with_flags,
)

PRIVATE = Ed25519PrivateKey.from_private_bytes(bytes.fromhex("11" * 32))
KEY_ID = key_id_for(PRIVATE.public_key())
OTHER = Ed25519PrivateKey.from_private_bytes(bytes.fromhex("22" * 32))
OTHER_ID = key_id_for(OTHER.public_key())
KEYS = {KEY_ID: PRIVATE.public_key()}
SEED = bytes.fromhex("5e" * 32)
VRF_KEY = vrf.VrfSecretKey(bytes.fromhex("33" * 32))
VRF_ID = vrf_key_id_for(VRF_KEY.public_key)
VRF_KEYS = {VRF_ID: VRF_KEY.public_key}
WHEN = datetime(2027, 10, 31, 1, 30, tzinfo=UTC)  # the repeated hour in Madrid


def record_fields(**overrides):
    key = roll_key("noches", "flaskbb", "12", "345", 1)
    faces = overrides.pop("faces", None) or list(derive_faces(SEED, key, 6))
    fields = dict(  # noqa: C408 - keyword form mirrors build_record
        key_id=KEY_ID,
        game="noches",
        ruleset="vampiro",
        options={"botch_cancels": True, "max_dice": 30},
        forum="flaskbb",
        thread="12",
        post="345",
        post_url="https://foro.example/t/12#p345",
        author="Ana",
        character="Lucía Ortega",
        tag="[tirada Destreza+Pelea dif 6]",
        tag_index=1,
        params={"pool": 6, "difficulty": 6, "traits": ["Destreza", "Pelea"], "willpower": False},
        seed_commitment=commitment(SEED),
        faces=faces,
        successes=2,
        outcome="success",
        degree=2,
        processed_at=WHEN,
        tz="Europe/Madrid",
    )
    fields.update(overrides)
    return fields


def make_record(**overrides):
    return build_record(**record_fields(**overrides))


def secret_fields(**overrides):
    """A secret roll as the worker makes it: dice from the VRF output on the roll key."""
    key = roll_key("noches", "flaskbb", "12", "345", 1)
    pi, beta = VRF_KEY.output(key)
    fields = record_fields(faces=list(derive_faces(secret_roll_seed(beta), key, 6)), secret=True,
                           nonce="0f" * 16, vrf_key_id=VRF_ID, vrf_proof=pi.hex(),
                           tag="[tirada 6 dif 6 secreta]")
    fields.update(overrides)
    return fields


def make_secret(**overrides):
    return build_record(**secret_fields(**overrides))


def signed_record(**overrides):
    return sign_record(make_record(**overrides), PRIVATE, KEY_ID)


def failed(report):
    return {c.name for c in report.failures}


# ---------------------------------------------------------------------------- canonical JSON


def test_canonical_json_is_sorted_compact_utf8():
    assert canonical_json({"b": 1, "a": ["ñ", None, True], "c": {"z": "x", "y": -3}}) == (
        '{"a":["ñ",null,true],"b":1,"c":{"y":-3,"z":"x"}}'.encode()
    )


def test_canonical_json_escapes_only_quotes_backslash_and_controls():
    assert canonical_json(['"\\\n\t\x01\x7f€😀']) == '["\\"\\\\\\n\\t\\u0001\x7f€😀"]'.encode()


@pytest.mark.parametrize(
    "value",
    [1.0, float("nan"), float("inf"), {"a": 0.5}, {1: "x"}, {"ñ": 1}, 2**53, -(2**53),
     "\ud800", {1, 2}, b"bytes", object()],
)
def test_canonical_json_refuses_what_cannot_be_canonical(value):
    with pytest.raises(ValueError):
        canonical_json(value)


def test_canonical_json_accepts_the_safe_integer_range_and_tuples():
    assert canonical_json((2**53 - 1, -(2**53 - 1))) == b"[9007199254740991,-9007199254740991]"


@given(st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.text().filter(lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)),
    lambda inner: st.lists(inner) | st.dictionaries(
        st.text(alphabet=st.characters(max_codepoint=127)), inner),
))
def test_canonical_json_round_trips(value):
    data = canonical_json(value)
    assert canonical_json(json.loads(data)) == data


# ---------------------------------------------------------------------------- ids and hashes


def test_roll_id_is_base32_of_truncated_sha256():
    key = roll_key("noches", "flaskbb", "12", "345", 1)
    import base64

    assert roll_id(key) == base64.b32encode(hashlib.sha256(key).digest()[:10]).decode().lower()
    assert len(roll_id(key)) == 16 and roll_id(key) == roll_id(bytes(key))
    assert roll_id(roll_key("noches", "flaskbb", "12", "345", 2)) != roll_id(key)
    with pytest.raises(ValueError):
        roll_id(b"")


def test_a_keyed_roll_id_is_base32_of_sha256_of_the_key_and_the_nonce_keyed_with_the_secret():
    """Issue 25, item 6 (docs/verification.md §4), recomputed with the standard library."""
    import base64
    import hmac

    key = roll_key("noches", "flaskbb", "12", "345", 1)
    secret = bytes.fromhex("44" * 32)
    nonce = roll_nonce(secret, key)
    assert nonce == hmac.new(secret, b"narrador-roll-nonce-v1\x00" + key, hashlib.sha256).hexdigest()[:32]
    rid = keyed_roll_id(key, nonce)
    assert rid == base64.b32encode(hashlib.sha256(key + bytes.fromhex(nonce)).digest()[:10]).decode().lower()
    assert len(rid) == 16 and rid != roll_id(key)
    assert roll_nonce(secret, key) == nonce  # stable: the same post gets the same id
    assert roll_nonce(bytes.fromhex("55" * 32), key) != nonce  # another instance, another id
    for bad in (lambda: roll_nonce(b"short", key), lambda: roll_nonce(secret, b""),
                lambda: keyed_roll_id(key, "XY" * 16), lambda: keyed_roll_id(b"", nonce)):
        with pytest.raises(ValueError):
            bad()


def test_a_record_with_a_keyed_id_verifies_and_one_made_before_keeps_its_public_id():
    key = roll_key("noches", "flaskbb", "12", "345", 1)
    nonce = roll_nonce(bytes.fromhex("44" * 32), key)
    keyed = sign_record(make_record(nonce=nonce, keyed_id=True), PRIVATE, KEY_ID)
    assert keyed["record"]["roll_id"] == keyed_roll_id(key, nonce)
    report = verify_signed(keyed, KEYS, seed=SEED)
    assert report.ok and report.check("roll_id").ok, report.lines()
    before = signed_record()  # made before ids were keyed: no nonce, the public id
    assert before["record"]["nonce"] is None and verify_signed(before, KEYS, seed=SEED).check("roll_id").ok
    old_secret = sign_record(make_secret(), PRIVATE, KEY_ID)  # an old secret roll: a nonce, the public id
    assert old_secret["record"]["roll_id"] == roll_id(key)
    assert verify_signed(old_secret, KEYS, vrf_keys=VRF_KEYS).check("roll_id").ok
    # a re-signed lie: another nonce under the same id, or the public id's neighbour
    for lie in ({"nonce": "ab" * 16}, {"roll_id": roll_id(roll_key("noches", "flaskbb", "12", "345", 2))}):
        record = {**keyed["record"], **lie}
        report = verify_signed(sign_record(record, PRIVATE, KEY_ID), KEYS, seed=SEED)
        assert report.check("signature").ok and not report.check("roll_id").ok, (lie, report.lines())
    with pytest.raises(ValueError, match="nonce"):
        make_record(keyed_id=True)


def test_commitment_is_sha256_hex_of_the_seed():
    assert commitment(SEED) == hashlib.sha256(SEED).hexdigest()
    with pytest.raises(ValueError):
        commitment(b"short")


def test_key_id_is_sha256_of_the_raw_public_key():
    from cryptography.hazmat.primitives import serialization

    raw = PRIVATE.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    assert KEY_ID == hashlib.sha256(raw).hexdigest()[:16]


def test_public_keys_from_pem_reads_several_blocks_and_raw_hex():
    text = public_key_pem(PRIVATE.public_key()) + "\n" + public_key_pem(OTHER.public_key())
    assert set(public_keys_from_pem(text)) == {KEY_ID, OTHER_ID}
    from cryptography.hazmat.primitives import serialization

    raw = OTHER.public_key().public_bytes(serialization.Encoding.Raw,
                                          serialization.PublicFormat.Raw)
    assert set(public_keys_from_pem(raw.hex() + "\n")) == {OTHER_ID}
    for junk in ("", "hello", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"):
        with pytest.raises(VerificationError):
            public_keys_from_pem(junk)


# ---------------------------------------------------------------------------- building


def test_build_record_has_every_field_of_issue_5():
    record = make_record()
    assert tuple(sorted(record)) == tuple(sorted(RECORD_FIELDS))
    assert record["format"] == 2
    assert record["vrf_key_id"] is None and record["vrf_proof"] is None
    assert record["roll_id"] == roll_id(roll_key("noches", "flaskbb", "12", "345", 1))
    assert record["game_day"] == "2027-10-31"
    assert record["time_utc"] == "2027-10-31T01:30:00Z"
    assert record["time_local"] == "2027-10-31T02:30:00+01:00"
    assert record["flags"] == dict.fromkeys(FLAG_NAMES, False)
    assert record_problems(record) == []


def test_build_record_drops_microseconds_and_normalises_offsets():
    from zoneinfo import ZoneInfo

    moment = datetime(2027, 1, 5, 0, 30, 15, 999_999, tzinfo=ZoneInfo("Europe/Madrid"))
    record = make_record(processed_at=moment)
    assert record["time_utc"] == "2027-01-04T23:30:15Z"
    assert record["time_local"] == "2027-01-05T00:30:15+01:00"
    assert record["game_day"] == "2027-01-05"


@pytest.mark.parametrize(
    "overrides",
    [
        {"faces": [0, 3]},
        {"faces": [11]},
        {"seed_commitment": "abc"},
        {"key_id": "XYZ"},
        {"successes": 1.5},
        {"options": {"x": 0.5}},
        {"character": 3},
        {"secret": True},  # no nonce
        {"secret": True, "nonce": "zz" * 16},
        {"ruleset": ""},
    ],
)
def test_build_record_refuses_malformed_fields(overrides):
    with pytest.raises(ValueError):
        make_record(**overrides)


def test_with_flags_returns_a_new_record_and_keeps_the_result():
    record = make_record()
    edited = with_flags(record, edited_tag="[tirada Destreza+Pelea dif 4]")
    assert record["flags"]["edited_after_roll"] is False  # unchanged
    assert edited["flags"]["edited_after_roll"] is True
    assert edited["edited_tag"] == "[tirada Destreza+Pelea dif 4]"
    assert edited["faces"] == record["faces"] and edited["tag"] == record["tag"]
    deleted = with_flags(edited, post_deleted=True, rolled_again=True)
    assert deleted["flags"] == {"edited_after_roll": True, "post_deleted": True,
                                "rolled_again": True, "secret": False}
    assert verify_signed(sign_record(deleted, PRIVATE, KEY_ID), KEYS, seed=SEED).ok


# ---------------------------------------------------------------------------- signing


def test_sign_and_verify_round_trip_with_seed():
    signed = signed_record()
    assert set(signed) == {"record", "signature", "key_id"}
    assert len(signed["signature"]) == 128
    report = verify_signed(signed, KEYS, seed=SEED)
    assert report.ok, report.lines()
    assert report.roll_id == signed["record"]["roll_id"]
    assert [c.name for c in report.checks] == [
        "envelope", "format", "key_id", "signature", "roll_id", "game_day", "seed", "dice",
        "rules",
    ]
    assert report.check("dice").ok and report.check("rules").ok is None


def test_signature_is_over_canonical_json_and_survives_a_json_round_trip():
    signed = signed_record()
    PRIVATE.public_key().verify(bytes.fromhex(signed["signature"]),
                                canonical_json(signed["record"]))
    reloaded = json.loads(json.dumps(signed, indent=2, ensure_ascii=True))
    assert verify_signed(reloaded, KEYS, seed=SEED).ok


def test_signing_is_reproducible():
    assert signed_record() == signed_record()


def test_sign_record_refuses_a_mismatched_key_id():
    with pytest.raises(ValueError):
        sign_record(make_record(), PRIVATE, OTHER_ID)
    with pytest.raises(ValueError):
        sign_record(make_record(), OTHER, OTHER_ID)  # record names KEY_ID


def test_without_a_seed_dice_are_skipped_but_the_record_verifies():
    report = verify_signed(signed_record(), KEYS)
    assert report.ok
    assert report.check("seed").ok is None and report.check("dice").ok is None


def test_without_public_keys_the_report_is_not_ok():
    report = verify_signed(signed_record(), {}, seed=SEED)
    assert not report.ok and not report.failures
    assert report.check("signature").ok is None and report.check("dice").ok


# ---------------------------------------------------------------------------- tampering


def _other_value(name, value):
    if name == "flags":
        return {**value, "post_deleted": not value["post_deleted"]}
    if name in ("options", "params"):
        return {**value, "extra": 1}
    if name == "faces":
        return [value[0] % 10 + 1, *value[1:]]
    if name in ("nonce",):
        return "ab" * 16
    if name in ("vrf_key_id",):
        return "1" * 16
    if name in ("vrf_proof",):
        return "ab" * 80
    if name == "edited_tag":
        return "[tirada 1]"
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if name in ("roll_id",):
        return "a" * 16
    if name in ("key_id",):
        return "0" * 16
    if name in ("seed_commitment",):
        return "0" * 64
    if name == "game_day":
        return "2027-10-30"
    if name == "time_utc":
        return "2027-10-31T01:31:00Z"
    if name == "time_local":
        return "2027-10-31T02:31:00+01:00"
    if name == "tz":
        return "Europe/Lisbon"
    return value + "x"


@pytest.mark.parametrize("name", RECORD_FIELDS)
def test_tampering_with_any_field_is_reported(name):
    signed = signed_record()
    tampered = copy.deepcopy(signed)
    tampered["record"][name] = _other_value(name, tampered["record"][name])
    assert tampered["record"] != signed["record"]
    report = verify_signed(tampered, KEYS, seed=SEED)
    assert not report.ok
    assert "signature" in failed(report), report.lines()


@pytest.mark.parametrize("name", ["faces", "successes", "outcome", "post", "tag_index",
                                  "game_day", "roll_id"])
def test_a_resigned_lie_is_caught_by_the_other_checks(name):
    # the server's own key signed a record that does not follow from its inputs
    record = make_record()
    record[name] = _other_value(name, record[name])
    signed = sign_record(record, PRIVATE, KEY_ID)

    def rules(rec):
        return {"successes": 2, "outcome": "success"}

    report = verify_signed(signed, KEYS, seed=SEED, recompute=rules)
    assert report.check("signature").ok
    assert not report.ok
    assert failed(report) & {"dice", "rules", "roll_id", "game_day"}, report.lines()


def test_tampered_signature_and_envelope():
    signed = signed_record()
    bad = dict(signed, signature=("0" if signed["signature"][0] != "0" else "1")
               + signed["signature"][1:])
    assert failed(verify_signed(bad, KEYS)) == {"signature"}
    for broken in ({**signed, "signature": "zz"}, {**signed, "record": "x"},
                   {"record": signed["record"]}, {}):
        report = verify_signed(broken, KEYS)
        assert failed(report) == {"envelope"} and not report.ok


def test_wrong_key_is_reported():
    signed = signed_record()
    report = verify_signed(signed, {OTHER_ID: OTHER.public_key()}, seed=SEED)
    assert failed(report) == {"key_id"} and report.check("signature").ok is None
    # a key published under a wrong id
    report = verify_signed(signed, {KEY_ID: OTHER.public_key()})
    assert "key_id" in failed(report)


def test_record_signed_by_another_key_claiming_our_id_is_reported():
    record = make_record()
    forged = {"record": record, "signature": OTHER.sign(canonical_json(record)).hex(),
              "key_id": KEY_ID}
    assert failed(verify_signed(forged, KEYS)) == {"signature"}


def test_envelope_and_record_key_ids_must_agree():
    record = make_record(key_id=OTHER_ID)
    signed = sign_record(record, OTHER, OTHER_ID)
    signed["key_id"] = KEY_ID
    keys = {KEY_ID: PRIVATE.public_key(), OTHER_ID: OTHER.public_key()}
    assert "key_id" in failed(verify_signed(signed, keys))


def test_wrong_seed_is_reported_and_dice_are_not_checked():
    report = verify_signed(signed_record(), KEYS, seed=bytes(32))
    assert failed(report) == {"seed"}
    assert report.check("dice").ok is None
    report = verify_signed(signed_record(), KEYS, seed=b"short")
    assert failed(report) == {"seed"}


def test_rules_recomputation_failures_are_reported():
    def broken(rec):
        raise RulesError("unknown ruleset", code="unknown_ruleset")

    report = verify_signed(signed_record(), KEYS, seed=SEED, recompute=broken)
    assert failed(report) == {"rules"}
    report = verify_signed(signed_record(), KEYS, seed=SEED,
                           recompute=lambda rec: {"successes": 3, "degree": 2})
    assert failed(report) == {"rules"}
    assert "successes" in report.check("rules").reason


@pytest.mark.parametrize(
    "call",
    [
        lambda: verify_signed("not a mapping", KEYS),  # type: ignore[arg-type]
        lambda: verify_signed({}, {KEY_ID: "pem text"}),  # type: ignore[dict-item]
        lambda: verify_signed({}, KEYS, seed="00" * 32),  # type: ignore[arg-type]
        lambda: verify_signed({}, KEYS, recompute=3),  # type: ignore[arg-type]
    ],
)
def test_unusable_input_raises_verification_error(call):
    with pytest.raises(VerificationError):
        call()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.sampled_from(RECORD_FIELDS), json_values), json_values, json_values)
@settings(max_examples=200)
def test_garbage_is_reported_never_raised(record_fields, signature, key_id):
    base = make_record()
    record = {**base, **record_fields}
    report = verify_signed({"record": record, "signature": signature, "key_id": key_id},
                           KEYS, seed=SEED)
    assert not report.ok


@given(st.dictionaries(st.sampled_from(RECORD_FIELDS), json_values))
@settings(max_examples=200)
def test_garbage_records_with_a_valid_envelope_are_reported(fields):
    signed = signed_record()
    signed["record"] = {**signed["record"], **fields}
    report = verify_signed(signed, KEYS, seed=SEED)
    # compared as JSON text, not as dicts: in Python True == 1, so {"format": True} would
    # look unchanged (found by review: Hypothesis example fields={"format": True})
    def text(value):
        return json.dumps(value, sort_keys=True, default=repr)

    assert report.ok == (text(signed["record"]) == text(make_record()))


def test_a_boolean_where_an_integer_was_signed_is_tampering():
    signed = signed_record()
    signed["record"] = {**signed["record"], "format": True}
    assert not verify_signed(signed, KEYS, seed=SEED).ok


# ---------------------------------------------------------------------------- secret rolls


def test_secret_roll_hash_commits_to_the_roll():
    from core.record import committed_part

    record = make_secret()
    published = record_hash(record)
    assert published == hashlib.sha256(canonical_json(committed_part(record))).hexdigest()
    assert set(committed_part(record)) == set(record) - {"edited_tag", "key_id"}
    assert "vrf_proof" in committed_part(record)  # the proof is part of what the reply commits to
    signed = sign_record(record, PRIVATE, KEY_ID)
    report = verify_signed(signed, KEYS, seed=SEED, expected_hash=published, vrf_keys=VRF_KEYS)
    assert report.ok and report.check("secret_hash").ok and report.check("vrf").ok
    other = sign_record(make_secret(nonce="1f" * 16), PRIVATE, KEY_ID)
    assert failed(verify_signed(other, KEYS, expected_hash=published)) == {"secret_hash"}


def test_secret_record_without_nonce_cannot_be_hashed():
    record = make_record()
    record["flags"]["secret"] = True
    with pytest.raises(ValueError):
        record_hash(record)


def test_secret_commitment_survives_flags_edits_and_key_rotation():
    """Regression (review): re-signing a flagged secret record changed its published hash."""
    from core.record import with_flags

    record = make_secret()
    published = record_hash(record)
    flagged = with_flags(record, edited_tag="[tirada]9[/tirada]", post_deleted=True, rolled_again=True)
    flagged["key_id"] = "0123456789abcdef"
    assert record_hash(flagged) == published
    changed = dict(record, successes=int(record["successes"]) + 1)
    assert record_hash(changed) != published


def test_build_signed_record_is_build_then_sign_in_one_pass():
    # Ed25519 is deterministic: the one-pass envelope is byte for byte the two-step one
    assert build_signed_record(PRIVATE, **record_fields()) == signed_record()
    flagged = build_signed_record(PRIVATE, **record_fields(rolled_again=True))
    assert flagged == sign_record(with_flags(make_record(), rolled_again=True), PRIVATE, KEY_ID)
    assert verify_signed(flagged, KEYS, seed=SEED).ok


def test_build_signed_record_refuses_a_key_that_is_not_the_records():
    with pytest.raises(ValueError, match="is not the id of this key"):
        build_signed_record(OTHER, **record_fields())
    with pytest.raises(ValueError, match="invalid roll record: faces"):
        build_signed_record(PRIVATE, **record_fields(faces=[0, 11]))
    with pytest.raises(ValueError, match="not canonical JSON"):
        build_signed_record(PRIVATE, **record_fields(params={"pool": 1.5}))


def test_record_problems_lists_the_json_problems_beside_the_others():
    record = make_record()
    record["faces"] = [0]
    record["params"] = {"x": 1.5}
    problems = record_problems(record)
    assert problems[0] == "faces: every face must be an int from 1 to 10"
    assert problems[1].startswith("not canonical JSON: $.params.x: floats are not allowed")


def test_a_value_too_large_for_the_fast_check_is_checked_the_careful_way():
    from core import record as records

    big = list(range(records._PLAIN_JSON_NODES + 10))
    assert canonical_json(big) == json.dumps(big, separators=(",", ":")).encode()
    with pytest.raises(ValueError, match=r"\$\[100009\]: floats"):
        canonical_json([*big[:-1], 0.5])


# ---------------------------------------------------------------------------- format 2: VRF dice


def test_secret_dice_come_from_the_vrf_not_the_day_seed():
    signed = sign_record(make_secret(), PRIVATE, KEY_ID)
    report = verify_signed(signed, KEYS, seed=SEED, vrf_keys=VRF_KEYS)
    assert report.ok, report.lines()
    assert report.check("vrf").ok and report.check("dice").ok and report.check("seed").ok
    assert "VRF output" in report.check("dice").reason
    key = roll_key("noches", "flaskbb", "12", "345", 1)
    assert signed["record"]["faces"] != list(derive_faces(SEED, key, 6))  # the day seed does not give them


def test_secret_dice_are_not_checked_without_the_vrf_key():
    signed = sign_record(make_secret(), PRIVATE, KEY_ID)
    report = verify_signed(signed, KEYS, seed=SEED)
    assert report.ok  # nothing failed, the signature holds
    assert report.check("vrf").ok is None and report.check("dice").ok is None


def test_a_signed_secret_record_whose_faces_are_not_the_vrfs_fails():
    lie = make_secret(faces=[10, 10, 10, 10, 10, 10])
    report = verify_signed(sign_record(lie, PRIVATE, KEY_ID), KEYS, vrf_keys=VRF_KEYS)
    assert failed(report) == {"dice"}


@pytest.mark.parametrize("change", ["proof", "key", "other_post"])
def test_a_proof_that_does_not_hold_is_reported(change):
    other = vrf.VrfSecretKey(bytes.fromhex("44" * 32))
    other_id = vrf_key_id_for(other.public_key)
    fields = secret_fields()
    if change == "proof":
        proof = bytearray(bytes.fromhex(fields["vrf_proof"]))
        proof[40] ^= 1
        fields["vrf_proof"] = proof.hex()
        keys = VRF_KEYS
    elif change == "key":  # a proof made with another key, claimed for ours
        fields["vrf_proof"] = other.prove(roll_key("noches", "flaskbb", "12", "345", 1)).hex()
        keys = VRF_KEYS
    else:  # the proof of another roll key (another post)
        fields["vrf_proof"] = VRF_KEY.prove(roll_key("noches", "flaskbb", "12", "346", 1)).hex()
        keys = {**VRF_KEYS, other_id: other.public_key}
    report = verify_signed(sign_record(build_record(**fields), PRIVATE, KEY_ID), KEYS, vrf_keys=keys)
    assert failed(report) == {"vrf"}
    assert report.check("dice").ok is None


def test_unknown_or_mislabelled_vrf_keys_fail():
    signed = sign_record(make_secret(), PRIVATE, KEY_ID)
    other = vrf.VrfSecretKey(bytes.fromhex("44" * 32)).public_key
    assert failed(verify_signed(signed, KEYS, vrf_keys={vrf_key_id_for(other): other})) == {"vrf"}
    assert failed(verify_signed(signed, KEYS, vrf_keys={VRF_ID: other})) == {"vrf"}


def test_format_2_shapes_of_the_vrf_fields():
    assert record_problems(make_secret()) == []
    with pytest.raises(ValueError, match="vrf_proof: a secret record needs 160 hex digits"):
        make_secret(vrf_proof=None)
    with pytest.raises(ValueError, match="vrf_key_id: a secret record needs 16 hex digits"):
        make_secret(vrf_key_id="XY")
    with pytest.raises(ValueError, match="must be null in a public record"):
        make_record(vrf_key_id=VRF_ID)


def test_the_published_day_binds_the_commitment_and_the_vrf_key():
    signed = sign_record(make_secret(), PRIVATE, KEY_ID)
    entry = {"day": "2027-10-31", "commitment": commitment(SEED), "revealed_seed": None, "vrf_key_id": VRF_ID}
    report = verify_signed(signed, KEYS, vrf_keys=VRF_KEYS, published_day=entry)
    assert report.ok and report.check("published_day").ok
    for wrong in ({"vrf_key_id": "0" * 16}, {"commitment": "0" * 64}, {"day": "2027-10-30"}):
        report = verify_signed(signed, KEYS, vrf_keys=VRF_KEYS, published_day={**entry, **wrong})
        assert failed(report) == {"published_day"}, wrong
    public = verify_signed(signed_record(), KEYS, published_day={**entry, "vrf_key_id": None})
    assert public.check("published_day").ok  # a public roll is bound by the commitment alone
    with pytest.raises(VerificationError):
        verify_signed(signed, KEYS, published_day=[entry])  # type: ignore[arg-type]
    with pytest.raises(VerificationError):
        verify_signed(signed, KEYS, vrf_keys={VRF_ID: VRF_KEY.public_key.hex()})  # type: ignore[dict-item]


# ---------------------------------------------------------------------------- format 1 still verifies


def _format_1(record):
    old = {k: v for k, v in record.items() if k in RECORD_FIELDS_V1}
    old["format"] = 1
    return old


def test_format_1_records_verify_secret_ones_from_the_day_seed():
    public = _format_1(make_record())
    assert record_problems(public) == []
    assert verify_signed(sign_record(public, PRIVATE, KEY_ID), KEYS, seed=SEED).ok
    secret = _format_1(make_record(secret=False))
    secret["flags"] = {**secret["flags"], "secret": True}
    secret["nonce"] = "0f" * 16
    report = verify_signed(sign_record(secret, PRIVATE, KEY_ID), KEYS, seed=SEED,
                           expected_hash=record_hash(secret), vrf_keys=VRF_KEYS)
    assert report.ok and report.check("dice").ok and report.check("vrf") is None
    assert "day seed" in report.check("dice").reason
    flagged = with_flags(secret, post_deleted=True)  # flags keep the format it was made in
    assert flagged["format"] == 1 and record_problems(flagged) == []


def test_formats_do_not_mix():
    public = _format_1(make_record())
    public["vrf_key_id"] = None
    public["vrf_proof"] = None
    assert record_problems(public) == ["unknown fields: vrf_key_id, vrf_proof"]
    current = make_record()
    del current["vrf_proof"]
    assert record_problems(current) == ["missing fields: vrf_proof"]
    assert record_problems({**make_record(), "format": 3}) == ["format: unsupported version 3"]


# ---------------------------------------------------------------------------- review of issue 19


def _rules_consistent(record):
    """The record with the result the rules give for its faces (a lie a server could sign)."""
    from core.record import recompute_with_rules

    out = dict(record, options={})
    out.update(recompute_with_rules(out))
    return out


def _bound_day(**extra):
    return {"day": "2027-10-31", "commitment": commitment(SEED), "revealed_seed": SEED.hex(),
            "vrf_key_id": VRF_ID, **extra}


def test_a_secret_roll_signed_as_format_1_on_a_day_bound_to_a_vrf_key_is_refused():
    """The downgrade: on a day whose VRF key was published, a server that could sign a secret
    roll either as format 2 (VRF dice) or as format 1 (day-seed dice) would pick whichever
    outcome it liked.  Format 1 is only for days with no VRF key."""
    from core.record import recompute_with_rules

    key = roll_key("noches", "flaskbb", "12", "345", 1)
    honest = _rules_consistent(make_secret())
    downgraded = {k: v for k, v in honest.items() if k in RECORD_FIELDS_V1}
    downgraded["format"] = 1
    downgraded["faces"] = list(derive_faces(SEED, key, 6))
    downgraded = _rules_consistent(downgraded)
    assert (honest["successes"], honest["outcome"]) != (downgraded["successes"], downgraded["outcome"])
    signed = sign_record(downgraded, PRIVATE, KEY_ID)
    report = verify_signed(signed, KEYS, seed=SEED, vrf_keys=VRF_KEYS, published_day=_bound_day(),
                           recompute=recompute_with_rules, expected_hash=record_hash(downgraded))
    assert failed(report) == {"published_day"}
    assert "format 1" in report.check("published_day").reason
    # a format-1 secret roll of a day that has no VRF key (made before issue 19) still verifies
    old_day = verify_signed(signed, KEYS, seed=SEED, published_day=_bound_day(vrf_key_id=None),
                            recompute=recompute_with_rules)
    assert old_day.ok and old_day.check("published_day").ok and old_day.check("dice").ok
    # and a public format-1 roll on a bound day draws the same dice either way: no choice there
    public = _format_1(make_record())
    assert verify_signed(sign_record(public, PRIVATE, KEY_ID), KEYS, seed=SEED, published_day=_bound_day()).ok


def test_without_the_days_listing_a_secret_rolls_vrf_key_binding_is_reported_unchecked():
    """Any VRF key on /keys makes a valid proof; only the day's listing says which key was
    the day's.  Without it the check is not silently passed: it is reported as skipped."""
    other = vrf.VrfSecretKey(bytes.fromhex("44" * 32))
    other_id = vrf_key_id_for(other.public_key)
    key = roll_key("noches", "flaskbb", "12", "345", 1)
    pi, beta = other.output(key)
    chosen = make_secret(vrf_key_id=other_id, vrf_proof=pi.hex(),
                         faces=list(derive_faces(secret_roll_seed(beta), key, 6)))
    signed = sign_record(chosen, PRIVATE, KEY_ID)
    both = {**VRF_KEYS, other_id: other.public_key}
    unchecked = verify_signed(signed, KEYS, vrf_keys=both)
    assert unchecked.check("vrf").ok and unchecked.check("published_day").ok is None
    assert "/seeds" in unchecked.check("published_day").reason
    assert failed(verify_signed(signed, KEYS, vrf_keys=both, published_day=_bound_day())) == {"published_day"}
    # a public roll's dice do not depend on any key: nothing to report for it
    assert verify_signed(signed_record(), KEYS, seed=SEED).check("published_day") is None


def test_the_replys_short_commitment_is_enough_to_check_a_revealed_roll():
    """The reply is the only copy of the commitment that Narrador does not serve itself; a
    revealed record is checked against however many of its hex digits the reply shows
    (16 in replies made before the review, all 64 since)."""
    secret = make_secret()
    signed = sign_record(secret, PRIVATE, KEY_ID)
    full = record_hash(secret)
    for shown in (full, full[:32], full[:16]):
        report = verify_signed(signed, KEYS, vrf_keys=VRF_KEYS, expected_hash=shown)
        assert report.ok and report.check("secret_hash").ok, shown
        assert f"{len(shown)} hex digits" in report.check("secret_hash").reason
    other = record_hash(make_secret(nonce="1e" * 16))
    assert failed(verify_signed(signed, KEYS, vrf_keys=VRF_KEYS, expected_hash=other[:16])) == {"secret_hash"}
    for unusable in ("", full[:15], full.upper(), full + "0", "xyz"):
        with pytest.raises(VerificationError, match="hex digits"):
            verify_signed(signed, KEYS, expected_hash=unusable)
