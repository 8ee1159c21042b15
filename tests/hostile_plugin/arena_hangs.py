"""Import-time hostility for tests/test_hostile.py."""

import time

time.sleep(3600)  # at import: must not stall the arena
