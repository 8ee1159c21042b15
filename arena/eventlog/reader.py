"""The one reader of the JSON Lines event log.

A log is read at two levels of trust. A file or a stored text from outside
(:func:`read_log`, :func:`read_numbered`, :func:`parse_text`, and
:func:`log_lines` with :func:`parse_line` for a reader that walks a file itself)
is read strictly, each line checked against the event vocabulary, and anything
else is a one-line :class:`LogError` naming the file and line. The lines this run
wrote itself are read back fast, a block of whole lines per parse
(:func:`parse_written`), through :class:`LogRecords`, a view that holds a long log
a chunk at a time. Both read the same rule of the format: a line ends at ``\\n``
and nowhere else.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from arena.eventlog.errors import LogError
from arena.eventlog.limits import PRODUCTION_LIMITS, LogLimits
from arena.events import EpisodeStarted, from_line, from_record, parse_fast


class LogRecords(Sequence[dict[str, Any]]):
    """A log's records as a reader parses them, without holding a long log in memory.

    Iterate it as often as needed. A log of up to ``keep_parsed`` lines is parsed on
    first use and kept; a longer one is parsed again, a chunk at a time, on every
    pass, so a 100,000-deal episode's reporters fold over it in bounded memory. ``[0]``
    (the header) is its own line's parse; any other index of a long log walks to it.
    :meth:`data` is the lines' bytes, unparsed. The view is fixed at the lines the log
    had when it was taken: lines emitted later are not in it. It compares equal to a
    list of the same records, and copies and pickles as one.
    """

    def __init__(
        self,
        chunks: Callable[[], Iterator[list[dict[str, Any]]]],
        count: int,
        *,
        has_audit: bool,
        first_line: bytes,
        data: Callable[[], bytes],
        keep_parsed: int,
    ):
        self._chunks = chunks
        self._count = count
        self._first_line = first_line
        self._data = data
        self._keep_parsed = keep_parsed
        self.has_audit = has_audit
        """Whether it holds ``audit`` lines (the tail a finished run appended)."""
        self._parsed: list[dict[str, Any]] | None = None
        """The records, once a short log has been read (not before: a reader of the
        header alone, such as an audit handed the compiled engine's tallies, parses no more)."""
        self._header: dict[str, Any] | None = None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        parsed = self._short()
        return iter(parsed) if parsed is not None else self._walk()

    def _short(self) -> list[dict[str, Any]] | None:
        """A short log's records, parsed on first use; ``None`` for a long log."""
        if self._parsed is None and self._count <= self._keep_parsed:
            self._parsed = list(self._walk())
        return self._parsed

    def data(self) -> bytes:
        """The log's lines as saved (UTF-8, each ending in a newline), without a parse:
        for a caller that keeps or sends the log itself (a league stores it)."""
        data = self._data()
        if data.count(b"\n") == self._count:
            return data
        end = 0  # the log has grown since this view was taken: its first lines only
        for _ in range(self._count):
            end = data.index(b"\n", end) + 1
        return data[:end]

    def _walk(self) -> Iterator[dict[str, Any]]:
        left = self._count
        for chunk in self._chunks():
            if len(chunk) >= left:
                yield from chunk[:left]
                return
            left -= len(chunk)
            yield from chunk

    def __getitem__(self, index):
        if index == 0 and self._parsed is None and self._first_line:
            if self._header is None:  # the header's line alone, not its chunk
                self._header = from_line(self._first_line.decode("utf-8"))
            return self._header
        parsed = self._short()
        if parsed is not None:
            return parsed[index]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError("log record index out of range")
        return next(itertools.islice(self._walk(), position, None))

    def __eq__(self, other) -> bool:
        if not isinstance(other, (list, LogRecords)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to a list, so unhashable like one

    def __reduce__(self):
        """A copy or a pickle is a plain list of the records: a thing to edit or send."""
        return list, (list(self),)

    def __repr__(self) -> str:
        return f"LogRecords({self._count} records)"


def parse_written(data: bytes, first: int, long_ints: Sequence[int]) -> list[dict[str, Any]]:
    """The records of a block of whole lines this run wrote (each event checked as it was
    made, so not again here); ``first`` is the block's first line's index in the log and
    ``long_ints`` (ascending) the lines that may hold an int past 64 bits."""
    # The block's lines as one JSON array: one parse instead of one per line ...
    records = parse_fast(b"[" + data[:-1].replace(b"\n", b",") + b"]")
    if long_ints and first <= long_ints[-1]:
        # ... then each line that may hold an int past 64 bits again, by the stdlib
        # (orjson reads such an int as a float): a league's 62-bit seed, say.
        lines = data.split(b"\n")
        for index in long_ints:
            if first <= index < first + len(records):
                records[index - first] = json.loads(lines[index - first])
    return records


def whole_lines(
    read: Callable[[int], bytes], size: int, where, block_bytes: int
) -> Iterator[bytes]:
    """The first ``size`` bytes ``read`` gives, in blocks that each end at a line's end:
    how the writer's own file (or spill) is read back, all of it having been written."""
    left = size
    carry = b""
    while left > 0:
        block = read(min(block_bytes, left))
        if not block:
            raise LogError(f"{where}: the log was cut short while the episode ran")
        left -= len(block)
        block = carry + block
        end = block.rfind(b"\n") + 1
        carry = block[end:]
        if end:
            yield block[:end]


def read_log(path: str | Path, *, limits: LogLimits = PRODUCTION_LIMITS) -> list[dict[str, Any]]:
    """Every record of a saved log, each checked against the event vocabulary."""
    return [record for _number, record in read_numbered(path, limits=limits)]


def read_numbered(
    path: str | Path, *, limits: LogLimits = PRODUCTION_LIMITS
) -> list[tuple[int, dict[str, Any]]]:
    """:func:`read_log`'s records with their line numbers in the file (blank lines skipped)."""
    records = [
        (number, parse_line(line, f"{path}:{number}"))
        for number, line in log_lines(path, limits=limits)
    ]
    _check_header(records, path)
    return records


def parse_text(text: str, source: str) -> list[dict[str, Any]]:
    """The records of a log held in memory (a league's stored log), read as a file's are;
    errors name ``source`` and the line."""
    records = [
        (number, parse_line(line, f"{source}:{number}"))
        for number, line in enumerate(text.split("\n"), start=1)
        if line.strip(_JSON_SPACE)
    ]
    _check_header(records, source)
    return [record for _number, record in records]


def log_lines(
    path: str | Path, *, limits: LogLimits = PRODUCTION_LIMITS
) -> Iterator[tuple[int, bytes]]:
    """The file's lines and their numbers: JSON Lines end at ``\\n`` and nowhere else (a
    record's text may hold any other line break), blank lines are skipped, and a line past
    ``limits.max_line_bytes`` is refused. The file is read a block at a time."""
    cap = limits.max_line_bytes
    number, parts, size = 0, [], 0
    try:
        with open(path, "rb") as file:
            while block := file.read(limits.block_bytes):
                lines = block.split(b"\n")
                if len(lines) == 1:  # the line goes on past this block
                    parts.append(block)
                    size += len(block)
                    if size > cap:
                        raise _too_long(path, number + 1, cap)
                    continue
                if parts:
                    lines[0] = b"".join([*parts, lines[0]])
                tail = lines.pop()
                parts, size = [tail], len(tail)
                for line in lines:
                    number += 1
                    if len(line) > cap:
                        raise _too_long(path, number, cap)
                    if line.strip(_JSON_SPACE_BYTES):
                        yield number, line
    except OSError as exc:
        raise LogError(f"{path}: cannot read event log ({exc.__class__.__name__})") from None
    last = b"".join(parts)
    if last.strip(_JSON_SPACE_BYTES):
        yield number + 1, last


def parse_line(line: bytes | str, where: str) -> dict[str, Any]:
    """One line's record, checked against the event vocabulary, or a one-line
    :class:`LogError` that starts with ``where`` (``FILE:LINE``).

    The line is read strictly: UTF-8 only, no ``NaN`` or ``Infinity`` (not JSON) nor a
    number past a float's range, no key twice (other readers would take the other
    value), and no nesting so deep that a parser gives up.
    """
    try:
        text = line if isinstance(line, str) else line.decode("utf-8")
        record = _STRICT_JSON.decode(text)
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        from_record(record)
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.start + 1].hex()
        reason = f"not UTF-8: byte 0x{bad} at column {exc.start + 1}"
        raise LogError(f"{where}: not a valid event ({reason})") from None
    except RecursionError:
        raise LogError(f"{where}: not a valid event (nested too deeply)") from None
    except (ValueError, TypeError) as exc:
        raise LogError(f"{where}: not a valid event ({_first_line(exc)})") from None
    return record


def _check_header(records: list[tuple[int, dict[str, Any]]], source: str | Path) -> None:
    if not records or records[0][1]["type"] != EpisodeStarted.TYPE:
        raise LogError(f"{source}: not an event log (the first line must be an episode event)")


def _too_long(path: str | Path, number: int, cap: int) -> LogError:
    return LogError(f"{path}:{number}: not a valid event (a line past {cap:,} bytes)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise ValueError(f"key {key!r} appears twice")
            seen.add(key)
    return record


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 would read as infinity
        raise ValueError(f"{text[:40]} is past a float's range")
    return value


_STRICT_JSON = json.JSONDecoder(
    object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_float=_finite
)
_JSON_SPACE = " \t\r"
_JSON_SPACE_BYTES = _JSON_SPACE.encode()


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()
    return text[0] if text else type(exc).__name__
