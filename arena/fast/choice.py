"""Which engine plays a table: :func:`choose` hands the runner the compiled engine where
it can play the table and is built, the Python engine otherwise.

Its own module, not the package's ``__init__``, so that importing the compiled engine
(which imports ``arena.fast._compiled``, and with it the package) never imports back.
"""

from __future__ import annotations

from arena.engine import Engine, EpisodeConfig, EpisodeEngine
from arena.fast.spec import unsupported
from arena.logs import get_logger

ENGINES = ("auto", "python", "compiled")

log = get_logger(__name__)

try:
    from arena.fast import _compiled  # noqa: F401  (built by setup.py where a compiler is)

    NOT_BUILT = None
except ImportError as exc:
    NOT_BUILT = f"the compiled engine is not built in this install ({exc})"


class EngineUnavailable(ValueError):
    """``--engine compiled`` for a table it cannot play; the message is one line."""


def choose(engine: str, config: EpisodeConfig, seats, *, watched: bool) -> type[EpisodeEngine]:
    """The engine that plays this table as ``engine`` asks: :class:`~arena.engine.Engine`
    or :class:`~arena.fast.engine.CompiledEngine`.

    ``watched``: somebody sees each record as it is logged, which the compiled engine,
    playing deals in batches, cannot show.
    """
    if engine not in ENGINES:
        raise EngineUnavailable(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    if engine == "python":
        return Engine
    reason = _table_reason(config, seats, watched) or NOT_BUILT
    if reason is None:
        from arena.fast.engine import CompiledEngine  # importable only where it was built

        return CompiledEngine
    if engine == "compiled":
        raise EngineUnavailable(f"--engine compiled: {reason}")
    if reason is NOT_BUILT:
        _notice_once(reason)
    return Engine


def _table_reason(config: EpisodeConfig, seats, watched: bool) -> str | None:
    if config.talk:
        return "talk is on"
    if config.clock is not None:
        return "a clock is set"
    if watched:
        return "the episode is watched live"
    return unsupported(config.rules, seats)


_noticed = False


def _notice_once(reason: str) -> None:
    global _noticed
    if not _noticed:
        _noticed = True
        log.warning("playing in Python", reason=reason)
