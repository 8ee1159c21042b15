"""A missing optional extra is named in a form pip can install, however arena was installed.

After ``pip install .`` pip knows no distribution called liars-arena to fetch, so
``pip install 'liars-arena[report]'`` fails; the hint names the extra's own
requirements, with their bounds as pyproject.toml gives them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the tomli dependency exists for Python 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent

MISSING = {
    # the command, the module made unimportable, its extra and the line's opening words
    "report": (
        ["report", "ep.jsonl", "-o", "r.html"],
        "plotly",
        "report",
        "arena report needs plotly",
    ),
    "serve": (["serve", "--port", "0"], "uvicorn", "web", "arena serve needs the web extra"),
}


@pytest.mark.parametrize("command, module, extra, said", MISSING.values(), ids=MISSING.keys())
def test_a_missing_extra_is_named_by_its_requirements_with_pyprojects_bounds(
    command, module, extra, said, tmp_path
):
    # The module, unimportable, ahead of the real one on the path.
    shadow = tmp_path / "shadow" / module
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(f"raise ImportError('{module} is not installed')\n")
    env = os.environ | {"PYTHONPATH": str(tmp_path / "shadow")}
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    with open(ROOT / "pyproject.toml", "rb") as file:
        bounds = tomllib.load(file)["project"]["optional-dependencies"][extra]
    # report = ["plotly>=5.5"]; web = ["starlette>=0.37", "uvicorn>=0.30"]: each quoted
    hint = "pip install " + " ".join(f"'{bound}'" for bound in bounds)
    assert done.returncode == 2
    assert done.stderr == f"arena: error: {said}: {hint}\n"
    assert "liars-arena[" not in done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["shadow"]


def test_a_league_on_ray_without_ray_names_rays_requirement(tmp_path):
    # the same hint where --executor ray finds no Ray: it said pip install
    # 'liars-arena[ray]', which pip cannot find after pip install .
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('ray is not installed')\n")
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "league", "run", "--pool", "bayes,pressure",
         "--tables", "1", "--deals", "1", "--executor", "ray", "--db", "l.sqlite"],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(tmp_path / "shadow")},
        cwd=tmp_path,
        timeout=60,
    )  # fmt: skip
    with open(ROOT / "pyproject.toml", "rb") as file:
        (bound,) = tomllib.load(file)["project"]["optional-dependencies"]["ray"]
    assert done.returncode == 1
    assert done.stderr == f"arena: error: --executor ray needs Ray: pip install '{bound}'\n"
