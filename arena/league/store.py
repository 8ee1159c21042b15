"""A league in one SQLite file: its settings, every finished episode, its seats and its log.

Every finished episode is committed in one transaction with its seats, its
challenges (who took a point from whom) and its compressed event log, so an
interrupted league loses at most the episodes in flight and resumes from the
file. The settings are written with the first episode, so a league that fails
before it plays anything leaves none behind; resuming with other settings is
refused. One league at a time: a second run on the same file is refused while
the first holds its lock (``PATH.lock``, released by the kernel even on kill -9).
The schema is documented in docs/league.md.

A league file says so: its ``PRAGMA application_id`` is :data:`APPLICATION_ID`
(a file stored before the mark, by its tables and their columns). Any other
SQLite file, and a damaged one, is refused in one line before anything is
written to it or made beside it, by the writer and the readers alike. Readers
open the file read-only, and immutable on a read-only mount, where SQLite could
not make the ``-shm`` file it reads with. A league that cannot be started (a
full disk) leaves none of the files it made.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from arena.league.schedule import DUPLICATE_SCHEDULE, EARLIER_SCHEDULES
from arena.outputs import OutputFailed

SCHEMA = """
CREATE TABLE IF NOT EXISTS league (settings TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    idx INTEGER PRIMARY KEY,
    tbl INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    deals_played INTEGER NOT NULL,
    stand_in INTEGER NOT NULL,
    results TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    idx INTEGER NOT NULL REFERENCES episodes(idx),
    slot INTEGER NOT NULL,
    entrant TEXT NOT NULL,
    policy TEXT NOT NULL,
    points INTEGER NOT NULL,
    score REAL NOT NULL,
    fallbacks INTEGER NOT NULL,
    stand_in TEXT,
    model TEXT,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    usd REAL NOT NULL,
    distribution TEXT,
    version TEXT,
    isolation TEXT,
    price_source TEXT,
    PRIMARY KEY (idx, slot)
);
CREATE TABLE IF NOT EXISTS points (
    idx INTEGER NOT NULL REFERENCES episodes(idx),
    winner INTEGER NOT NULL,
    loser INTEGER NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (idx, winner, loser)
);
CREATE TABLE IF NOT EXISTS stopped (reason TEXT NOT NULL, tables INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS logs (
    idx INTEGER PRIMARY KEY REFERENCES episodes(idx),
    codec TEXT NOT NULL,
    log BLOB NOT NULL
);
"""
LOG_CODEC = "zlib-jsonl"
APPLICATION_ID = 0x4C494152
"""``PRAGMA application_id`` of a league file: "LIAR" in ASCII."""
LEAGUE_TABLES = frozenset({"league", "episodes", "seats", "points", "logs"})
SQLITE_MAGIC = b"SQLite format 3\x00"
SQLITE_HEADER = 100
"""Bytes of an SQLite file's header (sqlite.org/fileformat.html)."""


class StoreError(ValueError):
    """The store file is unusable for this league; one line for the user."""


class LeagueStore:
    """The writer: one per league run, holding the file's lock until :meth:`close`."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        existed = self.path.exists()
        if existed:  # refused before its lock file is made beside it
            open_read_only(self.path, new=True).close()
        lock = Path(f"{path}.lock")
        made = [side for side in (self.path, *league_files(path)[1:], lock) if not side.exists()]
        self._lock = _take_lock(self.path)
        try:
            self.db = sqlite3.connect(self.path)
            self._prepare()
        except sqlite3.DatabaseError as exc:
            self.db.close()
            full = _disk_full(exc, self.path.parent)  # before the files made free their blocks
            for side in made:  # what this run made, before another run may take the lock
                side.unlink(missing_ok=True)
            self._release()
            if full:
                raise OutputFailed(errno.ENOSPC, f"{path}: disk full; nothing stored") from None
            raise StoreError(
                f"{path}: cannot write the league database ({exc}); nothing stored"
            ) from None

    def _prepare(self) -> None:
        """Make a new file a league; a league stored before a later table or column gets
        it. A league that has them is left byte for byte as it was: refusing to resume it
        with other settings writes nothing."""
        # WAL without a sync per commit: a commit survives the process being killed
        # (kill -9, a crash), only a power cut can lose the last ones; a sync per
        # episode made the store the league's bottleneck (15 ms of 24 per episode).
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.executescript(SCHEMA)
        if not has_column(self.db, "seats", "price_source"):  # stored before it was kept
            self.db.execute("ALTER TABLE seats ADD COLUMN price_source TEXT")
        if self.db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def check(self, settings: dict) -> None:
        """Refuse to resume a league stored with other settings."""
        row = self.db.execute("SELECT settings FROM league").fetchone()
        if row is None or row[0] == _settings_text(settings):
            return
        earlier = _earlier_schedule(row[0], settings)
        if earlier is not None:
            raise StoreError(
                f"{self.path} holds this duplicate league seated by duplicate schedule"
                f" {earlier} ({EARLIER_SCHEDULES[earlier]}); it resumes only under that"
                f" schedule, and this arena seats by schedule {DUPLICATE_SCHEDULE}:"
                " play it again in a new file"
            )
        raise StoreError(
            f"{self.path} holds a league with other settings ({_differences(row[0], settings)});"
            " resume it with its settings, or play this league in another file (--db)"
        )

    def finished(self) -> set[int]:
        return {idx for (idx,) in self.db.execute("SELECT idx FROM episodes")}

    def provenance(self) -> dict[str, set[tuple[str, str]]]:
        """The (distribution, version) pairs each entrant's stored episodes were played with."""
        found: dict[str, set[tuple[str, str]]] = {}
        query = "SELECT DISTINCT entrant, distribution, version FROM seats"
        for entrant, distribution, version in self.db.execute(query):
            found.setdefault(entrant, set()).add((distribution, version))
        return found

    def spent(self) -> tuple[int, float, int]:
        """Tokens, dollars and episodes the stored episodes cost."""
        tokens, usd = self.db.execute(
            "SELECT COALESCE(SUM(input_tokens + output_tokens + cache_read_tokens"
            " + cache_write_tokens), 0), COALESCE(SUM(usd), 0.0) FROM seats"
        ).fetchone()
        (episodes,) = self.db.execute("SELECT COUNT(*) FROM episodes").fetchone()
        return tokens, usd, episodes

    def save(self, settings: dict, episodes: Sequence[StoredEpisode]) -> None:
        """Episodes, each with its seats, points and log, in one transaction (with the
        settings if these are the league's first): a file holds whole episodes only."""
        try:
            with self.db:
                self.db.execute(
                    "INSERT INTO league SELECT ? WHERE NOT EXISTS (SELECT 1 FROM league)",
                    (_settings_text(settings),),
                )
                for episode in episodes:
                    self._insert(episode)
        except sqlite3.Error as exc:
            first = episodes[0].index if episodes else None
            raise StoreError(
                f"{self.path}: cannot store episode {first} ({exc});"
                " the league is resumable from the episodes stored so far"
            ) from None

    def record_stop(self, reason: str, tables: int) -> None:
        """Why the last run stopped (``target``, ``cap``, ``budget``) after ``tables`` tables,
        for ``league show``; kept only beside stored episodes, never in a new file."""
        with self.db:
            if self.db.execute("SELECT 1 FROM league").fetchone() is not None:
                self.db.execute("DELETE FROM stopped")
                self.db.execute("INSERT INTO stopped VALUES (?, ?)", (reason, tables))

    def _insert(self, episode: StoredEpisode) -> None:
        """One episode's rows, inside the caller's transaction."""
        results = episode.results
        self.db.execute(
            "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                episode.index,
                episode.table,
                episode.rotation,
                results["seed"],
                results["status"],
                results["dealsPlayed"],
                any(seat.get("standIn") for seat in results["seats"]),
                episode.results_text,
            ),
        )
        self.db.executemany(
            f"INSERT INTO seats VALUES ({', '.join('?' * 18)})",
            [(episode.index, *row) for row in episode.seat_rows],
        )
        self.db.executemany(
            "INSERT INTO points VALUES (?, ?, ?, ?)",
            [(episode.index, *pair, n) for pair, n in sorted(episode.points.items())],
        )
        self.db.execute(
            "INSERT INTO logs VALUES (?, ?, ?)", (episode.index, LOG_CODEC, episode.log)
        )

    def close(self) -> None:
        self.db.close()
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


