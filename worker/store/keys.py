"""API keys kept in the database: made, listed and revoked without a restart; seeded from ``DEALER_API_KEYS``.

A key is a name (the owner of what is made with it), a role (:class:`Role`) and the SHA-256
digest of its token; the token itself is shown once, when the key is made, and never kept.
A token made here has 256 random bits, so a plain digest is enough (no dictionary reaches it)
and looking a token up by its digest tells a timing observer nothing it could use. Revoking a
key ends its pages' sessions in the same transaction (``web_sessions``), so it stops working
at once everywhere; every request looks its key up here (a read by a unique index).

The service is open (no owners, no key asked for) only until a first key is made: a revoked key
keeps its row, so "a key was ever made" is read from the table itself and never goes back, and
revoking every key leaves the service closed (``dealer keys add`` can always make another).

>>> from worker.testing.scratch import scratch_database
>>> keys = Keys(scratch_database())
>>> token = keys.add("alice", Role.USER)
>>> keys.check(token), keys.check("x" * 43)
(Identity(name='alice', role='user'), None)
>>> keys.revoke("alice"), keys.check(token), keys.any_made()
(True, None, True)
"""

from __future__ import annotations

import enum
import hashlib
import re
import secrets
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, exists, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from worker.store.database import Database
from worker.store.models import ApiKey, WebSession, utcnow

#: A key's name: what jobs show as their owner.
NAME = re.compile(r"[A-Za-z0-9_.@-]{1,40}")
#: Random bytes of a token made by :meth:`Keys.add` (256 bits).
TOKEN_BYTES = 32
#: ``used_at`` is written at most this often per key and process (a request does not write).
USED_EVERY = timedelta(seconds=60)


class Role(enum.StrEnum):
    ADMIN = "admin"
    USER = "user"


class Origin(enum.StrEnum):
    ENV = "env"
    COMMAND = "command"
    PAGE = "page"


class KeyRefused(ValueError):
    """A key that cannot be made or changed as asked (the message says why)."""


@dataclass(frozen=True)
class Identity:
    """Who a right token is: its key's name and role."""

    name: str
    role: str


@dataclass(frozen=True)
class KeyInfo:
    name: str
    role: str
    origin: str
    created_at: datetime
    revoked_at: datetime | None
    used_at: datetime | None


@dataclass(frozen=True)
class Seed:
    """A key of ``DEALER_API_KEYS``: its name, role and the digest of its token."""

    name: str
    role: Role
    digest: str


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise KeyRefused(f"a key's name is 1-40 letters, digits or _.@- (not {name!r})")
    return name


def check_role(role: str) -> Role:
    try:
        return Role(role)
    except ValueError:
        raise KeyRefused(f"a key's role is admin or user (not {role!r})") from None


