"""What a league is: its entrants, its tables, how tables are formed, its limits and prices.

A league comes from a TOML file (``arena league run FILE.toml``, see
docs/league.md) or from the ``--pool`` flags; both become one
:class:`LeagueSpec`. Only :meth:`LeagueSpec.settings` (who plays and how tables
are drawn and played) is stored with the league: budget, limits and prices may
change between runs of the same league.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import attrs

from arena.engine import MAX_DEALS
from arena.fast.choice import ENGINES
from arena.league.cost import RATE_KEYS, Price, override
from arena.limits import Limits as ApiLimits
from arena.registry import SeatType
from arena.rules import MAX_BIDS_CAP, MAX_SEATS, MIN_SEATS
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec
from arena_policies import names_a_file, shipped

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the tomli dependency exists for Python 3.10 only
    import tomli as tomllib

SCHEDULES = ("balanced", "combinations", "random")
MAX_EPISODES = 2**63 - 1
"""The most episodes a league schedules: the store numbers them in SQLite INTEGERs."""
MAX_LOOKS = 10
"""Most looks a comparison, or a league with ``separate``, takes (rounds of a tenth of its
cap): each look's level pays for the looks (:mod:`arena.league.looks`), so fewer cost less."""
WIDTH_LOOKS = 40
"""Most looks a league that stops on half-widths alone takes (rounds of a fortieth of its
cap): its plain 95% per look pays nothing for them, and bench/stopping.py measured rounds
this fine to cover as a tenth's did while stopping after fewer tables."""
MAX_CONCURRENCY = 4096
"""The most tables in flight: each is a thread (of this process or of a worker process), a
process or a Ray task. Model tables wait on the API, so a machine keeps thousands in
flight across processes (bench/league_latency.py); past this a league gains nothing
from one machine that it would not from a Ray cluster."""
TABLE_RANGES = {
    "deals": (1, MAX_DEALS),
    "seats": (MIN_SEATS, MAX_SEATS),
    "max_bids": (1, MAX_BIDS_CAP),
}
"""The ``[table]`` numbers and the range each takes: the command line's own."""


def rounds(tables: int, unit: int, looks: int = MAX_LOOKS) -> tuple[int, int]:
    """Tables per round and the number of rounds (looks) for a cap of ``tables``: at most
    ``looks`` rounds, each of at least ``unit`` tables."""
    size = max(unit, math.ceil(tables / looks))
    return size, math.ceil(tables / size)


def league_rounds(tables: int, entrants: int, separate: bool) -> tuple[int, int]:
    """A target league's rounds: at least one table per entrant, at most :data:`MAX_LOOKS`
    of them with ``separate``, else :data:`WIDTH_LOOKS`."""
    return rounds(tables, entrants, MAX_LOOKS if separate else WIDTH_LOOKS)


class LeagueError(ValueError):
    """The league cannot run as described; the message is one line for the user."""


@attrs.frozen
class Number:
    """What a league's number may be: whole or finite, and its range. Each setting has one
    (:data:`SETTINGS`), checked by :class:`LeagueSpec` and :class:`Budget` themselves, so a
    league file's value and its command-line flag are held to the same check."""

    whole: bool
    low: float | None = None
    high: float | None = None
    above: float | None = None
    """An open lower bound: the value must be greater."""

    def check(self, value: Any, name: str) -> Any:
        """``value``, or a :class:`LeagueError` naming ``name``; TOML reads ``nan`` and ``inf``,
        and a flag's float does too, neither of which is a number a league can use."""
        kind = int if self.whole else (int, float)
        fits = isinstance(value, kind) and not isinstance(value, bool)
        fits = fits and (isinstance(value, int) or math.isfinite(value))
        if not fits or not (
            (self.low is None or value >= self.low)
            and (self.high is None or value <= self.high)
            and (self.above is None or value > self.above)
        ):
            raise LeagueError(f"{name} must be {self}, got {value!r}")
        return value

    def __str__(self) -> str:
        kind = "a whole number" if self.whole else "a finite number"
        if self.high is not None:
            return f"{kind} {self.low} to {self.high}"
        return f"{kind} > {self.above}" if self.above is not None else f"{kind} >= {self.low}"


