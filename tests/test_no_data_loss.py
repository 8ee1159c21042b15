"""No command destroys data (issue 20, part 4).

- No command writes over one of its inputs, however it is named (the same name, a
  symlink, a hard link, a folder holding it): one ``arena: error:`` line, exit 2,
  nothing written.
- Every output is put in place whole or not at all: a full disk, a read-only
  disk or ``/dev/full`` leaves every old file byte for byte as it was, and no
  temporary file behind.
- ``league run --db`` refuses a file that is not a league, or is damaged, without
  touching it; ``show``, ``report`` and ``audit --league`` read a league on a
  read-only mount.

Everything is real: the CLI, SQLite files, and the disks. A full disk is a small
tmpfs filled to the last block; a read-only disk is a read-only bind mount, which
stops root as it stops anyone (chmod does not stop root). Both need root and
mount(8), as CI has.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from disks import fill, mounted

from arena.cli import main
from arena.league.store import APPLICATION_ID

# --- the files the commands read -------------------------------------------------------------


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """One real log (3 deals) and one real league (2 tables of 2 deals), made once by the CLI."""
    root = tmp_path_factory.mktemp("made")
    log, league = root / "g.jsonl", root / "L.sqlite"
    assert main(["play", "--deals", "3", "--seed", "1", "--log", str(log)]) == 0
    pool = ["--pool", "bayes,random,pressure,bayes", "--tables", "2", "--deals", "2"]
    assert main(["league", "run", *pool, "--db", str(league), "--json"]) == 0
    return {"log": log, "league": league}


@pytest.fixture
def log(made, tmp_path) -> Path:
    """A copy of the log in this test's own folder."""
    return Path(shutil.copy(made["log"], tmp_path / "g.jsonl"))


@pytest.fixture
def league(made, tmp_path) -> Path:
    """A copy of the league (a closed league is its one file) in this test's own folder."""
    return Path(shutil.copy(made["league"], tmp_path / "L.sqlite"))


