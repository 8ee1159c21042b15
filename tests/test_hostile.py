"""The hostile-plugin suite: one test per attack, under bubblewrap and under process mode.

The attacker is a real installed distribution (tests/hostile_plugin, ``arena-hostile``
6.6.6) found through its entry points. Every attack test asserts that:

- the episode completes;
- the other seats' moves equal an all-bayes table's on the same seed, with the
  attacker's own moves held fixed (replayed), so nothing it did reached them;
- the attempt is recorded (its report in its notes, or a ``fault`` line);
- nothing secret reached it: its reports say ``denied``/``none``, and neither the
  API key nor the seed appears anywhere it wrote;
- none of its processes outlive the episode.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import attrs
import installs
import pytest
from plugins_for_tests.harness import play_table

from arena.plugins import UnknownName, load
from arena.rules import DEFAULT_MAX_BIDS
from arena.runner import EpisodeRequest, run_episode
from arena.sandbox.launch import live_processes_of, own_worker_uids, workers_left_behind
from arena.sandbox.policy import Limits, SandboxPolicy
from arena.seats import SeatContext, SeatSpec
from arena_plugins.dice import DICE
from arena_plugins.scripted import bayes

pytestmark = pytest.mark.sandbox

HOSTILE_DIR = Path(__file__).parent / "hostile_plugin"
SECRET = "sk-secret-for-the-test"
SEED = 7_777_777_777
DEALS = 3
LIMITS = Limits(decision_seconds=2.0, episode_seconds=30.0, start_seconds=10.0)
ONLY_THE_SEAT = {"ARENA_BLOCK_PLUGINS": "hostile_talk,hostile_audit,exits,hangs,crashes"}
HAS_BWRAP = shutil.which("bwrap") is not None
AS_ROOT = os.geteuid() == 0

ISOLATIONS = [
    pytest.param(
        "bwrap", marks=pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap is not installed")
    ),
    "process",
]


@pytest.fixture(scope="module", params=ISOLATIONS)
def isolation(request):
    return request.param


@pytest.fixture(scope="module")
def hostile_env():
    """The hostile distribution installed (on the import path) and a key in the environment."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(HOSTILE_DIR))
        patch.setenv("ANTHROPIC_API_KEY", SECRET)
        yield patch


@pytest.fixture(scope="module")
def hostile_host(hostile_env, isolation):
    return load(ONLY_THE_SEAT, SandboxPolicy(isolation, LIMITS))


def play(host, attack: str, tmp_path: Path, talk: bool = False):
    request = EpisodeRequest(
        seed=SEED, deals=DEALS, talk=talk, seat_specs=(SeatSpec.parse(f"hostile:{attack}"),)
    )
    results, records = run_episode(host, request, log_path=tmp_path / "log.jsonl", environ={})
    assert_contained(host, results, records)
    return results, records


def assert_contained(host, results, records) -> None:
    assert results.status == "complete" and results.deals_played == DEALS
    assert any(r["type"] == "result" for r in records)
    assert results.seats[0].provenance == {
        "distribution": "arena-hostile",
        "version": "6.6.6",
        "isolation": host.policy.isolation,
    }
    assert others_moves(records) == others_moves(all_bayes_replaying(records))
    written = json.dumps([r for r in records if r.get("slot") == 0 and r["type"] != "deal"])
    assert SECRET not in written and str(SEED) not in written
    assert "FOUND" not in written, written[:2000]
    assert worker_processes() == []


def others_moves(records) -> list[tuple]:
    keep = ("type", "deal", "slot", "quantity", "face", "fallback")
    return [
        tuple(r.get(k) for k in keep)
        for r in records
        if r["type"] in ("bid", "challenge") and r["slot"] != 0
    ]


class Replayer:
    """Slot 0 as the log shows it moved, decision by decision."""

    def __init__(self, records):
        self.moves = [
            {"action": r["type"], "quantity": r["quantity"], "face": r["face"]}
            if r["type"] == "bid"
            else {"action": "challenge"}
            for r in records
            if r["type"] in ("bid", "challenge") and r["slot"] == 0 and not r.get("forced")
        ]

    def decide(self, view):
        return self.moves.pop(0)


