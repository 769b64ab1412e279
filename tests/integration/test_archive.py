"""Issue 18, item 4: an archive that outlives Redis.

Export → wipe every record key → import restores the audit history exactly (the audit page,
its JSON export, CSV and statistics, and ``/v/<id>`` of every roll, a revealed secret roll
included); the archive job writes each closed day once, again when a record changes, and
never empties a day Redis lost; an import verifies every line and refuses a tampered file
whole (exit code 2, the line named)."""

from __future__ import annotations

import json
import re
import stat
from datetime import date, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import FIXED_NOW, redis_url
from tests.integration.test_web_helpers import app_config, login, resign, seed_game, web_settings
from web import create_app
from worker.adapters.redis.archive import RedisRollRecords
from worker.adapters.redis.store import game_rolls_key, roll_key_name
from worker.app.cli import main
from worker.service import archive, archive_import, archive_targets

pytestmark = pytest.mark.integration

_CSRF = re.compile(r'(name="csrf_token"[^>]*value=")[^"]+"|(<meta name="csrf-token" content=")[^"]+"')


@pytest.fixture
def world(tmp_path, unique, redis_client, cleanup_keys):
    settings = web_settings(tmp_path, unique)
    seeded = seed_game(settings, redis_client, unique)
    ids = seeded["ids"]
    seeded["masters"].reveal(ids["secret"], f"ana-{unique}")
    app = create_app(app_config(settings, seeded["store"], seeded["keystore"], unique))
    config = tmp_path / "narrador.toml"
    config.write_text(_toml(settings, unique), encoding="utf-8")
    return {"app": app, "settings": settings, "u": unique, "config": str(config), "tmp": tmp_path, **seeded}


def _toml(settings, unique: str) -> str:
    forums = "\n".join(
        f'[forums.{name}]\nkind = "flaskbb"\nbase_url = "http://forum.invalid"\nusername = "narrador"\n'
        f'password = "x"\ngame = "{fs.game}"\n' for name, fs in settings.forums.items())
    games = "\n".join(f'[games.{gid}]\nruleset = "vampiro"\nlanguage = "{g.language}"\ntitle = "{g.title}"\n'
                      for gid, g in settings.games.items())
    return (f'[narrador]\ninstance_dir = "{settings.instance_dir}"\nredis_url = "{redis_url()}"\n'
            f'public_url = "https://narrador.test"\n\n{games}\n{forums}')


def _ids(redis_client, game: str) -> list[str]:
    return redis_client.zrange(game_rolls_key(game), 0, -1)


def _snapshot(world, roll_ids: list[str]) -> dict[str, str]:
    """Every page that shows the game's rolls, as text (CSRF tokens, which change per request, blanked)."""
    game, u = world["ids"]["game"], world["u"]
    pages = {}
    public = world["app"].test_client()
    for rid in roll_ids:
        pages[f"/v/{rid}"] = public.get(f"/v/{rid}").get_data(as_text=True)
        pages[f"/v/{rid}.json"] = public.get(f"/v/{rid}.json").get_data(as_text=True)
    master = world["app"].test_client()
    assert login(master, f"ana-{u}").status_code == 302
    for path in (f"/audit/{game}", f"/audit/{game}/export.json", f"/audit/{game}/export.csv",
                 f"/audit/{game}/stats", f"/audit/{game}?author=jugadora"):
        resp = master.get(path)
        assert resp.status_code == 200, path
        pages[path] = resp.get_data(as_text=True)
    return {k: _CSRF.sub(lambda m: (m.group(1) or m.group(2)) + '"', v) for k, v in pages.items()}


def _wipe_records(redis_client, game: str, roll_ids: list[str]) -> None:
    """Delete every record key of the game: the records, all its roll indexes, the reveals."""
    keys = [roll_key_name(r) for r in roll_ids] + [f"nr:reveal:{{{r}}}" for r in roll_ids]
    keys += list(redis_client.scan_iter(match=f"nr:game:{{{game}}}:rolls*", count=1000))
    redis_client.delete(*keys)
    assert not redis_client.exists(*keys)


