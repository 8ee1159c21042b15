"""One self-contained HTML page from a template, its assets and its data.

The replay and the report are both built this way: a template in ``assets/``
with ``{{name}}`` placeholders, filled in one pass with inlined styles and
scripts and the page's data as JSON, so the file works offline and no inlined
text is ever scanned for placeholders.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

_ASSETS = resources.files(__package__) / "assets"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_SCRIPT_UNSAFE = re.compile("[<\u2028\u2029\ud800-\udfff]")
"""Written as ``\\uXXXX``: ``<`` (no ``</script>``), the separators old JavaScript
refused in a string, and lone surrogates (a seat's text may hold one; UTF-8 cannot)."""


def asset(name: str) -> str:
    """A file of ``arena/web/assets`` (package data)."""
    return (_ASSETS / name).read_text(encoding="utf-8")


def script_json(data: Any) -> str:
    """JSON safe inside a <script> element: no ``</script>`` or ``<!--`` can close it, and
    any text a seat sent is written, lone surrogates included."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _SCRIPT_UNSAFE.sub(lambda match: f"\\u{ord(match[0]):04x}", text)


def fill(template: str, parts: Mapping[str, str]) -> str:
    """The template asset with every ``{{name}}`` replaced by ``parts[name]``, in one pass."""
    return _PLACEHOLDER.sub(lambda match: parts[match[1]], asset(template))
