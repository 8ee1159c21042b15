"""README's league section says what ``arena report`` needs (issue 40, item 4).

``pip install .`` installs no plotly, and ``arena report`` then stops with one line naming
what to install. The README's league section, where ``arena report`` is first shown, says
the same: the line the real command prints, and the source folder's extra.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def league_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.search(r"^## Leagues\n(.*?)^## ", text, re.S | re.M).group(1)


def test_the_readme_league_section_names_what_arena_report_says_to_install(tmp_path):
    shadow = tmp_path / "shadow" / "plotly"  # plotly unimportable, as after pip install .
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('plotly is not installed')\n")
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "report", "league.sqlite", "-o", "r.html"],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(tmp_path / "shadow")},
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 2
    said = re.fullmatch(r"arena: error: arena report needs plotly: (pip install .+)\n", done.stderr)
    assert said, done.stderr
    section = league_section()
    assert f"`{said.group(1)}`" in section
    assert "`pip install '.[report]'` from the source folder" in section
