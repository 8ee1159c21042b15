"""Byte-identity guard for hot-path work: capture a grid of episodes once, then check against it.

An optimisation of the engine, the log or the baselines must not change a single
byte of any event log or results document, nor anything a seat is shown. This
plays a fixed grid (both modes, 2/4/8 seats, several seat mixes, seeds, talk on
and off, bid caps 3 and 12) and stores, per episode, the event log file, the
results JSON and a digest of every :class:`~arena.view.SeatView` the seats saw.

The grid includes ``chaos``, a seat defined here that walks every rule-11 path
(garbage, illegal raises, crashes, faults, token usage, talk and oversized
notes), and two talk filters (one drops lines, one crashes), so the rarely-used
branches are held to the same bytes as the hot ones.

    python bench/golden.py capture /tmp/golden     # before changing anything
    python bench/golden.py check /tmp/golden       # after each change
    python bench/golden.py check /tmp/golden --engine auto   # the compiled engine too

``--engine python`` (the default) plays every episode on the Python engine with every
view recorded. ``--engine auto`` records no views (a recording seat is not a
first-party scripted seat), so every episode the compiled engine can play (no chaos
seat, talk off) is played compiled: its log and results must be the bytes the
Python engine wrote, and the view digests are compared only where both sides have
one. Results are compared without their ``engine`` field, which says which ran.

The captured files are a working tool, not test data: do not commit them.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import logging
import sys
import tempfile
from collections import Counter
from fractions import Fraction
from pathlib import Path

import attrs
import structlog

from arena import hookimpl
from arena.actions import Bid, Challenge
from arena.plugins import PluginHost, new_host
from arena.runner import EpisodeRequest, run_episode
from arena.seats import Reply, SeatContext, SeatSpec, SeatUnavailable
from arena.view import History, SeatView
from arena_plugins import dice, poker, random_seat, scripted

MODES = ("dice", "poker")
TABLE_SIZES = (2, 4, 8)
MIXES = ("bayes", "bayes,pressure", "random,bayes,pressure", "chaos,random,pressure,bayes")
SEEDS = (0, 1, 2024)
TALK = (False, True)
CAPS = (3, 12)
DEALS = 30
MODE_RULE_DEFAULTS = {"wild": None, "wild_counts_itself": False, "raise_rule": "strict"}


class ChaosSeat:
    """Every kind of reply rule 11 must survive, chosen by the seat's own seeded stream."""

    def __init__(self, context: SeatContext):
        self.rng = context.rng

    def decide(self, view: SeatView):
        roll = int(self.rng.integers(12))
        low = view.legal.min_bid
        quantity, face = low if low else (1, view.symbols[0])
        replies = {
            0: lambda: "uh, pass?",
            1: lambda: Challenge(say="liar!", notes="called it"),
            2: lambda: {"action": "bid", "quantity": quantity, "face": face, "say": "drop this"},
            3: lambda: f"bid {quantity} {face}",
            4: lambda: {
                "action": "bid",
                "quantity": str(quantity),
                "face": face,
                "notes": "x" * 5000,
            },
            5: lambda: Bid(max(quantity - 1, 1), face, say="boom"),
            6: lambda: Reply(f"{quantity}x{face}", usage={"input_tokens": 17, "output_tokens": 4}),
            7: lambda: Reply({"action": "challenge", "say": "no way"}, usage={"output_tokens": 2}),
        }
        if roll == 8:
            raise RuntimeError("chaos seat crashed")
        if roll == 9:
            raise SeatUnavailable("chaos seat is down")
        if roll in replies:
            return replies[roll]()
        if view.standing is not None and roll == 10:
            return Challenge(say=f"deal {view.deal}: I doubt it", notes=f"seen {len(view.bids)}")
        return Bid(quantity, face, say=f"{quantity} {face}s, honest", notes=view.notes)


class GridPlugins:
    """The chaos seat and two talk filters, registered like any third-party plugin."""

    @hookimpl
    def register_seats(self, register):
        register("chaos", ChaosSeat, description="Exercises rule 11.", stochastic=True)

    @hookimpl
    def register_talk_filters(self, register):
        register("shout", lambda text, slot: f"s{slot}: {text.upper()}", order=10)
        register("gate", _gate, order=20)


def _gate(text: str, slot: int) -> str | None:
    if "BOOM" in text:
        raise ValueError("gate filter crashed")
    return None if "DROP" in text else text


class ViewDigest:
    """A running hash of every view shown, as plain data (fields and derived properties)."""

    def __init__(self):
        self.hash = hashlib.sha256()

    def add(self, view: SeatView) -> None:
        # A mode's rule fields at their defaults (no wilds, strict raise) are left out, so
        # views captured before modes carried rules still compare byte for byte.
        data = {
            key: value
            for key, value in attrs.asdict(view).items()
            if key not in MODE_RULE_DEFAULTS or value != MODE_RULE_DEFAULTS[key]
        } | {
            "standing": view.standing and attrs.asdict(view.standing),
            "unseen": view.unseen,
            "p": str(view.p),
        }
        self.hash.update(json.dumps(data, sort_keys=True, default=_plain).encode() + b"\n")


