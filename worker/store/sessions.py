"""The pages' signed-in sessions, kept by the server: the cookie only names one.

Logging out deletes the row, which ends every copy of the cookie at once (a copy taken
before the logout is worth nothing after it); a session also ends at its ``expires_at``.

>>> from worker.testing.scratch import scratch_database
>>> db = scratch_database()
>>> sessions = Sessions(db, hours=1)
>>> sid = sessions.start("ci")
>>> sessions.alive(sid, "ci"), sessions.alive(sid, "other"), sessions.alive("made-up", "ci")
(True, False, False)
>>> sessions.end(sid); sessions.alive(sid, "ci")
False
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from sqlalchemy import delete

from worker.store.database import Database
from worker.store.models import WebSession, utcnow


class Sessions:
    def __init__(self, db: Database, hours: float) -> None:
        self.db = db
        self.lifetime = timedelta(hours=hours)

    def start(self, key_name: str) -> str:
        """A new session for the key named ``key_name``; its id, for the cookie. Ended sessions are pruned here."""
        sid = secrets.token_urlsafe(32)
        now = utcnow()
        with self.db.session() as session:
            session.execute(delete(WebSession).where(WebSession.expires_at < now))
            session.add(WebSession(id=sid, key_name=key_name, created_at=now, expires_at=now + self.lifetime))
        return sid

    def alive(self, sid: str, key_name: str) -> bool:
        """Whether ``sid`` is a session of ``key_name`` that has not ended."""
        if len(sid) > 64:
            return False
        with self.db.session(write=False) as session:
            row = session.get(WebSession, sid)
            return row is not None and row.key_name == key_name and row.expires_at > utcnow()

    def end(self, sid: str) -> None:
        with self.db.session() as session:
            session.execute(delete(WebSession).where(WebSession.id == sid))
