"""The registry: every mode, seat, talk filter and reporter the plugins provide, by name.

Both sides of the trust boundary fill it: the loader (:mod:`arena.plugins`) with
what in-process plugins register, the sandbox (:mod:`arena.sandbox.describe`) with
stand-ins for what untrusted workers describe. Neither needs the other: each
writes here, and the rest of the arena reads only here.

Rule 11's fallback is not up to the plugins loaded: :meth:`Registry.fallback` is
the first-party ``bayes`` seat of the essential ``scripted`` entry point, as
pytest's essential plugins cannot be disabled.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from arena import logs
from arena.sandbox.discovery import (
    ENTRY_POINT_GROUP,
    FALLBACK_PLUGIN,
    FIRST_PARTY_DISTRIBUTION,
    WITHHELD,
)

if TYPE_CHECKING:  # a sandbox worker imports this module: no modes, no numpy
    from arena.actions import Action
    from arena.modes import Mode
    from arena.rules import TableRules
    from arena.sandbox.protocol import WorkerCode
    from arena.seats import SeatContext
    from arena.view import SeatView

LOCAL = {"distribution": "local", "version": "", "isolation": "in-process"}
"""Provenance of a plugin registered by hand (tests, the conformance kit)."""
FALLBACK_SEAT = "bayes"
"""Rule 11's fallback seat."""

log = logs.get_logger(__name__)


class UnknownName(LookupError):
    """A mode, seat, filter or reporter name nobody registered."""


class DuplicateName(ValueError):
    """Two plugins registered the same name."""


class ReservedName(DuplicateName):
    """A third party registered a name this project's own plugins hold."""


class RegistryTampered(Exception):
    """A plugin's hook changed the registry other than through its ``register`` callback
    (relabelled or replaced an entry, swapped a table, removed another plugin's): the
    plugin is refused, and the registry put back as the plugin found it."""


@attrs.frozen
class PluginInfo:
    """One entry point as ``arena plugins`` reports it."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...] = ()
    broken: str | None = None
    """Why it was skipped, or ``None`` when it loaded."""
    isolation: str = "in-process"
    """Where its code runs: ``in-process``, ``bwrap`` or ``process``."""
    refused: tuple[str, ...] = ()
    """Registrations refused (a reserved name), one line each."""
    modes: tuple[dict, ...] = ()
    """Modes an untrusted distribution declares: listed as data, not played without --trust."""
    selection: str = "loaded"
    """``loaded``, ``essential``, ``allowed``, or a key of :data:`WITHHELD`: never imported."""
    dropped: tuple[str, ...] = ()
    """Names it registered before it broke, withdrawn with it."""

    @property
    def withheld(self) -> str | None:
        """Why the user's selection kept it from loading, or ``None``."""
        return WITHHELD.get(self.selection)

    def unavailable(self) -> str | None:
        """Why it provides nothing (withheld or broken), as one line naming it, or ``None``."""
        why = self.withheld or (f"broken: {self.broken}" if self.broken else None)
        where = f" ({self.distribution} {self.version})" if self.distribution else ""
        return f"plugin {self.name!r}{where} is {why}" if why else None

    @property
    def trust(self) -> str:
        """``first-party``; ``local`` (registered by hand, in-process); ``trusted`` (a third
        party the user let in-process); or ``third-party``, sandboxed (:mod:`arena.sandbox`)."""
        if self.distribution is None:
            return "local"
        if self.distribution == FIRST_PARTY_DISTRIBUTION:
            return "first-party"
        return "trusted" if self.isolation == "in-process" else "third-party"


