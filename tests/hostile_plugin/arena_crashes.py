"""Import-time hostility for tests/test_hostile.py."""

import os

os._exit(7)  # at import: the worker dies, the arena goes on
