"""Real small disks for the tests that need a full or read-only one: a tmpfs mounted for a
block, and filled to its last block (root and mount(8), as CI has)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted(target: Path, *mount_args: str):
    """``mount ... target`` for the block; needs root and mount(8) (CI has both)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a real full or read-only disk needs root and mount(8)")
    target.mkdir(exist_ok=True)
    done = subprocess.run(["mount", *mount_args, str(target)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=True)


def fill(folder: Path, leave: int = 0) -> None:
    """Write zeros to ``folder/filler`` until the disk refuses: no block is left, or only
    ``leave`` bytes of them."""
    with open(folder / "filler", "wb", buffering=0) as filler, contextlib.suppress(OSError):
        while True:
            filler.write(b"\0" * 4096)
    with pytest.raises(OSError) as full:
        (folder / "probe").write_bytes(b"x" * 4096)
    assert full.value.errno == errno.ENOSPC
    (folder / "probe").unlink()
    os.truncate(folder / "filler", (folder / "filler").stat().st_size - leave)