@attrs.frozen
class PaidCalls:
    """What a seat whose decisions are paid model calls declares, so that a league can
    spell its settings, check for its key and price it without importing the seat."""

    key_env: str
    """The environment variable holding its API key; without it the seat's decisions are
    played by a stand-in, so a league refuses it unless told to allow stand-ins."""
    model: Callable[[str | None, Mapping[str, str]], str]
    """``model(arg, environ)``: the model a seat of that ``name:ARG`` calls, for pricing;
    raises ``ValueError`` with a one-line reason for an arg it cannot play."""
    arg_key: str = "arg"
    """What a league file's entrant table calls the seat's argument."""
    settings: tuple[str, ...] = ()
    """What else an entrant table may spell, in the order the arg's query gives them:
    ``{seat = "s", arg = "a", model = "m"}`` is the spec ``s:a?model=m``."""
    preflight: Callable[[str | None, Mapping[str, str]], None] | None = None
    """``preflight(arg, environ)``: checks, before any table is played and any call paid
    for, that a seat of that ``name:ARG`` can be played (asking its provider about the
    model if need be); raises ``ValueError`` with a one-line reason if not."""
    missing_key: Callable[[str | None, Mapping[str, str]], str | None] | None = None
    """``missing_key(arg, environ)``: the key a seat of that ``name:ARG`` needs and lacks
    (so a stand-in would play it), named as ``no ...`` completes it, or ``None``; unset:
    ``key_env`` if it is unset. A seat whose key depends on its arg (a local server needs
    none, a base URL its own key) says so here."""
    provider: Callable[[str | None, Mapping[str, str]], str | None] | None = None
    """``provider(arg, environ)``: the genai-prices provider ID its calls are priced by, or
    ``None`` for a server the user runs, which no table prices (unpriced, never $0); unset:
    Anthropic's (:data:`arena.league.cost.DEFAULT_PROVIDER`)."""
    unpriced: Callable[[str | None, Mapping[str, str]], str] | None = None
    """``unpriced(arg, environ)``: why a seat no provider prices is unpriced, in a few words
    (``a server you run``, ``no price known for HOST``): only the seat knows where its
    calls go."""


@attrs.frozen
class Person:
    """What a seat a person plays declares: how the arena's front ends show them the table
    and take their moves (``arena play`` prints the feed; ``arena serve`` seats them in a page).
    Such a seat waits for a person, so a league, which plays unattended, refuses it."""

    feed: Callable[[Mode, int, int | None], Callable[[dict], Any]]
    """``feed(mode, deals, viewer)``: for each full-information record as it is logged, the
    news ``viewer`` (``None``: a spectator) may see of it, with ``kind`` and ``text``, or
    ``None``. The terminal prints each ``text``; a page gets both."""
    screen: Callable[[SeatContext], Callable[[SeatView], dict]]
    """``screen(context)``: the seat's turn screen at each of its views, as the JSON the
    table page draws (the human seat's ``TurnScreen.to_json()``)."""
    move: Callable[[str, SeatView, TableRules], Action | str]
    """``move(command, view, rules)``: the action a page's typed command asks for, or a
    one-line hint why it is none (the page shows it and asks again)."""


@attrs.frozen
class SeatType:
    name: str
    factory: Callable[..., Any] | None
    """Builds the seat in this process; ``None`` for a seat that lives in a worker."""
    description: str = ""
    stochastic: bool = False
    source: str = ""
    argument: str | None = None
    """What the ``name:ARG`` part means, or ``None``: the seat takes no argument."""
    provenance: dict[str, str] = LOCAL
    """``distribution``, ``version`` and ``isolation``, as the log and results record them."""
    code: WorkerCode | None = None
    """What its worker imports, for a seat that lives in a worker."""
    person: Person | None = None
    """For a seat a person plays: its front ends' parts."""
    paid: PaidCalls | None = None
    """For a seat whose decisions are paid model calls: what a league needs to know."""

    @property
    def sandboxed(self) -> bool:
        return self.factory is None


@attrs.frozen
class TalkFilter:
    name: str
    apply: Callable[[str, int], str | None]
    order: int = 100
    source: str = ""
    provenance: dict[str, str] = LOCAL


@attrs.frozen
class CompiledTally:
    """A figure of the log that the compiled engine's C table keeps as it plays (the
    soft-play tallies), declared by the reporters that read it: so the engine learns what
    to tally from the registry, and the audit takes the figure as known, not re-read."""

    figure: Any
    """The :func:`arena.audit.per_log` figure whose value this is."""
    face_worths: Callable[[Mode, int], Any]
    """``face_worths(mode, unseen)[face][need]``: what challenging such a facing was worth
    and its band, at a table with ``unseen`` hidden symbols (``need`` is the bid's quantity
    less the facer's own count of its face)."""
    from_table: Callable[..., Any]
    """The figure from the C table's tallies, given as keywords (``faced``, ``challenged``,
    ``net``, ``band_faced``, ``band_forgone``, ``bids``, ``false_bids``, ``decisions``,
    ``deals``)."""


@attrs.frozen
class CompiledDecisions:
    """A figure of the log's decisions that the compiled engine makes from the rows its C
    table keeps (:func:`arena.grading.from_rows`, :data:`arena.grading.CHUNK` at a time, as
    :func:`arena.grading.judge` would judge the log), so the audit need not read it back."""

    figure: Any
    """The :func:`arena.audit.per_log` figure whose value this is."""
    start: Callable[[int], Any]
    """``start(seats)``: a fold with ``add(decisions)`` for each chunk of
    :class:`arena.grading.Decisions`, in log order, and ``value()``: the figure."""


