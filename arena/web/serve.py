"""``arena serve``'s web app: the setup page, the table page, its events and its moves.

A Starlette app over one :class:`~arena.web.serve_table.Table` at a time. The
page is one self-contained HTML file (no network but this server); it reads its
viewer's messages as server-sent events and posts moves as JSON. Everything a
tab can reach is keyed by its viewer token, so a tab sees its own seat only, and
is told no other token: the links to hand out go to whoever started the table.
What a request must be to be acted on (this server's own page, a small JSON
body, checked fields) is :mod:`arena.web.serve_guard`'s; which seats a page may
choose, :mod:`arena.web.serve_offer`'s. Logs are written to a folder (the
command line's, or a private one): a finished table's download and replay read
its file, so the server holds no finished episode.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from arena.eventlog import read_log
from arena.eventlog.partfile import PART_SUFFIX
from arena.plugins import DuplicateName, PluginHost, UnknownName
from arena.runner import EpisodeRequest, SetupError, scripted_default
from arena.web.replay import replay_html
from arena.web.serve_guard import (
    Fields,
    OwnPort,
    Refused,
    json_body,
    last_event_id,
    own_hosts,
    own_origins,
)
from arena.web.serve_offer import Offer
from arena.web.serve_table import Finished, Table

PAGE = Path(__file__).with_name("serve_page.html")
FINAL = ("end", "error")
"""The last message a viewer's stream carries."""
POLL_SECONDS = 0.05
"""How often an open event stream looks for new messages."""
TABLE_FIELDS = {"seats", "mode", "deals", "seed", "talk"}
MOVE_FIELDS = {"turn", "command", "say"}
LOG_NAME = re.compile(rf"table-(\d+)-seed\d+\.jsonl(?:{re.escape(PART_SUFFIX)})?")
MAX_SEED = 2**53 - 1
"""The largest seed a page holds exactly: its numbers are JavaScript's doubles."""


@attrs.define
class TableServer:
    """The app's state: what to offer on the setup page, and the table being played."""

    host: PluginHost
    defaults: EpisodeRequest
    offer: Offer
    """The seats a page may choose, fixed and checked at launch."""
    timeout: float
    address: str
    """The loopback address bound, as the page's own URL names it."""
    port: int
    max_deals: int
    """The most deals a page may ask of one table (``serve --max-deals``)."""
    log_dir: Path
    """Where each table's log is written: ``--log-dir``, or a private folder."""
    pages: Path
    """A private folder: what finished tables' pages are still told (:class:`Channel`)."""
    table: Table | None = None
    """The latest table; only one is played at a time."""
    by_token: dict[str, Table | Finished] = attrs.Factory(dict)
    """Every table this server has opened, by each of its viewer tokens (logs stay
    downloadable): the latest as it is, the ones before it as they :class:`Finished`."""

    @property
    def origins(self) -> frozenset[str]:
        return own_origins(self.address, self.port)

    def setup(self) -> dict[str, Any]:
        d = self.defaults
        given = [str(spec) for spec in d.seat_specs] or [self.offer.person]
        filler = str(scripted_default())
        return {
            "seats": [
                {"name": text, "description": self.offer.descriptions[text]}
                for text in self.offer.seats
            ],
            "modes": sorted(self.host.registry.modes),
            "maxDeals": self.max_deals,
            "defaults": {
                "seats": given + [filler] * (d.seats - len(given)),
                "filler": filler,
                "mode": d.mode,
                "deals": d.deals,
                "seed": d.seed,
                "talk": d.talk,
                "maxBids": d.max_bids,
            },
        }

    def open_table(self, body: dict[str, Any]) -> Table:
        """The table ``body`` asks for, started; :class:`Refused` says why it cannot be."""
        if self.table is not None and self.table.playing:
            raise Refused(409, "a table is still being played on this server")
        fields = Fields(body, TABLE_FIELDS)
        d = self.defaults
        specs = tuple(
            self.offer.pick(slot, text) for slot, text in enumerate(fields.texts("seats"))
        )
        request = attrs.evolve(
            d,
            seat_specs=specs,
            seats=len(specs),
            mode=fields.text("mode", d.mode),
            deals=fields.integer("deals", d.deals, 1, self.max_deals, why=" (serve --max-deals)"),
            seed=fields.integer("seed", d.seed, 0, MAX_SEED, why=" (what a page holds exactly)"),
            talk=fields.flag("talk", d.talk),
        )
        try:
            table = Table(
                self.host, request, self.timeout, self._log_path(request.seed), self.pages
            )
        except (SetupError, UnknownName, DuplicateName) as exc:
            raise Refused(400, str(exc)) from None
        table.start()
        table.seated.wait()  # its seats built: a seat its plugin refuses for this table is a 400
        if table.refused is not None:
            raise Refused(400, table.refused)
        if self.table is not None:  # finished, as only one plays at a time: its remains only
            ended = self.table.ended()
            self.by_token.update(dict.fromkeys(ended.channels, ended))
        self.table = table
        self.by_token.update(dict.fromkeys(table.tokens, table))
        return table

    def _log_path(self, seed: int) -> Path:
        """A new name in the log folder, numbered past every table log already there (a
        restarted server's too), so no two tables' logs ever share one."""
        numbers = (LOG_NAME.fullmatch(path.name) for path in self.log_dir.iterdir())
        number = max((int(match[1]) for match in numbers if match), default=0) + 1
        return self.log_dir / f"table-{number}-seed{seed}.jsonl"

    def leave(self) -> None:
        if self.table is not None and self.table.playing:
            self.table.leave()


