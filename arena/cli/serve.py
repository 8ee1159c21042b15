"""``arena serve``: play at a table in the browser, served from this machine only."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

from arena.cli.options import add_seating_options, add_table_options, bounded, table_request
from arena.plugins import PluginHost
from arena.runner import SetupError

LOOPBACK = "127.0.0.1"


def register(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("serve", help="play in the browser (a local table server)")
    add_table_options(serve, engines=False)
    add_seating_options(
        serve,
        "seat by slot, as in arena play (human = you); the page can change them "
        "(default: human, then $PLAYER_SCRIPTED)",
    )
    serve.add_argument("--host", default=LOOPBACK, help=f"address to bind (default {LOOPBACK})")
    serve.add_argument(
        "--port",
        type=bounded(int, 0, 65535),
        default=8765,
        help="port, 0..65535; 0: any free one (default 8765)",
    )
    serve.add_argument(
        "--turn-timeout",
        type=bounded(float, above=0),
        default=300.0,
        metavar="SECONDS",
        help="seconds > 0: a person who has not moved by then has left; rule 11 moves "
        "for them (default 300)",
    )
    serve.add_argument(
        "--log-dir",
        type=Path,
        help="write each table's event log here (default: kept in memory only)",
    )
    serve.set_defaults(run=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    try:
        import uvicorn

        from arena.web.serve import TableServer, build_app
    except ImportError:
        needs = "arena serve needs the web extra: pip install 'liars-arena[web]'"
        raise SetupError(needs) from None
    if args.log_dir is not None and not args.log_dir.is_dir():
        raise SetupError(f"--log-dir {args.log_dir} is not a directory")
    defaults = table_request(args, seed=args.seed, seat_specs=tuple(args.seat_specs))
    server = TableServer(host, defaults, args.turn_timeout, args.log_dir)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
        sock.listen(128)  # connections queue from the moment the address is printed
    except OSError as exc:
        sock.close()
        raise SetupError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    port = sock.getsockname()[1]
    print(f"arena: serving on http://{args.host}:{port}/ (Ctrl-C to stop)", flush=True)
    # Open event streams never end on their own: on Ctrl-C give them a moment, then stop.
    config = uvicorn.Config(
        build_app(server), log_level="warning", lifespan="off", timeout_graceful_shutdown=2
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        server.leave()  # a table still in play settles "quit", its log complete
        sock.close()
    print("arena: server stopped", file=sys.stderr)
    return 0
