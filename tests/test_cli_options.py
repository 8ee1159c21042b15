"""The options every command shares: -v anywhere, finite clocks, seat arguments, help texts.

Each defect here was found by using the CLI as documented; the tests use it the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import re
from pathlib import Path

import pytest
from plugins_for_tests.harness import plugged

from arena import hookimpl
from arena.cli import COMMANDS, build_parser, main
from arena.cli.plugins import LISTING_WIDTH
from arena.cli.plugins import run as list_plugins
from arena.engine import EpisodeConfig
from arena.rules import TableRules


@pytest.fixture
def no_player_scripted(monkeypatch):
    monkeypatch.delenv("PLAYER_SCRIPTED", raising=False)


@pytest.mark.parametrize(
    "argv, level",
    [
        (["play"], 0),
        (["play", "-v"], 1),
        (["play", "-vv"], 2),
        (["-v", "play"], 1),
        (["audit", "x.jsonl", "-v"], 1),
        (["check", "-vv", "x.jsonl"], 2),
    ],
)
def test_verbosity_is_accepted_before_and_after_the_subcommand(argv, level):
    assert build_parser().parse_args(argv).verbose == level
    assert build_parser(every_command=True).parse_args(argv).verbose == level


def completed(parser: argparse.ArgumentParser) -> set[str]:
    """The subcommands whose options ``parser`` has added (a bare one has only -h)."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name for name, sub in commands.choices.items() if len(sub._actions) > 1}


@pytest.mark.parametrize(
    "argv, reached",
    [
        (["play", "--deals", "3"], {"play"}),
        (["-vv", "league", "run", "x.toml"], {"league"}),
        (["--sandbox", "off", "--trust", "dist", "policies"], {"policies"}),
        (["--sandbox=off", "plugins"], {"plugins"}),
        (["--trust", "play", "show", "x.jsonl"], {"show"}),  # "play" is the option's value
        (["--sand", "off", "play"], {"play"}),  # an abbreviation, read by argparse itself
        (["pley"], set()),
        (["--help"], set()),
        (["play", "--help"], {"play"}),
    ],
)
def test_only_the_command_a_line_reaches_gets_its_options(argv, reached):
    """A subcommand's module is imported, and its options added, when argparse reaches it:
    ``arena --help`` and a mistyped command build none, a command line only its own."""
    parser = build_parser()
    with contextlib.suppress(SystemExit):  # the help, or the usage error
        parser.parse_args(argv)
    assert completed(parser) == reached
    assert completed(build_parser(every_command=True)) == set(COMMANDS)


def test_a_line_parsed_with_every_command_or_with_its_own_reads_the_same():
    argv = ["--sand", "off", "-v", "play", "--deals", "7", "--seat", "random", "--trust", "d"]
    whole = vars(build_parser(every_command=True).parse_args(argv))
    assert whole == vars(build_parser().parse_args(argv))
    assert whole["sandbox"] == "off" and whole["deals"] == 7 and whole["trust"] == ["d"]


def test_a_mistyped_command_is_one_line_naming_every_command(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["pley", "--deals", "3"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: argument command: invalid choice: 'pley'")
    assert all(f"'{name}'" in err for name in COMMANDS) and err.count("\n") == 1


@pytest.mark.parametrize("clock", ["nan", "inf", "-inf", "0", "-1"])
def test_the_clock_takes_only_finite_positive_seconds(clock, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["play", "--deals", "1", f"--clock={clock}"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: argument --clock: ") and err.count("\n") == 1


def test_a_tiny_positive_clock_is_accepted(capsys, no_player_scripted):
    assert main(["play", "--deals", "3", "--clock", "1e-9", "--json"]) == 0
    assert '"status": "deadline"' in capsys.readouterr().out


def test_a_seat_that_takes_no_argument_refuses_one(capsys, no_player_scripted):
    assert main(["play", "--deals", "1", "--seat", "random,bayes:foo"]) == 2
    assert capsys.readouterr().err == (
        "arena: error: seat 1 (bayes:foo): seat 'bayes' takes no argument (got 'foo')\n"
    )
    # A seat that declares an argument still takes one.
    assert main(["play", "--deals", "1", "--seat", "colluder:bayes", "--json"]) == 0


@pytest.mark.parametrize(
    "value, error",
    [
        ("nosuch", "PLAYER_SCRIPTED='nosuch': unknown seat 'nosuch' (known: "),
        ("pressure:x", "PLAYER_SCRIPTED='pressure:x': seat 'pressure' takes no argument"),
        (":x", "PLAYER_SCRIPTED=':x': empty seat name in ':x'"),
    ],
)
def test_errors_from_player_scripted_name_the_variable(monkeypatch, capsys, value, error):
    monkeypatch.setenv("PLAYER_SCRIPTED", value)
    assert main(["play", "--deals", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"arena: error: {error}") and err.count("\n") == 1


def test_player_scripted_is_not_consulted_when_every_seat_is_given(monkeypatch, capsys):
    monkeypatch.setenv("PLAYER_SCRIPTED", "nosuch")
    assert main(["play", "--deals", "1", "--seats", "2", "--seat", "bayes,random", "--json"]) == 0


def options(parser: argparse.ArgumentParser, command: str = "arena"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from options(sub, name)
        elif action.option_strings and not {"-h", "--version"} & set(action.option_strings):
            yield command, action


def test_every_option_says_its_default_and_range():
    parser = build_parser(every_command=True)
    for command, action in options(parser):
        where = f"{command} {action.option_strings[-1]}"
        assert action.help and re.search(r"default|required", action.help), where
        # A number says its bounds: "a..b", ">= n" or "> n".
        numeric = action.type not in (None, str, Path) and action.option_strings[-1] not in (
            "--pool",
            "--seat",
            "--offer",
            "--opponents",
        )
        if numeric:
            assert re.search(r"\d+\.\.\d+|>=? \d+", action.help), where


class LongNamedPlugin:
    """A plugin whose entry-point name and hooks make for a long listing line."""

    @hookimpl
    def register_audit_reporters(self, register):
        for index in range(8):
            register(f"a_rather_long_reporter_name_{index}", lambda records: None)


def test_plugins_listing_fits_100_columns_with_long_names(capsys):
    with plugged(LongNamedPlugin(), "a_plugin_with_an_unusually_long_entry_point_name") as (
        host,
        info,
    ):
        args = argparse.Namespace(json=False)
        assert list_plugins(args, host) == 0
    out = capsys.readouterr().out
    assert "a_plugin_with_an_unusually_long_entry_point_name" in out
    assert "a_rather_long_reporter_name_7" in out
    assert max(len(line) for line in out.splitlines()) <= LISTING_WIDTH


@pytest.mark.parametrize("clock", [float("nan"), float("inf"), 0.0])
def test_the_engine_config_refuses_a_clock_that_never_fires(clock, host):
    rules = TableRules(mode=host.registry.mode("dice"), seats=4)
    with pytest.raises(ValueError, match="finite positive seconds"):
        EpisodeConfig(rules=rules, seed=0, clock=clock)
