"""The folder sync after a replacement (:mod:`arena.outputs`): what its failures become.

An output that replaces an old file is renamed into place and its folder fsynced, so
that the rename survives a crash. A file system that cannot sync a folder says EINVAL:
the renames are then its own writes, and the command succeeds. Any other failure
(EIO: the disk failed) is the command's: :class:`~arena.outputs.OutputFailed`, one
line and exit code 1. No file system at hand fails a folder's fsync on demand, so the
errno is injected at the ``os.fsync`` boundary, for folders only: the file's own
fsync, and everything else, is the real thing on a real folder.
"""

from __future__ import annotations

import errno
import os
import stat

import pytest

from arena.outputs import OutputFailed, Outputs


@pytest.fixture
def folder_syncs(monkeypatch):
    """``os.fsync`` that records each folder it is asked to sync and, if
    ``folder_syncs.fails`` is an errno, fails those with it."""
    real_fsync = os.fsync

    class Recorder:
        def __init__(self) -> None:
            self.fails: int | None = None
            self.folders: list[str] = []

        def __call__(self, fd: int) -> None:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                real_fsync(fd)
                return
            self.folders.append(os.readlink(f"/proc/self/fd/{fd}"))
            if self.fails is not None:
                raise OSError(self.fails, os.strerror(self.fails))
            real_fsync(fd)

    recorder = Recorder()
    monkeypatch.setattr(os, "fsync", recorder)
    return recorder


def open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_a_replacement_syncs_its_folder_once(tmp_path, folder_syncs):
    (tmp_path / "a.json").write_text("old a")
    (tmp_path / "b.json").write_text("old b")
    with Outputs() as outputs:
        outputs.write(tmp_path / "a.json", "new a")
        outputs.write(tmp_path / "b.json", "new b")
    # two replacements in one folder: the folder is synced once, after both renames
    assert folder_syncs.folders == [str(tmp_path)]
    assert (tmp_path / "a.json").read_text() == "new a"


def test_a_new_file_does_not_sync_its_folder(tmp_path, folder_syncs):
    with Outputs() as outputs:
        outputs.write(tmp_path / "new.json", "fresh")
    assert folder_syncs.folders == []
    assert (tmp_path / "new.json").read_text() == "fresh"


def test_a_folder_that_cannot_be_synced_einval_leaves_the_replacement_in_place(
    tmp_path, folder_syncs
):
    target = tmp_path / "figures.json"
    target.write_text("old")
    folder_syncs.fails = errno.EINVAL
    before = open_descriptors()
    with Outputs() as outputs:
        outputs.write(target, "new")
    assert folder_syncs.folders == [str(tmp_path)]  # it was asked, and said EINVAL
    assert target.read_text() == "new"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["figures.json"]
    assert open_descriptors() == before  # the folder's descriptor is closed


def test_a_folder_sync_that_fails_eio_is_the_commands_failure(tmp_path, folder_syncs):
    target = tmp_path / "figures.json"
    target.write_text("old")
    folder_syncs.fails = errno.EIO
    before = open_descriptors()
    with pytest.raises(OutputFailed) as failed, Outputs() as outputs:
        outputs.write(target, "new")
    assert failed.value.errno == errno.EIO
    assert failed.value.strerror == f"cannot sync {tmp_path}: Input/output error"
    # The rename came before the sync, so the new file is there; whether it survives a
    # crash is what the user is told is unknown. No staged file is left beside it.
    assert target.read_text() == "new"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["figures.json"]
    assert open_descriptors() == before  # the folder's descriptor is closed on failure too