@attrs.frozen
class StoredEpisode:
    """A played fixture in the rows the store keeps (built by :mod:`arena.league.run`)."""

    index: int
    table: int
    rotation: int
    results: dict[str, Any]
    results_text: str
    """``results`` as the store keeps it (:func:`results_text`, made by the worker)."""
    seat_rows: list[tuple]
    """Every ``seats`` column after ``idx``, one tuple per slot."""
    points: Mapping[tuple[int, int], int]
    """(winner slot, loser slot) -> points taken, from the log's challenges."""
    log: bytes
    """The event log as :func:`compress_log` made it."""


def challenge_points(records: Iterable[Mapping[str, Any]]) -> dict[tuple[int, int], int]:
    """(winner slot, loser slot) -> points the winner took from the loser, from a log's
    ``challenge`` events (rule 7: each settled challenge moves one point)."""
    taken: dict[tuple[int, int], int] = {}
    for record in records:
        if record["type"] == "challenge":
            pair = (record["winner"], record["loser"])
            taken[pair] = taken.get(pair, 0) + 1
    return taken


def league_files(path: str | Path) -> list[Path]:
    """The league file and the SQLite files beside it that hold its data or say how to read
    it (the write-ahead log and its index, a rollback journal): what a command reading the
    league must not write over, whether or not they exist yet (a reader may make them)."""
    return [Path(path), *(Path(f"{path}-{side}") for side in ("wal", "shm", "journal"))]


