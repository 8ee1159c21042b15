"""``arena replay LOG``: the episode as one self-contained HTML page that works offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.eventlog import LogError, read_log
from arena.plugins import PluginHost
from arena.web.replay import replay_html


def register(commands: argparse._SubParsersAction) -> None:
    replay = commands.add_parser(
        "replay", help="write an episode's log as one offline HTML replay page"
    )
    replay.add_argument("log", metavar="LOG", help="event log written by `arena play --log`")
    replay.add_argument(
        "-o", "--output", metavar="FILE.html", help="where to write the page (default: LOG.html)"
    )
    replay.set_defaults(run=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    records = load_log(args.log)
    output = Path(args.output) if args.output else Path(args.log).with_suffix(".html")
    page = replay_html(records, host=host)
    try:
        output.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise LogError(f"cannot write {output}: {exc.strerror or exc}") from None
    print(output)
    return 0


def load_log(path: str) -> list[dict]:
    """The one place the replay and ``arena show`` read a saved log."""
    return read_log(path)
