"""``arena serve``: play at a table in the browser, served from this machine only.

Everything the command line decides is checked before the address is printed:
the seats a page may choose (each built once), the log folder (it must take a
file), the bounds on deals and seeds and a loopback address; a page can then
only start what these allow.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import threading
from pathlib import Path

from arena.cli.options import (
    add_seating_options,
    add_table_options,
    bounded,
    seat_specs,
    table_request,
)
from arena.engine import MAX_DEALS
from arena.extras import install_hint
from arena.plugins import PluginHost
from arena.runner import SetupError

LOOPBACK = "127.0.0.1"
DEFAULT_MAX_DEALS = 1000


def register(serve: argparse.ArgumentParser) -> None:
    add_table_options(serve, engines=False)
    add_seating_options(
        serve,
        "seat by slot, as in arena play (human = you); the page can change them among "
        "the seats offered (default: human, then $PLAYER_SCRIPTED)",
    )
    serve.add_argument(
        "--offer",
        dest="offer_specs",
        action="extend",
        type=seat_specs,
        default=[],
        metavar="SPEC[,SPEC...]",
        help="more seats a page may choose, e.g. pressure,random,claude:bluffer; a page "
        "chooses only among these, the --seat ones, human and $PLAYER_SCRIPTED, each "
        "checked at launch (default: none more)",
    )
    serve.add_argument(
        "--host",
        default=LOOPBACK,
        help=f"loopback address to bind: 127.0.0.1, ::1 or localhost (default {LOOPBACK})",
    )
    serve.add_argument(
        "--port",
        type=bounded(int, 0, 65535),
        default=8765,
        help="port, 0..65535; 0: any free one (default 8765)",
    )
    serve.add_argument(
        "--turn-timeout",
        type=bounded(float, 0, threading.TIMEOUT_MAX, above=0),  # the wait's own limit
        default=300.0,
        metavar="SECONDS",
        help=f"seconds > 0, at most {threading.TIMEOUT_MAX:.0f}: a person who has not moved "
        "by then has left; rule 11 moves for them (default 300)",
    )
    serve.add_argument(
        "--max-deals",
        type=bounded(int, 1, MAX_DEALS),
        default=DEFAULT_MAX_DEALS,
        help=f"the most deals a page may ask of a table, 1..{MAX_DEALS} "
        f"(default {DEFAULT_MAX_DEALS})",
    )
    serve.add_argument(
        "--log-dir",
        type=Path,
        help="write each table's event log here, made if missing (default: a private "
        "folder, removed when the server stops)",
    )
    serve.set_defaults(run=run)


def run(args: argparse.Namespace, host: PluginHost) -> int:
    try:
        import uvicorn

        from arena.loopback import is_loopback
        from arena.web.serve import MAX_SEED, TableServer, build_app
        from arena.web.serve_offer import make_offer
    except ImportError:
        raise SetupError(f"arena serve needs the web extra: {install_hint('web')}") from None
    if not is_loopback(args.host):
        raise SetupError(f"--host {args.host} is not a loopback address; serve is for this machine")
    if args.deals > args.max_deals:
        raise SetupError(f"--deals {args.deals} is over --max-deals {args.max_deals}")
    if args.seed > MAX_SEED:
        raise SetupError(f"--seed is over {MAX_SEED}, the largest a page holds exactly")
    defaults = table_request(args, seed=args.seed, seat_specs=tuple(args.seat_specs))
    # Every seat a page may choose is built now (and a server with no one to seat fails):
    # a bad one is an error line here, not a failed table at the page's Start.
    offer = make_offer(host.registry, defaults, args.offer_specs)
    if args.log_dir is not None:
        _check_writable(args.log_dir)
    with tempfile.TemporaryDirectory(prefix="arena-serve-") as private:
        log_dir = args.log_dir if args.log_dir is not None else Path(private, "logs")
        pages = Path(private, "pages")
        log_dir.mkdir(exist_ok=True)
        pages.mkdir()
        sock = _listen(args.host, args.port)
        port = sock.getsockname()[1]
        server = TableServer(
            host, defaults, offer, args.turn_timeout, args.host, port, args.max_deals,
            log_dir, pages,
        )  # fmt: skip
        shown = f"[{args.host}]" if ":" in args.host else args.host
        print(f"arena: serving on http://{shown}:{port}/ (Ctrl-C to stop)", flush=True)
        # Open event streams never end on their own: on Ctrl-C give them a moment, then stop.
        config = uvicorn.Config(
            build_app(server), log_level="warning", lifespan="off", timeout_graceful_shutdown=2
        )
        try:
            uvicorn.Server(config).run(sockets=[sock])
        except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it stopped on: as asked
            pass
        finally:
            server.leave()  # a table still in play settles "quit", its log complete
            sock.close()
    print("arena: server stopped", file=sys.stderr)
    return 0


def _check_writable(log_dir: Path) -> None:
    """The log folder, made if missing (as ``mkdir -p``); one that cannot take a file is
    refused at launch, not at a table's end."""
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file, not a folder, by that name
        raise SetupError(f"--log-dir {log_dir} is not a directory") from None
    except OSError as exc:
        raise SetupError(f"--log-dir {log_dir} cannot be made: {exc.strerror}") from None
    try:
        with tempfile.TemporaryFile(dir=log_dir):
            pass
    except OSError as exc:
        raise SetupError(f"--log-dir {log_dir} is not writable: {exc.strerror}") from None


def _listen(address: str, port: int) -> socket.socket:
    """The listening socket: connections queue from the moment the address is printed."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise SetupError(f"cannot listen on {address}:{port}: {exc.strerror}") from None
    return sock
