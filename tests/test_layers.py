"""Dependencies point one way: the import contracts in pyproject.toml, run as CI runs them.

``[tool.importlinter]`` holds two contracts (docs/architecture.md): the core does not
import its plugins, and each layer imports only the layers below it. import-linter
reads every import, function-level ones included, and fails on an ``ignore_imports``
entry that no longer matches, so the list of exceptions can only shrink. It has no
contract for module cycles, so the last test asks its graph library (grimp) directly.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_hold():
    proc = subprocess.run(
        [Path(sys.executable).with_name("lint-imports"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Both contracts were read and checked (a config typo would check none).
    assert "Contracts: 2 kept, 0 broken." in proc.stdout


def test_no_module_in_arena_imports_itself_back():
    """For every import a -> b inside arena/, no chain of imports leads from b back to a.

    Type-only imports (under ``TYPE_CHECKING``) never run, so they are left out, as the
    contracts leave them out.
    """
    graph = grimp.build_graph("arena", exclude_type_checking_imports=True)
    modules = sorted(graph.modules)
    assert "arena.plugins" in modules and "arena.sandbox.describe" in modules  # the old cycle
    cycles = [
        (importer, imported)
        for importer in modules
        for imported in sorted(graph.find_modules_directly_imported_by(importer))
        if imported != importer and graph.find_shortest_chain(imported, importer) is not None
    ]
    assert cycles == []
