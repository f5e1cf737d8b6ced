"""Deletes in the background: what was marked deleted is removed a few rows at a time.

Deleting a job only marks it (``jobs.deleted_at``, :func:`worker.jobs.lifecycle.mark_deleted`),
and an upload no job needs any more is only marked ``deleting``; from then on no read shows
them. The workers' purge then removes their rows here, in transactions of at most
``delete_batch_rows`` rows and ``delete_batch_bytes`` bytes of blobs (one row at least): a
million-case job's chunks or a 3 GiB upload's blocks go in many short transactions, and a
write that comes meanwhile (SQLite has one writer at a time) waits for one batch at most,
never for the whole delete. The order keeps every foreign key whole: a deleted job's
checks' parts, its checks, its chunks, then its row; a deleting upload's blocks, then its row.

Two purges at once (two workers) each remove what they find: on PostgreSQL each skips the
rows the other holds; on SQLite they take turns.

The space comes back at once. On PostgreSQL a deleted row (and its blobs, out of line in the table's
TOAST) keeps its place until a ``VACUUM`` finds it dead; left to autovacuum (its pace, its nap, or
off on the server), a service that deletes as fast as it stores grows by what it deletes. So the
purge vacuums the tables it removed rows from itself: every ``vacuum_bytes`` of blobs removed and at
the end of each round, outside any transaction, ``SKIP_LOCKED`` (another worker's vacuum of the same
table is as good), ``TRUNCATE false``: cutting the empty pages off a table's end needs a lock that
would wait up to 5 s behind any search or export reading it, and hold up the queries behind it. So the
vacuum takes no lock that stops reads or writes, and the next rows stored take the space it freed: the tables stay within what the live jobs need plus what is deleted
between two vacuums. SQLite needs none of it: it keeps a freed page in its file's free list and
stores the next rows there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, delete, exists, func, literal, select, text, tuple_
from sqlalchemy.sql.elements import ColumnElement

from worker.states import UploadState
from worker.store.database import Database
from worker.store.models import Check, CheckPart, Chunk, Job, Upload, UploadBlock


@dataclass(frozen=True)
class Batch:
    """What one transaction of the purge removed."""

    table: str
    rows: int
    bytes: int


def purge(db: Database, max_rows: int, max_bytes: int, more: Callable[[], bool] = lambda: True,
          vacuum_bytes: int = 0) -> list[Batch]:
    """Remove what is marked deleted, batch by batch, until nothing is left (or ``more()`` says stop before
    a batch), vacuuming the tables it removed rows from every ``vacuum_bytes`` of blobs (0: only once
    done) and once done; the batches, in order."""
    done: list[Batch] = []
    if not pending(db):  # a read: an idle purge takes no write lock
        return done
    removed: Counter[str] = Counter()
    while more() and (batch := purge_batch(db, max_rows, max_bytes)) is not None:
        done.append(batch)
        removed[batch.table] += batch.bytes
        if vacuum_bytes and removed.total() >= vacuum_bytes:
            vacuum(db, removed)
            removed.clear()
    if removed and more():  # a worker stopping leaves it to the next purge's or autovacuum
        vacuum(db, removed)
    return done


def vacuum(db: Database, tables: Iterable[str]) -> None:
    """``VACUUM`` these tables (their TOAST with them) on PostgreSQL, so that the space of the rows removed
    is taken by the next ones stored; nothing on SQLite, which reuses a freed page by itself."""
    if not db.postgres:
        return
    names = ", ".join(sorted(tables))  # the purge's own table names, never input
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text(f"VACUUM (SKIP_LOCKED, TRUNCATE false) {names}"))


def purge_batch(db: Database, max_rows: int, max_bytes: int) -> Batch | None:
    """One short transaction of the purge: the next batch of rows to remove; ``None`` when none is left."""
    max_rows = max(1, max_rows)
    with db.transaction() as connection:
        for step in _steps():
            keys, size = _take(connection, step.query, db.postgres, max_rows, max_bytes)
            if keys:
                connection.execute(delete(step.model).where(step.key.in_(keys)))
                return Batch(step.model.__tablename__, len(keys), size)
    return None


def pending(db: Database) -> bool:
    """Whether anything is waiting to be removed."""
    with db.session(write=False) as session:
        return bool(session.scalar(select(exists().where(Job.deleted_at.is_not(None)))) or
                    session.scalar(select(exists().where(Upload.state == UploadState.DELETING))))


def _deleted_job(job_id: Any) -> ColumnElement[bool]:
    return exists().where(Job.id == job_id, Job.deleted_at.is_not(None))


def _length(*columns: Any) -> Any:
    total: Any = 0
    for column in columns:
        total = total + func.coalesce(func.length(column), 0)
    return total


def _take(connection: Connection, query: Select[Any], postgres: bool, max_rows: int, max_bytes: int
          ) -> tuple[list[Any], int]:
    """The keys of the first rows of ``query`` (its key's columns, then bytes) that fit in a batch, and
    their bytes."""
    query = query.limit(max_rows)
    if postgres:  # another purge's batch is its own: take the next rows instead of waiting for them
        query = query.with_for_update(skip_locked=True)
    keys: list[Any] = []
    size = 0
    for *key, length in connection.execute(query).all():
        if keys and size + length > max_bytes:
            break
        keys.append(tuple(key) if len(key) > 1 else key[0])
        size += length
    return keys, size


@dataclass(frozen=True)
class _Step:
    """What one kind of row a batch removes: ``query`` selects the rows' keys (``key``'s columns) and
    their bytes, in the order they go."""

    model: Any
    key: Any
    query: Select[Any]


def _steps() -> tuple[_Step, ...]:
    """The purge's order, which keeps every foreign key whole."""
    part = tuple_(CheckPart.check_id, CheckPart.attempt, CheckPart.seq)
    block = tuple_(UploadBlock.upload_id, UploadBlock.seq)
    return (
        _Step(CheckPart, part, select(CheckPart.check_id, CheckPart.attempt, CheckPart.seq,
                                      _length(CheckPart.verdicts, CheckPart.got))
              .where(CheckPart.check_id.in_(select(Check.id).where(_deleted_job(Check.job_id))))
              .order_by(CheckPart.check_id, CheckPart.attempt, CheckPart.seq)),
        _Step(Check, Check.id, select(Check.id, _length(Check.error)).where(_deleted_job(Check.job_id))
              .order_by(Check.id)),
        _Step(Chunk, Chunk.id, select(Chunk.id, _length(Chunk.inputs, Chunk.lines, Chunk.traces, Chunk.facts,
                                                        Chunk.facets, Chunk.bloom))
              .where(_deleted_job(Chunk.job_id)).order_by(Chunk.id)),
        _Step(Job, Job.id, select(Job.id, _length(Job.error)).where(
            Job.deleted_at.is_not(None), ~exists().where(Chunk.job_id == Job.id),
            ~exists().where(Check.job_id == Job.id)).order_by(Job.id)),
        _Step(UploadBlock, block, select(UploadBlock.upload_id, UploadBlock.seq, _length(UploadBlock.data))
              .where(UploadBlock.upload_id.in_(select(Upload.id).where(Upload.state == UploadState.DELETING)))
              .order_by(UploadBlock.upload_id, UploadBlock.seq)),
        _Step(Upload, Upload.id, select(Upload.id, literal(0)).where(
            Upload.state == UploadState.DELETING, ~exists().where(UploadBlock.upload_id == Upload.id))
              .order_by(Upload.id)),
    )
