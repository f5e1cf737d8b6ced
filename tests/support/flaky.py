"""A broker that fails: it refuses sends while down, loses messages, and delivers them in any order,
each run by the same functions the Celery tasks call (:mod:`worker.work`), in the manner of
:class:`tests.support.inline.InlineDispatcher`, by a "worker" that may die at any step of its task."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from sqlalchemy import Connection, event

from tests.support.inline import WORK
from worker import work
from worker.config import Settings
from worker.jobs.sweep import Outage
from worker.store.database import Database


class BrokerDown(ConnectionError):
    """What a send raises while the broker is down (Celery's sends raise an ``OperationalError`` then)."""


class Killed(BaseException):
    """The process running a task died here: no ``except Exception`` of the code under test catches it,
    so whatever it held (a lease, an open transaction, rolled back) is left as a killed process leaves it."""


class FlakyBroker:
    """Messages ``(kind, id)`` kept until :meth:`deliver`; :attr:`down` refuses every send (and says it
    cannot tell its queue's depth); :meth:`lose` forgets messages, as a restarted broker does.

    A task's steps are its sends and its commits: one run with ``kill_at=k`` dies at its step ``k``
    (counted from 0), before that send or that commit is made, leaving its earlier commits and whatever
    they hold (a split's lease, a claimed chunk) behind, as a process killed there would.
    """

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db, self.settings = db, settings
        self.queue: list[tuple[str, int]] = []
        self.down = False
        self.kill_at: int | None = None
        self.steps = 0
        event.listen(self.db.engine, "commit", self._commit)

    def close(self) -> None:
        event.remove(self.db.engine, "commit", self._commit)

    def _commit(self, connection: Connection) -> None:
        self._step()

    def _step(self) -> None:
        if self.kill_at is not None and self.steps >= self.kill_at:
            self.kill_at = None  # the rollback of the dead task's transaction is the database's, not a step
            raise Killed
        self.steps += 1

    def split(self, job_id: int) -> None:
        self._send([("split", job_id)])

    def solve(self, chunk_ids: Sequence[int]) -> None:
        self._send([("solve", chunk_id) for chunk_id in chunk_ids])

    def check(self, check_id: int) -> None:
        self._send([("check", check_id)])

    def notify(self, kind: str, ident: int) -> None:
        self._send([(f"notify_{kind}", ident)])

    def queue_depth(self) -> int | None:
        return None if self.down else len(self.queue)

    def _send(self, messages: list[tuple[str, int]]) -> None:
        self._step()
        if self.down:
            raise BrokerDown("the broker cannot be reached")
        self.queue.extend(messages)

    def lose(self, keep: int = 0) -> None:
        """Forget every message but the first ``keep``."""
        del self.queue[keep:]

    def deliver(self, place: int = 0, kill_at: int | None = None) -> bool:
        """Run the message at ``place`` of the queue (taken off it, as an acknowledged one is), its task
        dying at its step ``kill_at`` when given; whether it ran to its end (a refused send ends a task
        as in a worker: with the error, logged, and the message acknowledged)."""
        kind, ident = self.queue.pop(place)
        return self.run(lambda: WORK[kind](self.db, self.settings, ident, self), kill_at)

    def sweep(self, now: datetime, kill_at: int | None = None, outage: Outage | None = None) -> bool:
        """A worker's recovery sweep as of ``now`` (dying at its step ``kill_at`` when given; right after
        ``outage`` when given), as its heartbeat runs it; whether it ran to its end."""
        return self.run(lambda: work.sweep(self.db, self.settings, self, now, outage=outage), kill_at)

    def run(self, task: Callable[[], object], kill_at: int | None) -> bool:
        self.kill_at, self.steps = kill_at, 0
        try:
            task()
        except (Killed, BrokerDown):
            return False
        finally:
            self.kill_at = None
        return True

    def drain(self, limit: int = 100_000) -> None:
        """Run every message, including those running them sends, in order."""
        for _ in range(limit):
            if not self.queue:
                return
            self.deliver()
        raise AssertionError(f"the queue still holds {len(self.queue)} messages after {limit:,} deliveries")
