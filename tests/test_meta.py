"""Meta-tests (as datasette has): every hookspec has its test and is documented, and the
test modules stand alone.

A hook nobody tests can rot unseen, and a hook missing from docs/plugins.md
does not exist for a plugin author. A test module imported by another is one reader's
helper and another's test at once: shared code lives in helper modules instead.
"""

from __future__ import annotations

import ast
import functools
import inspect
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: the tomli dependency
    import tomli as tomllib

from arena import hookspecs

TESTS = Path(__file__).parent
PLUGIN_DOCS = TESTS.parent / "docs" / "plugins.md"
HOOKS = sorted(name for name, spec in vars(hookspecs).items() if hasattr(spec, "arena_spec"))


def signature(name: str) -> str:
    return f"{name}{inspect.signature(getattr(hookspecs, name))}"


def test_there_are_hookspecs_to_check():
    assert len(HOOKS) >= 4 and "register_seats" in HOOKS
    assert signature("register_seats") == "register_seats(register)"


@functools.cache
def defined_functions(path: Path) -> set[str]:
    """The names of the module-level test functions ``path`` defines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (``from x import y`` names x)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


TEST_MODULES = sorted(TESTS.glob("test_*.py"))


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hookspec_has_its_own_test(hook):
    # As datasette: a function named test_hook_<name> in some test module, found by name.
    owners = [p.name for p in TEST_MODULES if f"test_hook_{hook}" in defined_functions(p)]
    assert owners, f"no test module defines test_hook_{hook}"


def test_the_hook_test_finder_reads_definitions_not_mentions(tmp_path):
    module = tmp_path / "test_example.py"
    module.write_text("def test_hook_a():\n    pass\n\n\nX = 'test_hook_b'\n")
    assert defined_functions(module) == {"test_hook_a"}


def test_no_test_module_imports_another():
    test_names = {p.stem for p in TEST_MODULES}
    offenders = {
        p.name: sorted(m for m in imported_modules(p) if m.rpartition(".")[2] in test_names)
        for p in TEST_MODULES
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_import_finder_sees_every_form_of_import(tmp_path):
    module = tmp_path / "test_example.py"
    module.write_text(
        "import test_a\nfrom test_b import x\nfrom tests.test_c import y\n"
        "def f():\n    import test_d\n"
    )
    assert imported_modules(module) == {"test_a", "test_b", "tests.test_c", "test_d"}


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hookspec_signature_is_documented(hook):
    assert PLUGIN_DOCS.exists(), "docs/plugins.md is missing"
    assert signature(hook) in PLUGIN_DOCS.read_text(encoding="utf-8")


def test_every_package_directory_is_installed():
    """pyproject lists its packages by hand (plugins/ installs as arena_plugins), so a new
    package directory that is not listed would be missing from a ``pip install .``: the
    editable install the tests run from would not notice."""
    root = Path(__file__).resolve().parent.parent
    setup = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setup["packages"])
    found = set()
    for name, folder in setup["package-dir"].items():
        for init in (root / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(root / folder).parts
            if "__pycache__" not in parts:
                found.add(".".join((name, *parts)))
    assert "arena.eventlog" in found
    assert found == listed