SETTINGS = {
    "seed": Number(whole=True, low=0),
    "tables": Number(whole=True, low=1, high=MAX_EPISODES),
    "concurrency": Number(whole=True, low=1, high=MAX_CONCURRENCY),
    "budget_usd": Number(whole=False, low=0),
    "budget_tokens": Number(whole=True, low=0),
    "target_ci": Number(whole=False, above=0),
}
"""The league's numbers, by their league-file key; each flag that sets one checks it here."""


@attrs.frozen
class Entrant:
    """A named seat spec: the name is what the standings show."""

    name: str
    spec: SeatSpec


@attrs.frozen
class Budget:
    """No new episode starts once it would take the league past either bound."""

    usd: float | None = None
    tokens: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.usd is not None:  # NaN would never trip it
            SETTINGS["budget_usd"].check(self.usd, "budget_usd")
        if self.tokens is not None:
            SETTINGS["budget_tokens"].check(self.tokens, "budget_tokens")

    @property
    def limited(self) -> bool:
        return self.usd is not None or self.tokens is not None


@attrs.frozen
class LeagueSpec:
    """Everything that determines a league's schedule, plus how it may run."""

    entrants: tuple[Entrant, ...]
    tables: int = 10
    """Tables to draw (balanced, random) or rounds of every combination (combinations)."""
    seed: int = 0
    table: EpisodeRequest = EpisodeRequest()
    """Mode, deals, seats, bid cap, talk and clock of every table (its seed and seats are drawn)."""
    schedule: str = "balanced"
    duplicate: bool = False
    """Replay each table under every rotation of its seats, on the same seed."""
    allow_repeat: bool = False
    """Let one entrant hold more than one seat at a table."""
    budget: Budget = Budget()
    concurrency: int = 1
    """Tables in flight at once (threads, processes or Ray tasks)."""
    api_limits: ApiLimits = ApiLimits()
    """The Claude API's client-side limits over the whole league."""
    prices: Mapping[str, Price] = attrs.field(factory=dict)
    """The league file's price overrides by model; every other model is priced from
    genai-prices (:func:`arena.league.cost.price_of`)."""
    target_ci: float | None = None
    """Stop after a round once every entrant's mean-score half-width is at most this;
    ``tables`` is then the cap (:meth:`looks`)."""
    separate: bool = False
    """With ``target_ci``: stop instead once every adjacent pair in the ranking is separated
    (their difference's interval excludes 0) or within ``target_ci`` of each other."""

    def __attrs_post_init__(self) -> None:
        names = [e.name for e in self.entrants]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise LeagueError(f"entrant {twice[0]!r} is listed twice")
        if not self.entrants:
            raise LeagueError("a league needs at least one entrant")
        for name in ("seed", "tables", "concurrency"):
            SETTINGS[name].check(getattr(self, name), name)
        if self.target_ci is not None:  # none: play every table
            SETTINGS["target_ci"].check(self.target_ci, "target_ci")
        if self.target_ci is not None and self.schedule != "balanced":
            raise LeagueError("target_ci plays rounds of a balanced schedule")
        if self.separate and self.target_ci is None:
            raise LeagueError("separate needs target_ci: the width two entrants count as level")
        if self.schedule not in SCHEDULES:
            raise LeagueError(f"unknown schedule {self.schedule!r} (known: {', '.join(SCHEDULES)})")
        if len(self.entrants) < self.table.seats and not self.allow_repeat:
            raise LeagueError(
                f"{len(self.entrants)} entrants cannot fill {self.table.seats}-seat tables"
                " without allow_repeat"
            )
        if self.episodes > MAX_EPISODES:
            raise LeagueError(
                f"{self.tables} tables schedule {self.episodes} episodes;"
                f" a league holds at most {MAX_EPISODES}"
            )

    @property
    def round_tables(self) -> int:
        """Tables per round of a league with a target: at least one per entrant, so a
        balanced round seats each entrant ``seats`` times (:func:`league_rounds`)."""
        return league_rounds(self.tables, len(self.entrants), self.separate)[0]

    @property
    def looks(self) -> int:
        """How often the league may look at its intervals: after each round with a target
        (:func:`arena.league.looks.league_alpha` gives each look's level), else once."""
        if self.target_ci is None:
            return 1
        return league_rounds(self.tables, len(self.entrants), self.separate)[1]

    @property
    def allocates(self) -> bool:
        """Whether a round's tables are allocated by interval and cost
        (:mod:`arena.league.allocation`): with a target, when a table cannot hold every
        entrant once (with fewer, allocation would seat exactly what balanced does)."""
        return self.target_ci is not None and (
            self.allow_repeat or len(self.entrants) > self.table.seats
        )

    @property
    def rotations(self) -> int:
        """Episodes per drawn table: every rotation of its seats with ``duplicate``."""
        return self.table.seats if self.duplicate else 1

    @property
    def episodes(self) -> int:
        """How many episodes the schedule holds (:mod:`arena.league.schedule` draws them):
        with ``combinations`` a table is a round of every group of ``seats`` entrants."""
        groups = 1
        if self.schedule == "combinations":
            pool = len(self.entrants) + (self.table.seats - 1 if self.allow_repeat else 0)
            groups = math.comb(pool, self.table.seats)
        return self.tables * groups * self.rotations

    def settings(self) -> dict:
        """The JSON form stored with the league, to refuse resuming a different one."""
        table = self.table
        settings = {
            "entrants": {e.name: str(e.spec) for e in self.entrants},
            "tables": self.tables,
            "seed": self.seed,
            "schedule": self.schedule,
            "duplicate": self.duplicate,
            "allowRepeat": self.allow_repeat,
            "mode": table.mode,
            "deals": table.deals,
            "seats": table.seats,
            "maxBids": table.max_bids,
            "talk": table.talk,
            "clock": table.clock,
        }
        if self.target_ci is not None:  # only then: a league stored before still resumes
            settings |= {"targetCi": self.target_ci, "looks": self.looks}
        if self.allocates:  # a league stored before allocation was seated otherwise
            settings["allocation"] = 1
        if self.separate:
            settings["separate"] = True
        return settings