def all_bayes_replaying(records) -> list[dict]:
    """The same seed with bayes in slots 1-3, built as the runner builds them."""
    rules = attrs.evolve(_rules(), seats=4)
    seats = [Replayer(records)] + [bayes(SeatContext.derive(SEED, s, rules)) for s in (1, 2, 3)]
    _, replayed = play_table(seats, DICE, seed=SEED, deals=DEALS, max_bids=DEFAULT_MAX_BIDS)
    return replayed


def _rules():
    from arena.rules import TableRules

    return TableRules(mode=DICE, seats=4, max_bids=DEFAULT_MAX_BIDS)


def worker_processes() -> list[int]:
    """Processes still running under a uid of this test process's workers, or left behind
    by an arena of its process group (the command-line tests' arenas, their league
    workers): never another arena's, so the suite holds while others play on the machine."""
    ours = own_worker_uids()
    left = workers_left_behind(group=os.getpgrp())
    return sorted(set(live_processes_of(lambda uid: uid in ours)) | set(left))


def notes_of(records) -> str:
    return " ".join(r["notes"] or "" for r in records if r.get("slot") == 0 and "notes" in r)


def faults_of(records) -> list[str]:
    return [r["reason"] for r in records if r["type"] == "fault" and r["slot"] == 0]


needs_root = pytest.mark.skipif(not AS_ROOT, reason="the per-worker uid needs the arena to be root")


# --- what it may not read or do ------------------------------------------------------------------


ARENA_PID = os.getpid()


@pytest.mark.parametrize(
    ("attack", "report"),
    [
        (f"environ:{ARENA_PID}", "attack=environ env=none proc=denied"),
        pytest.param(f"proc:{ARENA_PID}", "mem=denied", marks=needs_root),
        pytest.param(f"ptrace:{ARENA_PID}", "attack=ptrace ptrace=denied", marks=needs_root),
        pytest.param(f"fd:{ARENA_PID}", "attack=fd fds=denied", marks=needs_root),
        ("gc", "attack=gc gc=none"),
        pytest.param(f"signal:{ARENA_PID}", "attack=signal signal=denied", marks=needs_root),
        pytest.param("remount", "attack=remount remount=denied", marks=needs_root),
        ("memory", "attack=memory alloc=failed"),
    ],
    ids=["environ", "proc-mem", "ptrace", "proc-fd", "gc", "signal", "remount", "memory-bomb"],
)
def test_what_it_may_not_reach_or_do_it_cannot(hostile_host, tmp_path, attack, report):
    """The key and the arena's /proc files, memory, fds and heap; signals; remounts; memory."""
    _, records = play(hostile_host, attack, tmp_path)
    assert report in notes_of(records)


def test_the_network_is_unreachable(hostile_host, tmp_path, isolation):
    if isolation == "process" and not (AS_ROOT and shutil.which("unshare")):
        pytest.skip("without root, process mode does not hide the network (docs/plugins.md)")
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        _, records = play(hostile_host, f"net:{port}", tmp_path)
    assert "attack=net net=blocked" in notes_of(records)


@needs_root
def test_no_file_is_planted_in_site_packages_or_beside_the_log(hostile_host, tmp_path):
    _, records = play(hostile_host, f"write:{tmp_path}", tmp_path)
    assert "attack=write write=denied" in notes_of(records)
    assert not (tmp_path / "zz_hostile.pth").exists()


# --- resources -----------------------------------------------------------------------------------


@needs_root
def test_a_fork_bomb_is_bounded_and_reaped(hostile_host, tmp_path):
    _, records = play(hostile_host, "forkbomb", tmp_path)
    forks = int(notes_of(records).split("forks=")[1].split()[0])
    assert forks < LIMITS.processes  # RLIMIT_NPROC of the worker's own uid


def test_a_spinning_seat_is_a_fault_and_bayes_plays_on(hostile_host, tmp_path):
    _, records = play(hostile_host, "spin", tmp_path)
    assert faults_of(records) and "no reply within 2s" in faults_of(records)[0]


