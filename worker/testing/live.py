"""A real Dealer service in subprocesses: web (gunicorn) and worker (Celery), embedded or on Redis + PostgreSQL.

Used by the integration, fault and browser tests and by the benchmarks::

    with live_service("embedded", tmp_path) as live:
        job = live.submit(path, "10-20-30")
        live.wait(job["id"])
"""

from __future__ import annotations

import functools
import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import make_url, select

from worker.cli import stop_worker
from worker.client import Client, ClientError, multipart
from worker.config import Settings
from worker.jobs.dispatch import worker_name
from worker.store.database import Database
from worker.store.migrate import upgrade
from worker.store.models import WorkerRow
from worker.testing.servers import (
    create_postgres_database,
    drop_postgres_database,
    free_port,
    fresh_redis_url,
    release_redis,
)
from worker.testing.waiting import until

DEALER = [sys.executable, "-m", "worker.cli"]
MODES = ("embedded", "production")
#: What a stopped service's workers get to leave by themselves before they are killed: less than
#: ``dealer serve`` gives its own (``WORKER_GRACE_SECONDS``), since the data goes with the service.
WORKER_STOP_SECONDS = 0.5


@dataclass
class LiveService:
    mode: str
    url: str
    env: dict[str, str]
    data_dir: Path
    concurrency: int
    web: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def client(self) -> Client:
        return Client(self.url)

    @property
    def settings(self) -> Settings:
        """The settings the service's processes run with."""
        return Settings.from_env(self.env)

    @functools.cached_property
    def db(self) -> Database:
        """The harness's own connection to the service's database (its processes each make theirs)."""
        return Database(self.settings)

    def _spawn(self, *args: str, log: str) -> subprocess.Popen[bytes]:
        out = open(self.data_dir / log, "ab")
        return subprocess.Popen([*DEALER, *args], env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)

    def start_web(self, wait: bool = True) -> None:
        port = self.url.rsplit(":", 1)[1]
        self.web = self._spawn("web", "--host", "127.0.0.1", "--port", port, "--workers", "1", log="web.log")
        if wait:
            self.wait_for_web()

    def wait_for_web(self) -> None:
        # A document every visitor may read: with keys, reads of jobs and figures are private.
        self.wait_until(lambda: self.get("/api/openapi.json") is not None, "the web server to answer")

    def start_worker(self, concurrency: int | None = None) -> subprocess.Popen[bytes]:
        worker = self._spawn("worker", "--concurrency", str(concurrency or self.concurrency), "--loglevel",
                             "WARNING", log="worker.log")
        self.workers.append(worker)
        return worker

    def wait_for_workers(self, count: int = 1) -> None:
        # /healthz needs no key and names the workers seen even while it answers 503 (a stuck job, say).
        def seen() -> int:
            return int((self.get("/healthz", errors_too=True) or {}).get("workers", {}).get("seen", 0))

        self.wait_until(lambda: seen() >= count, f"{count} worker(s) to report")

    def wait_for_own_workers(self) -> None:
        """Wait until each worker this service started says it is ready: its own row in ``workers``, which
        it writes once its pool processes are warm. The count ``/healthz`` gives would do only on a fresh
        database: on one an earlier service used, the row of its worker (killed, so never removed) counts
        until it times out, and a job sent then waited for the new worker's start."""
        names = {worker_name(proc.pid) for proc in self.workers}

        def ready() -> bool:
            with self.db.session(write=False) as session:
                return set(session.scalars(select(WorkerRow.name).where(WorkerRow.name.in_(names)))) == names

        try:
            self.wait_until(ready, f"{len(names)} worker(s) to say they are ready")
        finally:
            self.db.engine.dispose()  # no connection of the harness's left open: a database may be dropped

    def get(self, path: str, errors_too: bool = False) -> Any:
        """The JSON ``path`` answers (with ``errors_too``, an error's body too), else ``None``."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            if not errors_too:
                return None
            try:
                return json.loads(error.read())
            except ValueError:
                return None
        except OSError:
            return None

    def wait_until(self, check: Any, what: str, timeout: float = 60) -> None:
        """Wait until ``check()`` holds; a service process that exits meanwhile, or the deadline, ends the wait
        with the service's logs."""

        def look() -> bool:
            if check():
                return True
            for proc in ([self.web] if self.web else []) + self.workers:
                if proc.poll() is not None and proc.returncode not in (0, -9, -15):
                    raise RuntimeError(f"a service process exited with {proc.returncode}: {self.logs()}")
            return False

        try:
            until(look, bool, what, timeout)
        except AssertionError:
            raise TimeoutError(f"timed out waiting for {what}; logs:\n{self.logs()}") from None

    def submit(self, path: Path, game: str | None = None) -> dict[str, Any]:
        return self.client.submit(str(path), game)

    def wait(self, job_id: int, timeout: float = 120) -> dict[str, Any]:
        result: dict[str, Any] = {}

        def finished() -> bool:
            result.update(self.client.job(job_id))
            return result["status"] in ("succeeded", "failed", "cancelled")

        self.wait_until(finished, f"job {job_id} to finish", timeout)
        return result

    def output(self, job_id: int) -> bytes:
        return "".join(self.client.output(job_id)).encode()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}"
                         for p in sorted(self.data_dir.glob("*.log")))

    def stop(self) -> None:
        # Nothing a test looks at is lost by a kill: the service's data is thrown away with it. The web is
        # killed at once (stopped gracefully, it lingers seconds over the browsers' kept-alive
        # connections); a Celery worker's warm shutdown takes seconds even when idle, so the workers are
        # killed with their pools after a moment, as ``dealer serve`` kills its own (tasks are
        # acknowledged late).
        if self.web and self.web.poll() is None:
            os.killpg(self.web.pid, signal.SIGKILL)
        for worker in self.workers:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGTERM)
        deadline = time.monotonic() + WORKER_STOP_SECONDS
        for worker in self.workers:
            stop_worker(worker, deadline)
        if self.web:
            self.web.wait()