def pool_entrants(specs: Iterable[SeatSpec]) -> tuple[Entrant, ...]:
    """Entrants named by their specs (the ``--pool`` form); a spec listed again is one more
    entrant with the same policy, named ``SPEC#2``, ``SPEC#3``..."""
    seen: dict[str, int] = {}
    entrants = []
    for spec in specs:
        seen[str(spec)] = seen.get(str(spec), 0) + 1
        count = seen[str(spec)]
        entrants.append(Entrant(str(spec) if count == 1 else f"{spec}#{count}", spec))
    return tuple(entrants)


def read_league_file(
    path: str | Path,
    seats: Mapping[str, SeatType] | None = None,
    allowed_policies: Iterable[str] = (),
) -> LeagueSpec:
    """A league file as a :class:`LeagueSpec`; every mistake is one :class:`LeagueError` line.

    ``seats`` (the registry's) says how a paid seat's entrant table is spelled, and which
    seats take a policy; ``allowed_policies`` are the policy files the command line lets
    the file name (:func:`check_policy`)."""
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as exc:
        raise LeagueError(f"{path}: cannot read league file ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise LeagueError(f"{path}: not a TOML league file ({exc})") from None
    except UnicodeDecodeError as exc:
        raise LeagueError(
            f"{path}: not a TOML league file (not UTF-8 text: byte {exc.start})"
        ) from None
    except RecursionError:
        raise LeagueError(f"{path}: not a TOML league file (nested too deeply)") from None
    try:
        return league_from_mapping(data, seats, allowed_policies)
    except (LeagueError, TypeError, ValueError) as exc:
        raise LeagueError(f"{path}: {exc}") from None


def league_from_mapping(
    data: Mapping[str, Any],
    seats: Mapping[str, SeatType] | None = None,
    allowed_policies: Iterable[str] = (),
) -> LeagueSpec:
    _known(data, "the file", ("league", "table", "entrants", "limits", "prices"))
    league, table, limits = (_section(data, name) for name in ("league", "table", "limits"))
    _known(
        league,
        "[league]",
        (
            "seed",
            "tables",
            "schedule",
            "duplicate",
            "allow_repeat",
            "budget_usd",
            "budget_tokens",
            "target_ci",
            "separate",
        ),
    )
    _known(table, "[table]", ("mode", "deals", "seats", "max_bids", "talk", "clock", "engine"))
    _known(
        limits,
        "[limits]",
        ("concurrency", "max_in_flight", "requests_per_minute", "tokens_per_minute"),
    )
    entrants = data.get("entrants")
    if not isinstance(entrants, Mapping) or not entrants:
        raise LeagueError("[entrants] must name at least one entrant")
    prices = {}
    for model, rates in _section(data, "prices").items():
        _known(rates, f"[prices.{model!r}]", tuple(RATE_KEYS))
        for kind, rate in rates.items():  # a NaN price would make every cost NaN
            Number(whole=False, low=0).check(rate, f"[prices.{model!r}]: {kind}")
        prices[model] = override(model, rates)
    for key, (low, high) in TABLE_RANGES.items():
        if key in table:
            _whole(table[key], key, low, high)
    _finite_positive(table, "clock", "[table]")
    for key in ("requests_per_minute", "tokens_per_minute"):
        _finite_positive(limits, key, "[limits]")
    if "max_in_flight" in limits:  # 0 would let no request through: the league would stall
        _whole(limits["max_in_flight"], "[limits]: max_in_flight")
    if not isinstance(table.get("mode", ""), str) or not isinstance(table.get("talk", False), bool):
        raise LeagueError("[table]: mode must be a string and talk true or false")
    if table.get("engine", "auto") not in ENGINES:
        raise LeagueError(f"[table]: engine must be one of {', '.join(ENGINES)}")
    if not isinstance(league.get("separate", False), bool):
        raise LeagueError(f"separate must be true or false, got {league['separate']!r}")
    allowed = allowed_files(allowed_policies)
    return LeagueSpec(
        entrants=tuple(
            entrant(name, value, seats or {}, allowed) for name, value in entrants.items()
        ),
        tables=league.get("tables", 10),
        seed=league.get("seed", 0),
        table=EpisodeRequest(**table) if table else EpisodeRequest(),
        schedule=league.get("schedule", "balanced"),
        duplicate=bool(league.get("duplicate", False)),
        allow_repeat=bool(league.get("allow_repeat", False)),
        budget=Budget(league.get("budget_usd"), league.get("budget_tokens")),
        target_ci=league.get("target_ci"),
        separate=league.get("separate", False),
        concurrency=limits.pop("concurrency", 1),
        api_limits=ApiLimits(**limits),
        prices=prices,
    )


def entrant(
    name: str,
    value: str | Mapping[str, Any],
    seats: Mapping[str, SeatType],
    allowed: frozenset[str] = frozenset(),
) -> Entrant:
    """``"bayes"``, ``"claude:honest"`` or a table: ``{seat = "x", arg = "..."}``, or for a
    seat that declares :class:`~arena.registry.PaidCalls`, its arg and settings by the names
    it declares: ``{seat = "claude", policy = "honest", model = ..., max_tokens = ...}``.
    Its policy, if its seat takes one, is a shipped name or one of the ``allowed`` files
    (:func:`check_policy`)."""
    if isinstance(value, str):
        return check_policy(Entrant(name, SeatSpec.parse(value)), seats, allowed)
    if not isinstance(value, Mapping) or "seat" not in value:
        raise LeagueError(f"entrant {name!r}: give a seat spec or a table with seat = ...")
    value = dict(value)
    seat = value.pop("seat")
    paid = seats[seat].paid if isinstance(seat, str) and seat in seats else None
    if paid is None:
        _known(value, f"entrant {name!r}", ("arg",))
        return Entrant(name, SeatSpec(seat, value.get("arg")))
    _known(value, f"entrant {name!r}", (paid.arg_key, *paid.settings))
    if paid.arg_key not in value:
        raise LeagueError(f"entrant {name!r}: a {seat} entrant needs {paid.arg_key} = ...")
    query = urlencode({k: value[k] for k in paid.settings if k in value})
    spec = SeatSpec(seat, value[paid.arg_key] + (f"?{query}" if query else ""))
    return check_policy(Entrant(name, spec), seats, allowed)


POLICY_ARG = "policy"
"""What a paid seat that plays from a policy prompt calls its argument
(:attr:`arena.registry.PaidCalls.arg_key`): the Claude and ``openai`` seats, and any
other that plays ``NAME:POLICY?settings`` (:mod:`arena_plugins.model_seat.spec`)."""


def allowed_files(paths: Iterable[str]) -> frozenset[str]:
    """The policy files the command line allows a league file to name (``--allow-policy``),
    as real paths: ``./mine.md``, ``mine.md`` and a link to it are the one file."""
    return frozenset(filter(None, map(_real_path, paths)))


def check_policy(
    entrant: Entrant, seats: Mapping[str, SeatType], allowed: frozenset[str]
) -> Entrant:
    """``entrant``, if its policy is a shipped name or an ``allowed`` file; else a
    :class:`LeagueError` naming it.

    A seat that plays from a policy sends the policy's text to its model, wherever its
    ``base_url`` points: a league file naming ``/home/me/.aws/credentials`` as a policy,
    with a server of its author's as the base URL, would send that file there. A league
    file is shared as a recipe, so only the command line may name a file for it to read;
    the ``--seat``, ``--pool`` and ``compare`` seats are the command line's own."""
    seat = seats.get(entrant.spec.name)
    if seat is None or seat.paid is None or seat.paid.arg_key != POLICY_ARG:
        return entrant
    policy = seat_query(entrant.spec)[0]
    if not names_a_file(policy) or _real_path(policy) in allowed:
        return entrant
    names = ", ".join(p.name for p in shipped())
    raise LeagueError(
        f"entrant {entrant.name!r}: policy {policy!r} is a file, and a league file may name"
        f" only a shipped policy ({names}) or a file the command line allows with"
        " --allow-policy PATH"
    )


def seat_query(spec: SeatSpec) -> tuple[str, dict[str, str]]:
    """A policy seat's arg as its policy and its settings, read as the seat reads them
    (:func:`arena_plugins.model_seat.spec.split_arg`, which also refuses a setting given
    twice): the inverse of the spec :func:`entrant` composes."""
    policy, _, query = (spec.arg or "").partition("?")
    return policy.strip(), dict(parse_qsl(query, keep_blank_values=True))


def _real_path(path: str) -> str | None:
    """``path`` with ``~``, links and ``..`` resolved, as :func:`arena_policies.resolve`
    would open it (from the working directory); ``None`` for text no file can have."""
    try:
        return os.path.realpath(os.path.expanduser(path.strip()))
    except ValueError:  # an embedded NUL
        return None


def _known(table: Any, where: str, keys: tuple[str, ...]) -> None:
    if not isinstance(table, Mapping):
        raise LeagueError(f"{where} must be a table")
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise LeagueError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(keys)})")


def _section(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The file's ``[name]`` table (empty when it has none), as a dict of its own."""
    section = data.get(name, {})
    if not isinstance(section, Mapping):
        raise LeagueError(f"[{name}] must be a table")
    return dict(section)


def _finite_positive(section: Mapping[str, Any], key: str, where: str) -> None:
    """A number of seconds or a rate, if given."""
    if key in section:
        Number(whole=False, above=0).check(section[key], f"{where}: {key}")


def _whole(value: Any, name: str, low: int = 1, high: int | None = None) -> int:
    return Number(whole=True, low=low, high=high).check(value, name)