def arena(capsys, *args) -> tuple[int, str, str]:
    code = main([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return code, out, err


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its relative name, with its bytes: compared before
    and after a command, it shows nothing was changed, added or left behind."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.endswith(".lock")
    }


def assert_one_line(err: str, expected: str) -> None:
    assert err == f"arena: error: {expected}\n"


# --- never over an input ---------------------------------------------------------------------


def _symlink(folder: Path) -> str:
    (folder / "link.jsonl").symlink_to(folder / "g.jsonl")
    return "link.jsonl"


def _hard_link(folder: Path) -> str:
    os.link(folder / "g.jsonl", folder / "hard.jsonl")
    return "hard.jsonl"


def _log_named_html(folder: Path) -> str:
    shutil.copy(folder / "g.jsonl", folder / "g.html")
    return "g.html"


def _log_in_replay_folder(folder: Path) -> str:
    (folder / "out_replays").mkdir()
    shutil.copy(folder / "g.jsonl", folder / "out_replays" / "g.jsonl")
    return "out_replays/g.jsonl"


OVER_AN_INPUT = {
    # (the command, with {log}/{league}/{made} for the input and the file a set-up makes;
    #  the error line; the set-up, which returns the name it made)
    "replay -o LOG": (("replay", "{log}", "-o", "{log}"), "{log} is an input", None),
    "replay -o ./LOG": (("replay", "{log}", "-o", "{dir}/./g.jsonl"), "{log} is an input", None),
    "replay -o a symlink to LOG": (
        ("replay", "{log}", "-o", "{made}"),
        "{made} is an input of this command (the same file as {log})",
        _symlink,
    ),
    "replay -o a hard link to LOG": (
        ("replay", "{log}", "-o", "{made}"),
        "{made} is an input of this command (the same file as {log})",
        _hard_link,
    ),
    # `arena replay g.html` writes g.html by default: the log itself
    "replay LOG.html": (("replay", "{made}"), "{made} is an input", _log_named_html),
    "report -o LOG": (("report", "{log}", "-o", "{log}"), "{log} is an input", None),
    "report LEAGUE -o LEAGUE": (
        ("report", "{league}", "-o", "{league}"),
        "{league} is an input",
        None,
    ),
    "report whose replay folder holds a LOG": (
        ("report", "{made}", "-o", "{dir}/out.html"),
        "{dir}/out_replays holds the input {made}; not writing into it",
        _log_in_replay_folder,
    ),
    "league export --json LEAGUE": (
        ("league", "export", "{league}", "--json", "{league}"),
        "{league} is an input",
        None,
    ),
    "league export --csv LEAGUE": (
        ("league", "export", "{league}", "--csv", "{league}"),
        "{league} is an input",
        None,
    ),
    "league export --logs LEAGUE": (
        ("league", "export", "{league}", "--logs", "{league}"),
        "{league} is an input",
        None,
    ),
    # SQLite's side files of a WAL league: the league's data and its index, made as it is
    # read, so refused by name whether or not they are there yet
    "report LEAGUE -o LEAGUE-wal": (
        ("report", "{league}", "-o", "{league}-wal"),
        "{league}-wal is an input",
        None,
    ),
    "league export --json LEAGUE-shm": (
        ("league", "export", "{league}", "--json", "{league}-shm"),
        "{league}-shm is an input",
        None,
    ),
    "league export --json LEAGUE-wal, there already": (
        ("league", "export", "{league}", "--json", "{league}-wal"),
        "{league}-wal is an input",
        lambda folder: _read_leaving_side_files(folder / "L.sqlite"),
    ),
}


def _read_leaving_side_files(league: Path) -> str:
    """Read the league as a reader does: SQLite leaves its -wal and -shm beside it."""
    with contextlib.closing(sqlite3.connect(f"file:{league}?mode=ro", uri=True)) as db:
        db.execute("SELECT COUNT(*) FROM episodes").fetchone()
    assert Path(f"{league}-wal").exists() and Path(f"{league}-shm").exists()
    return "L.sqlite-wal"


@pytest.mark.parametrize("case", OVER_AN_INPUT.values(), ids=OVER_AN_INPUT.keys())
def test_no_command_writes_over_its_input(case, log, league, tmp_path, capsys):
    args, message, setup = case
    made_name = setup(tmp_path) if setup else ""
    names = {"log": log, "league": league, "dir": tmp_path, "made": tmp_path / made_name}
    before = files(tmp_path)
    code, out, err = arena(capsys, *(arg.format(**names) for arg in args))
    assert code == 2 and out == ""
    assert err.startswith(f"arena: error: {message.format(**names)}") and err.count("\n") == 1
    assert files(tmp_path) == before  # the input whole, nothing else written


def test_the_input_check_compares_files_not_names(log, tmp_path, capsys):
    """A different file of the same base name elsewhere is not the input: it is written."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "g.jsonl").write_bytes(OLD)
    saved = log.read_bytes()
    code, out, _ = arena(capsys, "replay", log, "-o", other / "g.jsonl")
    assert code == 0 and out == f"{other / 'g.jsonl'}\n"
    assert (other / "g.jsonl").read_bytes().startswith(b"<!doctype html>")
    assert log.read_bytes() == saved


# --- a failed write leaves the old file as it was --------------------------------------------


@pytest.fixture
def disk(tmp_path):
    """A 256 KiB tmpfs: room for the old files, then filled (:func:`fill`)."""
    with mounted(tmp_path / "disk", "-t", "tmpfs", "-o", "size=256k", "tmpfs") as target:
        yield target


@contextlib.contextmanager
def read_only(source: Path, target: Path):
    """``source`` seen read-only at ``target``: a bind mount remounted ro."""
    with mounted(target, "--bind", str(source)):
        done = subprocess.run(
            ["mount", "-o", "remount,bind,ro", str(target)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        yield target


OLD = b"<!DOCTYPE html><p>the old page, which must survive</p>\n"


def test_replay_on_a_full_disk_leaves_the_old_page(log, disk, capsys):
    # The issue: the old page became a truncated 61,440-byte file.
    keep = disk / "keep.html"
    keep.write_bytes(OLD)
    fill(disk)
    before = files(disk)
    code, out, err = arena(capsys, "replay", log, "-o", keep)
    assert code == 1 and out == ""
    assert_one_line(err, f"cannot write {keep}: No space left on device")
    assert files(disk) == before  # the old page's bytes, and no temporary file left


def test_report_on_a_full_disk_leaves_the_old_report_and_its_pages(log, disk, capsys):
    keep = disk / "keep.html"
    keep.write_bytes(OLD)
    (disk / "keep_replays").mkdir()
    (disk / "keep_replays" / "episode-0.html").write_bytes(OLD)
    fill(disk)
    before = files(disk)
    code, _, err = arena(capsys, "report", log, "-o", keep)
    assert code == 1
    assert err.startswith("arena: error: cannot write ") and err.count("\n") == 1
    assert err.endswith(": No space left on device\n")
    assert files(disk) == before


def test_a_report_that_fails_leaves_no_replay_folder_behind(log, disk, capsys):
    """The folder the report made for its pages goes with them."""
    fill(disk)
    code, _, _ = arena(capsys, "report", log, "-o", disk / "new.html")
    assert code == 1
    assert sorted(p.name for p in disk.iterdir()) == ["filler"]


@pytest.mark.parametrize(
    "option, old",
    [("--json", "r.json"), ("--csv", "csv/standings.csv"), ("--logs", "logs/episode-00000.jsonl")],
)
def test_league_export_on_a_full_disk_leaves_the_old_files(league, disk, capsys, option, old):
    target = disk / old
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(OLD)
    fill(disk)
    before = files(disk)
    folder = disk / old.partition("/")[0]
    code, _, err = arena(capsys, "league", "export", league, option, folder)
    assert code == 1
    assert err.startswith(f"arena: error: cannot write {folder}") and err.count("\n") == 1
    assert err.endswith(": No space left on device\n")
    assert files(disk) == before


@pytest.mark.parametrize("room", [0, 8192, 24576], ids=["full", "8 KiB left", "24 KiB left"])
def test_a_new_league_on_a_full_disk_says_disk_full_and_leaves_nothing(room, tmp_path, capsys):
    """A 64 KiB disk, full or with a few pages left: the empty file and its lock take no
    block, and SQLite's first writes (its -wal, its -shm index) fail, as SQLITE_FULL or as
    an I/O error. No empty league, lock, -wal or -shm is left to refuse the next run."""
    with mounted(tmp_path / "disk", "-t", "tmpfs", "-o", "size=64k", "tmpfs") as disk:
        fill(disk, leave=room)
        db = disk / "lg.sqlite"
        pool = ["--pool", "bayes,random", "--tables", "1", "--deals", "1"]
        code, out, err = arena(capsys, "league", "run", *pool, "--db", db)
        assert (code, out) == (1, "")
        assert_one_line(err, f"{db}: disk full; nothing stored")
        assert sorted(path.name for path in disk.iterdir()) == ["filler"]


def test_audit_append_on_a_full_disk_leaves_the_log(made, disk, capsys):
    saved = Path(shutil.copy(made["log"], disk / "g.jsonl"))
    fill(disk)
    before = files(disk)
    code, _, err = arena(capsys, "audit", saved, "--append")
    assert code == 1
    assert_one_line(err, f"cannot write {saved}: No space left on device")
    assert files(disk) == before


def test_audit_append_replaces_a_symlinked_logs_target_and_keeps_the_link(log, tmp_path, capsys):
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    log.chmod(0o640)
    owner = (1234, 5678) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(log, *owner)
    inode = log.stat().st_ino
    code, _, _ = arena(capsys, "audit", link, "--append")
    assert code == 0
    assert link.is_symlink() and link.resolve() == log
    assert log.stat().st_ino != inode  # a new file was renamed over the target
    assert stat.S_IMODE(log.stat().st_mode) == 0o640  # the rewritten log keeps its mode
    assert (log.stat().st_uid, log.stat().st_gid) == owner  # and, written by root, its owner
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    "args",
    [
        ("replay", "{log}", "-o", "/dev/full"),
        ("league", "export", "{league}", "--json", "/dev/full"),
    ],
    ids=["replay", "league export"],
)
def test_dev_full_is_one_error_line_and_exit_1(args, log, league, capsys):
    # /dev/full is a device: written in place (never renamed over), and every write to it
    # fails with ENOSPC, as --log /dev/full does.
    code, out, err = arena(capsys, *(a.format(log=log, league=league) for a in args))
    assert code == 1 and out == ""
    assert_one_line(err, "cannot write /dev/full: No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_device_is_written_in_place_never_replaced(log, capsys):
    code, out, _ = arena(capsys, "replay", log, "-o", "/dev/null")
    assert code == 0 and out == "/dev/null\n"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)  # still the device, as root too


def test_a_page_to_a_pipe_arrives_whole(log):
    """``-o /dev/stdout`` into a pipe: the page, then the name."""
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "replay", str(log), "-o", "/dev/stdout"],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"<!doctype html>")
    assert done.stdout.endswith(b"</html>\n/dev/stdout\n")


def test_export_to_a_folder_where_a_file_is_wanted_and_back(league, tmp_path, capsys):
    (tmp_path / "folder").mkdir()
    code, _, err = arena(capsys, "league", "export", league, "--json", tmp_path / "folder")
    assert code == 2
    assert_one_line(err, f"cannot write {tmp_path / 'folder'}: Is a directory")
    plain = tmp_path / "plain.txt"
    plain.write_bytes(OLD)
    code, _, err = arena(capsys, "league", "export", league, "--csv", plain)
    assert code == 2
    assert_one_line(err, f"cannot write into {plain}: it is not a folder")
    assert plain.read_bytes() == OLD


def test_export_to_a_read_only_disk_leaves_the_old_file(league, tmp_path, capsys):
    source = tmp_path / "source"
    source.mkdir()
    (source / "r.json").write_bytes(OLD)
    with read_only(source, tmp_path / "ro") as view:
        code, _, err = arena(capsys, "league", "export", league, "--json", view / "r.json")
    assert code == 2
    assert_one_line(err, f"cannot write {view / 'r.json'}: Read-only file system")
    assert files(source) == {"r.json": OLD}


def test_an_export_puts_every_file_in_place_or_none(league, tmp_path, capsys):
    """The staged outputs are all put in place: the figures as ``league show`` gives them.
    One that cannot be written costs them all, and the folders made for them."""
    code, shown, _ = arena(capsys, "league", "show", league, "--json")
    assert code == 0
    out = tmp_path / "out"
    missing = tmp_path / "missing" / "r.json"
    before = sorted(tmp_path.iterdir())  # the league, and SQLite's companions of a reader
    code, _, err = arena(capsys, "league", "export", league, "--csv", out / "csv",
                         "--logs", out / "logs", "--json", missing)  # fmt: skip
    assert code == 2
    assert_one_line(err, f"cannot write {missing}: No such file or directory")
    assert sorted(tmp_path.iterdir()) == before
    code, _, _ = arena(capsys, "league", "export", league, "--csv", out / "csv",
                       "--logs", out / "logs", "--json", tmp_path / "r.json")  # fmt: skip
    assert code == 0
    assert (tmp_path / "r.json").read_text() == shown.rstrip("\n")
    # 2 tables, no duplicate rotations: episodes 0 and 1.
    names = sorted(files(out))
    assert names == ["csv/cost.csv", "csv/head_to_head.csv", "csv/standings.csv",
                     "logs/episode-00000.jsonl", "logs/episode-00001.jsonl"]  # fmt: skip


# --- a league file is a league, and is read where it lies ------------------------------------


def test_a_league_file_is_marked_as_one(league):
    # The SQLite file format keeps the application ID at header offset 68, four bytes
    # big-endian: "LIAR" in ASCII is 0x4C 0x49 0x41 0x52.
    assert APPLICATION_ID == 0x4C494152
    assert league.read_bytes()[68:72] == b"LIAR"


def _foreign(path: Path, league: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
        db.execute("INSERT INTO contacts VALUES ('ada', '555-0100')")


def _foreign_with_league_tables(path: Path, league: Path) -> None:
    """A league's tables, but another application's mark: the mark decides."""
    shutil.copy(league, path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA application_id = 0x12345678")


def _another_programs_tables_named_as_a_leagues(path: Path, league: Path) -> None:
    """Unmarked, with every table name a league has, but another program's columns."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        for table in ("league", "episodes", "seats", "points", "logs"):
            db.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, note TEXT)")
        db.execute("INSERT INTO seats VALUES (1, 'kept')")


