"""Learning what untrusted distributions register, entry point by entry point.

Each distribution's selected entry points are imported in one worker, all
distributions' workers started together. A worker reports each entry point as
it registers it, so when one crashes, exits or hangs at import the arena knows
which: that entry point is broken, with its reason, and a fresh worker goes on
with the ones after it. One broken entry point breaks only itself.

A description is cached, keyed by the distribution's installed files (its
``RECORD``, and each listed file's size and modification time), the selected
entry points and the isolation: a run of new code never reads an old
description, and an unchanged distribution is not imported again. A league's
worker processes, which load the plugins afresh, read what their parent wrote.
An editable install, or one without a ``RECORD``, has no list of its code, so it
is described every time.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from arena.logs import get_logger
from arena.registry import (
    PluginInfo,
    Registry,
    Reporter,
    SeatType,
    TalkFilter,
    one_line,
    put_third_party,
    refusal,
)
from arena.sandbox.discovery import Distribution
from arena.sandbox.policy import SandboxPolicy
from arena.sandbox.protocol import WorkerCode, is_description
from arena.sandbox.remote import RemoteFilter, RemoteReporter, Worker, WorkerFailed

CACHE_FORMAT = 2
"""Part of every cache key: a change to what a description holds bumps it (2: a hook that
changes the registry outside register() is described as broken)."""

log = get_logger(__name__)


def code_of(dist: Distribution) -> WorkerCode:
    return WorkerCode(
        dist.name, dist.version, tuple((ep.name, ep.value) for ep in dist.entry_points)
    )


def describe_all(
    policy: SandboxPolicy, distributions: list[Distribution], environ: Mapping[str, str]
) -> dict[str, list[dict]]:
    """Per distribution, what each selected entry point registered (or why it is broken)."""
    cache = DescriptionCache.at(environ)

    def one(dist: Distribution) -> list[dict]:
        key = cache.key(dist, policy)
        described = cache.read(key)
        if described is None:
            described, clean = describe(policy, code_of(dist))
            if clean:
                cache.write(key, described)
        return described

    wanted = [dist for dist in distributions if dist.entry_points]
    if not wanted:
        return {dist.name: [] for dist in distributions}
    with ThreadPoolExecutor(max_workers=len(wanted)) as pool:
        found = dict(zip((d.name for d in wanted), pool.map(one, wanted), strict=True))
    return {dist.name: found.get(dist.name, []) for dist in distributions}


def describe(policy: SandboxPolicy, code: WorkerCode) -> tuple[list[dict], bool]:
    """Each entry point's registrations, and whether every worker ran to its end (a
    description made by a worker that failed depends on timing: it is not cached)."""
    described: list[dict] = []
    remaining = list(code.entry_points)
    clean = True
    while remaining:
        worker = None
        try:
            worker = Worker(policy, attrs.evolve(code, entry_points=tuple(remaining)))
            described += worker.hello()
            remaining = []
        except (WorkerFailed, OSError) as exc:
            done = worker.plugins if worker is not None else []
            described += done
            culprit, remaining = remaining[len(done)], remaining[len(done) + 1 :]
            reason = str(exc).removeprefix(f"{code.distribution}: ")
            described.append(broken(culprit[0], f"at import: {reason}"))
            clean = False
        finally:
            if worker is not None:
                worker.close()
    return described, clean


def broken(name: str, reason: str) -> dict:
    """The description of an entry point that registered nothing, for ``reason``."""
    return {"name": name, "hooks": [], "broken": reason, "seats": [], "modes": [],
            "talkFilters": [], "reporters": []}  # fmt: skip


@attrs.frozen
class DescriptionCache:
    """Descriptions on disk, one JSON file per key, written atomically; ``None``: no cache."""

    directory: Path | None

    @classmethod
    def at(cls, environ: Mapping[str, str]) -> DescriptionCache:
        """``$ARENA_CACHE_DIR`` (empty: no cache), else ``$XDG_CACHE_HOME/liars-arena``,
        else ``~/.cache/liars-arena``; under it, ``describe/``."""
        if "ARENA_CACHE_DIR" in environ:
            root = environ["ARENA_CACHE_DIR"]
            return cls(Path(root) / "describe" if root else None)
        base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return cls(Path(base) / "liars-arena" / "describe")

    def key(self, dist: Distribution, policy: SandboxPolicy) -> str | None:
        """The hash of what the description depends on, or ``None``: not cacheable."""
        if self.directory is None or dist.metadata is None:
            return None
        installed = _installed_files(dist)
        if installed is None:
            return None
        digest = hashlib.sha256()
        for part in (
            CACHE_FORMAT, dist.name, dist.version, policy.isolation, policy.as_root,
            [[ep.name, ep.value] for ep in dist.entry_points], installed,
        ):  # fmt: skip
            digest.update(json.dumps(part).encode() + b"\0")
        return digest.hexdigest()

    def read(self, key: str | None) -> list[dict] | None:
        """The description stored under ``key``; ``None`` when there is none, or it is not
        one (a corrupt file is described afresh, and overwritten)."""
        if key is None:
            return None
        try:
            described = json.loads((self.directory / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None
        if isinstance(described, list) and all(map(is_description, described)):
            return described
        return None

    def write(self, key: str | None, described: list[dict]) -> None:
        """Atomically, readable by this user only; a cache that cannot be written is skipped."""
        if key is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(dir=self.directory, suffix=".part")
        except OSError as exc:
            log.debug("description not cached", reason=str(exc))
            return
        try:
            with os.fdopen(fd, "w") as file:
                json.dump(described, file)
            os.replace(temporary, self.directory / f"{key}.json")
        except OSError as exc:
            log.debug("description not cached", reason=str(exc))
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _installed_files(dist: Distribution) -> list | None:
    """``RECORD`` with each listed file's size and modification time, or ``None`` when the
    distribution's code is not all listed there (an editable install, no ``RECORD``)."""
    metadata = dist.metadata
    record = metadata.read_text("RECORD")
    if not record:
        return None
    with contextlib.suppress(ValueError):
        if (
            json.loads(metadata.read_text("direct_url.json") or "{}")
            .get("dir_info", {})
            .get("editable")
        ):
            return None
    files = []
    for row in csv.reader(record.splitlines()):
        if not row:
            continue
        try:
            held = os.stat(metadata.locate_file(row[0]))
        except OSError:
            held = None
        files.append([*row, None if held is None else [held.st_size, held.st_mtime_ns]])
    return files