def test_export_wipe_import_restores_the_audit_history_exactly(world, redis_client):
    game = world["ids"]["game"]
    roll_ids = _ids(redis_client, game)
    assert len(roll_ids) == 5
    before = _snapshot(world, roll_ids)
    assert '"faces"' in before[f"/v/{world['ids']['secret']}.json"]  # the revealed secret roll, in full
    runner = CliRunner()
    exported = runner.invoke(main, ["records", "export", game, "-c", world["config"]])
    assert exported.exit_code == 0, exported.output
    lines = [line for line in exported.stdout.splitlines() if line]
    assert len(lines) == 5 and "5 records exported" in exported.stderr
    assert [json.loads(line)["envelope"]["record"]["roll_id"] for line in lines] == roll_ids  # index order
    path = world["tmp"] / "noches.jsonl"
    path.write_text(exported.stdout, encoding="utf-8")

    _wipe_records(redis_client, game, roll_ids)
    assert world["app"].test_client().get(f"/v/{roll_ids[0]}").status_code == 404

    result = runner.invoke(main, ["records", "import", str(path), "-c", world["config"]])
    assert result.exit_code == 0, result.output
    assert "5 lines verified; 5 records added, 0 already there" in result.output
    assert "1 reveals added" in result.output
    after = _snapshot(world, roll_ids)
    assert after.keys() == before.keys()
    for page in before:
        assert after[page] == before[page], page
    again = runner.invoke(main, ["records", "import", str(path), "-c", world["config"]])
    assert again.exit_code == 0 and "0 records added, 5 already there" in again.output  # idempotent


def test_a_reveal_that_narrador_did_not_seal_is_not_taken(world, redis_client):
    """Issue 25, item 6: an archive line of an unrevealed secret roll, edited to say
    "revealed": {"by": "mallory"}, imported as "1 reveals added" and published the roll,
    credited to mallory. A reveal is taken only with its seal (Ed25519 by a published key,
    over the reveal and the record: core.record.reveal)."""
    game, secret = world["ids"]["game"], world["ids"]["secret"]
    roll_ids = _ids(redis_client, game)
    exported = CliRunner().invoke(main, ["records", "export", game, "-c", world["config"]])
    lines = [json.loads(line) for line in exported.stdout.splitlines() if line]
    sealed = next(x for x in lines if x["envelope"]["record"]["roll_id"] == secret)
    assert sealed["revealed"]["by"] == f"ana-{world['u']}" and len(sealed["revealed"]["seal"]) == 128

    def import_with(revealed):  # type: ignore[no-untyped-def]
        _wipe_records(redis_client, game, roll_ids)
        path = world["tmp"] / "edited.jsonl"
        path.write_text(json.dumps({**sealed, "revealed": revealed}) + "\n", encoding="utf-8")
        result = CliRunner().invoke(main, ["records", "import", str(path), "-c", world["config"]])
        assert result.exit_code == 0, result.output
        return result, redis_client.hgetall(f"nr:reveal:{{{secret}}}")

    for forged in ({"by": "mallory", "at": "2026-11-29T20:00:00+00:00", "how": "master"},  # no seal
                   {**sealed["revealed"], "by": "mallory"},  # the seal of another reveal
                   {**sealed["revealed"], "seal": "0" * 128}):  # a made-up seal
        result, stored = import_with(forged)
        assert stored == {} and "1 records added" in result.output and "0 reveals added" in result.output
        assert "1 reveals not proved (left secret)" in result.output
        assert "its reveal is not sealed by a published key" in result.stderr
        page = world["app"].test_client().get(f"/v/{secret}.json").get_json()
        assert page["secret"] is True and page["revealed"] is False and "record" not in page  # still secret
    result, stored = import_with(sealed["revealed"])  # Narrador's own
    assert "1 reveals added" in result.output and stored["by"] == f"ana-{world['u']}"
    page = world["app"].test_client().get(f"/v/{secret}.json").get_json()
    assert page["record"]["faces"]  # public again, as before the wipe
    assert set(stored) == {"by", "at", "how"}  # the seal is the archive's, not the live state's


def test_export_since_a_day(world, redis_client):
    game = world["ids"]["game"]
    old_day = (FIXED_NOW - timedelta(days=2)).date().isoformat()
    lines = list(archive.export_lines(RedisRollRecords(redis_client), game, since=FIXED_NOW.date()))
    assert len(lines) == 4
    assert all(json.loads(x)["envelope"]["record"]["game_day"] != old_day for x in lines)
    bad = CliRunner().invoke(main, ["records", "export", game, "--since", "ayer", "-c", world["config"]])
    assert bad.exit_code == 2 and "--since must be a date" in bad.output