def open_read_only(path: str | Path, *, new: bool = False) -> sqlite3.Connection:
    """A league file for reading; a missing, foreign or damaged file is a :class:`StoreError`.

    Whose file it is is read from its header (:func:`_refuse_foreign`) before SQLite opens
    it as a reader, since a reader makes ``-wal`` and ``-shm`` files beside it. ``new``: an
    empty file, or an SQLite file with no tables, is accepted too (a league to be).
    """
    path = Path(path)
    if path.is_dir():
        raise StoreError(f"{path}: a folder, not a league database")
    if not path.is_file():
        raise StoreError(f"{path}: no such league database")
    _refuse_foreign(path, new)
    # Checked where nothing is made beside the file when its write-ahead log is empty:
    # a damaged file is refused with no -wal or -shm left behind.
    probe = _read_only_uri(path) if _wal_holds_changes(path) else _immutable_uri(path)
    with contextlib.closing(_connect(path, probe)) as db:
        _refuse_damaged(path, db)
    return _connect(path, _read_only_uri(path))


def _connect(path: Path, uri: str) -> sqlite3.Connection:
    try:
        return sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the league database ({exc})") from None


def _refuse_damaged(path: Path, db: sqlite3.Connection) -> None:
    """Refuse a file SQLite's quick check finds damaged, naming its first problem."""
    try:
        damage = [line for (line,) in db.execute("PRAGMA quick_check")]
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: a damaged league database ({exc}); left as it was") from None
    if damage != ["ok"]:  # the first problem, without its "*** in database main ***"
        first = damage[0].splitlines()[-1]
        raise StoreError(f"{path}: a damaged league database ({first}); left as it was")


def _disk_full(exc: sqlite3.Error, folder: Path) -> bool:
    """Whether SQLite failed for want of space: SQLITE_FULL, by the message SQLite gives it
    (its code is on the exception only from Python 3.11), or an I/O error on a disk with no
    block left (growing the ``-shm`` index fails as SQLITE_IOERR_SHMSIZE, without its errno)."""
    if "database or disk is full" in str(exc):
        return True
    try:
        return os.statvfs(folder).f_bavail == 0
    except OSError:
        return False


@contextlib.contextmanager
def reading(path: str | Path) -> Iterator[sqlite3.Connection]:
    """A league file open for reading, whose contents are trusted no more than a log's.

    A well-formed SQLite file may still hold what no league writes (a table without
    its column, results that are not JSON): that is a :class:`StoreError` naming the
    file, as a damaged log is a line naming the log, never a traceback.
    """
    db = open_read_only(path)
    try:
        yield db
    except (sqlite3.DatabaseError, json.JSONDecodeError) as exc:
        raise StoreError(f"{path}: {_tampered(exc)}; left as it was") from None
    finally:
        db.close()


