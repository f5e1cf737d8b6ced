"""Celery, opened where it offers no hook: the broker connection class its app makes, the consumer's
steps started again once it has its broker back, what a ready worker says of its pool, and the loggers of
every task received and done.

Written against Celery 5.6 (``app.amqp.AMQP.Connection``; the consumer's ``Connection`` step, which
the steps that require it follow at each restart; the ``worker_ready`` sender's ``controller`` and
``pool``; ``worker.strategy`` and ``app.trace`` logging each task).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celery.app.amqp import AMQP

from worker.broker.seams.kombu import PromptConnection

#: The bounds pyproject.toml sets on what this module reaches into (tests/test_seams.py holds them equal).
WRITTEN_AGAINST = ("celery[redis]>=5.4,<5.7",)

#: Celery's loggers of every task received ("Task … received") and done ("Task … succeeded in …").
TASK_LOGGERS = ("celery.worker.strategy", "celery.app.trace")


class PromptAMQP(AMQP):
    """Celery's messaging, connecting through :class:`PromptConnection` (the consumer's connection too)."""

    Connection = PromptConnection


def reconnection_step(reconnected: Callable[[], None]) -> type:
    """A step of the worker's consumer (``app.steps["consumer"].add``) that calls ``reconnected`` each time
    the consumer has its broker connection again: each start of its steps but the first is one (Celery
    starts them again once it reconnects)."""
    # Imported here, as the pool below: whoever only sends work (the web) loads none of the worker's parts.
    from celery import bootsteps

    class Reconnected(bootsteps.StartStopStep):  # type: ignore[misc]
        requires = ("celery.worker.consumer.connection:Connection",)

        def __init__(self, parent: Any, **kwargs: Any) -> None:
            super().__init__(parent, **kwargs)
            self.connected_before = False

        def start(self, parent: Any) -> None:
            if self.connected_before:
                reconnected()
            self.connected_before = True

    return Reconnected


def pool_of(ready: Any) -> tuple[int, bool]:
    """What a worker says of its pool as it is ready (``worker_ready``'s sender): how many processes,
    and whether they are forked (a pool of other kinds, ``--pool solo`` or threads, runs its tasks in
    the worker's own process)."""
    from celery.concurrency.prefork import TaskPool as PreforkPool

    concurrency = int(getattr(getattr(ready, "controller", None), "concurrency", None) or 1)
    return concurrency, isinstance(getattr(ready, "pool", None), PreforkPool)
