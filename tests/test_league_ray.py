"""The Ray executor as its users run it: a private instance, a cluster joined by address.

Everything here is real Ray on 127.0.0.1: a cluster of two ``ray start``
processes (a head, and a worker node joined with ``--address``: two hosts on one
machine), with token authentication as ``ray start`` sets it up, each in its own
``--temp-dir``; every league runs as its own ``arena`` process. Each Ray start
costs seconds on a small machine, so the cluster is started once for the module,
with ``--block`` so that stopping its two commands stops it (``ray stop`` would
stop every Ray on the machine), and leagues long enough (64 episodes on the Python
engine) that a worker or a node can be killed while one plays.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs
import pytest
from league_runs import league_process

pytestmark = pytest.mark.slow

pytest.importorskip("ray", reason="the ray extra is not installed (pip install '.[ray]')")


POOL = ["--pool", "bayes,pressure,random,bayes", "--tables", "3", "--duplicate", "--deals", "8"]
# 128 episodes on the Python engine, a fifth of a second each: a kill lands while tables
# play, after the worker node's first worker took its seconds to start (with 64, a loaded
# machine once let the head node play them all before the worker node's worker was up).
SLOW = ["--pool", "bayes,pressure,random,bayes", "--tables", "32", "--duplicate"]
SLOW += ["--deals", "200", "--engine", "python", "--seed", "3"]
EPISODES = 128
RAY = str(Path(sys.executable).with_name("ray"))
START_TIMEOUT = 120


def arena(*args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes_using(path: str) -> list[int]:
    """Running processes whose command line mentions ``path`` (a Ray temp dir)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if path in cmdline:
            found.append(int(pid))
    return found


def parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError):
        return 0


def titled(task: bytes, raylets: list[int]) -> list[int]:
    """Ray worker processes running ``task`` (a worker's title is its task's) under
    ``raylets``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(task) and parent_of(int(pid)) in raylets:
            found.append(int(pid))
    return found


def table_workers(raylets: list[int]) -> list[int]:
    """Ray worker processes playing a table under ``raylets``."""
    return titled(b"ray::_ray_task", raylets)


def raylets(temp_dir: str) -> list[int]:
    return [
        pid
        for pid in processes_using(temp_dir)
        if b"raylet" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    ]


def stored(db) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1) as conn:
            return conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def indexes(db) -> list[int]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return [idx for (idx,) in conn.execute("SELECT idx FROM episodes ORDER BY idx")]


@attrs.frozen
class Cluster:
    address: str
    head_dir: str
    worker_dir: str
    token_env: dict[str, str]
    """What a driver needs to join: token authentication and the head's token."""


