"""Database engines and sessions, the same code for PostgreSQL and SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

READONLY = "dealer_readonly"
_engines: dict[str, Engine] = {}
_sessions: dict[str, sessionmaker[Session]] = {}


def get_engine(url: str) -> Engine:
    """One engine per URL and process (after a fork, call :func:`dispose_all`)."""
    engine = _engines.get(url)
    if engine is None:
        engine = _engines[url] = _create(url)
    return engine


def _create(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    from worker.config import Settings

    idle_ms = int(Settings.from_env().db_idle_timeout * 1000)
    connect_args = {
        "options": f"-c idle_in_transaction_session_timeout={idle_ms}",
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
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=60000",
                   "mmap_size=1073741824"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def dispose_all() -> None:
    """Forget pooled connections inherited over a fork (the parent keeps using its own)."""
    for engine in _engines.values():
        engine.dispose(close=False)


def sessions(url: str) -> sessionmaker[Session]:
    factory = _sessions.get(url)
    if factory is None:
        factory = _sessions[url] = sessionmaker(get_engine(url), expire_on_commit=False)
    return factory


@contextmanager
def session_scope(url: str, write: bool = True) -> Iterator[Session]:
    """A session that commits on success and rolls back on any error.

    ``write=False`` is for sessions that only read: on SQLite they do not wait for,
    or hold up, writers.
    """
    session = sessions(url)()
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
def transaction(url: str, write: bool = True) -> Iterator[Connection]:
    """A Core connection in a transaction that commits on success and rolls back on any error.

    For the workers' hot path: a statement run here skips the ORM's bookkeeping, which
    costs more than the statement itself. ``write`` as in :func:`session_scope`.
    """
    with get_engine(url).connect() as connection:
        if not write:
            connection = connection.execution_options(**{READONLY: True})
        with connection.begin():
            yield connection
