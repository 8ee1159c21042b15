"""Writing and reading the JSON Lines event log.

The writer keeps every line in memory (reporters read the finished log) and
streams it to a file as the episode runs, flushing at each deal boundary so a
crash loses at most the deal in progress. Reporters always parse the lines
back, so an episode's audit and the audit of its saved file read the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from arena.events import ChallengeMade, EpisodeSettled, EpisodeStarted, Event, from_record, to_line

_FLUSH_AFTER = (ChallengeMade, EpisodeSettled)


class LogError(ValueError):
    """A log file that is missing, unreadable or not an event log; one line, with position."""


class EventLog:
    """The sink the engine emits to."""

    def __init__(self, path: str | Path | None = None):
        self.lines: list[str] = []
        self._file: IO[str] | None = None
        if path is not None:
            self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def emit(self, event: Event) -> None:
        line = to_line(event)
        self.lines.append(line)
        if self._file is not None:
            self._file.write(line + "\n")
            if isinstance(event, _FLUSH_AFTER):
                self._file.flush()

    def records(self) -> list[dict[str, Any]]:
        # One parse of the lines as a JSON array: the same records, at half the cost of
        # a json.loads per line.
        return json.loads("[" + ",".join(self.lines) + "]")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Every record of a saved log, each checked against the event vocabulary."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LogError(f"{path}: cannot read event log ({exc.__class__.__name__})") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            from_record(record)
        except (ValueError, TypeError) as exc:
            raise LogError(f"{path}:{number}: not a valid event ({_first_line(exc)})") from None
        records.append(record)
    if not records or records[0]["type"] != EpisodeStarted.TYPE:
        raise LogError(f"{path}: not an event log (the first line must be an episode event)")
    return records


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()
    return text[0] if text else type(exc).__name__
