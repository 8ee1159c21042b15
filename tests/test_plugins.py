"""Plugin loading: broken plugins are skipped and reported, names are unique, switches work,
and a third party's plugin is found through a real entry point and plays.

Test plugins are real modules (``tests/plugins_for_tests``) registered in a
context manager and unregistered in its ``finally``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
import structlog.testing
from plugins_for_tests import broken_register, duplicate_seat, misspelled, talk_and_audit
from plugins_for_tests.harness import plugged
from referee import replay

from arena import hookimpl
from arena.actions import Bid, Challenge
from arena.modes import Mode
from arena.plugins import REGISTRATION_HOOKS, UnknownName, load
from arena.runner import EpisodeRequest, SetupError, run_episode
from arena.sandbox.discovery import discover
from arena.seats import SeatSpec

ARENA = str(Path(sys.executable).with_name("arena"))


def run_arena(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "PLAYER_"))}
    return subprocess.Popen(
        [ARENA, *args],
        cwd=cwd,
        env=environ | env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=180)
    return process.returncode, out, err


# --- broken plugins ---------------------------------------------------------------------------


def test_a_misspelled_hook_is_caught_by_check_pending_and_reported_broken():
    with plugged(misspelled, "misspelled") as (host, info):
        assert info.broken is not None
        assert "register_seat" in info.broken
        assert info in host.plugins
        assert not host.manager.is_registered(misspelled)
        assert "never-registered" not in host.registry.seats
        assert "bayes" in host.registry.seats  # the rest of the host is untouched


def test_two_plugins_registering_one_seat_name_is_a_duplicate_naming_both():
    with plugged(duplicate_seat, "duplicate_seat") as (host, info):
        assert info.broken.startswith("DuplicateName: ")
        assert "'bayes' is registered by both 'scripted' and 'duplicate_seat'" in info.broken
        assert host.registry.seat("bayes").source == "scripted"
        # What the broken plugin registered before the clash is withdrawn with it.
        assert "only-from-duplicate" not in host.registry.seats


def test_a_plugin_failing_inside_its_hook_is_skipped_with_its_partial_registrations():
    with plugged(broken_register, "broken_register") as (host, info):
        assert info.broken == "RuntimeError: boom while registering"
        assert "half-done" not in host.registry.modes
        assert host.registry.mode("dice").name == "dice"
        assert info.dropped == ("half-done",)
        # asking for what it registered says why it is not there, not "unknown"
        with pytest.raises(UnknownName) as refused:
            host.registry.mode("half-done")
        assert str(refused.value) == (
            "mode 'half-done' is unavailable: plugin 'broken_register' was refused: "
            "RuntimeError: boom while registering"
        )


def test_an_unknown_name_lists_the_known_ones(host):
    with pytest.raises(UnknownName, match=r"unknown seat 'nobody' \(known: .*bayes.*\)"):
        host.registry.seat("nobody")
    with pytest.raises(UnknownName, match=r"unknown mode 'chess' \(known: .*dice, poker.*\)"):
        host.registry.mode("chess")


# --- talk filters and audit reporters ------------------------------------------------------


def test_talk_filters_and_reporters_from_a_plugin_apply_in_play():
    # Only the test plugin's filters: block the first-party ones for exact expectations.
    environ = {"ARENA_BLOCK_PLUGINS": "talk_filters"}
    with plugged(talk_and_audit, "talk_and_audit", environ) as (host, info):
        assert info.broken is None
        assert set(info.hooks) == {
            "register_talk_filters",
            "register_seats",
            "register_audit_reporters",
        }
        assert [f.name for f in host.registry.ordered_talk_filters()] == ["shout", "hush"]
        request = EpisodeRequest(
            seats=3, deals=3, talk=True, seat_specs=(SeatSpec("chatty"), SeatSpec("chatty"))
        )
        results, records = run_episode(host, request, environ={})
    spoken = [r for r in records if r["type"] in ("bid", "challenge") and r["say"]]
    assert spoken
    for record in spoken:
        if record["say"].startswith("secret"):
            assert record["published"] is None  # SHOUTED first, then hushed: order matters
        else:
            assert record["published"] == record["say"].upper()
    assert results.audit["bid-count"] == sum(r["type"] == "bid" for r in records)
    replay(records, results.to_json())


def test_registration_hooks_are_the_hookspecs():
    from arena import hookspecs

    specs = {name for name in dir(hookspecs) if name.startswith("register_")}
    assert set(REGISTRATION_HOOKS) == specs


# --- environment switches ----------------------------------------------------------------------


def test_block_plugins_skips_the_named_entry_points_and_lists_them_as_blocked():
    host = load({"ARENA_BLOCK_PLUGINS": "random, poker"})
    selection = {info.name: info.selection for info in host.plugins}
    assert selection["random"] == selection["poker"] == "blocked"
    assert selection["dice"] == selection["scripted"] == "essential"
    assert selection["wild"] == "loaded"
    blocked = {info.name: info for info in host.plugins if info.selection == "blocked"}
    assert set(blocked) == {"random", "poker"} and all(not i.hooks for i in blocked.values())
    with pytest.raises(UnknownName, match="'random' is unavailable: plugin 'random' "
                       r"\(liars-arena 0.1.0\) is blocked by ARENA_BLOCK_PLUGINS"):  # fmt: skip
        host.registry.seat("random")
    with pytest.raises(UnknownName, match="blocked by ARENA_BLOCK_PLUGINS"):
        host.registry.mode("poker")


def test_the_essentials_cannot_be_blocked_or_left_out():
    # rule 11's bayes (scripted) and the default mode (dice) are what the core stands on
    for environ in ({"ARENA_BLOCK_PLUGINS": "dice,scripted"}, {"ARENA_LOAD_PLUGINS": "wild"}):
        host = load(environ)
        assert host.registry.seat("bayes").source == "scripted"
        assert host.registry.mode("dice").name == "dice"


def test_load_plugins_is_an_allow_list_of_entry_points():
    host = load({"ARENA_LOAD_PLUGINS": "wild, random"})
    selection = {info.name: info.selection for info in host.plugins}
    assert selection["wild"] == selection["random"] == "allowed"
    assert selection["poker"] == selection["claude"] == "not-allowed"
    assert set(host.registry.modes) == {"dice", "wild"}
    assert set(host.registry.seats) >= {"bayes", "pressure", "random"}
    with pytest.raises(UnknownName, match="'poker'.* is not named in ARENA_LOAD_PLUGINS"):
        host.registry.mode("poker")
    # blocking wins over allowing
    host = load({"ARENA_LOAD_PLUGINS": "wild", "ARENA_BLOCK_PLUGINS": "wild"})
    assert next(i for i in host.plugins if i.name == "wild").selection == "blocked"


def test_disable_autoload_loads_nothing():
    host = load({"ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert host.plugins == []
    assert host.registry.seats == {} and host.registry.modes == {}


def test_disable_autoload_from_the_command_line(tmp_path):
    env = {"ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    listing = run_arena(["plugins", "--json"], tmp_path, env)
    playing = run_arena(["play", "--deals", "1"], tmp_path, env)
    code, out, _ = finish(listing)
    assert (code, json.loads(out)) == (0, [])
    code, out, err = finish(playing)
    assert (code, out) == (2, "")
    assert err == "arena: error: unknown mode 'dice' (known: none installed)\n"


# --- a third party's plugin, installed by a real distribution ----------------------------------

CAUTIOUS = '''"""A third-party seat: opens on its most-held face, then challenges every bid."""

from arena import hookimpl
from arena.actions import Bid, Challenge


class Cautious:
    def __init__(self, context):
        self.slot = context.slot

    def decide(self, view):
        if view.legal.can_challenge:
            return Challenge()
        face = max(view.symbols, key=view.hand.count)
        return Bid(view.hand.count(face), face)


@hookimpl
def register_seats(register):
    register("cautious", Cautious, description="challenges everything")
'''

BROKEN = 'raise ImportError("needs a library that is not installed")\n'


def distribution(root: Path, name: str, module: str, entry: str, source: str) -> None:
    """Install ``module`` under ``root`` as distribution ``name`` 1.0 with one arena entry point."""
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(f"[arena]\n{entry} = {module}\n", encoding="utf-8")


@pytest.fixture(scope="module")
def third_party(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    root.chmod(0o755)  # as root, sandbox workers run as other uids: installed code is readable
    distribution(root, "arena-cautious", "arena_cautious", "cautious", CAUTIOUS)
    distribution(root, "arena-broken", "arena_broken", "broken3p", BROKEN)
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    return root, {"PYTHONPATH": path}


@pytest.mark.sandbox
def test_a_third_party_plugin_is_listed_and_plays_and_a_broken_one_is_reported(third_party):
    root, env = third_party
    listing = run_arena(["plugins", "--json"], root, env)
    args = ["play", "--seat", "cautious", "--seats", "3", "--deals", "4", "--json"]
    playing = run_arena([*args, "--log", "log.jsonl"], root, env)

    code, out, err = finish(listing)
    assert code == 0, err
    rows = {row["name"]: row for row in json.loads(out)}
    cautious = rows["cautious"]
    assert (cautious["distribution"], cautious["version"]) == ("arena-cautious", "1.0")
    assert cautious["trust"] == "third-party"
    assert (cautious["hooks"], cautious["broken"]) == (["register_seats"], None)
    broken = rows["broken3p"]
    assert broken["trust"] == "third-party"
    assert broken["broken"] == "ImportError: needs a library that is not installed"
    assert rows["dice"]["broken"] is None  # the others still load

    code, out, err = finish(playing)
    assert code == 0, err
    results = json.loads(out)
    assert results["seats"][0]["policy"] == "cautious"
    assert (results["seats"][0]["rejected"], results["seats"][0]["fallbacks"]) == (0, 0)
    log = (root / "log.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in log]
    replay(records, results)
    # It played its own line in the sandbox: it bids only to open a deal, else challenges.
    bids = [r for r in records if r["type"] == "bid"]
    first_bids = {r["deal"]: r for r in reversed(bids)}
    own_bids = [r for r in bids if r["slot"] == 0]
    assert all(first_bids[r["deal"]] is r for r in own_bids)
    assert any(r["type"] == "challenge" and r["slot"] == 0 for r in records)


def test_discovery_takes_the_first_copy_on_the_path_and_only_the_arena_group(tmp_path, monkeypatch):
    """Two copies of one distribution: the first on sys.path counts, as
    ``importlib.metadata.entry_points`` takes them (the text search that skips the other
    distributions must not change which copy is read). A group named like ours, or a
    console script named like ours, is not an ``arena`` entry point."""
    first, second, others = (tmp_path / name for name in ("first", "second", "others"))
    for root, name, version in ((first, "arena_twice", "2.0"), (second, "Arena-Twice", "1.0")):
        info = root / f"arena_twice-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Name: {name}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[arena]\ntwice{version[0]} = arena_twice\n")
    info = others / "lookalike-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Name: lookalike\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[arena.extra]\nx = lookalike\n[console_scripts]\narena = lookalike:main\n"
    )
    monkeypatch.syspath_prepend(str(others))
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))
    found = {dist.name: dist for dist in discover({})}
    assert "lookalike" not in found
    # "Arena-Twice" and "arena_twice" are one name (PEP 503); the first copy is 2.0.
    assert found["arena_twice"].version == "2.0"
    assert [ep.name for ep in found["arena_twice"].entry_points] == ["twice2"]
    blocked = {d.name: d for d in discover({"ARENA_BLOCK_PLUGINS": "twice2"})}["arena_twice"]
    assert blocked.entry_points == ()
    assert [(ep.name, why) for ep, why in blocked.withheld] == [("twice2", "blocked")]


def test_discovery_reads_name_and_version_from_the_headers_not_the_description(
    tmp_path, monkeypatch
):
    """Only the metadata's headers are parsed: a body (the long description) that looks
    like headers must not change the name or the version."""
    info = tmp_path / "described-3.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: described\nVersion: 3.1\n\nName: impostor\nVersion: 9\n"
    )
    (info / "entry_points.txt").write_text("[arena]\nd = described\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = {dist.name: dist.version for dist in discover({})}
    assert found["described"] == "3.1"
    assert "impostor" not in found


def test_a_distribution_with_unreadable_metadata_is_skipped_with_a_warning(tmp_path, monkeypatch):
    """Hostile or broken metadata (entry points that are not UTF-8, no Name) costs that
    distribution its plugins, with one warning each, never the arena its plugins."""
    for name, metadata, entry_points in (
        ("binary", b"Name: binary\nVersion: 1\n", b"\xff\xfe[arena]\nb = binary\n"),
        ("nameless", b"Version: 1\n", b"[arena]\nn = nameless\n"),
        ("fine", b"Name: fine\nVersion: 1\n", b"[arena]\nf = fine\n"),
    ):
        info = tmp_path / f"{name}-1.dist-info"
        info.mkdir()
        (info / "METADATA").write_bytes(metadata)
        (info / "entry_points.txt").write_bytes(entry_points)
    monkeypatch.syspath_prepend(str(tmp_path))
    with structlog.testing.capture_logs() as logs:
        found = {dist.name for dist in discover({})}
    assert "fine" in found and "liars-arena" in found
    assert not {"binary", "nameless"} & found
    reasons = sorted(e["reason"] for e in logs if e["event"] == "plugin distribution skipped")
    assert len(reasons) == 2
    assert reasons[0].startswith("UnicodeDecodeError: ")
    assert reasons[1] == "its metadata has no Name"


# --- each registration hook, through a plugin -------------------------------------------------


TRIPLES = Mode(name="triples", symbols=(1, 2, 3), hand_size=2)
"""Three faces, two to a hand: nothing any first-party mode deals."""


class Triples:
    @hookimpl
    def register_modes(self, register):
        register(TRIPLES)


def test_hook_register_modes():
    # A registered mode is found by name and played: 3 seats of 2 symbols from {1, 2, 3},
    # so 6 symbols on the table and bids of quantity 1..6 on faces 1..3.
    with plugged(Triples(), "triples") as (host, info):
        assert info.broken is None
        assert host.registry.mode("triples") is TRIPLES
        request = EpisodeRequest(mode="triples", seats=3, deals=2)
        results, records = run_episode(host, request, environ={})
    header = records[0]
    assert (header["mode"], header["symbols"], header["handSize"]) == ("triples", [1, 2, 3], 2)
    hands = [hand for r in records if r["type"] == "deal" for hand in r["hands"]]
    assert len(hands) == 3 * 2
    assert all(len(hand) == 2 and set(hand) <= {1, 2, 3} for hand in hands)
    bids = [r for r in records if r["type"] == "bid"]
    assert bids and all(1 <= r["quantity"] <= 6 and r["face"] in (1, 2, 3) for r in bids)
    replay(records, results.to_json())


class OpensAt:
    """Opens ``ARG`` x 1 and challenges any standing bid."""

    def __init__(self, context):
        self.quantity = int(context.arg)

    def decide(self, view):
        return Challenge() if view.legal.can_challenge else Bid(self.quantity, 1)


class OpeningSeats:
    @hookimpl
    def register_seats(self, register):
        register("opens-at", OpensAt, description="opens ARG x 1", argument="the quantity")
        register("challenger", lambda context: OpensAt(attrs.evolve(context, arg="1")))


def test_hook_register_seats():
    # Two deals at two seats: each seat opens one of them. opens-at:3 opens 3 x 1 (its
    # argument); challenger opens 1 x 1; whoever faces a bid challenges it.
    with plugged(OpeningSeats(), "opening_seats") as (host, info):
        assert info.broken is None
        seat = host.registry.seat("opens-at")
        assert (seat.description, seat.argument, seat.stochastic) == (
            "opens ARG x 1",
            "the quantity",
            False,
        )
        specs = (SeatSpec.parse("opens-at:3"), SeatSpec.parse("challenger"))
        request = EpisodeRequest(seats=2, deals=2, seat_specs=specs)
        results, records = run_episode(host, request, environ={})
        # challenger declared no argument: a spec that gives it one is refused, not ignored.
        refused = EpisodeRequest(seats=2, seat_specs=(SeatSpec.parse("challenger:9"),))
        with pytest.raises(SetupError, match="seat 'challenger' takes no argument"):
            run_episode(host, refused, environ={})
    openings = {r["slot"]: (r["quantity"], r["face"]) for r in records if r["type"] == "bid"}
    assert openings == {0: (3, 1), 1: (1, 1)}
    assert [r["type"] for r in records].count("challenge") == 2
    assert not any(r["fallback"] for r in records if r["type"] in ("bid", "challenge"))
    replay(records, results.to_json())
