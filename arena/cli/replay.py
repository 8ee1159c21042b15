"""``arena replay LOG``: the episode as one self-contained HTML page that works offline."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.cli.options import add_log_check_options, load_log, log_check_mark
from arena.outputs import Outputs
from arena.plugins import PluginHost
from arena.web.replay import replay_html


def register(replay: argparse.ArgumentParser) -> None:
    replay.add_argument("log", metavar="LOG", help="event log written by `arena play --log`")
    replay.add_argument(
        "-o",
        "--output",
        metavar="FILE.html",
        help="where to write the page, never over LOG (default: LOG.html)",
    )
    add_log_check_options(replay)
    replay.set_defaults(run=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    output = Path(args.output) if args.output else Path(args.log).with_suffix(".html")
    with Outputs(inputs=[args.log]) as outputs:
        outputs.check(output)
        records = load_log(args, host, args.log)
        outputs.write(output, replay_html(records, host=host, caution=log_check_mark(args)))
    print(output)
    return 0