def test_a_sleeping_seat_is_a_fault_and_bayes_plays_on(hostile_host, tmp_path):
    _, records = play(hostile_host, "sleep", tmp_path)
    assert faults_of(records) and "no reply within 2s" in faults_of(records)[0]


def test_a_seat_over_its_episode_budget_is_a_fault(hostile_host, tmp_path):
    saved = hostile_host.policy
    hostile_host.policy = attrs.evolve(saved, limits=attrs.evolve(LIMITS, episode_seconds=1.0))
    try:
        _, records = play(hostile_host, "budget:0.6", tmp_path)  # each decision within 2 s
    finally:
        hostile_host.policy = saved
    assert any("budget" in reason for reason in faults_of(records))


def test_a_daemon_left_behind_is_killed_with_the_seat(hostile_host, tmp_path):
    _, records = play(hostile_host, "daemon", tmp_path)
    assert "attack=daemon daemon=started" in notes_of(records)
    # assert_contained already found no process under any worker uid.


def test_a_daemon_that_keeps_forking_is_killed_with_the_seat(hostile_host, tmp_path):
    _, records = play(hostile_host, "forkrunner", tmp_path)
    assert "attack=forkrunner forkrunner=started" in notes_of(records), faults_of(records)
    # assert_contained found no process under any worker uid. A chased runner can slip
    # between one scan and the next, so look again for a while: the kill came from the
    # worker's own uid, all of its processes at once, and none is left to appear.
    for _look in range(20):
        time.sleep(0.02)
        assert worker_processes() == []


# --- the protocol --------------------------------------------------------------------------------


def test_a_100_mb_reply_is_refused_at_the_cap(hostile_env, isolation, tmp_path):
    # Encoding 100 MB takes the plugin 2 s on a busy machine: a decision limit that only
    # the cap can beat, so the fault says it was the cap.
    roomy = attrs.evolve(LIMITS, decision_seconds=30.0, episode_seconds=120.0)
    host = load(ONLY_THE_SEAT, SandboxPolicy(isolation, roomy))
    _, records = play(host, "bigreply", tmp_path)
    assert any("over the 65536-byte cap" in reason for reason in faults_of(records))


def test_stdout_floods_never_reach_the_protocol(hostile_host, tmp_path):
    _, records = play(hostile_host, "stdout", tmp_path)
    assert "attack=stdout stdout=" in notes_of(records)  # its real reply got through
    assert not faults_of(records)
    assert not [r for r in records if r["type"] == "rejected"]


def test_say_and_notes_are_capped_before_they_are_logged(hostile_host, tmp_path):
    _, records = play(hostile_host, "notes", tmp_path, talk=True)
    mine = [r for r in records if r.get("slot") == 0 and r["type"] in ("bid", "challenge")]
    assert any(r["notes"] and r["notes"].startswith("nnn") for r in mine)
    limits = hostile_host.policy.limits
    assert all(len(r["notes"] or "") <= limits.notes_chars for r in mine)
    assert all(len(r["say"] or "") <= limits.say_chars for r in mine)


def test_absurd_token_counts_are_refused(hostile_host, tmp_path):
    results, records = play(hostile_host, "tokens", tmp_path)
    rejected = [r for r in records if r["type"] == "rejected" and r["slot"] == 0]
    assert rejected and "input_tokens" in rejected[0]["reason"]
    assert not [r for r in records if r["type"] == "usage"]
    assert results.seats[0].usage is None


def test_a_worker_closing_its_pipes_is_a_fault(hostile_host, tmp_path):
    _, records = play(hostile_host, "closepipe", tmp_path)
    assert any("closed its pipe" in reason for reason in faults_of(records))


@pytest.mark.parametrize("attack", ["crash", "segv"])
def test_a_crashing_worker_is_a_fault(hostile_host, tmp_path, attack):
    _, records = play(hostile_host, attack, tmp_path)
    assert faults_of(records)


