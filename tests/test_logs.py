"""Library loggers import structlog only when something logs, and the CLI's settings
(warnings and up as plain ``arena: warning:`` lines; JSON only when asked for) hold
from the first line.

Each case runs in a fresh interpreter: this test process imported structlog long ago.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from messages_server import Fail, MessagesServer, table_player


def run(script: str, *, path: Path | None = None) -> subprocess.CompletedProcess:
    """``script`` in a fresh interpreter, stdout and stderr pipes (not terminals)."""
    env_path = [] if path is None else [str(path)]
    code = f"import sys; sys.path[:0] = {env_path!r}\n" + script
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )


def lines(stream: str) -> list[dict]:
    return [json.loads(line) for line in stream.splitlines()]


def test_a_logger_imports_structlog_at_its_first_call_with_the_clis_settings():
    done = run(
        "from arena import logconfig, logs\n"
        "log = logs.get_logger('arena.somewhere')\n"
        "logconfig.configure(0)\n"
        "print('structlog' in sys.modules, 'rich' in sys.modules)\n"
        "log.info('below the level')\n"
        "log.warning('first line', n=1)\n"
        "print('structlog' in sys.modules)\n"
    )
    # Not imported until the warning; then the CLI's settings, not structlog's defaults
    # (which print every level to stdout, coloured): one plain line on stderr, info dropped.
    assert done.stdout.splitlines() == ["False False", "True"]
    assert done.stderr == "arena: warning: first line (n=1)\n"


def test_a_plain_line_is_one_line_whatever_its_values_hold():
    # A plugin's reason may carry a newline or an escape sequence (ESC [2J clears the
    # screen): each is spelt out, so the terminal shows one line and obeys nothing.
    done = run(
        "from arena import logconfig, logs\n"
        "logconfig.configure(0)\n"
        "logs.get_logger('x').warning('plugin skipped', plugin='p', reason='a\\nb\\x1b[2J')\n"
        "logs.get_logger('x').error('table failed')\n"
    )
    assert done.stderr == (
        "arena: warning: plugin skipped (plugin=p, reason=a\\x0ab\\x1b[2J)\n"
        "arena: error: table failed\n"
    )


def test_json_lines_are_what_log_format_json_asks_for_at_any_level():
    done = run(
        "from arena import logconfig, logs\n"
        "logconfig.configure(0, 'json')\n"
        "logs.get_logger('x').warning('asked for', n=2)\n"
    )
    [line] = lines(done.stderr)
    assert (line["event"], line["level"], line["n"]) == ("asked for", "warning", 2)
    assert "timestamp" in line


def test_settings_given_after_structlog_is_imported_apply_at_once():
    done = run(
        "import structlog\n"
        "from arena import logconfig\n"
        "logconfig.configure(1)\n"
        "structlog.get_logger('direct').info('straight through structlog')\n"
    )
    assert done.stdout == ""
    [line] = lines(done.stderr)
    assert (line["event"], line["level"]) == ("straight through structlog", "info")


LOGS_AT_IMPORT = """
import structlog
structlog.get_logger("arena_noisy").warning("noisy plugin imported")

from arena import hookimpl

@hookimpl
def register_seats(register):
    pass
"""


def install(root: Path, module: str, source: str) -> None:
    """A distribution ``module`` with one ``arena`` entry point, importable from ``root``."""
    (root / f"{module}.py").write_text(source)
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    name = module.replace("_", "-")
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[arena]\n{module} = {module}\n")


def test_a_trusted_plugin_logging_through_structlog_itself_finds_the_clis_settings(tmp_path):
    """Trusted code runs in the arena's process and may use structlog directly: it must not
    get structlog's defaults, which would print to stdout (``arena play --json``'s)."""
    install(tmp_path, "arena_noisy", LOGS_AT_IMPORT)
    done = run(
        "import contextlib, io\n"
        "from arena.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as shown:\n"
        "    code = main(['play', '--trust', 'arena-noisy', '--deals', '1', '--json'])\n"
        "json_results = __import__('json').loads(shown.getvalue())\n"
        "print(code, json_results['dealsPlayed'])\n",
        path=tmp_path,
    )
    assert done.stdout.splitlines() == ["0 1"]
    assert "arena: warning: noisy plugin imported\n" in done.stderr
    assert not [line for line in done.stderr.splitlines() if line.startswith("{")]


def test_the_last_settings_given_before_anything_logged_are_the_ones_applied():
    """Two commands in one process before anything logged: the second's settings hold."""
    done = run(
        "from arena import logconfig, logs\n"
        "logconfig.configure(0)\n"
        "logconfig.configure(2)\n"
        "logs.get_logger('x').debug('shown at -vv')\n"
    )
    [line] = lines(done.stderr)
    assert (line["event"], line["level"]) == ("shown at -vv", "debug")


