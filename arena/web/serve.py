"""``arena serve``'s web app: the setup page, the table page, its events and its moves.

A Starlette app over one :class:`~arena.web.serve_table.Table` at a time. The
page is one self-contained HTML file (no network but this server); it reads its
viewer's messages as server-sent events and posts moves as JSON. Everything a
tab can reach is keyed by its viewer token, so a tab sees its own seat only.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from arena.plugins import DuplicateName, PluginHost, UnknownName
from arena.runner import EpisodeRequest, SetupError, scripted_default
from arena.seats import SeatSpec
from arena.web.replay import replay_html
from arena.web.serve_table import Table
from arena_plugins.human import HUMAN

PAGE = Path(__file__).with_name("serve_page.html")
FINAL = ("end", "error")
"""The last message a viewer's stream carries."""
POLL_SECONDS = 0.05
"""How often an open event stream looks for new messages."""


@attrs.define
class TableServer:
    """The app's state: what to offer on the setup page, and the table being played."""

    host: PluginHost
    defaults: EpisodeRequest
    timeout: float
    log_dir: Path | None = None
    table: Table | None = None
    """The latest table; only one is played at a time."""
    by_token: dict[str, Table] = attrs.Factory(dict)
    """Every table this server has opened, by each of its viewer tokens (logs stay downloadable)."""
    opened: int = 0

    def setup(self) -> dict[str, Any]:
        registry = self.host.registry
        d = self.defaults
        given = [str(spec) for spec in d.seat_specs] or [HUMAN]  # you, unless flags say otherwise
        filler = str(scripted_default())
        return {
            "seats": [
                {"name": name, "description": kind.description}
                for name, kind in sorted(registry.seats.items())
            ],
            "modes": sorted(registry.modes),
            "defaults": {
                "seats": given + [filler] * (d.seats - len(given)),
                "mode": d.mode,
                "deals": d.deals,
                "seed": d.seed,
                "talk": d.talk,
                "maxBids": d.max_bids,
            },
        }

    def open_table(self, body: dict[str, Any]) -> Table:
        if self.table is not None and self.table.playing:
            raise SetupError("a table is still being played on this server")
        try:
            specs = tuple(SeatSpec.parse(str(text)) for text in body["seats"])
            request = attrs.evolve(
                self.defaults,
                seat_specs=specs,
                seats=len(specs),
                mode=str(body.get("mode", self.defaults.mode)),
                deals=int(body.get("deals", self.defaults.deals)),
                seed=int(body.get("seed", self.defaults.seed)),
                talk=bool(body.get("talk", self.defaults.talk)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SetupError(f"bad table request: {exc}") from None
        if request.seed < 0:
            raise SetupError("seed must be >= 0")
        self.opened += 1
        log_path = None
        if self.log_dir is not None:
            log_path = self.log_dir / f"table-{self.opened}-seed{request.seed}.jsonl"
        table = Table(self.host, request, self.timeout, log_path)
        table.start()
        self.table = table
        self.by_token.update(dict.fromkeys(table.tokens, table))
        return table

    def leave(self) -> None:
        if self.table is not None and self.table.playing:
            self.table.leave()


def build_app(server: TableServer) -> Starlette:
    async def setup_page(_request: Request) -> Response:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    async def setup(_request: Request) -> Response:
        return JSONResponse(server.setup())

    async def start(request: Request) -> Response:
        try:
            body = await request.json()
            table = await asyncio.to_thread(server.open_table, body)
        except json.JSONDecodeError:
            return _error("the request is not JSON")
        except (SetupError, UnknownName, DuplicateName) as exc:
            return _error(str(exc))
        people = {
            str(slot): f"/table/{token}" for token, slot in table.tokens.items() if slot is not None
        }
        return JSONResponse({"people": people, "watch": f"/table/{table.watch_token}"})

    async def events(request: Request) -> Response:
        table, token = _table(server, request)
        if table is None:
            return _error("no such table", 404)
        channel = table.channels[token]
        first = int(request.headers.get("last-event-id", "-1")) + 1

        async def stream() -> AsyncIterator[str]:
            index = first
            channel.connected += 1
            try:
                while True:
                    for message in channel.since(index):
                        index = message["id"] + 1
                        yield f"id: {message['id']}\ndata: {json.dumps(message)}\n\n"
                        if message["kind"] in FINAL:  # nothing follows: let the page go
                            return
                    await asyncio.sleep(POLL_SECONDS)
            finally:
                channel.connected -= 1

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    async def act(request: Request) -> Response:
        table, token = _table(server, request)
        seat = table.seat_for(token) if table is not None else None
        if seat is None:
            return _error("this page has no seat at the table", 404)
        try:
            body = await request.json()
            problem = seat.answer(int(body["turn"]), str(body["command"]), body.get("say"))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            return _error("a move is {turn, command, say?}")
        return _error(problem) if problem else JSONResponse({"ok": True})

    async def download_log(request: Request) -> Response:
        table, _token = _table(server, request)
        if table is None or table.records is None:
            return _error("the log is ready when the episode ends", 404)
        name = f"arena-seed{table.request.seed}.jsonl"
        return Response(
            table.log_text(),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    async def replay(request: Request) -> Response:
        table, _token = _table(server, request)
        if table is None or table.records is None:
            return _error("the replay is ready when the episode ends", 404)
        return HTMLResponse(replay_html(table.records, host=server.host))

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
        ]
    )


def _table(server: TableServer, request: Request) -> tuple[Table | None, str]:
    token = request.path_params["token"]
    return server.by_token.get(token), token


def _error(text: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)