@attrs.frozen
class Reporter:
    name: str
    report: Callable[[list[dict]], Any]
    source: str = ""
    pool: Callable[[list[dict]], Any] | None = None
    """``pool(episodes)``: the section over many episodes' results (``arena audit A B``)."""
    provenance: dict[str, str] = LOCAL
    compiled: CompiledTally | CompiledDecisions | None = None
    """What the compiled engine keeps for this reporter as it plays, if anything."""


@attrs.define
class Registry:
    """Everything the loaded plugins registered, by stable name."""

    modes: dict[str, tuple[Mode, str]] = attrs.Factory(dict)
    seats: dict[str, SeatType] = attrs.Factory(dict)
    talk_filters: dict[str, TalkFilter] = attrs.Factory(dict)
    reporters: dict[str, Reporter] = attrs.Factory(dict)

    def mode(self, name: str) -> Mode:
        return self._lookup(self.modes, name, "mode")[0]

    ambiguous: dict[str, list[str]] = attrs.Factory(dict)
    """Bare names two third parties registered, to their ``DIST:NAME`` forms."""
    withheld: dict[str, str] = attrs.Factory(dict)
    """Names nobody provides, and why: a refused registration's name, and the name of an
    entry point that was withheld or broken (what it would have registered is unknown,
    and its own name is what a user most likely asks for)."""
    broken: list[str] = attrs.Factory(list)
    """Why each broken plugin is broken: any unknown name may be one of theirs."""
    plugins: list[PluginInfo] = attrs.Factory(list)
    """Every entry point, as ``arena plugins`` lists it: loaded, sandboxed, withheld or broken."""
    sources: dict[str, dict[str, str]] = attrs.Factory(dict)
    """Each plugin's provenance by its name (a mode's entry holds only its plugin's name)."""

    def seat(self, name: str) -> SeatType:
        if name in self.ambiguous:
            raise UnknownName(
                f"seat {name!r} is registered by several distributions; "
                f"name one of: {', '.join(self.ambiguous[name])}"
            )
        return self._lookup(self.seats, name, "seat")

    def _lookup(self, table: dict, name: str, kind: str):
        if name in table:
            return table[name]
        if name in self.withheld:
            raise UnknownName(f"{kind} {name!r} is unavailable: {self.withheld[name]}")
        known = ", ".join(sorted(table)) or "none installed"
        broken = f"; broken, providing nothing: {'; '.join(self.broken)}" if self.broken else ""
        raise UnknownName(f"unknown {kind} {name!r} (known: {known}){broken}")

    def provenance_of(self, value: Any) -> dict[str, str]:
        """Who registered a table's ``value``: its own provenance, or a mode's plugin's."""
        if hasattr(value, "provenance"):
            return value.provenance
        return self.sources.get(source_of(value), LOCAL)

    def withhold(self, name: str, why: str) -> None:
        """Remember why ``name`` is not available; the first reason given stands."""
        self.withheld.setdefault(name, why)

    def preflight(self, spec, environ: Mapping[str, str]) -> None:
        """The paid seat's own check that ``spec`` can be played (:attr:`PaidCalls.preflight`),
        before any table: every command that seats it runs this, for every such seat."""
        seat, plain = self.seat_for(spec)
        if seat.paid is not None and seat.paid.preflight is not None:
            seat.paid.preflight(plain.arg, environ)

    def seat_for(self, spec):
        """The seat type and plain spec of ``spec``, which may be ``DIST:NAME[:ARG]``."""
        if spec.name not in self.seats and spec.arg and spec.name not in self.ambiguous:
            name, sep, arg = spec.arg.partition(":")
            qualified = f"{spec.name}:{name}"
            if qualified in self.seats:
                return self.seats[qualified], attrs.evolve(spec, arg=arg if sep else None)
        return self.seat(spec.name), spec

    def ordered_talk_filters(self) -> list[TalkFilter]:
        return sorted(self.talk_filters.values(), key=lambda f: (f.order, f.name))

    def record(self, info: PluginInfo) -> PluginInfo:
        """List one entry point; one that provides nothing makes its name say why."""
        why = info.unavailable()
        if why:
            self.withhold(info.name, why)
        if info.broken:
            log.warning("plugin skipped", plugin=info.name, reason=info.broken)
            self.broken.append(why)
        self.plugins.append(info)
        return info

    @staticmethod
    def fallback() -> Callable[[SeatContext], Any]:
        """Rule 11's fallback seat factory: the first-party ``bayes``, always there.

        It comes from this project's own essential entry point, whatever the host
        loaded, so no selection, disabled autoload or third party can change it.
        """
        return _essential_seats()[FALLBACK_SEAT]


