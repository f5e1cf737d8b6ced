"""An in-process dispatcher: the work runs here, in the order sent (no broker), through the same
functions the Celery tasks call (:mod:`worker.work`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from worker import work
from worker.config import Settings
from worker.store.database import Database

#: What each kind of message runs, as a Celery task does.
WORK = {"split": work.split, "solve": work.solve, "check": work.check,
        "notify_job": lambda db, settings, ident, sender: work.notify(db, settings, "job", ident, sender),
        "notify_check": lambda db, settings, ident, sender: work.notify(db, settings, "check", ident, sender)}


class InlineDispatcher:
    """Runs tasks as they are sent (``immediate``), or queues them until :meth:`drain`."""

    def __init__(self, db: Database, settings: Settings, immediate: bool = True) -> None:
        self.db = db
        self.settings = settings
        self.immediate = immediate
        self.queue: deque[tuple[str, int]] = deque()
        self.sent: list[tuple[str, int]] = []
        self._running = False

    def split(self, job_id: int) -> None:
        self._send("split", job_id)

    def solve(self, chunk_ids: Sequence[int]) -> None:
        for chunk_id in chunk_ids:
            self._send("solve", chunk_id)

    def check(self, check_id: int) -> None:
        self._send("check", check_id)

    def notify(self, kind: str, ident: int) -> None:
        self._send(f"notify_{kind}", ident)

    def queue_depth(self) -> int | None:
        return len(self.queue)

    def _send(self, kind: str, ident: int) -> None:
        self.queue.append((kind, ident))
        self.sent.append((kind, ident))
        if self.immediate and not self._running:
            self.drain()

    def drain(self) -> None:
        """Run everything queued, including what running it queues."""
        self._running = True
        try:
            while self.queue:
                kind, ident = self.queue.popleft()
                WORK[kind](self.db, self.settings, ident, self)
        finally:
            self._running = False
