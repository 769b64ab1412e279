"""Issue 14, items 12 and 8, on a private Redis: the one rule by which commands find an
instance's embedded Redis, and ``narrador poll`` with a forum that does not answer."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.unit.test_cli_errors import EXAMPLE_SHEETS, _config, _run
from worker.app.cli import main
from worker.devtools.redisproc import EmbeddedRedis

pytestmark = pytest.mark.usefixtures("keep_alert_handlers")


def test_every_command_finds_the_embedded_redis_of_the_instance(tmp_path):
    """Before: ``sheets``/``scenes`` said "no Redis configured" where ``masters list`` found
    the socket in the instance folder.  No Redis URL anywhere: the socket that ``narrador up``
    / ``demo`` runs in ``<instance_dir>/redis`` is used by all of them."""
    config = _config(tmp_path)
    server = EmbeddedRedis(tmp_path / "inst" / "redis").start()
    try:
        steps = [
            (["sheets", "import", "g", EXAMPLE_SHEETS], "created: Lucía Ferrer, Koi"),
            (["sheets", "list", "g"], "Lucía Ferrer"),
            (["scenes", "open", "g", "foro", "7"], "7"),
            (["masters", "add", "g", "ana", "--password-stdin"], "master ana: created"),
            (["masters", "list", "g"], "ana"),
        ]
        for args, says in steps:
            result = _run(args, config)
            assert result.exit_code == 0, (args, result.output)
            assert says in result.output, (args, result.output)
        import redis

        client = redis.Redis(unix_socket_path=str(server.socket_path), decode_responses=True)
        assert client.dbsize() > 0  # it was this server they wrote to
    finally:
        server.stop()
    # the server gone, its socket too: the commands say how to get one again
    result = _run(["sheets", "list", "g"], config)
    assert result.exit_code == 2 and "no Redis: set REDIS_URL" in result.output


def test_poll_with_a_forum_that_does_not_answer_is_one_line_and_exit_1(tmp_path):
    server = EmbeddedRedis(tmp_path / "redis").start()
    try:
        config = _config(tmp_path, server.url)
        result = CliRunner().invoke(main, ["poll", "-c", str(config)],
                                    env={"REDIS_URL": "", "NARRADOR_REDIS_URL": "", "NARRADOR_DEBUG": ""})
        assert result.exit_code == 1, result.output
        errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
        assert len(errors) == 1 and errors[0].startswith("Error: forum foro: ") \
            and "is it up? Check its base_url" in errors[0], result.output
        assert "Traceback" not in result.output and "0 replies sent" in result.output
    finally:
        server.stop()
