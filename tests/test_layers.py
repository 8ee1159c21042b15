"""Dependencies point one way: the import contracts in pyproject.toml, run as CI runs them.

``[tool.importlinter]`` holds two contracts (docs/architecture.md): the core does not
import its plugins, and each layer imports only the layers below it. import-linter
reads every import, function-level ones included, and fails on an ``ignore_imports``
entry that no longer matches, so the list of exceptions can only shrink. It has no
contract for module cycles, so the last test asks its graph library (grimp) directly.

The league, the runner and the audit were once one layer (the audit read a league's
store); a test pins that they stay three, in the order the data flows.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import grimp

try:
    import tomllib
except ImportError:  # Python 3.10: the tomli dependency
    import tomli as tomllib

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


def contract_layers() -> list[list[str]]:
    """The layers contract's layers, top first, each as the modules it joins."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [re.split(r"\s*[:|]\s*", layer.strip()) for layer in contract["layers"]]


def test_the_league_the_runner_and_the_audit_are_three_layers_in_the_data_flows_order():
    """Each stands alone in its layer, league above runner above audit (docs/architecture.md),
    so neither the contract nor the imports let the audit reach up into the league."""
    layers = contract_layers()
    places = []
    for module in ("arena.league", "arena.runner", "arena.audit"):
        (place,) = [i for i, layer in enumerate(layers) if module in layer]
        assert layers[place] == [module], f"{module} shares a layer: {layers[place]}"
        places.append(place)
    assert places == sorted(places)
    # What the contract forbids, read from the import graph itself: no chain upward.
    graph = grimp.build_graph("arena", exclude_type_checking_imports=True)
    for low, high in [
        ("arena.audit", "arena.league"),
        ("arena.audit", "arena.runner"),
        ("arena.runner", "arena.league"),
    ]:
        chain = graph.find_shortest_chains(low, high, as_packages=True)
        assert chain == set(), f"{low} reaches {high}: {chain}"


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
