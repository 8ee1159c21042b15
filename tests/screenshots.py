"""Screenshots for the docs, made by the page tests themselves.

Set ``ARENA_SCREENSHOTS=docs/img`` to write them there; unset (CI, ordinary runs)
nothing is written, so running the suite never rewrites tracked files.
"""

from __future__ import annotations

import os
from pathlib import Path


def save_screenshot(target, name: str, **options) -> Path | None:
    """``target`` (a page or a locator) as ``$ARENA_SCREENSHOTS/name.png``, when that is set.

    ``options`` go to playwright's ``screenshot`` (e.g. ``full_page=True``)."""
    folder = os.environ.get("ARENA_SCREENSHOTS")
    if not folder:
        return None
    path = Path(folder) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    target.screenshot(path=str(path), **options)
    return path
