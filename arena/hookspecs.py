"""Every hook a plugin can implement.

Each hook is a registration hook: it receives a ``register`` callback and
calls it once per thing the plugin provides. The host collects what was
registered into a :class:`arena.registry.Registry`, where a name registered
twice is an error that names both sources.
"""

import pluggy

hookspec = pluggy.HookspecMarker("arena")
hookimpl = pluggy.HookimplMarker("arena")


# --- game content -------------------------------------------------------------


@hookspec
def register_modes(register):
    """Register game modes: ``register(mode)`` with an :class:`arena.modes.Mode`."""


# --- seats ----------------------------------------------------------------------


@hookspec
def register_seats(register):
    """Register seat policies: ``register(name, factory, description=..., stochastic=...,
    argument=...)``.

    ``factory(context)`` receives an :class:`arena.seats.SeatContext` and returns an
    object with ``decide(view) -> reply``. ``argument`` says what ``name:ARG`` means;
    without it the seat takes no argument and a spec that gives one is refused.
    ``person=`` (an :class:`arena.registry.Person`) declares that a person plays it, and
    how the terminal and the table server show them the table; a league refuses the seat.
    ``paid=`` (an :class:`arena.registry.PaidCalls`) declares that its decisions are paid
    model calls: the key's variable, the model an arg calls, the settings a league file
    spells, and a ``preflight(arg, environ)`` that every command seating it (``play``,
    ``serve``, ``compare``, ``league run``) runs before any table, so a spec that cannot be
    played is one error line before anything is paid for. A built seat with
    a ``compiled_spec()`` method (an :class:`arena.fast.spec.CompiledSeat`) may be played by
    the compiled engine; see docs/plugins.md.
    """


# --- table talk -------------------------------------------------------------


@hookspec
def register_talk_filters(register):
    """Register talk filters: ``register(name, filter, order=...)``.

    ``filter(text, speaker)`` returns the text to publish (or ``None`` to drop it).
    Filters run in ascending ``order``, then by name.
    """


# --- audit ------------------------------------------------------------------


@hookspec
def register_audit_reporters(register):
    """Register audit reporters: ``register(name, reporter, pool=None, compiled=None)``.

    ``reporter(records)`` receives the finished event log (a sequence of JSON objects,
    full information, without any ``audit`` lines) and returns a JSON-able section.
    Read it in passes and take the header as ``records[0]``: a long episode's records
    (:class:`arena.eventlog.LogRecords`) are read back from the log on each pass, not
    held in memory, so any other index walks the log.
    One rule for every reporter, ours included: the section is ``results.audit[name]``
    (the soft-play figures are reporters named ``faced``, ``expLoss``, ...). A name
    registered twice is an error naming both plugins. Reporters run in name order
    and must not mutate the records; one that raises gets the section
    ``"error: ..."`` and a logged warning, and the episode stands. Entries of the
    ``flags`` section are also appended to the log as ``audit`` events. Sections
    are diagnostics: they never change a score.

    ``pool(episodes)``, if given, makes the section over many episodes: it receives
    each episode's results JSON (``seats`` with their policies, and ``audit``) and
    returns the pooled section, shown by ``arena audit LOG LOG ...`` and
    ``arena audit --league DB``. See docs/audit.md.

    ``compiled``, an :class:`arena.registry.CompiledTally`, declares that the compiled
    engine's C table keeps the reporter's figure as it plays (the soft-play plugin's
    tallies); only an in-process reporter can declare it.
    """
