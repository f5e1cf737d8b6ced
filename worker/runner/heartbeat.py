"""A worker's heartbeat: its row in ``workers`` kept fresh (for the dashboard and ``/healthz``), the
recovery sweep run on the side (every ``sweep_seconds``, and at once when the database or the broker comes
back), and the count of tasks its processes ran."""

from __future__ import annotations

import logging
import os
import select
import struct
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import delete, update
from sqlalchemy.exc import DBAPIError, OperationalError

from worker.config import Settings
from worker.jobs import throughput
from worker.jobs.dispatch import Dispatcher, worker_name
from worker.jobs.sweep import Outage, give_back_gone
from worker.store.database import Database
from worker.store.models import WorkerRow, utcnow
from worker.store.uploads import process_alive
from worker.work import purge, sweep

log = logging.getLogger("dealer.worker")

#: Errors that mean "the database (or broker) is away for now": retried, never fatal.
RETRYABLE = (OperationalError, DBAPIError, ConnectionError)
#: A pool process adds the tasks it ran to its worker's row at most this often.
COUNT_EVERY_SECONDS = 2.0
#: How long a worker waits for its pool processes to be warm before it says it is ready all the same.
WARM_WAIT_SECONDS = 30.0
#: Old throughput rows are removed this often (by every worker: whichever comes first finds them).
PRUNE_EVERY_SECONDS = 60.0
#: While the database is away, a worker's heartbeat tries it this often (at most): the first beat that
#: reaches it again runs the sweep, so the sooner it is seen back, the sooner the work goes on.
AWAY_RETRY_SECONDS = 0.5


class Heartbeat(threading.Thread):
    """Keeps this worker's row fresh and sweeps up after lost workers and lost messages."""

    def __init__(self, db: Database, settings: Settings, dispatcher: Dispatcher, concurrency: int,
                 before_first_beat: Callable[[], object] | None = None,
                 trouble: PoolTrouble | None = None) -> None:
        super().__init__(name="dealer-heartbeat", daemon=True)
        self.before_first_beat = before_first_beat
        self.trouble = trouble
        self.settings = settings
        self.dispatcher = dispatcher
        self.concurrency = concurrency
        self.stopping = threading.Event()
        #: Set to end a rest early: the worker stops, or the broker is back.
        self.woken = threading.Event()
        self.broker_returned = threading.Event()
        self.name_in_db = worker_name()
        self.db = db
        self.purger = Purger(db, settings, self.stopping)
        self.next_sweep = self.next_prune = 0.0
        self.failing = False  # the last beat failed
        self.away_since: datetime | None = None  # when the database was first found away, since it was last there
        self.outage: Outage | None = None  # one the sweep has not yet run after

    def run(self) -> None:
        # The worker's row is what says it is ready (/healthz, the dashboard, the live harness), so it is
        # written once the worker can take a job at once (its pool processes warm).
        if self.before_first_beat is not None:
            self.before_first_beat()
        self.purger.start()
        while not self.stopping.is_set():
            if not self._beat():
                self._rest(min(self.settings.heartbeat_seconds, AWAY_RETRY_SECONDS))
                continue
            try:
                self._tend()
            except Exception:  # noqa: BLE001 - the heartbeat must outlive a database outage
                log.exception("heartbeat failed; trying again")
            self._rest(self.settings.heartbeat_seconds)

    def _beat(self) -> bool:
        """Beat; whether it did. A beat that fails is logged (the whole story once, then a line a try), and
        when the database is away, the moment it was first found so is kept: the first beat that reaches it
        again makes an :class:`Outage` of it (as it does of the broker's return), for the sweep to run after."""
        # An outage shorter than a beat fails no beat: the pool processes' tasks that met it say so.
        told = self.trouble.since() if self.trouble is not None else None
        if told is not None:
            self.away_since = min(self.away_since or told, told)
        try:
            self.beat()
        except Exception as error:  # noqa: BLE001 - the heartbeat must outlive a database outage
            log.error("heartbeat failed; trying again: %s", error, exc_info=not self.failing)
            self.failing = True
            if self.away_since is None and database_away(error):
                self.away_since = utcnow()
            return False
        self.failing = False
        if self.away_since is not None:
            earlier = self.outage.held_before if self.outage is not None else None
            self.outage = Outage(held_before=min(earlier or self.away_since, self.away_since))
            self.away_since = None
        if self.broker_returned.is_set():
            self.broker_returned.clear()
            self.outage = self.outage or Outage()
        return True

    def _tend(self) -> None:
        """What a worker does beside each beat: the chunks of its pool processes that died given back, its
        heartbeat file touched, old throughput pruned, and the sweep run on its period or after an outage."""
        if give_back_gone(self.db, self.dispatcher, self.name_in_db, process_alive):
            log.warning("chunks of a pool process that died were sent again")
        if self.settings.heartbeat_file:
            Path(self.settings.heartbeat_file).touch()
        if time.monotonic() >= self.next_prune:
            self.next_prune = time.monotonic() + PRUNE_EVERY_SECONDS
            with self.db.session() as session:
                throughput.prune(session, utcnow())
        if self.outage is not None or time.monotonic() >= self.next_sweep:
            self.next_sweep = time.monotonic() + self.settings.sweep_seconds
            report = sweep(self.db, self.settings, self.dispatcher, outage=self.outage)
            if self.outage is not None:
                log.warning("the %s is back: sent again at once %s",
                            "database" if self.outage.held_before else "broker", report)
            elif report["chunks"] or report["splits"]:
                log.warning("recovery sweep sent again: %s", report)
            self.outage = None

    def _rest(self, seconds: float) -> None:
        """Wait until the next beat, or until the broker is back (:meth:`broker_back`) or the worker stops."""
        self.woken.wait(seconds)
        self.woken.clear()

    def broker_back(self) -> None:
        """The worker's consumer has its broker again (after losing it): the sweep runs at once, sending
        again what the broker may have lost meanwhile."""
        self.broker_returned.set()
        self.woken.set()

    def beat(self) -> None:
        now = utcnow()
        with self.db.session() as session:
            row = session.get(WorkerRow, self.name_in_db)
            if row is None:
                session.add(WorkerRow(name=self.name_in_db, concurrency=self.concurrency, seen_at=now))
            else:
                row.seen_at = now
            throughput.record(session, self.name_in_db, now)

    def stop(self) -> None:
        self.stopping.set()
        self.woken.set()
        try:
            with self.db.session() as session:
                session.execute(delete(WorkerRow).where(WorkerRow.name == self.name_in_db))
        except RETRYABLE:
            pass


