"""A missing optional extra is named in a form pip can install, however arena was installed.

After ``pip install .`` pip knows no distribution called liars-arena to fetch, so
``pip install 'liars-arena[report]'`` fails; the hint names the extra's own
requirement, with its bound as pyproject.toml gives it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_arena_report_without_plotly_names_plotly_with_its_bound_from_pyproject(tmp_path):
    # A plotly that cannot be imported, ahead of the real one on the path.
    shadow = tmp_path / "shadow" / "plotly"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('plotly is not installed')\n")
    log = tmp_path / "ep.jsonl"
    env = os.environ | {"PYTHONPATH": str(tmp_path / "shadow")}
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "report", str(log), "-o", str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    with open(ROOT / "pyproject.toml", "rb") as file:
        (bound,) = tomllib.load(file)["project"]["optional-dependencies"]["report"]
    assert bound.startswith("plotly>=")
    assert done.returncode == 2
    assert done.stderr == f"arena: error: arena report needs plotly: pip install '{bound}'\n"
    assert "liars-arena[" not in done.stderr
    assert not (tmp_path / "r.html").exists()