@contextmanager
def held_still(live: LiveService) -> Iterator[None]:
    """The service's workers held still (SIGSTOP, their pool processes too) for the block, from a moment
    none of them holds the embedded database's write lock: held with it, a worker would keep the web from
    writing (an upload would wait on it) for as long as it is held."""

    def send(signal_number: int) -> None:
        for worker in live.workers:
            os.killpg(worker.pid, signal_number)

    def held_unlocked() -> bool:
        send(signal.SIGSTOP)
        if _writable(live.settings.database_url):
            return True
        send(signal.SIGCONT)
        return False

    until(held_unlocked, bool, "the workers held outside a write", every=0.01)
    try:
        yield
    finally:
        send(signal.SIGCONT)


def _writable(url: str) -> bool:
    """Whether a writer could start now without waiting (always, on PostgreSQL: no lock of the whole
    database there)."""
    if not url.startswith("sqlite"):
        return True
    with closing(sqlite3.connect(str(make_url(url).database), timeout=0, isolation_level=None)) as connection:
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:  # database is locked
            return False
        connection.execute("ROLLBACK")
    return True


@contextmanager
def arriving(live: LiveService, path: Path, game: str | None = None, sent: int = 3 << 20) -> Iterator[int]:
    """Upload ``path`` to ``live`` with all but its first ``sent`` bytes or so (whole MiBs) held back until
    the block ends: yields the id of the job made meanwhile from what has come (``worker/jobs/arriving.py``), then
    sends the rest and checks that the upload was taken. The job is the first made after the upload
    began with the file's name: a live service's tests run one at a time. A file that starts as one an
    earlier job of the service solved is made a job only once whole (so that the result cache copies
    it): give it a start of its own."""
    newest = (live.get("/api/jobs?per_page=1") or {"items": []})["items"]
    after = newest[0]["id"] if newest else 0
    headers, body = multipart([("file", str(path))], {"game": game} if game else {})
    go_on, answer = threading.Event(), queue.Queue[Any]()

    def held() -> Iterator[bytes]:
        count = 0
        for piece in body:
            yield piece
            count += len(piece)
            if count >= sent:
                go_on.wait(300)

    def upload() -> None:
        try:
            answer.put(json.loads(Client(live.url, timeout=300)._request("POST", "/api/jobs", held(), headers)
                                  .read()))
        except ClientError as error:  # told to the test, which waits for the answer
            answer.put(error)

    sender = threading.Thread(target=upload, daemon=True)
    sender.start()
    found: list[int] = []

    def made() -> bool:
        page = live.get(f"/api/jobs?filename={quote(path.name)}&per_page=5") or {"items": []}
        found.extend(job["id"] for job in page["items"] if job["id"] > after)
        return bool(found) or not sender.is_alive()

    try:
        live.wait_until(made, f"a job made while {path.name} arrives")
        assert found, f"no job was made while {path.name} arrived: {answer.get()}"
        yield min(found)
    finally:
        go_on.set()
    outcome = answer.get(timeout=300)
    if isinstance(outcome, Exception):
        raise outcome
    assert outcome["id"] == min(found), outcome


@contextmanager
def live_service(mode: str, tmp: Path, concurrency: int = 2, workers: int = 1, database_url: str | None = None,
                 broker_url: str | None = None, **extra_env: str) -> Iterator[LiveService]:
    """Start web + worker in ``mode`` ("embedded" or "production") and stop them afterwards.

    Production mode uses a fresh database on the machine's PostgreSQL and a fresh Redis
    database, unless ``database_url`` and ``broker_url`` name others.
    """
    data_dir = tmp / f"live-{mode}"
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEALER_") or k == "DEALER_REQUIRE_SERVICES"}
    env.update({"DEALER_DATA_DIR": str(data_dir), **extra_env})
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    database = claimed = None
    if mode == "production":
        if database_url is None:
            database = create_postgres_database()
        broker = broker_url or (claimed := fresh_redis_url())
        env.update(DEALER_DATABASE_URL=database_url or database or "", DEALER_BROKER_URL=broker)
    live = LiveService(mode, f"http://127.0.0.1:{free_port()}", env, data_dir, concurrency)
    # What `dealer db upgrade` does, here (a process of its own cost seconds on a busy machine); and first,
    # so that the web and the workers, started together below, do not both create an embedded one at once.
    upgrade(live.db)
    live.db.engine.dispose()
    try:
        # Started together (each takes a second or two to import and start), then waited for.
        live.start_web(wait=False)
        for _ in range(workers):
            live.start_worker()
        live.wait_for_web()
        live.wait_for_own_workers()
        yield live
    finally:
        live.stop()
        if database:
            drop_postgres_database(database, wait=False)
        if claimed:
            release_redis(claimed)