def _wal_mode(make):
    """``make``'s file, put in WAL mode first, as a league is (a reader then makes -wal and
    -shm unless it reads the file as immutable)."""

    def wal_league(path: Path, league: Path) -> None:
        source = path.with_name("wal-source.sqlite")
        shutil.copy(league, source)
        with contextlib.closing(sqlite3.connect(source)) as db:
            assert db.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
        make(path, source)
        source.unlink()

    return wal_league


def _garbage(path: Path, league: Path) -> None:
    path.write_bytes(bytes(range(256)) * 64)


def _sqlite_header_then_garbage(path: Path, league: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 8192)


def _truncated(path: Path, league: Path) -> None:
    data = league.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _page_overwritten(path: Path, league: Path) -> None:
    """A league whose last page is noise: its header and schema still read."""
    data = bytearray(league.read_bytes())
    data[-4096:] = bytes((i * 131 + 7) % 256 for i in range(4096))
    path.write_bytes(bytes(data))


NOT_A_LEAGUE = {
    "another application's database": (_foreign, "an SQLite file of another application"),
    "league tables under another mark": (
        _foreign_with_league_tables,
        "an SQLite file of another application",
    ),
    "league table names with another program's columns": (
        _another_programs_tables_named_as_a_leagues,
        "an SQLite file of another application",
    ),
    "binary garbage": (_garbage, "not a league database (not an SQLite file)"),
    "an SQLite header, then garbage": (_sqlite_header_then_garbage, "not a league database"),
    "a truncated league": (_truncated, "malformed"),
    "a league with a damaged page": (_page_overwritten, "league database"),
    "a WAL league with a damaged page": (_wal_mode(_page_overwritten), "league database"),
}
READERS = {
    "league run --db": (
        "league",
        "run",
        "--pool",
        "bayes,random",
        "--tables",
        "1",
        "--deals",
        "1",
        "--db",
        "{db}",
    ),  # fmt: skip
    "league show": ("league", "show", "{db}"),
    "league export": ("league", "export", "{db}", "--json", "{dir}/r.json"),
    "report": ("report", "{db}", "-o", "{dir}/r.html"),
    "audit --league": ("audit", "--league", "{db}"),
}