def _plain(value):
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, History):  # attrs.asdict keeps it as is; a tuple would be a list
        return [attrs.asdict(deal) for deal in value]
    raise TypeError(type(value).__name__)


class _Recording:
    def __init__(self, seat, digest: ViewDigest):
        self.seat = seat
        self.digest = digest
        self.stand_in = getattr(seat, "stand_in", None)

    def decide(self, view: SeatView):
        self.digest.add(view)
        return self.seat.decide(view)


def grid_host(record_views: bool) -> tuple[PluginHost, dict[str, ViewDigest | None]]:
    """The game's own plugins plus the grid's, every seat recording its views if asked.

    Only these: another installed plugin (a talk filter, an audit reporter) would
    change the bytes for reasons that have nothing to do with the hot path.
    """
    host = new_host()
    for plugin in (dice, poker, scripted, random_seat):
        host.add(plugin, plugin.__name__)
    host.add(GridPlugins(), "golden-grid")
    current: dict[str, ViewDigest | None] = {"digest": None}
    if not record_views:
        return host, current
    for name, seat_type in list(host.registry.seats.items()):

        def factory(context, _make=seat_type.factory):
            return _Recording(_make(context), current["digest"])

        host.registry.seats[name] = attrs.evolve(seat_type, factory=factory)
    return host, current


def episodes(engine: str):
    for mode, seats, mix, seed, talk, cap in itertools.product(
        MODES, TABLE_SIZES, MIXES, SEEDS, TALK, CAPS
    ):
        names = itertools.islice(itertools.cycle(mix.split(",")), seats)
        name = f"{mode}-{seats}-{mix.replace(',', '+')}-seed{seed}-talk{int(talk)}-cap{cap}"
        request = EpisodeRequest(
            mode=mode,
            seed=seed,
            deals=DEALS,
            seats=seats,
            seat_specs=tuple(SeatSpec.parse(n) for n in names),
            max_bids=cap,
            talk=talk,
            engine=engine,
        )
        yield name, request


def play_grid(directory: Path, engine: str = "python") -> Counter[str]:
    """Play every grid episode into ``directory``; returns how many each engine played."""
    directory.mkdir(parents=True, exist_ok=True)
    host, current = grid_host(record_views=engine == "python")
    played: Counter[str] = Counter()
    for name, request in episodes(engine):
        current["digest"] = ViewDigest() if engine == "python" else None
        results, _records = run_episode(
            host, request, log_path=directory / f"{name}.jsonl", environ={}, force=True
        )
        document = results.to_json()
        played[document.pop("engine")] += 1
        views = current["digest"] and current["digest"].hash.hexdigest()
        document = {"results": document, "views": views}
        (directory / f"{name}.json").write_text(json.dumps(document, indent=1) + "\n")
    return played


def compare(expected: Path, actual: Path) -> list[str]:
    problems = []
    for want in sorted(expected.iterdir()):
        got = actual / want.name
        if not got.exists():
            problems.append(f"{want.name}: missing")
        elif want.suffix == ".json" and _same_document(want, got):
            continue
        elif got.read_bytes() != want.read_bytes():
            problems.append(f"{want.name}: {_first_difference(want, got)}")
    return problems


def _same_document(want: Path, got: Path) -> bool:
    """Results alike (``engine`` aside); views alike wherever both sides recorded them."""
    old, new = json.loads(want.read_text()), json.loads(got.read_text())
    old["results"].pop("engine", None)
    views_alike = None in (old["views"], new["views"]) or old["views"] == new["views"]
    return old["results"] == new["results"] and views_alike


def _first_difference(want: Path, got: Path) -> str:
    old, new = want.read_text().splitlines(), got.read_text().splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"line {number} differs:\n  - {a[:200]}\n  + {b[:200]}"
    return f"{len(old)} lines expected, {len(new)} written"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("capture", "check"))
    parser.add_argument("directory", type=Path)
    parser.add_argument(
        "--engine", choices=("python", "auto"), default="python", help="see the module doc"
    )
    args = parser.parse_args(argv)
    # The crashing talk filter is logged as a warning each time; that is expected here.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    if args.command == "capture":
        played = play_grid(args.directory, args.engine)
        print(f"captured {played.total()} episodes in {args.directory}")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        played = play_grid(Path(scratch), args.engine)
        problems = compare(args.directory, Path(scratch))
        count = played.total()
    for problem in problems[:10]:
        print(problem)
    engines = ", ".join(f"{n} {engine}" for engine, n in sorted(played.items()))
    print(
        f"{count} episodes ({engines}), {len(problems)} files differ"
        if problems
        else f"{count} episodes ({engines}) identical"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
