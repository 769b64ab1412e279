"""The in-memory game state: the fake the service and contract tests run on (ports and core only)."""