def sandboxed_plugins(
    registry: Registry, policy: SandboxPolicy, dist: Distribution, described: list[dict]
) -> None:
    """Record what an untrusted distribution's entry points register, as stand-ins."""
    provenance = dist.provenance(policy.isolation)
    code = code_of(dist)
    for plugin in described:
        source, refused = plugin["name"], []
        registry.sources[source] = provenance
        stand_ins = _stand_ins(registry, policy, code.only(source), source, provenance)
        # A mode declared wholly as data is played by the core's own code; one whose draw
        # or render is code stays listed, and plays only under --trust.
        data_modes = [m for m in plugin["modes"] if m.get("data")]
        if data_modes:
            from arena.sandbox.views import mode_from_json  # here: see arena.sandbox.early
        code_modes = tuple(m for m in plugin["modes"] if not m.get("data"))
        entries = [*((table, stand_in, data) for kind, (table, stand_in) in stand_ins.items()
                     for data in plugin[kind]),
                   *((registry.modes, lambda d, source=source: (mode_from_json(d), source), m)
                     for m in data_modes)]  # fmt: skip
        for table, stand_in, data in entries:
            try:
                put_third_party(registry, table, data["name"], stand_in(data), dist.name)
            except (ValueError, TypeError) as exc:  # a clash, or a mode the core cannot build
                refused.append(one_line(exc))
                log.warning("plugin registration refused", plugin=source, reason=refused[-1])
                if data["name"] not in table:
                    registry.withhold(data["name"], refusal(source, refused[-1]))
        dropped = tuple(plugin.get("dropped", ()))
        for name in dropped:
            registry.withhold(name, refusal(source, plugin["broken"]))
        info = PluginInfo(
            source, dist.name, dist.version, tuple(plugin["hooks"]), plugin["broken"],
            policy.isolation, tuple(refused), code_modes, dist.statuses.get(source, "loaded"),
            dropped,
        )  # fmt: skip
        registry.record(info)


def _stand_ins(
    registry: Registry, policy: SandboxPolicy, code: WorkerCode, source: str, provenance: dict
) -> dict:
    """Per kind in a worker's description: the registry table, and the stand-in for one entry."""
    return {
        "seats": (registry.seats, lambda d: SeatType(
            d["name"], None, d["description"], d["stochastic"], source, d.get("argument"),
            provenance=provenance, code=code,
        )),
        "talkFilters": (registry.talk_filters, lambda d: TalkFilter(
            d["name"], RemoteFilter(policy, code, d["name"]), d["order"], source, provenance
        )),
        "reporters": (registry.reporters, lambda d: Reporter(
            d["name"], RemoteReporter(policy, code, d["name"]), source, None, provenance
        )),
    }  # fmt: skip