def checked_rows(path: str | Path, rows: Iterable[tuple], kinds: Sequence[type | tuple]) -> list:
    """``rows`` as read, refused if a column holds a value of another type than ``kinds``
    (SQLite keeps whatever type a value was written with)."""
    rows = list(rows)
    for row in rows:
        for value, kind in zip(row, kinds, strict=True):
            if not isinstance(value, kind) or isinstance(value, bool):
                raise StoreError(f"{path}: {_tampered(f'a value no league writes: {value!r}')}")
    return rows


def _tampered(reason: object) -> str:
    return f"holds what no league writes ({reason})"


def _refuse_foreign(path: Path, new: bool) -> None:
    """Refuse a file that is not SQLite, or is another application's SQLite file.

    The SQLite header says it: its first 16 bytes, and the application ID at offset 68.
    An unmarked file's own tables and their columns tell a league stored before the mark
    (:func:`_league_schema`); they are read ``immutable``, which makes nothing beside the
    file. Until its first checkpoint a new league's mark and tables are only in its
    ``-wal``: a file with a ``-wal`` that holds changes is read as any reader reads it.
    """
    try:
        with open(path, "rb") as file:
            header = file.read(SQLITE_HEADER)
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the league database ({exc.strerror})") from None
    sqlite = len(header) == SQLITE_HEADER and header.startswith(SQLITE_MAGIC)
    mark = int.from_bytes(header[68:72], "big", signed=True) if sqlite else 0
    if mark == APPLICATION_ID:
        return
    logged = _wal_holds_changes(path)
    if not logged and not header and new:
        return
    if not logged and not sqlite:
        raise StoreError(f"{path}: not a league database (not an SQLite file); left as it was")
    if logged or mark == 0:
        uri = _read_only_uri(path) if logged else _immutable_uri(path)
        try:
            with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
                (mark,) = db.execute("PRAGMA application_id").fetchone()
                found = _columns(db)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a league database ({exc}); left as it was") from None
        unmarked_league = mark == 0 and (_league_schema(found) or (new and not found))
        if mark == APPLICATION_ID or unmarked_league:
            return
    raise StoreError(
        f"{path}: not a league database (an SQLite file of another application); left as it was"
    )


def _columns(db: sqlite3.Connection) -> dict[str, frozenset[str]]:
    """Each table of ``db`` with its column names."""
    tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {
        table: frozenset(
            row[1] for row in db.execute("SELECT * FROM pragma_table_info(?)", (table,))
        )
        for table in tables
    }


def _schema_columns() -> dict[str, frozenset[str]]:
    """The columns :data:`SCHEMA` gives each table, read from SQLite itself."""
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.executescript(SCHEMA)
        return _columns(db)


LEAGUE_COLUMNS = _schema_columns()
LATER_COLUMNS = {"seats": frozenset({"price_source"})}
"""Columns a league stored before them lacks (added when it resumes)."""


def _league_schema(found: Mapping[str, frozenset[str]]) -> bool:
    """Whether tables are a league's: each of :data:`LEAGUE_TABLES` with a league's columns
    (a table of another program may share a league table's name, not its columns)."""
    return all(
        found.get(table) in (columns, columns - LATER_COLUMNS.get(table, frozenset()))
        for table, columns in LEAGUE_COLUMNS.items()
        if table in LEAGUE_TABLES
    )


def _immutable_uri(path: Path) -> str:
    """Read-only and ``immutable``: SQLite makes nothing beside the file (no -wal, -shm,
    nor locks), and reads only the file itself."""
    return path.resolve().as_uri() + "?mode=ro&immutable=1"


def _wal_holds_changes(path: Path) -> bool:
    """Whether the file's write-ahead log may hold changes the file itself lacks."""
    wal = Path(f"{path}-wal")
    return wal.is_file() and wal.stat().st_size > 0


def _read_only_uri(path: Path) -> str:
    """``mode=ro``; and ``immutable=1`` where the folder cannot be written (a read-only
    mount) and no write-ahead log holds changes the file lacks: SQLite would need to make
    a ``-shm`` file there, and an immutable file needs none (nor locks)."""
    uri = path.resolve().as_uri() + "?mode=ro"
    if os.access(path.parent, os.W_OK):
        return uri
    if not _wal_holds_changes(path):
        return _immutable_uri(path)
    shm = Path(f"{path}-shm")
    if not shm.exists():  # the one case SQLite cannot read: say why, not "unable to open"
        raise StoreError(
            f"{path}: {path.name}-wal holds episodes not yet in the file, which SQLite reads"
            f" only with {shm.name}, and the folder is read-only; copy the folder somewhere"
            " writable to read it"
        )
    return uri