def test_a_factory_that_raises_costs_its_seat_not_the_table(hostile_host, tmp_path):
    results, records = play(hostile_host, "factory", tmp_path)
    assert "the hostile factory refuses to build" in results.seats[0].stand_in
    assert faults_of(records)


# --- names, hooks, filters, reporters ------------------------------------------------------------


def test_a_reserved_name_is_refused_naming_both_distributions(hostile_host):
    hostile = next(info for info in hostile_host.plugins if info.name == "hostile")
    assert any("'bayes' is reserved by 'liars-arena'" in r for r in hostile.refused)
    assert any("'arena-hostile'" in r for r in hostile.refused)
    assert hostile_host.registry.seat("bayes").provenance["distribution"] == "liars-arena"


def test_the_register_closure_reaches_only_the_workers_registry(hostile_host, isolation):
    # It cleared the registry its callback closed over: in the arena that would have
    # removed every first-party seat. Here only the worker's copy was cleared.
    assert {"bayes", "random", "pressure"} <= set(hostile_host.registry.seats)
    hostile = hostile_host.registry.seat("hostile")
    assert hostile.sandboxed and hostile.provenance["isolation"] == isolation
    info = next(info for info in hostile_host.plugins if info.name == "hostile")
    assert info.trust == "third-party"


def test_an_untrusted_mode_with_code_is_listed_and_not_played(hostile_host):
    hostile = next(info for info in hostile_host.plugins if info.name == "hostile")
    assert [mode["name"] for mode in hostile.modes] == ["loaded"]
    assert hostile.modes[0]["data"] is False  # its draw is a function of the plugin's
    assert "loaded" not in hostile_host.registry.modes


def test_an_untrusted_mode_declared_as_data_is_played_by_the_core(hostile_host):
    # 'octo' is pure data: the arena deals it with its own uniform draw, never the plugin's.
    octo = hostile_host.registry.mode("octo")
    assert (octo.symbols, octo.hand_size, octo.is_data) == (tuple(range(1, 9)), 3, True)
    results, records = run_episode(hostile_host, EpisodeRequest(mode="octo", deals=3), environ={})
    assert results.status == "complete" and records[0]["mode"] == "octo"
    hands = [hand for r in records if r["type"] == "deal" for hand in r["hands"]]
    assert all(len(hand) == 3 and set(hand) <= set(range(1, 9)) for hand in hands)
    # The impostor 'dice' is refused, naming both distributions; ours still plays dice.
    hostile = next(info for info in hostile_host.plugins if info.name == "hostile")
    assert (
        "ReservedName: 'dice' is reserved by 'liars-arena'; 'arena-hostile' may not register it"
        in hostile.refused
    ), hostile.refused
    assert (
        hostile_host.registry.mode("dice").description
        != "TEST: an impostor of the first-party dice"
    )


def test_a_talk_filter_runs_in_its_worker_and_finds_nothing(hostile_env, isolation, tmp_path):
    host = load({"ARENA_BLOCK_PLUGINS": "talk_filters,hostile_audit,exits,hangs,crashes"},
                SandboxPolicy(isolation, LIMITS))  # fmt: skip
    assert host.registry.talk_filters["leak"].provenance["isolation"] == isolation
    results, records = play(host, "talk", tmp_path, talk=True)
    published = [r["published"] for r in records if r.get("published")]
    assert published == ["a plain line [leak=none]"]


def test_a_reporter_touches_only_its_own_section(hostile_env, isolation, tmp_path):
    host = load({"ARENA_BLOCK_PLUGINS": "hostile_talk,exits,hangs,crashes"},
                SandboxPolicy(isolation, LIMITS))  # fmt: skip
    results, records = play(host, "gc", tmp_path)
    assert results.audit["rewrite"] == {"rewrote": True}
    result_line = next(r for r in records if r["type"] == "result")
    assert result_line["points"] == results.points != [99] * 4
    assert results.to_json()["provenance"]["reporters"]["rewrite"] == {
        "distribution": "arena-hostile",
        "version": "6.6.6",
        "isolation": isolation,
    }
    assert sum(results.points) == 0  # rule 6: every point won is a point lost


# --- import time, through the real command line --------------------------------------------------