CASES = [
    pytest.param(damage, reader, id=f"{reader_name}: {damage_name}")
    for damage_name, damage in NOT_A_LEAGUE.items()
    for reader_name, reader in READERS.items()
    # `arena report` reads a file without SQLite's header as an event log, refused as one
    if (damage_name, reader_name) != ("binary garbage", "report")
]


@pytest.mark.parametrize("damage, reader", CASES)
def test_a_file_that_is_not_a_league_is_refused_untouched(damage, reader, made, tmp_path,
                                                          capsys):  # fmt: skip
    make, reason = damage
    db = tmp_path / "db.sqlite"
    make(db, made["league"])
    before = files(tmp_path)
    code, out, err = arena(capsys, *(arg.format(db=db, dir=tmp_path) for arg in reader))
    assert code == 2 and out == ""
    assert err.startswith(f"arena: error: {db}: ") and err.count("\n") == 1, err
    assert reason in err and err.endswith("; left as it was\n"), err
    # not a byte written, no report, nothing beside the file: no -wal, -shm nor lock
    assert files(tmp_path) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["db.sqlite"]


LEAGUE_READERS = {name: args for name, args in READERS.items() if name != "report"}
"""The commands that take only a league (`arena report` reads a folder as a log, refused
as one)."""


@pytest.mark.parametrize("reader", LEAGUE_READERS.values(), ids=LEAGUE_READERS.keys())
def test_a_folder_given_as_the_league_is_one_line(reader, tmp_path, capsys):
    db = tmp_path / "db.sqlite"
    db.mkdir()
    code, out, err = arena(capsys, *(arg.format(db=db, dir=tmp_path) for arg in reader))
    assert code == 2 and out == ""
    assert_one_line(err, f"{db}: a folder, not a league database")
    assert list(db.iterdir()) == [] and sorted(tmp_path.iterdir()) == [db]


