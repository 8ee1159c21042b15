"""Loading across the trust boundary: what is imported where, names, trust and the wire.

Third-party distributions here are real ones (a dist-info with an ``arena`` entry
point) written into a directory on the import path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.engine import Engine, EpisodeConfig
from arena.plugins import UnknownName, load
from arena.rules import TableRules
from arena.runner import EpisodeRequest, run_episode
from arena.sandbox.policy import Limits, SandboxPolicy, SandboxSetupError
from arena.sandbox.protocol import HEADER, ProtocolError, encode, read_frame
from arena.sandbox.views import ViewReceiver, ViewSender
from arena.seats import SeatSpec
from arena.view import PublicBid
from arena_plugins.dice import DICE

pytestmark = pytest.mark.sandbox

TWIN = """
from arena import hookimpl

class Twin:
    def __init__(self, context):
        pass

    def decide(self, view):
        return {{"action": "challenge"}} if view.bids else {{"action": "bid", "quantity": 1,
            "face": view.symbols[0], "notes": "{dist}"}}

@hookimpl
def register_seats(register):
    register("twin", Twin, description="from {dist}")
"""


def install(root: Path, dist: str) -> None:
    module = dist.replace("-", "_")
    (root / f"{module}.py").write_text(TWIN.format(dist=dist))
    info = root / f"{module}-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 2.0\n")
    (info / "entry_points.txt").write_text(f"[arena]\n{module} = {module}\n")


@pytest.fixture
def twins(tmp_path, monkeypatch):
    tmp_path.chmod(0o755)  # as root, workers run as another uid: installed code is readable
    install(tmp_path, "arena-alpha")
    install(tmp_path, "arena-beta")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_third_party_code_is_never_imported_into_the_arena(twins):
    host = load({}, SandboxPolicy("process"))
    assert "arena_alpha" not in sys.modules and "arena_beta" not in sys.modules
    assert {info.name: info.trust for info in host.plugins}["arena_alpha"] == "third-party"


def test_two_third_parties_on_one_name_are_addressed_as_dist_name(twins, tmp_path):
    host = load({}, SandboxPolicy("process"))
    with pytest.raises(UnknownName, match="arena-alpha:twin, arena-beta:twin"):
        host.registry.seat("twin")
    request = EpisodeRequest(deals=2, seat_specs=(SeatSpec.parse("arena-beta:twin"),))
    results, records = run_episode(host, request, environ={})
    assert results.seats[0].provenance == {
        "distribution": "arena-beta",
        "version": "2.0",
        "isolation": "process",
    }
    notes = {r["notes"] for r in records if r.get("slot") == 0 and r.get("notes")}
    assert notes == {"arena-beta"}  # beta's code played, not alpha's


def test_a_trusted_distribution_is_imported_in_process(twins):
    host = load(
        {"ARENA_TRUST": "arena-alpha"}, SandboxPolicy.choose({"ARENA_TRUST": "arena-alpha"})
    )
    assert "arena_alpha" in sys.modules and "arena_beta" not in sys.modules
    trust = {info.name: (info.trust, info.isolation) for info in host.plugins}
    assert trust["arena_alpha"] == ("trusted", "in-process")
    assert trust["arena_beta"][0] == "third-party"
    # A trusted plugin holds its names like ours: the sandboxed twin is refused, naming both.
    beta = next(info for info in host.plugins if info.name == "arena_beta")
    assert beta.refused == (
        "ReservedName: 'twin' is reserved by 'arena-alpha'; 'arena-beta' may not register it",
    )
    sys.modules.pop("arena_alpha")


def test_sandbox_bwrap_refuses_to_run_without_bubblewrap(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}  # nothing on PATH: no bwrap
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "--sandbox", "bwrap", "plugins"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "arena: error: --sandbox bwrap, but bubblewrap (bwrap) is not installed\n"


def test_a_bad_limit_is_one_line():
    with pytest.raises(SandboxSetupError, match="ARENA_SANDBOX_TIMEOUT is not a number: 'soon'"):
        SandboxPolicy.choose({"ARENA_SANDBOX_TIMEOUT": "soon"})


# --- the wire -------------------------------------------------------------------------------------


def test_a_frame_over_the_cap_is_refused_from_its_header_alone():
    read, write = os.pipe()
    try:
        os.write(write, HEADER.pack(100 << 20))  # announces 100 MB and sends none of it
        started = time.process_time()
        with pytest.raises(ProtocolError, match="104857600 bytes is over the 65536-byte cap"):
            read_frame(read, time.monotonic() + 5, 65536)
        assert time.process_time() - started < 0.5
    finally:
        os.close(read)
        os.close(write)


def test_a_frame_sent_a_byte_at_a_time_is_read_whole():
    message = {"reply": {"action": "bid", "quantity": 3, "face": 5}, "say": "é" * 10}
    read, write = os.pipe()
    try:
        for byte in encode(message):
            os.write(write, bytes([byte]))
        assert read_frame(read, time.monotonic() + 5, 65536) == message
    finally:
        os.close(read)
        os.close(write)


@pytest.mark.parametrize(
    "extra",
    [{}, {"say": "a lone surrogate \ud800"}, {"big": 2**70}],
    ids=["orjson", "surrogate", "big-int"],
)
def test_the_arena_s_frames_send_value_objects_as_their_fields_whoever_writes_them(extra):
    # orjson writes the arena's frames; one with a lone surrogate or an int past 64 bits
    # it refuses, and the stdlib writes that frame: the same data either way.
    message = {"bid": PublicBid(slot=1, quantity=3, face=5), **extra}
    body = encode(message, from_arena=True)[HEADER.size :]
    assert json.loads(body) == {"bid": {"slot": 1, "quantity": 3, "face": 5}, **extra}


def test_views_sent_as_deltas_rebuild_every_view_exactly():
    views = []

    class Recorder:
        def decide(self, view):
            views.append(view)
            return {"action": "challenge"} if view.bids else {"action": "bid", "quantity": 1,
                                                               "face": 2}  # fmt: skip

    rules = TableRules(mode=DICE, seats=3)
    seats = [Recorder() for _ in range(3)]
    Engine(EpisodeConfig(rules=rules, seed=5, deals=6, talk=True), seats, ["r"] * 3, seats,
           lambda event: None).play()  # fmt: skip
    sender, receiver = ViewSender(), ViewReceiver()
    sizes = []
    for view in views:
        frame = encode(sender.encode(view), from_arena=True)  # as the arena sends it
        sizes.append(len(frame))
        assert receiver.decode(json.loads(frame[HEADER.size :])) == view
    assert views[-1].history  # the history grew, the messages did not
    assert max(sizes) < 3 * min(sizes)


def test_the_policy_summary_says_loudly_what_protects_the_user():
    weak = SandboxPolicy("process", Limits(), as_root=True).summary()
    assert "NOT hidden" in weak and "one unprivileged uid per worker" in weak
    assert "NOTHING" in SandboxPolicy("in-process").summary()


def test_trust_on_the_command_line_runs_that_distribution_in_process(twins):
    env = {**os.environ, "PYTHONPATH": str(twins)}
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "--trust", "arena-alpha", "plugins", "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert (rows["arena_alpha"]["trust"], rows["arena_alpha"]["isolation"]) == (
        "trusted",
        "in-process",
    )
    assert rows["arena_beta"]["trust"] == "third-party"
    assert "arena: warning: third-party plugins are isolated by" in done.stderr
    assert "trusted in-process: arena-alpha" in done.stderr


def test_trusting_a_distribution_that_is_not_installed_is_said():
    # A typo in --trust or ARENA_TRUST would otherwise trust nothing without a word.
    host = load({"ARENA_TRUST": "liars-arena,No_Such.Dist"})
    # Names compare as packaging normalises them; our own distribution is installed.
    assert host.untrusted_missing == ("no-such-dist",)


def test_trusting_a_missing_distribution_is_one_plain_warning_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "--trust", "nosuchdist", "policies"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # One line a person reads, not a JSON log record.
    assert done.stderr.splitlines() == ["arena: warning: trusted but not installed: nosuchdist"]