@pytest.mark.slow
def test_a_leagues_worker_processes_log_as_the_command_does(tmp_path):
    """Process workers start afresh and load the plugins again: a broken one is reported
    by each, and on stderr as the command's own lines are, not on ``--json``'s stdout."""
    tmp_path.chmod(0o755)  # as root, the sandbox's workers run as another uid
    install(tmp_path, "arena_broken", "raise RuntimeError('broken at import')\n")
    done = run(
        "import contextlib, io, json\n"
        "from arena.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as shown:\n"
        f"    code = main(['league', 'run', '--pool', 'bayes,pressure', '--tables', '2',\n"
        f"                 '--deals', '2', '--executor', 'process', '--workers', '2',\n"
        f"                 '--db', {str(tmp_path / 'league.sqlite')!r}, '--json'])\n"
        "print(code, json.loads(shown.getvalue())['league']['episodesStored'])\n",
        path=tmp_path,
    )
    assert done.stdout.splitlines() == ["0 2"]
    skipped = [line for line in done.stderr.splitlines() if "plugin skipped" in line]
    # the command's own load, then each worker's, as plain lines (no JSON was asked for)
    reason = "RuntimeError: broken at import"
    line = f"arena: warning: plugin skipped (plugin=arena_broken, reason={reason})"
    assert skipped == [line] * 3


@pytest.mark.parametrize("command", [["plugins"], ["play", "--deals", "1"]])
def test_a_broken_third_party_plugin_is_one_plain_warning_line(tmp_path, command):
    """issue 30: `arena plugins` and `arena play` with a broken plugin installed printed
    a raw structlog JSON record on stderr. Every stderr line is now the CLI's own kind."""
    tmp_path.chmod(0o755)  # as root, the sandbox's workers run as another uid
    install(tmp_path, "arena_broken", "raise RuntimeError('broken at import')\n")
    environ = os.environ | {"PYTHONPATH": str(tmp_path), "ARENA_CACHE_DIR": ""}
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", *command],
        env=environ, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    reason = "RuntimeError: broken at import"
    shown = done.stderr.splitlines()
    assert f"arena: warning: plugin skipped (plugin=arena_broken, reason={reason})" in shown
    assert all(line.startswith("arena: ") for line in shown), done.stderr


def test_a_leagues_retried_claude_call_is_one_plain_warning_line(tmp_path):
    """issue 30: `claude api retry` in a league's worker process was a raw JSON record on
    the command's stderr. The loopback API answers the first request 529 (overloaded)."""
    with MessagesServer(table_player()) as server:
        server.push(Fail(529, "overloaded_error", "Overloaded"))
        environ = os.environ | {
            "ANTHROPIC_API_KEY": "loopback",
            "ANTHROPIC_BASE_URL": server.url,
            "ARENA_CLAUDE_BACKOFF": "0.01",
        }
        done = subprocess.run(
            [sys.executable, "-m", "arena.cli", "league", "run", "--pool", "claude:honest,bayes",
             "--tables", "1", "--deals", "1", "--executor", "process", "--workers", "1",
             "--db", str(tmp_path / "league.sqlite")],
            env=environ, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = done.stderr.splitlines()
    [retry] = [line for line in shown if "claude api retry" in line]
    assert retry.startswith("arena: warning: claude api retry (attempt=1, error="), retry
    assert all(line.startswith("arena: ") for line in shown), done.stderr
