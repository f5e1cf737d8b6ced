"""The Celery tasks a worker runs (``dealer worker`` or ``celery -A worker.tasks worker``).

Each task is a thin wrapper over :mod:`worker.pipeline`. A task that meets a
database that is down retries with back-off instead of failing the job. Each worker
keeps a heartbeat row (for the dashboard) and runs the recovery sweep.
"""

from __future__ import annotations

import gc
import logging
import os
import socket
import threading
import time
from typing import Any

from celery.signals import (
    task_postrun,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)
from sqlalchemy import delete, update
from sqlalchemy.exc import DBAPIError, OperationalError

from worker import pipeline
from worker.celery_app import SOLVE, SPLIT, CeleryDispatcher, create_celery
from worker.config import Settings
from worker.db import dispose_all, session_scope
from worker.models import WorkerRow, utcnow

log = logging.getLogger("dealer.worker")

SETTINGS = Settings.from_env()
app = create_celery(SETTINGS)
RETRYABLE = (OperationalError, DBAPIError, ConnectionError)
HEARTBEAT_SECONDS = 5.0


DISPATCHER = CeleryDispatcher(app)
_retry: dict[str, Any] = {"autoretry_for": RETRYABLE, "retry_backoff": 1, "retry_backoff_max": 30,
                          "retry_jitter": True, "max_retries": 100}


@app.task(name=SPLIT, **_retry)
def split(job_id: int) -> None:
    pipeline.split_job(SETTINGS, job_id, DISPATCHER)


@app.task(name=SOLVE, **_retry)
def solve(chunk_id: int) -> None:
    pipeline.solve_chunk(SETTINGS, chunk_id)


def main_name(pid: int | None = None) -> str:
    return f"{socket.gethostname()}:{pid or os.getpid()}"


@worker_process_init.connect
def _start_pool_process(**_: Any) -> None:
    dispose_all()  # the parent's connections are not this process's to use
    # What the process holds now (modules, Celery, SQLAlchemy's metadata) lives as long as
    # it does: out of the collector's sight, full collections stay cheap while solving.
    gc.freeze()


#: Tasks this pool process finished and has not yet added to its worker's row.
_unsaved = {"count": 0, "since": 0.0}
COUNT_EVERY_SECONDS = 2.0


@task_postrun.connect
def _count_processed(**_: Any) -> None:
    # Counted in batches: a write per task would cost the database as much as a small chunk.
    _unsaved["count"] += 1
    if time.monotonic() - _unsaved["since"] >= COUNT_EVERY_SECONDS:
        _save_count()


@worker_process_shutdown.connect
def _save_count(**_: Any) -> None:
    count, _unsaved["count"], _unsaved["since"] = _unsaved["count"], 0, time.monotonic()
    if not count:
        return
    try:
        with session_scope(SETTINGS.database_url) as session:
            session.execute(update(WorkerRow).where(WorkerRow.name == main_name(os.getppid()))
                            .values(processed=WorkerRow.processed + count))
    except RETRYABLE:
        pass  # only a statistic


class Heartbeat(threading.Thread):
    """Keeps this worker's row fresh and sweeps up after lost workers and lost messages."""

    def __init__(self, concurrency: int) -> None:
        super().__init__(name="dealer-heartbeat", daemon=True)
        self.concurrency = concurrency
        self.stopping = threading.Event()
        self.name_in_db = main_name()

    def run(self) -> None:
        since_sweep = float("inf")
        while not self.stopping.is_set():
            try:
                self.beat()
                since_sweep += HEARTBEAT_SECONDS
                if since_sweep >= SETTINGS.sweep_seconds:
                    since_sweep = 0
                    report = pipeline.sweep(SETTINGS, DISPATCHER)
                    if report["chunks"] or report["splits"]:
                        log.warning("recovery sweep sent again: %s", report)
            except Exception:  # noqa: BLE001 - the heartbeat must outlive a database outage
                log.exception("heartbeat failed; trying again")
            self.stopping.wait(HEARTBEAT_SECONDS)

    def beat(self) -> None:
        with session_scope(SETTINGS.database_url) as session:
            row = session.get(WorkerRow, self.name_in_db)
            if row is None:
                session.add(WorkerRow(name=self.name_in_db, concurrency=self.concurrency, seen_at=utcnow()))
            else:
                row.seen_at = utcnow()

    def stop(self) -> None:
        self.stopping.set()
        try:
            with session_scope(SETTINGS.database_url) as session:
                session.execute(delete(WorkerRow).where(WorkerRow.name == self.name_in_db))
        except RETRYABLE:
            pass


_heartbeat: Heartbeat | None = None


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    global _heartbeat
    concurrency = getattr(getattr(sender, "controller", None), "concurrency", None) or 1
    _heartbeat = Heartbeat(int(concurrency))
    _heartbeat.start()


@worker_shutdown.connect
def _stop_heartbeat(**_: Any) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()