def has_column(db: sqlite3.Connection, table: str, column: str) -> bool:
    """Whether a league file's ``table`` has ``column`` (a file written before it may not)."""
    return any(row[1] == column for row in db.execute(f"PRAGMA table_info({table})"))


def league_results(path: str | Path) -> list[dict]:
    """Every finished episode's results JSON, in schedule order; the file is only read."""
    with reading(path) as db:
        results = stored_results(path, db)
    if not results:
        raise StoreError(f"{path}: the league has no finished episodes")
    return results


def stored_results(path: str | Path, db: sqlite3.Connection) -> list[dict]:
    """The results JSON of every episode in ``db`` (opened by :func:`reading`)."""
    rows = checked_rows(path, db.execute("SELECT results FROM episodes ORDER BY idx"), [str])
    results = [json.loads(text) for (text,) in rows]
    checked_rows(path, [(document,) for document in results], [dict])
    return results


def results_text(results: Mapping[str, Any]) -> str:
    """An episode's results JSON as the store keeps it: keys sorted, so it reads the same
    however the results were built."""
    return json.dumps(results, sort_keys=True)


def compress_log(data: bytes) -> bytes:
    """An event log's JSON Lines (its bytes as saved) as the store keeps them (codec
    ``zlib-jsonl``)."""
    return zlib.compress(data, 6)


def episode_log_text(db: sqlite3.Connection, index: int) -> str:
    """Episode ``index``'s event log, as the JSON Lines it was written as."""
    row = db.execute("SELECT codec, log FROM logs WHERE idx = ?", (index,)).fetchone()
    if row is None:
        raise StoreError(f"no stored log for episode {index}")
    if row[0] != LOG_CODEC:
        raise StoreError(f"episode {index}: unknown log codec {row[0]!r}")
    try:
        return zlib.decompress(row[1]).decode()
    except (zlib.error, UnicodeDecodeError, TypeError) as exc:
        raise StoreError(f"episode {index}: a damaged stored log ({exc})") from None


def _settings_text(settings: dict) -> str:
    """The stored settings; a duplicate league's say how its groups are seated."""
    if settings.get("duplicate"):
        settings = settings | {"duplicateSchedule": DUPLICATE_SCHEDULE}
    return json.dumps(settings, sort_keys=True)


def _differences(stored: str, settings: dict) -> str:
    """Each setting whose stored value is not the one asked, as ``name: stored X, asked Y``
    (values in their stored JSON; ``none`` for a setting one side lacks)."""
    try:
        found = json.loads(stored)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        return f"stored settings that are not a table: {stored[:80]}"
    asked = json.loads(_settings_text(settings))
    shown = []
    for name in sorted(found.keys() | asked.keys()):
        was, now = (json.dumps(side[name]) if name in side else "none" for side in (found, asked))
        if was != now:
            shown.append(f"{name}: stored {was}, asked {now}")
    return "; ".join(shown)


def _earlier_schedule(stored: str, settings: dict) -> int | None:
    """The earlier duplicate schedule a stored league was seated by, when its settings are
    otherwise these (schedule 1's were stored before the key was kept, without it)."""
    if not settings.get("duplicate"):
        return None
    try:
        found = json.loads(stored)
    except ValueError:
        return None
    if not isinstance(found, dict):
        return None
    schedule = found.pop("duplicateSchedule", 1)
    same = json.dumps(found, sort_keys=True) == json.dumps(settings, sort_keys=True)
    return schedule if same and schedule in EARLIER_SCHEDULES else None


def _take_lock(path: Path) -> int:
    lock_path = f"{path}.lock"
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise OutputFailed(exc.errno, f"{path}: disk full; nothing stored") from None
        raise StoreError(f"{path}: cannot open {lock_path} ({exc.strerror or exc})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # A run that failed to start removes the lock file it made (still holding it): a
        # lock taken on that removed file guards nothing, so it counts as held.
        if os.fstat(fd).st_ino != os.stat(lock_path).st_ino:
            raise OSError(errno.EAGAIN, "the lock file was replaced")
    except OSError:
        os.close(fd)
        raise StoreError(f"{path}: another league is running on this file") from None
    return fd
