"""The database connection, built from :class:`~worker.config.Settings`: the same code for PostgreSQL and SQLite.

Each process makes its own, once, where it starts (its composition root: ``webui.app.create_app``, the
worker's ``create_worker_app``, a ``dealer`` command) and hands it to what needs it.

>>> from worker.config import Settings
>>> db = Database(Settings.from_env({}, data_dir="/tmp/dealer-doc"))
>>> db.url, db.dialect
('sqlite:////tmp/dealer-doc/dealer.db', 'sqlite')
>>> db.close()
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from worker.config import Settings

READONLY = "dealer_readonly"


class Database:
    """A pool of connections to the database ``settings`` name, for one process: a process forked
    from the one that made it calls :meth:`after_fork` before its first use.

    ``session()`` gives an ORM session, ``transaction()`` a Core connection for the
    workers' hot path; both commit on success and roll back on any error. With
    ``write=False`` they only read: on SQLite they then neither wait for nor hold up writers.
    """

    def __init__(self, settings: Settings) -> None:
        self.url = settings.database_url
        self.engine = _create(self.url, settings.db_idle_timeout)
        self.dialect = self.engine.dialect.name
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def after_fork(self) -> None:
        """Drop the pooled connections inherited over a fork, unclosed: they are the parent's, which goes on
        using them; this process opens its own."""
        self.engine.dispose(close=False)

    def close(self) -> None:
        """Close every pooled connection (the pool opens new ones if used again)."""
        self.engine.dispose()

    @property
    def postgres(self) -> bool:
        return self.dialect == "postgresql"

    @contextmanager
    def session(self, write: bool = True) -> Iterator[Session]:
        session = self._sessions()
        if not write:
            session.connection(execution_options={READONLY: True})
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Connection]:
        """A Core connection in a transaction: a statement run here skips the ORM's
        bookkeeping, which on the solve path costs more than the statement itself."""
        with self.engine.connect() as connection:
            if not write:
                connection = connection.execution_options(**{READONLY: True})
            with connection.begin():
                yield connection


def _create(url: str, idle_timeout: float) -> Engine:
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError:
                pass  # connecting will fail and say why, where it can be answered (e.g. /healthz)
        engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    connect_args = {
        # A worker cut off mid-transaction must not keep the job row locked for hours: whether its session
        # waits for its next command (idle in transaction) or is sending it an answer no one acknowledges
        # (a chunk's inputs: the session stays active, its locks held until the kernel gives up, minutes on).
        "options": f"-c idle_in_transaction_session_timeout={int(idle_timeout * 1000)} "
                   f"-c tcp_user_timeout={int(idle_timeout * 1000)}",
        # Notice a server that vanished (pulled cable) in seconds, not in the kernel's two hours.
        "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3,
        "connect_timeout": 10,
    }
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10, connect_args=connect_args)


def _sqlite_begin(connection: Connection) -> None:
    # A writer takes the write lock up front, so that two writers queue on busy_timeout
    # rather than fail on a lock upgrade; a reader (WAL) needs no lock at all.
    readonly = connection.get_execution_options().get(READONLY, False)
    connection.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # the "begin" event issues BEGIN itself
    cursor = dbapi_connection.cursor()
    # mmap: every write by another process empties a connection's page cache, and pages read
    # back through a memory map cost no copy (a worker's CPU time fell by a third with it).
    # wal_autocheckpoint: copying the log into the database every 4 MB (the default) copied the
    # same index pages over and over on a large job; every 64 MB copies each of them once.
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=60000",
                   "mmap_size=1073741824", "wal_autocheckpoint=16384"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()