def build_app(server: TableServer) -> Starlette:
    async def setup_page(_request: Request) -> Response:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    async def setup(_request: Request) -> Response:
        return JSONResponse(server.setup())

    async def start(request: Request) -> Response:
        body = await json_body(request, server.origins)
        table = await asyncio.to_thread(server.open_table, body)
        # The one answer that holds every link: the starter hands them out.
        return JSONResponse({"people": table.people, "watch": table.link(table.watch_token)})

    async def events(request: Request) -> Response:
        table, token = _table(server, request)
        if table is None:
            return _error("no such table", 404)
        channel = table.channels[token]
        first = last_event_id(request.headers.get("last-event-id"))

        async def stream() -> AsyncIterator[str]:
            index = first
            channel.connect()
            try:
                while True:
                    for message in channel.since(index):
                        index = message["id"] + 1
                        yield f"id: {message['id']}\ndata: {json.dumps(message)}\n\n"
                        if message["kind"] in FINAL:  # nothing follows: let the page go
                            return
                    await asyncio.sleep(POLL_SECONDS)
            finally:
                channel.disconnect()

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    async def act(request: Request) -> Response:
        fields = Fields(await json_body(request, server.origins), MOVE_FIELDS)
        table, token = _table(server, request)
        seat = table.seat_for(token) if table is not None else None
        if seat is None:
            return _error("this page has no seat at the table", 404)
        turn = fields.integer("turn", None, 0)
        problem = seat.answer(turn, fields.text("command"), fields.text("say", optional=True))
        return _error(problem) if problem else JSONResponse({"ok": True})

    async def download_log(request: Request) -> Response:
        table, _token = _table(server, request)
        if table is None or table.log is None:
            return _error("the log is ready when the episode ends", 404)
        return FileResponse(  # the bytes the log wrote, not a second serialisation
            table.log,
            media_type="application/x-ndjson",
            filename=f"arena-seed{table.seed}.jsonl",
        )

    async def replay(request: Request) -> Response:
        table, _token = _table(server, request)
        if table is None or table.log is None:
            return _error("the replay is ready when the episode ends", 404)
        records = await asyncio.to_thread(read_log, table.log)
        return HTMLResponse(replay_html(records, host=server.host))

    async def refused(_request: Request, exc: Refused) -> Response:
        return _error(exc.reason, exc.status)

    return Starlette(
        routes=[
            Route("/", setup_page),
            Route("/table/{token}", setup_page),
            Route("/api/setup", setup),
            Route("/api/tables", start, methods=["POST"]),
            Route("/api/events/{token}", events),
            Route("/api/act/{token}", act, methods=["POST"]),
            Route("/api/log/{token}", download_log),
            Route("/replay/{token}", replay),
        ],
        # A Host that is not this server is a rebinding site's name for it: refused first.
        middleware=[
            Middleware(TrustedHostMiddleware, allowed_hosts=own_hosts(server.address)),
            Middleware(OwnPort, port=server.port),
        ],
        exception_handlers={Refused: refused},
    )


def _table(server: TableServer, request: Request) -> tuple[Table | Finished | None, str]:
    token = request.path_params["token"]
    return server.by_token.get(token), token


def _error(text: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)