class Keys:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._used: dict[str, datetime] = {}
        # Only "a key was made" is remembered: it never goes back, so a process that remembered "none"
        # would serve a key made a moment ago as the open service (its jobs owned by nobody).
        self._made = False
        self._lock = threading.Lock()

    def add(self, name: str, role: str, origin: Origin = Origin.COMMAND) -> str:
        """Make a key; its token (shown once: only its digest is kept)."""
        check_name(name)
        role = check_role(role)
        token = secrets.token_urlsafe(TOKEN_BYTES)
        try:
            with self.db.session() as session:
                if session.scalar(select(ApiKey.id).where(ApiKey.name == name)) is not None:
                    raise KeyRefused(f"there is a key named {name!r} already (revoked keys keep their names)")
                session.add(ApiKey(name=name, role=role, digest=digest_of(token), origin=origin))
        except IntegrityError:  # made by someone else at the same moment
            raise KeyRefused(f"there is a key named {name!r} already") from None
        self._made = True
        return token

    def revoke(self, name: str) -> bool:
        """Revoke a key and end its sessions at once; whether it was active."""
        with self.db.session() as session:
            done = session.execute(update(ApiKey).where(ApiKey.name == name, ApiKey.revoked_at.is_(None))
                                   .values(revoked_at=utcnow())).rowcount
            session.execute(delete(WebSession).where(WebSession.key_name == name))
        return bool(done)

    def list(self) -> list[KeyInfo]:
        with self.db.session(write=False) as session:
            return [KeyInfo(k.name, k.role, k.origin, k.created_at, k.revoked_at, k.used_at)
                    for k in session.scalars(select(ApiKey).order_by(ApiKey.name))]

    def check(self, token: str) -> Identity | None:
        """Who ``token`` is, if it is an active key's."""
        with self.db.session(write=False) as session:
            row = session.execute(select(ApiKey.name, ApiKey.role).where(
                ApiKey.digest == digest_of(token), ApiKey.revoked_at.is_(None))).first()
        if row is None:
            return None
        self._touch(row.name)
        return Identity(row.name, row.role)

    def active(self, name: str) -> tuple[Identity, str] | None:
        """An active key by its name, with its digest (what a page's session is bound to)."""
        with self.db.session(write=False) as session:
            row = session.execute(select(ApiKey.name, ApiKey.role, ApiKey.digest).where(
                ApiKey.name == name, ApiKey.revoked_at.is_(None))).first()
        if row is None:
            return None
        self._touch(row.name)
        return Identity(row.name, row.role), row.digest

    def any_made(self) -> bool:
        """Whether a key was ever made, revoked or not (else the service is open): asked of the database
        until one was, then remembered for good."""
        if not self._made:
            with self.db.session(write=False) as session:
                self._made = bool(session.scalar(select(exists().select_from(ApiKey))))
        return self._made

    def seed(self, seeds: list[Seed]) -> None:
        """Bring the keys of ``DEALER_API_KEYS`` into the table: a new name is added; a changed token
        replaces the old one (and makes the key active again); a key of the variable that left it is
        revoked. A revoked key whose token did not change stays revoked."""
        for attempt in range(2):
            try:
                self._seed(seeds)
                break
            except IntegrityError:  # another web process seeded at the same moment
                if attempt:
                    raise

    def _seed(self, seeds: list[Seed]) -> None:
        wanted = {seed.name: seed for seed in seeds}
        now = utcnow()
        with self.db.session() as session:
            rows = {row.name: row for row in session.scalars(select(ApiKey).with_for_update())}
            for seed in seeds:
                row = rows.get(seed.name)
                if row is None:
                    taken = next((r.name for r in rows.values() if r.digest == seed.digest), None)
                    if taken is not None:
                        raise KeyRefused(f"DEALER_API_KEYS: key {seed.name!r} has the token of key {taken!r}")
                    session.add(ApiKey(name=seed.name, role=seed.role, digest=seed.digest, origin=Origin.ENV,
                                       created_at=now))
                elif row.origin != Origin.ENV:
                    raise KeyRefused(f"DEALER_API_KEYS: key {seed.name!r} is a key made by {row.origin} already: "
                                    "give the variable's key another name")
                else:
                    if row.digest != seed.digest:
                        row.digest, row.revoked_at, row.created_at = seed.digest, None, now
                        session.execute(delete(WebSession).where(WebSession.key_name == row.name))
                    row.role = seed.role
            for row in rows.values():
                if row.origin == Origin.ENV and row.name not in wanted and row.revoked_at is None:
                    row.revoked_at = now
                    session.execute(delete(WebSession).where(WebSession.key_name == row.name))

    def _touch(self, name: str) -> None:
        now = utcnow()
        with self._lock:
            last = self._used.get(name)
            if last is not None and now - last < USED_EVERY:
                return
            self._used[name] = now
        try:
            with self.db.session() as session:
                session.execute(update(ApiKey).where(ApiKey.name == name).values(used_at=now))
        except SQLAlchemyError:  # when it was last used is worth no refused request
            with self._lock:
                self._used.pop(name, None)
