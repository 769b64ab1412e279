"""Configuration: :mod:`worker.config.settings` (the whole file, validated at load, and the
environment overrides), one module per table (:mod:`~worker.config.narrador`,
:mod:`~worker.config.games`, :mod:`~worker.config.forums`, built from
:mod:`~worker.config.fields`), :mod:`worker.config.problems` (every problem, located),
:mod:`worker.config.effective` (``config check``) and :mod:`worker.config.file` (the TOML
reader: locations, line numbers, "did you mean").  Imports core and the Redis URL parser only; nothing of the game
state (issue 28 broke the old settings <-> state circle: the state settings are a port's
value type, :mod:`worker.ports.settings`, that this package validates against)."""
