"""Start-up's objects frozen out of the collector's full passes (``arena.heap``): once the
first table's seats are built, and again only after more modules were imported."""

from __future__ import annotations

import gc
import importlib
import sys

import pytest

from arena import heap
from arena.plugins import load
from arena.runner import EpisodeRequest, run_episode


@pytest.fixture
def thawed(monkeypatch):
    """A process that has frozen nothing yet; what the test froze is thawed after it."""
    gc.unfreeze()
    monkeypatch.setattr(heap, "_modules_then", 0)
    yield
    gc.unfreeze()


def test_the_first_call_freezes_and_a_second_with_no_import_does_not(thawed):
    assert gc.get_freeze_count() == 0
    assert heap.freeze_startup() is True
    frozen = gc.get_freeze_count()
    assert frozen > 1000  # this process's modules and their objects, at the least
    assert heap.freeze_startup() is False
    assert gc.get_freeze_count() == frozen


def test_a_module_imported_since_freezes_again(thawed, tmp_path, monkeypatch):
    """One new module (``sys.modules`` one longer): frozen again, and what it made is in
    the frozen generation now."""
    heap.freeze_startup()
    (tmp_path / "heap_probe_module.py").write_text("MADE = [object() for _ in range(500)]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = importlib.import_module("heap_probe_module")
    try:
        before = gc.get_freeze_count()
        assert heap.freeze_startup() is True
        assert gc.get_freeze_count() >= before + 1  # the module's own objects, at the least
        assert heap.freeze_startup() is False
    finally:
        del sys.modules["heap_probe_module"], probe


def test_tables_freeze_when_they_first_import_not_once_a_table(thawed, monkeypatch):
    """The runner freezes once a table's seats are built. The first table freezes; its
    read-out may import more (the audit's reporters), which the next table freezes;
    after that nothing new is imported and no table freezes."""
    calls = []
    freeze = gc.freeze
    monkeypatch.setattr(gc, "freeze", lambda: (calls.append(1), freeze()))
    host = load()
    frozen_by_table = []
    for seed in range(4):
        results, _ = run_episode(host, EpisodeRequest(seed=seed, deals=2), environ={})
        assert results.deals_played == 2
        frozen_by_table.append(len(calls))
    assert frozen_by_table[0] == 1 and gc.get_freeze_count() > 1000
    assert frozen_by_table[-1] == frozen_by_table[-2] <= 2
