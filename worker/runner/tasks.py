"""The Celery tasks a worker runs, and the worker application that carries them.

Each task is a thin wrapper over :mod:`worker.work` (what the tests' dispatcher runs too): it
takes an id, and everything else comes from the database. A task that meets a database that is
down retries with back-off instead of failing the job.
"""

from __future__ import annotations

import gc
import logging
import threading
from typing import Any

from celery import Celery
from celery.signals import (
    after_setup_logger,
    task_postrun,
    task_retry,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)
from sqlalchemy.orm import configure_mappers

from worker import engines, work
from worker.broker import CHECK, NOTIFY, SOLVE, SPLIT, CeleryDispatcher, create_celery
from worker.broker.seams.celery import TASK_LOGGERS, pool_of, reconnection_step
from worker.config import Settings
from worker.runner.heartbeat import RETRYABLE, Heartbeat, PoolTrouble, PoolWarmth, TaskCounter, database_away
from worker.store.database import Database

log = logging.getLogger("dealer.worker")
_RETRY: dict[str, Any] = {"autoretry_for": RETRYABLE, "retry_backoff": 1, "retry_backoff_max": 30,
                          "retry_jitter": True, "max_retries": 100}


def create_worker_app(settings: Settings) -> Celery:
    """The Celery app of a worker: the tasks, bound to ``settings``, and the worker's heartbeat."""
    app = create_celery(settings)
    dispatcher = CeleryDispatcher(app)
    engines.use_native_core(not settings.pure_python)
    # Made before the pool forks, so that each process starts with them instead of spending its first
    # task on them (the engines' tables, SQLAlchemy's engine and its mapped classes, Celery's sender).
    engines.all_engines()
    Database.of(settings)
    configure_mappers()
    dispatcher.prepare()
    warmth = PoolWarmth()
    trouble = PoolTrouble()

    @app.task(name=SPLIT, **_RETRY)
    def split(job_id: int) -> None:
        work.split(settings, job_id, dispatcher)

    @app.task(name=SOLVE, **_RETRY)
    def solve(chunk_id: int) -> None:
        work.solve(settings, chunk_id, dispatcher)

    @app.task(name=CHECK, **_RETRY)
    def check(check_id: int) -> None:
        work.check(settings, check_id, dispatcher)

    @app.task(name=NOTIFY, **_RETRY)
    def notify(kind: str, ident: int) -> None:
        work.notify(settings, kind, ident, dispatcher)

    counter = TaskCounter(settings)
    heartbeat: list[Heartbeat] = []

    @worker_process_init.connect(weak=False)
    def start_pool_process(**_: Any) -> None:
        Database.forget_pools()  # the parent's connections are not this process's to use
        # What the process holds now (modules, Celery, SQLAlchemy's metadata) lives as long as
        # it does: out of the collector's sight, full collections stay cheap while solving.
        gc.freeze()
        # In a thread: Celery gives a pool process seconds to start, and a database that is slow to
        # answer must not have it killed and started again; a task that comes first just opens its own.
        threading.Thread(target=warm_pool_process, name="dealer-warm", daemon=True).start()

    def warm_process() -> None:
        """Open what this process's first task needs: a database connection, the broker's."""
        try:
            work.warm(settings)
            dispatcher.connect()
        except Exception:  # noqa: BLE001 - only a head start: the first task opens what is missing
            log.warning("could not open the connections ahead of the first task", exc_info=True)

    def warm_pool_process() -> None:
        """Warm, then tell the worker, which says it is ready (its first heartbeat) once its every process has."""
        warm_process()
        warmth.tell()

    @task_retry.connect(weak=False)
    def database_lost(reason: Any = None, **_: Any) -> None:
        if isinstance(reason, BaseException) and database_away(reason):
            trouble.tell()

    @task_postrun.connect(weak=False)
    def count_task(**_: Any) -> None:
        counter.add()

    @worker_process_shutdown.connect(weak=False)
    def save_count(**_: Any) -> None:
        counter.save()

    @worker_ready.connect(weak=False)
    def start_heartbeat(sender: Any = None, **_: Any) -> None:
        # A pool of other kinds (``--pool solo`` or threads, passed on to Celery) runs its tasks in this
        # process, which then warms itself before saying it is ready.
        concurrency, forks = pool_of(sender)
        heartbeat.append(Heartbeat(settings, dispatcher, concurrency, before_first_beat=(
            (lambda: warmth.wait(concurrency)) if forks else warm_process), trouble=trouble))
        heartbeat[-1].start()

    def broker_back() -> None:
        """The heartbeat is told when the worker's consumer has its broker connection again."""
        for beat in heartbeat:
            beat.broker_back()

    app.steps["consumer"].add(reconnection_step(broker_back))

    @after_setup_logger.connect(weak=False)
    def quiet_tasks(logger: Any = None, loglevel: int | str | None = None, **_: Any) -> None:
        # A line per task received and per task done (hundreds a job) only at DEBUG: at INFO the
        # terminal says what the worker does as a whole, and a task that fails still says so.
        level = logging.getLevelName(loglevel) if isinstance(loglevel, str) else loglevel
        if not isinstance(level, int) or level > logging.DEBUG:
            for name in TASK_LOGGERS:
                logging.getLogger(name).setLevel(logging.WARNING)

    @worker_shutdown.connect(weak=False)
    def stop_heartbeat(**_: Any) -> None:
        for beat in heartbeat:
            beat.stop()

    return app
