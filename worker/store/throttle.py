"""Failed sign-ins counted per bucket (a client address), slowing guessers down for a while.

A bucket may fail ``allowed`` times; every failure after that blocks it for twice as long as
the one before (1 s, 2 s, 4 s … up to ``longest``), so a guesser gets a handful of tries and
then about one a ``longest``. A bucket's count starts again once ``window`` has passed since
its first failure and since its last block ended. The counts live in the database, so every
web process and host shares them.

What is blocked is wrong keys, never a right one: the web app checks a key first and asks
the throttle only about a wrong one (:mod:`webui.auth`), so a request with a right key costs
the throttle nothing and is never refused, whatever others behind the same address send. A
token of 128 random bits or more cannot be guessed; the throttle only makes trying expensive.

>>> from worker.testing.scratch import scratch_database
>>> db = scratch_database()
>>> throttle = Throttle(db, allowed=2, longest=60)
>>> [throttle.failed(["addr:192.0.2.1"]) for _ in range(4)]
[0.0, 0.0, 1.0, 2.0]
>>> 0 < throttle.wait(["addr:192.0.2.1", "addr:192.0.2.2"]) <= 2.0, throttle.wait(["addr:192.0.2.9"])
(True, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import Delete, delete, select
from sqlalchemy.exc import IntegrityError

from worker.store.database import Database
from worker.store.models import AuthFailure, utcnow

#: A bucket's name is at most this long (the column's width).
BUCKET_LENGTH = 128


class Throttle:
    def __init__(self, db: Database, allowed: int = 5, longest: float = 300.0, window: float = 600.0) -> None:
        """``allowed`` 0 turns throttling off."""
        self.db = db
        self.allowed = allowed
        self.longest = longest
        self.window = timedelta(seconds=window)

    def wait(self, buckets: Sequence[str]) -> float:
        """Seconds until none of ``buckets`` is blocked (0 when none is, or when throttling is off)."""
        if self.allowed <= 0:
            return 0.0
        now = utcnow()
        with self.db.session(write=False) as session:
            until = session.scalars(select(AuthFailure.blocked_until).where(
                AuthFailure.bucket.in_([b[:BUCKET_LENGTH] for b in buckets]))).all()
        return max([(moment - now).total_seconds() for moment in until if moment is not None and moment > now],
                   default=0.0)

    def failed(self, buckets: Sequence[str]) -> float:
        """Count a failure in each bucket; the seconds the longest block now in force lasts (0: none)."""
        if self.allowed <= 0:
            return 0.0
        return max((self._fail(bucket[:BUCKET_LENGTH]) for bucket in buckets), default=0.0)

    def _fail(self, bucket: str) -> float:
        for attempt in range(2):
            try:
                with self.db.session() as session:
                    now = utcnow()
                    row = session.get(AuthFailure, bucket, with_for_update=True)
                    if row is None:
                        # A new bucket: forget the quiet ones now, so that the table holds only recent guessers.
                        session.execute(self._quiet(now))
                        row = AuthFailure(bucket=bucket, failures=0, first_at=now)
                        session.add(row)
                    elif self._forgotten(row, now):
                        row.failures, row.first_at, row.blocked_until = 0, now, None
                    row.failures += 1
                    over = row.failures - self.allowed
                    if over <= 0:
                        return 0.0
                    seconds = min(self.longest, 2.0 ** (over - 1))
                    row.blocked_until = now + timedelta(seconds=seconds)
                    return seconds
            except IntegrityError:  # another process counted this bucket's first failure at the same moment
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _forgotten(self, row: AuthFailure, now: datetime) -> bool:
        last = max(row.first_at, row.blocked_until or row.first_at)
        return now - last > self.window

    def _quiet(self, now: datetime) -> Delete:
        horizon = now - self.window
        return delete(AuthFailure).where(AuthFailure.first_at < horizon,
                                         AuthFailure.blocked_until.is_(None) | (AuthFailure.blocked_until < horizon))
