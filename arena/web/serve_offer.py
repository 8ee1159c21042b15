"""What a page may seat: the seats ``arena serve``'s command line named, each checked at launch.

A seat spec can name a file (``claude:PATH.md`` sends that file to a model), so
the text of a spec is the command line's to give, never a page's. The offer is
fixed when the server starts: the seat a person plays, every ``--seat``, the
filler for slots left open (``$PLAYER_SCRIPTED``) and every ``--offer``. A page
picks among their exact texts, as the setup page lists them; any other text is
refused before it is parsed. Each offered seat is built once at launch and
closed, so a spec its plugin refuses (a missing policy file, an argument the
seat does not take, a seat for other tables) stops the server from starting
instead of failing a table later. A sandboxed third party's seat is checked by
name and argument only: its worker starts at a table, where a failure costs its
seat, not the table.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import attrs

from arena.plugins import Registry
from arena.runner import (
    EpisodeRequest,
    SetupError,
    build_config,
    build_seat,
    refuse_unwanted_arg,
    scripted_default,
    table_specs,
)
from arena.seats import SeatSpec
from arena.web.serve_guard import Refused
from arena.web.serve_table import person_seat


@attrs.frozen
class Offer:
    """The seats a page may choose, by the exact text it sends, in the order shown."""

    seats: dict[str, SeatSpec]
    descriptions: dict[str, str]
    person: str
    """The seat a person takes unless told otherwise (offered first)."""

    def pick(self, slot: int, text: str) -> SeatSpec:
        """The offered seat ``text`` names; a 400 naming what is offered otherwise."""
        spec = self.seats.get(text)
        if spec is None:
            offered = ", ".join(self.seats)
            raise Refused(400, f"seat {slot}: {text[:40]!r} is not offered here ({offered})")
        return spec


def make_offer(
    registry: Registry,
    defaults: EpisodeRequest,
    more: Iterable[SeatSpec] = (),
    environ: Mapping[str, str] = os.environ,
) -> Offer:
    """The offer of a server started with ``defaults`` (its ``--seat`` specs among them) and
    ``more`` (``--offer``), each seat checked: :class:`SetupError` or ``UnknownName`` if not."""
    config = build_config(registry, defaults)
    table = table_specs(defaults, registry=registry)
    policies = tuple(str(spec) for spec in table)
    person = person_seat(registry)
    candidates = [
        (0, SeatSpec(person)),
        *enumerate(table),
        (0, scripted_default(registry=registry)),
        *((0, spec) for spec in more),
    ]
    seats: dict[str, SeatSpec] = {}
    descriptions: dict[str, str] = {}
    for slot, spec in candidates:
        text = str(spec)
        if text in seats:
            continue
        seat_type, plain = registry.seat_for(spec)
        try:
            refuse_unwanted_arg(seat_type, plain)
            registry.preflight(spec, environ)  # a paid seat's own check, sandboxed or not
            if seat_type.person is None and not seat_type.sandboxed:
                seat = build_seat(registry, config, slot, spec, policies)
                if hasattr(seat, "close"):
                    seat.close()
        except Exception as exc:  # a plugin's refusal, whatever it raised: one line
            raise SetupError(f"seat {text}: {exc}") from None
        seats[text] = spec
        descriptions[text] = seat_type.description
    return Offer(seats, descriptions, person)
