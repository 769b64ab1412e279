"""Narrador's rules core: the Storyteller rules, roll tags, records and verification, pure (no I/O,
no framework: tests/unit/test_layout.py); see docs/architecture.md «core (pure)»."""
