"""Writing a distribution as pip installs it, for tests that need a third party on disk."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def install(
    root: Path,
    name: str,
    modules: dict[str, str],
    entry_points: dict[str, str],
    version: str = "1.0",
    record: bool = False,
) -> Path:
    """``name`` installed under ``root``: each module's source, and a dist-info with
    METADATA and the ``arena`` entry points (``{entry point: module}``); with ``record``,
    the ``RECORD`` pip writes too (what the describe cache keys on). Its dist-info."""
    for module, source in modules.items():
        (root / f"{module}.py").write_text(source)
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = "".join(f"{point} = {module}\n" for point, module in entry_points.items())
    (info / "entry_points.txt").write_text(f"[arena]\n{lines}")
    if record:
        listed = [*(f"{m}.py" for m in modules), f"{info.name}/METADATA"]
        listed.append(f"{info.name}/entry_points.txt")
        rows = "".join(record_line(root, path) for path in listed)
        (info / "RECORD").write_text(rows + f"{info.name}/RECORD,,\n")
    return info


def record_line(root: Path, relative: str) -> str:
    """The ``RECORD`` line pip writes for ``root/relative``: its path, sha256 and size."""
    data = (root / relative).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{relative},sha256={digest},{len(data)}\n"


@contextlib.contextmanager
def marker_directory(prefix: str) -> Iterator[Path]:
    """A directory a test plugin leaves its markers in, removed afterwards: under ``/tmp``
    and writable by all, since a sandboxed worker's uid can neither reach the test's
    ``tmp_path`` nor write a directory root owns."""
    markers = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    markers.chmod(0o1777)
    try:
        yield markers
    finally:
        shutil.rmtree(markers)
