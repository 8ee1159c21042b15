"""``arena report SOURCE``: a league file or saved logs as one offline HTML report.

Beside the report, every episode whose log is at hand gets its replay page
(``FILE_replays/episode-N.html``), linked from the report by a relative address,
so the folder can be moved or archived whole. The report and its pages are put
in place together, never over a source (:mod:`arena.outputs`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cli.options import add_log_check_options, load_distinct_logs, log_check_mark
from arena.extras import install_hint
from arena.league.store import SQLITE_MAGIC, league_files
from arena.outputs import Outputs
from arena.plugins import PluginHost
from arena.runner import SetupError
from arena.web.replay import replay_html

if TYPE_CHECKING:
    from arena.web.report_data import Episode


def register(report: argparse.ArgumentParser) -> None:
    report.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="a league database (arena league run --db), or event logs (arena play --log)",
    )
    report.add_argument(
        "-o",
        "--output",
        metavar="FILE.html",
        help="where to write the report, never over a SOURCE (default: SOURCE.html for one "
        "source, else report.html); its replay pages go to FILE_replays/",
    )
    add_log_check_options(report)
    report.set_defaults(run=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    # scipy comes with the report: only this command pays for it, never --help
    from arena.league.report import league_report
    from arena.web.report_data import league_episodes, log_episodes, logs_report

    try:
        from arena.web.report import report_html
    except ImportError:
        raise SetupError(f"arena report needs plotly: {install_hint('report')}") from None
    sources = args.sources
    output = Path(
        args.output
        or (Path(sources[0]).with_suffix(".html") if len(sources) == 1 else "report.html")
    )
    reporters = list(host.registry.reporters.values())
    league = len(sources) == 1 and _is_league(sources[0])
    with Outputs(inputs=league_files(sources[0]) if league else sources) as outputs:
        outputs.check(output)
        folder = outputs.folder(output.with_name(f"{output.stem}_replays"))
        if league:
            document = league_report(sources[0], reporters)
            episodes = league_episodes(sources[0])
            caution = None
        else:
            logs = load_distinct_logs(args, host, sources)
            episodes = log_episodes(logs)
            document = logs_report(episodes, reporters, sources)
            caution = log_check_mark(args)
        digests = [_with_replay(episode, folder, outputs, host, caution) for episode in episodes]
        page = report_html(document, digests, source=", ".join(sources), caution=caution)
        outputs.write(output, page)
    print(output)
    return 0


def _is_league(path: str) -> bool:
    """A league file is an SQLite database; anything else is read as an event log."""
    try:
        with open(path, "rb") as file:
            return file.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def _with_replay(
    episode: Episode, folder: Path, outputs: Outputs, host: PluginHost, caution: str | None
) -> dict:
    """The episode's digest, its replay page written beside the report (marked as the
    report is) and linked."""
    name = f"episode-{episode.index}.html"
    outputs.write(folder / name, replay_html(episode.records, host=host, caution=caution))
    from arena.web.report_data import episode_digest

    return episode_digest(episode) | {"replay": f"{folder.name}/{name}"}
