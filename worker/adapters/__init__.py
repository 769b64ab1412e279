"""The adapters behind the ports (:mod:`worker.ports`): :mod:`worker.adapters.redis` (every
Redis key, script and repository), :mod:`worker.adapters.memory` (the in-memory game state,
built on ports and core only), :mod:`worker.adapters.files` (the instance folder: keystore and
keyring)."""