def test_a_tampered_line_is_refused_and_nothing_is_imported(world, redis_client):
    game = world["ids"]["game"]
    roll_ids = _ids(redis_client, game)
    lines = list(archive.export_lines(RedisRollRecords(redis_client), game))
    data = json.loads(lines[2])
    data["envelope"]["record"]["successes"] += 3  # a better result than the dice gave
    lines[2] = json.dumps(data, ensure_ascii=False)
    lines.insert(4, "not json at all")
    path = world["tmp"] / "tampered.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _wipe_records(redis_client, game, roll_ids)
    result = CliRunner().invoke(main, ["records", "import", str(path), "-c", world["config"]])
    assert result.exit_code == 2
    assert f"{path}:3: roll {data['envelope']['record']['roll_id']}: signature: " in result.stderr
    assert f"{path}:5: not JSON" in result.stderr
    assert "2 line(s) refused (tampered or not Narrador records): nothing imported" in result.stderr
    assert "Traceback" not in result.output
    assert redis_client.zcard(game_rolls_key(game)) == 0 and not redis_client.exists(roll_key_name(roll_ids[0]))


def test_a_line_of_json_nested_too_deeply_is_refused_in_one_line_through_the_command(world, redis_client):
    """Issue 25, item 6: 100,000 "[" fed to `records import` ended in "internal error:
    RecursionError ... please report it", exit 1. Through the command itself (the parser's
    own test is tests/unit/test_cli_errors.py): exit 2, the line refused in one line naming
    it, nothing imported, no traceback."""
    game = world["ids"]["game"]
    roll_ids = _ids(redis_client, game)
    good = next(archive.export_lines(RedisRollRecords(redis_client), game))
    path = world["tmp"] / "deep.jsonl"
    path.write_text(good + "\n" + "[" * 100_000 + "\n", encoding="utf-8")
    _wipe_records(redis_client, game, roll_ids)
    result = CliRunner().invoke(main, ["records", "import", str(path), "-c", world["config"]],
                                env={"NARRADOR_DEBUG": ""})
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert [line for line in lines if line.startswith(str(path))] == [f"{path}:2: JSON nested too deeply"], lines
    assert lines[-1].endswith("1 line(s) refused (tampered or not Narrador records): nothing imported"), lines
    assert len(lines) == 2 and result.stdout == ""
    assert "internal error" not in result.output and "RecursionError" not in result.output
    assert "Traceback" not in result.output
    assert redis_client.zcard(game_rolls_key(game)) == 0  # the good line was not imported either


def test_a_record_under_a_key_that_was_never_published_is_refused(world, redis_client, tmp_path):
    from core.record import sign_record
    from worker.adapters.files.keystore import Keystore

    game = world["ids"]["game"]
    line = json.loads(next(archive.export_lines(RedisRollRecords(redis_client), game)))
    forger = Keystore(tmp_path / "forger")
    forger.init_keys()
    kid, key = forger.active_signing_key()
    line["envelope"] = sign_record(dict(line["envelope"]["record"], key_id=kid), key, kid)
    path = tmp_path / "forged.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["records", "import", str(path), "-c", world["config"]])
    assert result.exit_code == 2 and "key_id: " in result.stderr