def ray_start(temp_dir: str, env: dict[str, str], *args: str) -> subprocess.Popen:
    """``ray start --block``: the node runs while this command does."""
    return subprocess.Popen(
        [RAY, "start", "--block", "--temp-dir", temp_dir, "--num-cpus", "1",
         "--node-ip-address", "127.0.0.1", "--disable-usage-stats",
         "--dashboard-agent-listen-port", str(free_port()), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )  # fmt: skip


def wait_for_raylets(temp_dirs: list[str], nodes: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while not all(raylets(d) for d in temp_dirs):
        assert all(n.poll() is None for n in nodes), "ray start ended"
        assert time.monotonic() < deadline, "Ray did not start in time"
        time.sleep(0.2)


def stop(nodes: list[subprocess.Popen], temp_dirs: list[str]) -> None:
    """Stop the ``ray start --block`` commands (each stops its node), then anything left
    of this cluster's processes, found by their temp dirs."""
    for node in reversed(nodes):
        if node.poll() is None:
            node.send_signal(signal.SIGTERM)
    for node in reversed(nodes):
        try:
            node.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(node.pid, signal.SIGKILL)
    for temp_dir in temp_dirs:
        for pid in processes_using(temp_dir):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def cluster():
    """A head and a worker node on 127.0.0.1, token auth on (as ``ray start`` makes it)."""
    head_dir = tempfile.mkdtemp(prefix="rayh", dir="/tmp")  # short: Ray's sockets live there
    worker_dir = tempfile.mkdtemp(prefix="rayw", dir="/tmp")
    token_env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    # A node found dead within a couple of seconds, not Ray's default half minute.
    env = (
        os.environ
        | token_env
        | {
            "RAY_health_check_period_ms": "500",
            "RAY_health_check_failure_threshold": "3",
        }
    )
    port = free_port()
    nodes = []
    try:
        # one CPU on the head, and a resource only the head has, which :func:`head_held`
        # asks for to take that CPU while a test needs its tables on the worker node
        nodes.append(ray_start(head_dir, env, "--head", "--port", str(port), "--num-cpus", "1",
                               "--resources", '{"the_head": 1}',
                               "--include-dashboard", "false"))  # fmt: skip
        wait_for_raylets([head_dir], nodes)
        nodes.append(ray_start(worker_dir, env, "--address", f"127.0.0.1:{port}"))
        wait_for_raylets([head_dir, worker_dir], nodes)
        yield Cluster(f"127.0.0.1:{port}", head_dir, worker_dir, token_env)
    finally:
        stop(nodes, [head_dir, worker_dir])
        shutil.rmtree(head_dir, ignore_errors=True)
        shutil.rmtree(worker_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def serial_slow(tmp_path_factory) -> str:
    db = tmp_path_factory.mktemp("serial") / "slow.sqlite"
    ran = arena("league", "run", *SLOW, "--executor", "serial", "--db", str(db), "--json")
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def without_ray_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}


def test_a_private_instance_starts_beside_a_running_cluster_and_leaves_nothing(tmp_path, cluster):
    """``RAY_ADDRESS`` names the running cluster: without ``--address`` the league still
    starts its own instance (joining would have refused the CPUs it asks for), plays what
    serial plays, and stops every process of it."""
    serial = arena("league", "run", *POOL, "--db", str(tmp_path / "serial.sqlite"), "--json")
    assert serial.returncode == 0, serial.stderr
    ray_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    try:
        env = without_ray_env() | {"RAY_TMPDIR": ray_dir, "RAY_ADDRESS": cluster.address}
        ran = arena("league", "run", *POOL, "--db", str(tmp_path / "ray.sqlite"),
                    "--executor", "ray", "--concurrency", "2", "--json", env=env)  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout == serial.stdout
        assert processes_using(ray_dir) == []
    finally:
        shutil.rmtree(ray_dir, ignore_errors=True)


def test_joining_without_the_token_setting_is_one_line(tmp_path, cluster):
    env = without_ray_env() | {"RAY_gcs_rpc_server_reconnect_timeout_s": "3"}
    ran = arena("league", "run", *POOL, "--db", str(tmp_path / "x.sqlite"),
                "--executor", "ray", "--address", cluster.address, env=env)  # fmt: skip
    assert ran.returncode == 1
    [last] = ran.stderr.splitlines()  # Ray's own retries and log lines silenced: one line
    assert last.startswith(f"arena: error: cannot join the Ray cluster at {cluster.address}: ")
    assert "set RAY_AUTH_MODE=token" in last
    assert stored(tmp_path / "x.sqlite") == 0


def test_an_address_where_nothing_listens_is_one_line_within_30_s(tmp_path):
    """Ray retried such a join for 13 min 47 s, then blamed token authentication. Without
    ``--executor``, ``--address`` runs the league on Ray: the address is applied."""
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    ran = arena("league", "run", *POOL, "--db", str(tmp_path / "x.sqlite"), "--address", address)
    assert time.monotonic() - started < 30
    assert (ran.returncode, ran.stderr) == (
        1,
        f"arena: error: cannot join the Ray cluster at {address}: nothing answers there"
        " (Connection refused)\n",
    )
    assert stored(tmp_path / "x.sqlite") == 0


HOLD_THE_HEAD = """
import sys, time, ray
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
@ray.remote(num_cpus=1, resources={"the_head": 1}, max_retries=0)
def hold_the_head():
    time.sleep(3600)
ray.get(hold_the_head.remote())
"""


@contextlib.contextmanager
def head_held(cluster: Cluster):
    """The head's one CPU taken by another job's task, so a league's tables can only play
    on the worker node. Without it the worker node was never sure to play one: Ray hands a
    finished worker the next queued task, and a head that finished each table before the
    worker node's first worker had started (seconds, on a loaded machine) played them all."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_HEAD, cluster.address],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=without_ray_env() | cluster.token_env,
        start_new_session=True,
    )
    held: list[int] = []
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not (held := titled(b"ray::hold_the_head", raylets(cluster.head_dir))):
            assert holder.poll() is None, "the task holding the head ended"
            assert time.monotonic() < deadline, "the head's CPU was not taken in time"
            time.sleep(0.1)
        yield
    finally:
        os.killpg(holder.pid, signal.SIGKILL)  # its job ends: Ray frees the CPU
        holder.wait()
        for pid in held:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _ended(proc: subprocess.Popen) -> str:
    """What a league that should still be playing said, if it has ended."""
    if proc.poll() is None:
        return "the league is still playing"
    return f"the league ended first (exit {proc.returncode}): {proc.communicate()[1][-2000:]}"


def test_a_worker_killed_on_the_second_node_does_not_stop_the_league(
    tmp_path, cluster, serial_slow
):
    """Joined by address, with the head's CPU held so tables play on the worker node; a
    table's worker there is killed mid-table: Ray plays the table again and the standings
    are serial's bytes."""
    db = tmp_path / "killed.sqlite"
    env = without_ray_env() | cluster.token_env
    with head_held(cluster):
        proc = league_process(db, *SLOW, "--executor", "ray", "--address", cluster.address,
                      "--concurrency", "2", env=env)  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            victims = []
            while not victims and proc.poll() is None and time.monotonic() < deadline:
                victims = table_workers(raylets(cluster.worker_dir))
                time.sleep(0.05)
            assert victims, f"no table was played on the worker node: {_ended(proc)}"
            before = stored(db)
            os.kill(victims[0], signal.SIGKILL)
            out, err = proc.communicate(timeout=240)
        finally:
            proc.kill()
    assert proc.returncode == 0, err
    assert before < EPISODES
    assert out == serial_slow
    assert indexes(db) == list(range(EPISODES))


def test_a_head_killed_mid_league_is_one_line_and_the_same_command_resumes(tmp_path, serial_slow):
    """kill -9 of every process of the head (its own one-node cluster here): Ray's driver
    waited 60 s, then ended with its C++ log line. Now one line within seconds, saying how
    the league resumes; the same command against a head started again at the same
    address finishes with serial's standings, every episode stored once."""
    head_dir = tempfile.mkdtemp(prefix="rayk", dir="/tmp")
    token_env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    port = free_port()
    address = f"127.0.0.1:{port}"
    db = tmp_path / "head.sqlite"
    head = ["--head", "--port", str(port), "--include-dashboard", "false"]
    league = [*SLOW, "--executor", "ray", "--address", address, "--concurrency", "2"]
    env = without_ray_env() | token_env
    nodes = [ray_start(head_dir, os.environ | token_env, *head)]
    try:
        wait_for_raylets([head_dir], nodes)
        proc = league_process(db, *league, env=env)
        try:
            deadline = time.monotonic() + 120
            while stored(db) < 3 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert stored(db) >= 3, _ended(proc)
            for pid in processes_using(head_dir):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            killed = time.monotonic()
            _, err = proc.communicate(timeout=120)
        finally:
            proc.kill()
        assert time.monotonic() - killed < 30
        assert proc.returncode == 1
        assert err == (
            f"arena: error: lost the Ray cluster's head at {address}: nothing answers there"
            " (Connection refused); the stored episodes are kept: run the same command again"
            " to resume the league\n"
        )
        before = stored(db)
        assert before < EPISODES
        nodes.append(ray_start(head_dir, os.environ | token_env, *head))
        wait_for_raylets([head_dir], nodes[1:])
        resumed = league_process(db, *league, env=env)
        out, err = resumed.communicate(timeout=240)
    finally:
        stop(nodes, [head_dir])
        shutil.rmtree(head_dir, ignore_errors=True)
    assert resumed.returncode == 0, err
    assert out == serial_slow
    assert indexes(db) == list(range(EPISODES))


BROKEN_TABLE = """
import sys, attrs
from arena.league.config import Entrant, LeagueSpec
from arena.league.executors import Ray
from arena.league.schedule import fixtures
from arena.runner import EpisodeRequest, SetupError
from arena.seats import SeatSpec
from arena.limits import Limits

spec = LeagueSpec(
    entrants=tuple(Entrant(s, SeatSpec.parse(s)) for s in ("bayes", "pressure", "random")),
    tables=1, allow_repeat=True, table=EpisodeRequest(deals=3),
)
fixture = next(fixtures(spec))
seats = (*fixture.request.seat_specs[:3], SeatSpec.parse("bayes:b"))
pool = Ray(1, Limits(), address=sys.argv[1])
try:
    pool.submit(attrs.evolve(fixture, request=attrs.evolve(fixture.request, seat_specs=seats)))
    while pool.busy:
        list(pool.collect(1))
except SetupError as exc:
    print("SetupError:", exc)
finally:
    pool.close()
"""
"""A table whose fourth seat cannot start (check_league refuses such an entrant, so it is
built here), played as a Ray task on the cluster; prints what the executor raised. Its own
process: Ray reads the token setting when it is imported."""


def test_a_tables_own_error_under_ray_is_the_error_serial_raises(cluster):
    """Not Ray's ``ray::_ray_task() (pid=...)`` wrapper in colour: the seat's own line,
    as serial play raises it (tests/test_league_faults.py), and once."""
    ran = subprocess.run(
        [sys.executable, "-c", BROKEN_TABLE, cluster.address],
        capture_output=True,
        text=True,
        env=without_ray_env() | cluster.token_env,
        timeout=240,
    )
    assert ran.stdout.splitlines()[-1:] == [
        "SetupError: seat 3 (bayes:b): seat 'bayes' takes no argument (got 'b')"
    ], ran.stderr


def test_a_lost_node_does_not_stop_the_league(tmp_path, cluster, serial_slow):
    """The worker node dies (its raylet killed) mid-league: its tables are played again on
    the head, whose CPU was held until a table played on the worker node. Last in the
    module: the cluster has one node after it."""
    db = tmp_path / "node.sqlite"
    env = without_ray_env() | cluster.token_env
    node = raylets(cluster.worker_dir)
    proc = None
    try:
        with head_held(cluster):
            proc = league_process(db, *SLOW, "--executor", "ray", "--address", cluster.address,
                          "--concurrency", "2", env=env)  # fmt: skip
            # A table has played on the worker node once one is in flight there, or once
            # an episode is stored: with the head held, nowhere else could it have played.
            # The stored episode does not hang on sampling the worker's title every 50 ms,
            # which once missed every table of a league that then ended.
            deadline = time.monotonic() + 120
            while not (playing := table_workers(node) or stored(db)) and proc.poll() is None:
                assert time.monotonic() < deadline, "no table started within 120 s"
                time.sleep(0.05)
            assert playing, f"no table was played on the worker node: {_ended(proc)}"
        before = stored(db)
        for pid in node:
            os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=240)
    finally:
        if proc is not None:
            proc.kill()
    assert proc.returncode == 0, err
    assert before < EPISODES
    assert out == serial_slow
    assert indexes(db) == list(range(EPISODES))
