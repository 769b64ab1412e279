"""The layers of ``worker/`` (issue 28), read from the code's own imports (ast, nothing run):
the ports import no adapter, and the in-memory game state imports only ports and core."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of the file (function-local imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def files(folder: str) -> list[Path]:
    found = sorted((ROOT / folder).rglob("*.py"))
    assert found, folder
    return found


def offending(folder: str, allowed) -> dict[str, list[str]]:
    bad = {}
    for path in files(folder):
        wrong = sorted(m for m in imported_modules(path) if not allowed(m))
        if wrong:
            bad[str(path.relative_to(ROOT))] = wrong
    return bad


def _stdlib_or(prefixes: tuple[str, ...]):
    import sys

    def allowed(module: str) -> bool:
        top = module.split(".")[0]
        if top in sys.stdlib_module_names or top == "__future__":
            return True
        return any(module == p or module.startswith(p + ".") for p in prefixes)
    return allowed


def test_the_memory_game_state_imports_only_ports_and_core():
    """The in-memory adapters (the game state, its read port) import ports, core and each other."""
    assert offending("worker/adapters/memory", _stdlib_or(("core", "worker.ports", "worker.adapters.memory"))) == {}


def test_the_ports_import_no_adapter_and_no_io_library():
    assert offending("worker/ports", _stdlib_or(("core", "worker.ports", "worker.config.settings", "cryptography"))) == {}


def test_the_configuration_and_the_game_state_are_no_circle():
    """Issue 28: worker/config/settings.py and worker/adapters/redis/ imported each other; the state settings
    are now a port's value type that the configuration validates against, one way."""
    allowed = _stdlib_or(("core", "worker.config", "worker.ports.settings", "worker.adapters.redis.url", "worker.forums.profile",
                          "pydantic", "pydantic_core"))
    assert offending("worker/config", allowed) == {}


def _no_redis(module: str) -> bool:
    return not any(module == p or module.startswith(p + ".") for p in ("redis", "worker.adapters.redis"))


def test_the_pages_read_models_read_through_the_read_port():
    """Issue 28: worker/service/queries imported the Redis store's key helpers and took a raw
    client; the audit query and the running state now read through worker.ports.queries."""
    assert offending("worker/service/queries", _no_redis) == {}


def test_the_cli_reaches_the_game_state_only_through_services_and_ports():
    """Issue 28: no module of worker/app/cli imports the redis package or a Redis adapter; the
    clients, game state, table and accounts come from the composition root (bootstrap)."""
    assert offending("worker/app/cli", _no_redis) == {}


def test_the_web_app_reaches_the_game_state_only_through_services_and_ports():
    """Issue 28: the web app's views get the game state, the table, the accounts and the read
    models (worker.service.queries) from web.deps and the services; none imports the redis
    package or a Redis adapter."""
    assert offending("web", _no_redis) == {}


def _client_names_used(folder: str, client_names: frozenset[str]) -> dict[str, list[str]]:
    """Per module under ``folder``: the ``client_names`` it uses as a name, an attribute or an import."""
    reached = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = sorted({n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(tree)
                        if (isinstance(n, ast.Name) and n.id in client_names)
                        or (isinstance(n, ast.Attribute) and n.attr in client_names)})
        names += sorted({a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                         for a in n.names if a.name in client_names})
        if names:
            reached[str(path.relative_to(ROOT))] = names
    return reached


def test_no_module_of_the_web_app_holds_a_store_client():
    """Issue 28: web/ calls worker.service and worker.ports only (the webhooks' marks and
    intake through web.deps.intake()); not even web.deps holds a store client: the composition
    root builds the game state, the table, the keystore and the accounts from settings."""
    assert _client_names_used("web", _CLIENT_NAMES) == {}


def test_no_module_of_the_cli_holds_a_store_client():
    """Issue 28: worker/app/cli asks the composition root for the object a command needs (the
    table, the accounts, the keystore, the forum health, the heartbeat check, the roll records,
    the health sender, the politeness backend), never for a store client (``_redis_for`` handed
    one to every command before)."""
    assert _client_names_used("worker/app/cli", _CLIENT_NAMES | {"_redis_for"}) == {}


#: What hands out or builds a store client (worker.app.bootstrap, web.deps before issue 28).
_CLIENT_NAMES = frozenset({"client", "_client", "client_of", "store_client", "optional_store_client", "redis_client"})


def test_the_services_and_the_tasks_reach_the_store_through_ports():
    """Issue 28: worker/service and worker/app import no Redis adapter -- the wiring aside (the
    composition root, and the Celery app, which reads its broker's Redis URL) -- but for what is
    left and named here (the masters' ``Table``: sheets adjusted, scenes, reveals, still on the
    store's client), so the list can only shrink."""
    left = {"worker/service/table.py"}
    reached = {}
    for folder in ("worker/service", "worker/app"):
        for path in files(folder):
            rel = str(path.relative_to(ROOT))
            if rel in ("worker/app/bootstrap.py", "worker/app/celery_app.py") or rel in left:
                continue
            bad = sorted(m for m in imported_modules(path) if m.startswith("worker.adapters.redis"))
            if bad:
                reached[rel] = bad
    assert reached == {}
    for rel in left:  # still true: when it is not, take it off the list
        assert any(m.startswith("worker.adapters.redis") for m in imported_modules(ROOT / rel)), rel