def test_the_archive_job_writes_closed_days_once_and_again_when_a_record_changes(world, redis_client):
    game = world["ids"]["game"]
    settings = world["settings"]
    target = archive_targets.FolderArchive(world["tmp"] / "archive")
    roll_ids = _ids(redis_client, game)
    seal = world["keystore"].active_signing_key()  # what the worker's archive job passes
    today, old = FIXED_NOW.date(), (FIXED_NOW - timedelta(days=2)).date()

    # the evening of FIXED_NOW's day: only the older day is closed
    written = archive.archive_tick(RedisRollRecords(redis_client), settings, target, FIXED_NOW + timedelta(hours=1), sealer=seal)
    assert written == {game: [old]}
    # the next day, after midnight plus the hour of grace: the day of the other four closes
    later = FIXED_NOW + timedelta(days=1)
    assert archive.archive_tick(RedisRollRecords(redis_client), settings, target, later, sealer=seal) == {
        game: [today], world["ids"]["other"]: [today]}
    assert archive.archive_tick(RedisRollRecords(redis_client), settings, target, later, sealer=seal) == {}  # nothing changed
    day_file = target.root / game / f"{today.isoformat()}.jsonl"
    assert stat.S_IMODE(day_file.stat().st_mode) == 0o600
    assert stat.S_IMODE((target.root / game).stat().st_mode) == 0o700
    assert len(day_file.read_text().splitlines()) == 4

    # an edit flag re-signs a record of a closed day: that day is written again
    resign(world["store"], world["keystore"], world["ids"]["plain"], flags={"edited_after_roll": True})
    world["store"].replace_roll(world["store"].get_roll(world["ids"]["plain"]))
    assert archive.archive_tick(RedisRollRecords(redis_client), settings, target, later, sealer=seal) == {game: [today]}
    lines = [json.loads(x) for x in day_file.read_text().splitlines()]
    plain = next(x for x in lines if x["envelope"]["record"]["roll_id"] == world["ids"]["plain"])
    assert plain["envelope"]["record"]["flags"]["edited_after_roll"] is True

    # Redis loses the records: the archive keeps them (it only grows), and restores them
    _wipe_records(redis_client, game, roll_ids)
    assert archive.archive_tick(RedisRollRecords(redis_client), settings, target, later + timedelta(days=1), sealer=seal) == {}
    assert len(day_file.read_text().splitlines()) == 4
    keystore = world["keystore"]
    entries = archive_import.read_archive([target.root], public_keys=keystore.public_keys(),
                                   vrf_keys=keystore.vrf_public_keys(), keystore=keystore)
    report = archive_import.import_entries(RedisRollRecords(redis_client), entries)
    assert (report.added, report.reveals) == (5, 1)
    assert sorted(_ids(redis_client, game)) == sorted(roll_ids)
    assert world["store"].get_roll(world["ids"]["plain"])["record"]["flags"]["edited_after_roll"] is True


def test_the_archive_job_in_an_s3_compatible_bucket(world, redis_client, tmp_path):
    """The bucket target against a real S3-compatible server on loopback (moto's)."""
    boto3 = pytest.importorskip("boto3")
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        client = boto3.client("s3", endpoint_url=f"http://{host}:{port}", region_name="us-east-1",
                              aws_access_key_id="narrador-test", aws_secret_access_key="narrador-test")
        client.create_bucket(Bucket="narrador-archive")
        target = archive_targets.S3Archive("narrador-archive", prefix="cronicas/", client=client)
        game = world["ids"]["game"]
        written = archive.archive_tick(RedisRollRecords(redis_client), world["settings"], target, FIXED_NOW + timedelta(days=1))
        assert written[game] == [(FIXED_NOW - timedelta(days=2)).date(), FIXED_NOW.date()]
        names = sorted(o["Key"] for o in client.list_objects_v2(Bucket="narrador-archive", Prefix=f"cronicas/{game}/")["Contents"])
        assert names == [f"cronicas/{game}/{d}.jsonl" for d in
                         ((FIXED_NOW - timedelta(days=2)).date().isoformat(), FIXED_NOW.date().isoformat())]
        roll_ids = _ids(redis_client, game)
        _wipe_records(redis_client, game, roll_ids)
        files = target.download(tmp_path / "from-s3", [game])
        assert len(files) == 2
        result = CliRunner().invoke(main, ["records", "import", str(tmp_path / "from-s3"), "-c", world["config"]])
        assert result.exit_code == 0 and "5 records added" in result.output, result.output
        assert target.read(game, date(2000, 1, 1)) is None
    finally:
        server.stop()


def test_the_beat_job_archives_through_the_services_records_port(world, redis_client):
    """Issue 28: the calendar's archive job gets the roll records from the services (the
    store's, built by the composition root), not by reaching under the game state for its
    client; without a records port (the in-memory game state) there is nothing to archive."""
    from dataclasses import replace

    from worker.service import Services
    from worker.service.calendar import archive_tick

    game = world["ids"]["game"]
    svc = Services(settings=world["settings"], store=world["store"], keystore=world["keystore"],
                   forum_factory=lambda fs: None, clock=lambda: FIXED_NOW + timedelta(days=1),
                   records=RedisRollRecords(redis_client))
    assert archive_tick(svc)[game] == [(FIXED_NOW - timedelta(days=2)).date(), FIXED_NOW.date()]
    folder = Path(world["settings"].instance_dir) / "archive" / game
    assert sorted(p.name for p in folder.glob("*.jsonl")) == [
        f"{(FIXED_NOW - timedelta(days=2)).date()}.jsonl", f"{FIXED_NOW.date()}.jsonl"]
    assert archive_tick(replace(svc, records=None)) == {}
