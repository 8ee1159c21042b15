"""Fingerprints of a log: the SHA-256 of its bytes, and the identity of its episode.

The bytes' digest ties a results document to the exact log it describes. The
episode's identity ignores the audit lines a later ``arena audit --append`` may
rewrite, so two copies of one episode are recognised as one when pooled.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from arena.events import Audit


def log_digest(data: bytes) -> str:
    """The hex SHA-256 of a log's bytes, as results carry it in ``logSha256``."""
    return hashlib.sha256(data).hexdigest()


def episode_key(records: Iterable[dict[str, Any]]) -> str:
    """One episode's identity: a digest of its header and play lines, audit lines left out."""
    digest = hashlib.sha256()
    for record in records:
        if record["type"] != Audit.TYPE:
            digest.update(json.dumps(record, sort_keys=True, separators=(",", ":")).encode())
            digest.update(b"\n")
    return digest.hexdigest()
