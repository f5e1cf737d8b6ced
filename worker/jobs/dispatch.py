"""How work is handed out: the protocol the split, the sweep and the service send work through.

Celery implements it in the service (:class:`worker.runner.app.CeleryDispatcher`); tests
use an in-process one. Only ids travel: whoever takes the work reads the rest from the
database.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Protocol


class Dispatcher(Protocol):
    def split(self, job_id: int) -> None: ...

    def solve(self, chunk_ids: Sequence[int]) -> None: ...

    def queue_depth(self) -> int | None:
        """Messages waiting in the broker, or ``None`` when that cannot be told."""


def worker_name(pid: int | None = None) -> str:
    """How a worker process is named in chunk rows and heartbeats: ``host:pid``."""
    return f"{socket.gethostname()}:{pid or os.getpid()}"
