"""Import-time hostility for tests/test_hostile.py."""

raise SystemExit(0)  # at import: must not end the arena