TABLES = {"modes": "mode", "seats": "seat", "talk_filters": "talk filter", "reporters": "reporter"}
"""The registry's tables, by attribute, and what an entry of each is called."""
_ABSENT = object()


@attrs.frozen
class Checkpoint:
    """The registry's tables as a plugin found them: what its hooks may only add to, and
    only through ``register``, and what they are put back to if the plugin is refused."""

    tables: dict[str, tuple[dict, dict[str, tuple[Any, str]]]]
    """Per table attribute: the table itself, and what it held, each entry with the plugin
    it was from (an entry relabelled in place is the same object with another source)."""

    @classmethod
    def of(cls, registry: Registry) -> Checkpoint:
        tables = {attr: getattr(registry, attr) for attr in TABLES}
        return cls(
            {
                attr: (table, {name: (value, source_of(value)) for name, value in table.items()})
                for attr, table in tables.items()
            }
        )

    def tampering(
        self, registry: Registry, source: str, registered: Mapping[tuple[str, str], Any]
    ) -> str | None:
        """The first change to the tables besides the entries plugin ``source`` has
        ``registered`` (keyed by table attribute and name), in words, or ``None``."""
        for attr, label in TABLES.items():
            table, before = self.tables[attr]
            if getattr(registry, attr) is not table:
                return f"replaced the {label} table"
            own = {name for kind, name in registered if kind == attr}
            expected = before | {name: (registered[attr, name], source) for name in own}
            for name in sorted(expected.keys() | table.keys(), key=str):
                found = table.get(name, _ABSENT)
                wanted, wanted_source = expected.get(name, (_ABSENT, None))
                if found is wanted and (found is _ABSENT or source_of(found) == wanted_source):
                    continue
                if wanted is _ABSENT:
                    return f"{label} {name!r} added without register()"
                whose = "its" if name in own else "another plugin's"
                if found is _ABSENT:
                    return f"{whose} {label} {name!r} removed"
                return f"{whose} {label} {name!r} replaced or relabelled"
        return None

    def restore(self, registry: Registry) -> None:
        for attr, (table, before) in self.tables.items():
            table.clear()
            table.update({name: value for name, (value, _) in before.items()})
            setattr(registry, attr, table)


def put_third_party(registry: Registry, table: dict, name: str, value: Any, dist: str) -> None:
    """Register an untrusted distribution's ``name``: reserved names refused, clashes qualified."""
    holder = registry.provenance_of(table[name]) if name in table else None
    if holder is not None and holder["distribution"] == dist:
        raise DuplicateName(
            f"{name!r} is registered by both {source_of(table[name])!r} and "
            f"{source_of(value)!r} of {dist!r}"
        )
    if holder is not None:
        held = holder["distribution"]
        if held in (FIRST_PARTY_DISTRIBUTION, "local") or holder["isolation"] == "in-process":
            raise ReservedName(f"{name!r} is reserved by {held!r}; {dist!r} may not register it")
        registry.ambiguous[name] = [f"{held}:{name}"]
        table[f"{held}:{name}"] = table.pop(name)
    if name in registry.ambiguous:
        registry.ambiguous[name].append(f"{dist}:{name}")
        name = f"{dist}:{name}"
    table[name] = value


def put(table: dict, name: str, value: Any, source: str) -> None:
    if name in table:
        raise DuplicateName(
            f"{name!r} is registered by both {source_of(table[name])!r} and {source!r}"
        )
    table[name] = value


def source_of(value: Any) -> str:
    return value[1] if isinstance(value, tuple) else value.source


def refusal(plugin: str, why: str) -> str:
    """Why a name ``plugin`` registered is not available, as a lookup of it says."""
    return f"plugin {plugin!r} was refused: {why}"


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


@functools.cache
def _essential_seats() -> dict[str, Callable[..., Any]]:
    """The seats the essential first-party entry point registers, by name (imported once)."""
    from importlib.metadata import entry_points

    entry_point = next(  # the first, as import would find it, should metadata be doubled
        ep
        for ep in entry_points(group=ENTRY_POINT_GROUP, name=FALLBACK_PLUGIN)
        if ep.dist is not None and ep.dist.name == FIRST_PARTY_DISTRIBUTION
    )
    seats: dict[str, Callable[..., Any]] = {}
    entry_point.load().register_seats(
        register=lambda name, factory, **_: seats.setdefault(name, factory)
    )
    return seats
