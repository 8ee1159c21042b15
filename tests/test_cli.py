"""The ``arena`` command: determinism end to end, PLAYER_SCRIPTED, the clock, and error paths.

Every user mistake must end in exactly one ``arena: error: ...`` line on stderr
and exit code 2, never a traceback. The real console script runs in
subprocesses; the many error cases also run through ``arena.cli.main`` in
process, which is much faster once the plugins are imported.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from referee import replay

from arena.cli import main
from arena.runner import EpisodeRequest, run_episode


def arena_script() -> str:
    """The installed ``arena`` console script next to this interpreter."""
    beside = Path(sys.executable).with_name("arena")
    return str(beside) if beside.exists() else shutil.which("arena")


def launch(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    environ = {k: v for k, v in os.environ.items() if k != "PLAYER_SCRIPTED"} | (env or {})
    return subprocess.Popen(
        [arena_script(), *args],
        cwd=cwd,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish(process: subprocess.Popen) -> tuple[int, bytes, bytes]:
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


@pytest.fixture
def no_player_scripted(monkeypatch):
    monkeypatch.delenv("PLAYER_SCRIPTED", raising=False)


# --- determinism -------------------------------------------------------------------------


def test_play_twice_gives_identical_logs_and_results(tmp_path, host):
    # The issue's own check, by two real processes run side by side.
    args = ["play", "--seed", "7", "--deals", "50", "--log", "x.jsonl", "--json"]
    dirs = [tmp_path / "one", tmp_path / "two"]
    for d in dirs:
        d.mkdir()
    runs = [finish(p) for p in [launch(args, d) for d in dirs]]
    (code_a, out_a, err_a), (code_b, out_b, err_b) = runs
    assert (code_a, code_b) == (0, 0), (err_a, err_b)
    log_a, log_b = (d / "x.jsonl" for d in dirs)
    assert log_a.read_bytes() == log_b.read_bytes()
    assert out_a == out_b
    # The log replays through the referee and agrees with the printed results.
    records = [json.loads(line) for line in log_a.read_text(encoding="utf-8").splitlines()]
    results = json.loads(out_a)
    summary = replay(records, results)
    assert (summary.deals_played, summary.status) == (50, "complete")
    # ... and this third process, playing the same request in-process, writes the same log.
    _, same = run_episode(host, EpisodeRequest(seed=7, deals=50), environ={})
    assert same == records


# --- playing -------------------------------------------------------------------------------


def test_player_scripted_fills_unspecified_seats(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PLAYER_SCRIPTED", "pressure")
    log = tmp_path / "log.jsonl"
    argv = ["play", "--seats", "3", "--seat", "random", "--deals", "2", "--json", "--log", str(log)]
    assert main(argv) == 0
    results = json.loads(capsys.readouterr().out)
    assert [s["policy"] for s in results["seats"]] == ["random", "pressure", "pressure"]
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    replay(records, results)


def test_unfilled_seats_default_to_bayes(capsys, no_player_scripted):
    assert main(["play", "--seats", "2", "--deals", "1", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    assert [s["policy"] for s in results["seats"]] == ["bayes", "bayes"]


def test_clock_settles_deadline_at_a_deal_boundary(capsys, tmp_path, no_player_scripted):
    # 5000 deals take seconds; a 20 ms clock stops the episode long before.
    log = tmp_path / "log.jsonl"
    argv = ["play", "--clock", "0.02", "--deals", "5000", "--json", "--log", str(log)]
    assert main(argv) == 0
    results = json.loads(capsys.readouterr().out)
    assert results["status"] == "deadline"
    assert results["dealsPlayed"] < 5000
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    replay(records, results)


@pytest.mark.parametrize("mode", ["dice", "poker"])
def test_text_output_has_a_line_per_deal_and_a_table(capsys, mode, no_player_scripted):
    assert main(["play", "--mode", mode, "--deals", "3", "--seat", "pressure,random"]) == 0
    out = capsys.readouterr().out
    assert sum(line.startswith("deal ") for line in out.splitlines()) == 3
    assert f"{mode} seed 0: complete, 3 deals" in out


def test_plugins_json_lists_the_first_party_plugins(capsys):
    assert main(["plugins", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    for name in ("dice", "poker", "scripted", "random"):
        assert rows[name]["trust"] == "first-party"
        assert rows[name]["broken"] is None
    assert rows["scripted"]["hooks"] == ["register_seats"]
    assert rows["dice"]["hooks"] == ["register_modes"]


def test_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("arena ")


# --- error paths ---------------------------------------------------------------------------

ERRORS = {
    "unknown seat": (["play", "--seat", "nobody"], "unknown seat 'nobody'"),
    "unknown seat after a known one": (["play", "--seat", "bayes,nobody"], "unknown seat"),
    "empty seat name": (["play", "--seat", "bayes,,random"], "empty seat name"),
    "unknown mode": (["play", "--mode", "chess"], "unknown mode 'chess'"),
    "negative seed": (["play", "--seed", "-1"], "-1 is out of range"),
    "seed not a number": (["play", "--seed", "seven"], "seven"),
    "no deals": (["play", "--deals", "0"], "0 is out of range"),
    "one seat": (["play", "--seats", "1"], "1 is out of range 2..8"),
    "nine seats": (["play", "--seats", "9"], "9 is out of range 2..8"),
    "no bids allowed": (["play", "--max-bids", "0"], "0 is out of range"),
    "zero clock": (["play", "--clock", "0"], "must be > 0"),
    "bad option": (["play", "--bogus"], "unrecognized arguments: --bogus"),
    "unknown command": (["dance"], "invalid choice: 'dance'"),
    "no command": ([], "required: command"),
    "more seats than the table": (
        ["play", "--seats", "2", "--seat", "bayes,bayes,random"],
        "3 seats given for a 2-seat table",
    ),
}


def assert_one_line_error(code: int, out: str, err: str, fragment: str) -> None:
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, err
    # The exact "arena: error: " prefix is its own test below, so that one deviation
    # shows up as one failure rather than one per case.
    assert re.match(r"arena( \w+)?: error: ", err), err
    assert fragment in err


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_user_errors_are_one_line_and_exit_2(capsys, case):
    argv, fragment = ERRORS[case]
    try:
        code = main(argv)
    except SystemExit as exited:  # argparse's own usage errors
        code = exited.code
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, fragment)


def test_option_errors_start_with_arena_error(capsys):
    # The issue and arena/cli.py's docstring: one `arena: error: ...` line. A subcommand's
    # option error must say so too, not `arena play: error: ...`.
    with pytest.raises(SystemExit):
        main(["play", "--seats", "9"])
    err = capsys.readouterr().err
    assert err.startswith("arena: error: argument "), err


def test_an_unwritable_log_path_is_a_one_line_error(capsys, tmp_path):
    target = tmp_path / "missing-dir" / "log.jsonl"
    code = main(["play", "--deals", "1", "--log", str(target)])
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, f"cannot write event log {target}")
    directory = main(["play", "--deals", "1", "--log", str(tmp_path)])
    captured = capsys.readouterr()
    assert_one_line_error(directory, captured.out, captured.err, "cannot write event log")


def test_the_real_console_script_reports_errors_in_one_line(tmp_path):
    # One error found after the plugins load, one found by the option parser.
    processes = [
        launch(["play", "--seat", "nobody"], tmp_path),
        launch(["play", "--seats", "9"], tmp_path),
    ]
    fragments = ["unknown seat 'nobody'", "9 is out of range 2..8"]
    for process, fragment in zip(processes, fragments, strict=True):
        code, out, err = finish(process)
        assert_one_line_error(code, out.decode(), err.decode(), fragment)


def play_on_a_terminal(tmp_path, *args: str, stdout_too: bool = False) -> tuple[int, bytes, bytes]:
    """``arena play --deals 400 --seed 3 ARGS`` with stderr (and, with ``stdout_too``,
    stdout) on a pseudo-terminal: (exit code, stdout when piped, what the terminal got)."""
    leader, follower = pty.openpty()
    environ = {k: v for k, v in os.environ.items() if k != "PLAYER_SCRIPTED"}
    command = [arena_script(), "play", "--deals", "400", "--seed", "3", *args]
    stdout = follower if stdout_too else subprocess.PIPE
    with subprocess.Popen(
        command, cwd=tmp_path, stdout=stdout, stderr=follower, env=environ
    ) as process:
        os.close(follower)
        out = b"" if stdout_too else process.stdout.read()
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            shown += chunk
    os.close(leader)
    return process.returncode, out, shown


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_a_long_run_shows_progress_on_a_terminal_and_nowhere_else(tmp_path, engine):
    """stderr a terminal, stdout a file or pipe: one redrawn ``deal N/M`` line, cleared
    before the results, on either engine (a terminal once forced the Python engine);
    stderr a pipe (a script, a log file): not a byte of it.

    The deals come a batch at a time as the log is written (16, or fewer after 50 ms),
    so the line is redrawn for at least 400 / 16 = 25 of them and ends at 400/400."""
    code, out, shown = play_on_a_terminal(tmp_path, "--engine", engine)
    assert code == 0
    drawn = [int(n) for n in re.findall(rb"arena: deal (\d+)/400", shown)]
    assert len(drawn) >= 25 and drawn == sorted(set(drawn)) and drawn[-1] == 400
    assert shown.endswith(b"\r\x1b[K")  # the line is cleared, not left behind
    assert b"arena: deal" not in out and out.count(b"\n") > 400  # deal lines, results table

    code, out, err = finish(launch(["play", "--deals", "400", "--seed", "3"], tmp_path))
    assert code == 0 and b"arena: deal" not in err


def test_with_json_stdout_holds_the_results_alone_and_progress_still_shows(tmp_path):
    code, out, shown = play_on_a_terminal(tmp_path, "--json")
    assert code == 0
    assert json.loads(out)["dealsPlayed"] == 400
    assert b"arena: deal 400/400" in shown and shown.endswith(b"\r\x1b[K")


def test_on_a_terminal_the_deal_lines_as_they_come_are_the_progress(tmp_path):
    """stdout and stderr one terminal: the deal lines stream there, with no progress line
    written between them."""
    code, _, shown = play_on_a_terminal(tmp_path, stdout_too=True)
    assert code == 0
    assert b"arena: deal" not in shown
    assert shown.count(b"\ndeal ") == 399 and b"deal 399  opener" in shown


def test_a_program_importing_the_cli_keeps_its_ctrl_c():
    """The ``arena`` command says ``arena: interrupted`` for a Ctrl-C while it still imports
    (tests/test_league_faults.py); a program that only imports the CLI gets its
    KeyboardInterrupt as ever, and its cleanups run: it was ended at once, exit 130."""
    script = (
        "import signal\n"
        "import arena.cli\n"
        "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n"
        "try:\n"
        "    signal.raise_signal(signal.SIGINT)  # a Ctrl-C, before any call of main()\n"
        "except KeyboardInterrupt:\n"
        "    print('caught')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout.split(), done.stderr) == (0, ["True", "caught"], "")


def test_importing_the_cli_and_a_scripted_play_load_no_heavy_client():
    """The CLI's cost is the table's: no API client, web server or rich (which structlog
    brings) is imported to parse a command line or play scripted seats (the Claude seat
    imports anthropic when built; structlog comes when something logs), and of the
    subcommands only the one named."""
    script = (
        "import contextlib, io, sys\n"
        "import arena.cli\n"
        "heavy = ('anthropic', 'starlette', 'uvicorn', 'httpx', 'rich', 'structlog',\n"
        "         'asyncio', 'arena.cli.play')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    arena.cli.main(['play', '--deals', '2', '--seat', 'bayes,random'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('arena.cli.')))\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.splitlines() == [
        "[]",
        # the options, the runner of a parsed line, the stdout guard and the start are every
        # command's; play is named
        "['arena.cli.options', 'arena.cli.play', 'arena.cli.running', 'arena.cli.standard_output',"
        " 'arena.cli.startup']",
        "['arena.cli.play']",
    ]
