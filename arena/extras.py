"""How to install an optional extra, said in a way that works however arena was installed.

``pip install 'liars-arena[report]'`` only works where pip can find a distribution
named liars-arena; after ``pip install .`` (a source folder) it finds none. The
extra's own requirements, read from the installed distribution's metadata (so
``pyproject.toml`` stays their one source), install anywhere.
"""

from __future__ import annotations

import importlib.metadata
import shlex

DISTRIBUTION = "liars-arena"


def install_hint(extra: str) -> str:
    """``pip install 'plotly>=5.5'`` for ``report``: the extra's requirements as
    ``pyproject.toml`` bounds them; the source folder's form where the metadata is missing."""
    try:
        requires = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        requires = []
    marker = f'extra == "{extra}"'  # as the metadata spells an extra's requirement
    needed = [
        shlex.quote(requirement.strip())
        for requirement, _, condition in (line.partition(";") for line in requires)
        if condition.strip() == marker
    ]
    if not needed:
        return f"pip install '.[{extra}]' (from the source folder)"
    return f"pip install {' '.join(needed)}"
