"""Narrador's worker side, by layer (issue 28): app (entrypoints and wiring), config, service,
ports, adapters, forums, devtools; see docs/architecture.md «worker, by layer»."""