def arena(*args: str, sandbox: str) -> subprocess.CompletedProcess:
    env = os.environ | {
        "PYTHONPATH": str(HOSTILE_DIR),
        "ANTHROPIC_API_KEY": SECRET,
        "ARENA_SANDBOX_START_SECONDS": "3",
        "ARENA_SANDBOX_TIMEOUT": "2",
    }
    command = [sys.executable, "-m", "arena.cli", "--sandbox", sandbox, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_import_time_exit_hang_and_crash_are_reported_broken(isolation):
    done = arena("plugins", "--json", sandbox=isolation)
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["exits"]["broken"] and rows["crashes"]["broken"]
    assert "no reply within 3s" in rows["hangs"]["broken"]
    assert rows["dice"]["broken"] is None and rows["hostile"]["broken"] is None
    assert rows["hostile"]["isolation"] == isolation


def test_play_completes_with_the_whole_hostile_set_installed(isolation, tmp_path):
    log = tmp_path / "log.jsonl"
    done = arena(
        "play", "--seed", str(SEED), "--deals", "2", "--seat", "hostile:environ:1",
        "--log", str(log), "--json", sandbox=isolation,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # Where it plays, the arena says what isolates it (tests/test_isolation_note.py).
    assert f"isolated by {'bubblewrap' if isolation == 'bwrap' else 'a plain process'}" in (
        done.stderr
    )
    results = json.loads(done.stdout)
    # Its import set ARENA_SANDBOX=off: in its own worker, too late to matter.
    assert results["seats"][0]["provenance"]["isolation"] == isolation
    assert results["seats"][1]["provenance"]["distribution"] == "liars-arena"
    header = json.loads(log.read_text().splitlines()[0])
    assert header["provenance"]["seats"] == [s["provenance"] for s in results["seats"]]
    assert SECRET not in log.read_text().replace('"type":"deal"', "")
    assert worker_processes() == []


def test_a_league_goes_on_past_a_seat_that_cannot_be_built(isolation, tmp_path):
    done = arena(
        "league", "--pool", "bayes,hostile:factory,hostile:crash", "--tables", "2",
        "--deals", "2", "--db", str(tmp_path / "league.sqlite"), "--json", sandbox=isolation,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    standings = {row["entrant"]: row for row in json.loads(done.stdout)["standings"]}
    # Both faulty policies sat at a table and were scored: bayes played their turns. The
    # seat that never started was bayes throughout, so its episodes stand apart as such.
    assert set(standings) == {"bayes", "hostile:crash", "hostile:factory (stand-in)"}
    assert standings["hostile:factory (stand-in)"]["episodes"] >= 1
    assert standings["hostile:crash"]["episodes"] >= 1
    assert worker_processes() == []


# --- a hook that tampers with the registry it registers in -----------------------------------

TAMPERING = {
    "arena_relabels": """
import attrs
from arena import hookimpl
from arena_plugins.scripted import bayes
from arena_tampering import registry_of


@hookimpl
def register_seats(register):
    # registers 'it', then relabels it as the first-party scripted plugin's
    register("it", bayes)
    seats = registry_of(register).seats
    seats["it"] = attrs.evolve(seats["it"], source="scripted")
""",
    "arena_overwrites": """
from arena import hookimpl
from arena_plugins.scripted import bayes
from arena_tampering import registry_of


@hookimpl
def register_seats(register):
    # the same object, relabelled in place past attrs' frozen guard
    register("same", bayes)
    object.__setattr__(registry_of(register).seats["same"], "source", "scripted")
""",
    "arena_swaps": """
from arena import hookimpl
from arena_plugins.scripted import bayes
from arena_tampering import registry_of


@hookimpl
def register_seats(register):
    register("also", bayes)
    registry_of(register).seats = {}
""",
    "arena_removes": """
from arena import hookimpl
from arena_plugins.scripted import bayes
from arena_tampering import registry_of


@hookimpl
def register_seats(register):
    register("third", bayes)
    registry_of(register).seats.pop("pressure", None)
""",
    "arena_tampering": """
def registry_of(register):
    '''The registry a register callback writes to, reached through its closure.'''
    for cell in register.__closure__ or ():
        if hasattr(cell.cell_contents, "seats"):
            return cell.cell_contents
    raise LookupError("no registry in reach")
""",
}
TAMPERED = "RegistryTampered: register_seats changed the registry outside register(): "


@pytest.fixture
def tampering_site(tmp_path) -> Path:
    """``arena-tampers``: four entry points whose register_seats hooks tamper with the
    registry their callback writes to (a helper module beside them finds it)."""
    site = tmp_path / "site"
    site.mkdir()
    tmp_path.chmod(0o755)  # as root, the sandbox's workers run as another uid
    site.chmod(0o755)
    points = {"relabels": "arena_relabels", "overwrites": "arena_overwrites"}
    points |= {"swaps": "arena_swaps", "removes": "arena_removes"}
    installs.install(site, "arena-tampers", TAMPERING, points)
    return site


def arena_with(site: Path, *args: str, sandbox: str) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(site), "ARENA_CACHE_DIR": ""}
    command = [sys.executable, "-m", "arena.cli", "--sandbox", sandbox, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_a_hook_that_tampers_with_its_workers_registry_is_refused_by_name(
    tampering_site, isolation
):
    """issue 30: relabelling its seat first-party, or swapping the seat table, in its
    worker hid the seat from the description: `arena plugins` listed the plugin as
    healthy and `arena play --seat it` said "unknown seat 'it'", as for a typo."""
    done = arena_with(tampering_site, "plugins", "--json", sandbox=isolation)
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["relabels"]["broken"] == TAMPERED + "its seat 'it' replaced or relabelled"
    assert rows["overwrites"]["broken"] == TAMPERED + "its seat 'same' replaced or relabelled"
    assert rows["swaps"]["broken"] == TAMPERED + "replaced the seat table"
    dropped = [rows[name]["dropped"] for name in ("relabels", "overwrites", "swaps")]
    assert dropped == [["it"], ["same"], ["also"]]
    # In its worker there is no 'pressure' to remove: that hook changed nothing there.
    assert (rows["removes"]["broken"], rows["removes"]["isolation"]) == (None, isolation)
    listing = arena_with(tampering_site, "plugins", sandbox=isolation).stdout
    relabels = " ".join(listing[listing.index("relabels") :].split("\n    ")).splitlines()[0]
    assert relabels.endswith(
        f"BROKEN: {TAMPERED}its seat 'it' replaced or relabelled (withdrawn: it)"
    ), listing
    asked = arena_with(tampering_site, "play", "--seat", "it", sandbox=isolation)
    assert asked.returncode == 2
    assert asked.stderr.splitlines()[-1] == (
        "arena: error: seat 'it' is unavailable: plugin 'relabels' was refused: "
        f"{TAMPERED}its seat 'it' replaced or relabelled"
    )


def test_a_trusted_hook_that_tampers_is_refused_and_the_registry_put_back(
    tampering_site, monkeypatch
):
    # In-process, the registry the hooks reach is the arena's own: the hook that removed
    # the first-party 'pressure' is refused, and 'pressure' is there again.
    monkeypatch.syspath_prepend(str(tampering_site))
    host = load(
        {"ARENA_CACHE_DIR": ""}, SandboxPolicy("process", LIMITS, frozenset({"arena-tampers"}))
    )
    broken = {info.name: info.broken for info in host.plugins if info.trust == "trusted"}
    assert broken == {
        "overwrites": TAMPERED + "its seat 'same' replaced or relabelled",
        "relabels": TAMPERED + "its seat 'it' replaced or relabelled",
        "removes": TAMPERED + "another plugin's seat 'pressure' removed",
        "swaps": TAMPERED + "replaced the seat table",
    }
    assert host.registry.seat("pressure").provenance["distribution"] == "liars-arena"
    assert not {"it", "same", "also", "third"} & set(host.registry.seats)
    with pytest.raises(UnknownName, match="^seat 'third' is unavailable: plugin 'removes' was"):
        host.registry.seat("third")
