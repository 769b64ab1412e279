"""Configuration: :mod:`worker.config.settings` (the schema, validated whole at load, and the
environment overrides) and :mod:`worker.config.file` (the TOML reader: locations, line
numbers, "did you mean").  Imports core and the Redis URL parser only; nothing of the game
state (issue 28 broke the old settings <-> state circle: the state settings are a port's
value type, :mod:`worker.ports.settings`, that this package validates against)."""
