"""How work is handed out: the protocol the split, the sweep and the service send work through.

Celery implements it in the service (:class:`worker.broker.CeleryDispatcher`); tests
use an in-process one. Only ids travel: whoever takes the work reads the rest from the
database.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from typing import Protocol


class Dispatcher(Protocol):
    def split(self, job_id: int) -> None: ...

    def solve(self, chunk_ids: Sequence[int]) -> None: ...

    def check(self, check_id: int) -> None:
        """Judge a check (``worker.checks.run``)."""

    def notify(self, kind: str, ident: int) -> None:
        """Make the callback of a job or a check (``kind``) that ended (``worker.checks.notify``)."""

    def queue_depth(self) -> int | None:
        """Messages waiting in the broker, or ``None`` when that cannot be told."""


def send_quietly(send: Callable[[], None]) -> None:
    """Send work now, or leave it to the recovery sweep when the broker cannot take it: the database
    already holds what is to be done."""
    try:
        send()
    except Exception:  # noqa: BLE001 - the sweep sends the work again once the broker is back
        pass


def worker_name(pid: int | None = None) -> str:
    """How a worker is named in its heartbeat: ``host:pid`` of its main process."""
    return f"{socket.gethostname()}:{pid or os.getpid()}"


def process_name() -> str:
    """How the process that runs a task is named in the rows it claims: ``host:worker:pid`` (a pool
    process names the worker it belongs to, whose heartbeat tells whether it is still there).

    >>> owner(process_name()) == worker_name(os.getppid())
    True
    """
    return f"{socket.gethostname()}:{os.getppid()}:{os.getpid()}"


def owner(name: str | None) -> str | None:
    """The worker (``host:pid``) of a process named by :func:`process_name`.

    >>> owner("box:10:12"), owner("box:12"), owner(None)
    ('box:10', None, None)
    """
    if name is None or name.count(":") < 2:
        return None
    return name.rsplit(":", 1)[0]