def test_a_league_stored_before_the_mark_is_read_and_resumed(league, tmp_path, capsys):
    with contextlib.closing(sqlite3.connect(league)) as db:
        db.execute("PRAGMA application_id = 0")
    assert league.read_bytes()[68:72] == b"\0\0\0\0"
    code, shown, _ = arena(capsys, "league", "show", league, "--json")
    assert code == 0 and json.loads(shown)["league"]["episodesStored"] == 2
    # The same league again: both episodes are stored, so it plays none and reports the same.
    pool = ["--pool", "bayes,random,pressure,bayes", "--tables", "2", "--deals", "2"]
    code, resumed, _ = arena(capsys, "league", "run", *pool, "--db", league, "--json")
    assert code == 0 and resumed == shown
    assert league.read_bytes()[68:72] == b"LIAR"  # its writer marks it


@pytest.mark.slow
def test_a_new_league_killed_before_its_first_checkpoint_is_still_a_league(tmp_path, capsys):
    """Its mark, tables and episode are only in its -wal: the file's own header is unmarked."""
    db = tmp_path / "new.sqlite"
    pool = ["--pool", "bayes,random,pressure,bayes", "--tables", "1", "--deals", "1"]
    script = (
        "import os, sys\n"
        "from arena.league.store import LeagueStore\n"
        "LeagueStore.close = lambda self: os._exit(0)\n"  # killed once its episode is stored
        "from arena.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    args = ["league", "run", *pool, "--db", str(db)]
    subprocess.run([sys.executable, "-c", script, *args], check=True, timeout=120)
    assert db.read_bytes()[68:72] == b"\0\0\0\0" and Path(f"{db}-wal").stat().st_size > 0
    code, shown, err = arena(capsys, "league", "show", db, "--json")
    assert (code, err) == (0, "") and json.loads(shown)["league"]["episodesStored"] == 1
    code, resumed, err = arena(capsys, "league", "run", *pool, "--db", db, "--json")
    assert (code, err) == (0, "") and resumed == shown


def test_a_league_on_a_read_only_mount_is_read(league, tmp_path, capsys):
    code, shown, _ = arena(capsys, "league", "show", league, "--json")
    assert code == 0
    code, audited, _ = arena(capsys, "audit", "--league", league, "--json")
    assert code == 0
    source = league.parent
    before = files(source)
    with read_only(source, tmp_path.parent / f"{tmp_path.name}-ro") as view:
        on_mount = view / league.name
        code, out, err = arena(capsys, "league", "show", on_mount, "--json")
        assert (code, err) == (0, "") and out == shown
        code, out, err = arena(capsys, "audit", "--league", on_mount, "--json")
        assert (code, err) == (0, "") and out == audited
        elsewhere = tmp_path.parent / f"{tmp_path.name}-report"
        elsewhere.mkdir()
        code, out, err = arena(capsys, "report", on_mount, "-o", elsewhere / "r.html")
        assert (code, err) == (0, "") and out == f"{elsewhere / 'r.html'}\n"
        assert sorted(files(elsewhere)) == [
            "r.html",
            "r_replays/episode-0.html",
            "r_replays/episode-1.html",
        ]
        # its default output lies beside it, on the mount: said in one line
        code, _, err = arena(capsys, "report", on_mount)
        assert code == 2
        assert_one_line(err, f"cannot make {view / 'L_replays'}: Read-only file system")
    assert files(source) == before


def test_a_read_only_league_whose_wal_cannot_be_read_says_why(league, tmp_path, capsys):
    """A league killed mid-run leaves episodes in ``-wal``; without ``-shm`` SQLite cannot
    read them from a read-only folder, and an immutable read would silently miss them."""
    script = (
        "import os, sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1])\n"
        "db.execute('PRAGMA wal_autocheckpoint = 0')\n"
        "with db:\n"
        "    db.execute('CREATE TABLE scratch (x)')\n"
        "os._exit(0)\n"  # as kill -9 would: no checkpoint, the change only in the -wal
    )
    subprocess.run([sys.executable, "-c", script, str(league)], check=True)
    wal = Path(f"{league}-wal")
    assert wal.stat().st_size > 0
    Path(f"{league}-shm").unlink()
    with read_only(league.parent, tmp_path.parent / f"{tmp_path.name}-ro") as view:
        code, out, err = arena(capsys, "league", "show", view / league.name)
    assert code == 2 and out == ""
    assert_one_line(
        err,
        f"{view / league.name}: L.sqlite-wal holds episodes not yet in the file, which SQLite"
        " reads only with L.sqlite-shm, and the folder is read-only; copy the folder somewhere"
        " writable to read it",
    )
