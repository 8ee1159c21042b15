"""The example plugin under the arena's own conformance kit, and installed for real."""

import json
import subprocess
import sys

from arena_cautious import Cautious

from arena.testing import check_seat


def test_cautious_passes_the_conformance_kit():
    check_seat(Cautious, seeds=(0, 1))


def test_cautious_is_discovered_as_a_third_party_plugin():
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "plugins", "--json"], capture_output=True, text=True
    )
    rows = {row["name"]: row for row in json.loads(out.stdout)}
    assert rows["cautious"]["distribution"] == "arena-cautious"
    assert rows["cautious"]["trust"] == "third-party"


def test_cautious_plays_a_sandboxed_episode():
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "--seat", "cautious", "--deals", "5", "--json"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    seat = json.loads(out.stdout)["seats"][0]
    assert seat["policy"] == "cautious"
    assert seat["rejected"] == seat["fallbacks"] == seat["faults"] == 0