def database_away(error: BaseException) -> bool:
    """Whether ``error`` says the database cannot be reached (refused, gone, shutting down, starting up),
    not that a statement failed (a lock or a statement that timed out, a deadlock).

    >>> import psycopg
    >>> database_away(OperationalError("SELECT 1", {}, psycopg.OperationalError("connection refused")))
    True
    >>> database_away(OperationalError("SELECT 1", {}, psycopg.errors.LockNotAvailable("lock timeout")))
    False
    """
    if not isinstance(error, DBAPIError):
        return False
    state = getattr(error.orig, "sqlstate", "")
    return bool(error.connection_invalidated) or state is None or state[:2] in ("08", "57")


class PoolTrouble:
    """The pool processes tell their worker when a task of theirs met the database away (it is retried):
    when it did, 8 bytes down a pipe made before the pool forks, which the heartbeat reads at each beat."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)  # a full pipe drops a report: the earliest are kept

    def tell(self) -> None:
        try:
            os.write(self._write, struct.pack("d", time.time()))  # a write this small is never split
        except OSError:
            pass

    def since(self) -> datetime | None:
        """The earliest moment told since the last call, if any."""
        told: list[float] = []
        while True:
            try:
                data = os.read(self._read, 4096)
            except BlockingIOError:
                break
            told += [moment for (moment,) in struct.iter_unpack("d", data)]
            if not data:
                break
        return datetime.fromtimestamp(min(told), UTC) if told else None


class PoolWarmth:
    """The pool processes tell their worker they are warm (:func:`worker.work.warm`): a byte each down a
    pipe made before the pool forks."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        # A process started later (one replaced after it died) writes too, and nobody reads it then:
        # a full pipe must not block it.
        os.set_blocking(self._write, False)

    def tell(self) -> None:
        try:
            os.write(self._write, b"w")
        except OSError:
            pass

    def wait(self, count: int, seconds: float = WARM_WAIT_SECONDS) -> int:
        """Wait until ``count`` processes told (at most ``seconds``); how many did."""
        told = 0
        deadline = time.monotonic() + seconds
        while told < count and (left := deadline - time.monotonic()) > 0:
            if select.select([self._read], [], [], left)[0]:
                told += len(os.read(self._read, count - told))
        return told


class Purger(threading.Thread):
    """Removes what deletes and expiry marked, batch by batch (``work.purge``), beside the heartbeat: a
    delete of gigabytes takes many batches, which must not hold up the heartbeat (the worker would
    look gone)."""

    def __init__(self, db: Database, settings: Settings, stopping: threading.Event) -> None:
        super().__init__(name="dealer-purge", daemon=True)
        self.db, self.settings = db, settings
        self.stopping = stopping

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                purge(self.db, self.settings, more=lambda: not self.stopping.is_set())
            except Exception:  # noqa: BLE001 - like the heartbeat, it outlives a database outage
                log.exception("purge failed; trying again")
            self.stopping.wait(self.settings.sweep_seconds)


class TaskCounter:
    """Tasks a pool process finished and has not yet added to its worker's row.

    Counted in batches: a write per task would cost the database as much as a small chunk.
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self.count = 0
        self.since = 0.0

    def add(self) -> None:
        self.count += 1
        if time.monotonic() - self.since >= COUNT_EVERY_SECONDS:
            self.save()

    def save(self) -> None:
        count, self.count, self.since = self.count, 0, time.monotonic()
        if not count:
            return
        try:
            with self.db.session() as session:
                session.execute(update(WorkerRow).where(WorkerRow.name == worker_name(os.getppid()))
                                .values(processed=WorkerRow.processed + count))
        except RETRYABLE:
            pass  # only a statistic
