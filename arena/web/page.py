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


def asset(name: str) -> str:
    """A file of ``arena/web/assets`` (package data)."""
    return (_ASSETS / name).read_text(encoding="utf-8")


def script_json(data: Any) -> str:
    """JSON safe inside a <script> element: no ``</script>`` or ``<!--`` can close it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def fill(template: str, parts: Mapping[str, str]) -> str:
    """The template asset with every ``{{name}}`` replaced by ``parts[name]``, in one pass."""
    return _PLACEHOLDER.sub(lambda match: parts[match[1]], asset(template))
