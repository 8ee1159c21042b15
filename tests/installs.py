"""Writing a distribution as pip installs it, for tests that need a third party on disk."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path


def record_line(root: Path, relative: str) -> str:
    """The ``RECORD`` line pip writes for ``root/relative``: its path, sha256 and size."""
    data = (root / relative).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{relative},sha256={digest},{len(data)}\n"
