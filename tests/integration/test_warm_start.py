"""A worker says it is ready (its row in ``workers``, which ``/healthz`` counts) only once its pool processes
can take a job at once: the engines and their native cores loaded, a database connection open and the
broker connection the split sends its chunks through. What each pool process holds is read from
outside, in ``/proc``, the moment the worker is seen.

On PostgreSQL and Redis: an embedded worker opens its database before the pool forks (it brings the
schema up to date), so there its pool processes hold the file whatever they do, and the file broker
has no connection to hold."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import make_url

from worker import engines
from worker.engines.native import compiled
from worker.testing.live import live_service


def pool_processes(worker_pid: int) -> list[int]:
    return [int(pid) for pid in Path(f"/proc/{worker_pid}/task/{worker_pid}/children").read_text().split()]


def open_files(pid: int) -> list[str]:
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found.append(os.readlink(fd))
        except OSError:
            pass  # closed meanwhile
    return found


def remote_ports(pid: int) -> set[int]:
    """The remote ports of the TCP connections ``pid`` holds (its sockets' inodes looked up in the kernel's
    table of its network namespace)."""
    inodes = {name[len("socket:["):-1] for name in open_files(pid) if name.startswith("socket:[")}
    ports = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[2].rsplit(":", 1)[1], 16))
    return ports


def test_a_worker_is_seen_only_once_its_pool_processes_are_warm(tmp_path: Path) -> None:
    with live_service("production", tmp_path) as live:  # returns once the worker has written its row
        pool = pool_processes(live.workers[0].pid)
        assert len(pool) == live.concurrency
        settings = live.settings
        cores = [core.__file__ for game in engines.all_engines() if (core := compiled(type(game).__module__
                                                                                     .rsplit(".", 1)[0]))]
        for pid in pool:
            mapped = Path(f"/proc/{pid}/maps").read_text()
            assert all(str(core) in mapped for core in cores)
            database = make_url(settings.database_url).port or 5432
            broker = make_url(settings.broker_url).port or 6379
            assert {database, broker} <= remote_ports(pid), (pid, remote_ports(pid))
