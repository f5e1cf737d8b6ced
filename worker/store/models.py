"""The tables: jobs, the chunks a job is split into, one case row per deck or hand, and workers.

A job's upload is parsed once by the split task into chunks (each holds its cases'
canonical inputs, compressed); a solve task turns one chunk into case rows in a
single transaction, so a chunk is either wholly stored or not at all.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from worker.jobs.states import ChunkStatus, JobStatus


#: Upper bounds, in microseconds, of the solve-time histogram's buckets (``/metrics``).
SOLVE_BUCKETS_US = (50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000,
                    5000000)


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every database (SQLite would hand back naive ones)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return value.replace(tzinfo=UTC) if value is not None else None


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON, datetime: UTCDateTime}


class Job(Base):
    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    game: Mapped[str] = mapped_column(String(16), index=True)
    filename: Mapped[str] = mapped_column(String(255))
    upload_path: Mapped[str] = mapped_column(String(1024))
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    size: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default=JobStatus.QUEUED, index=True)
    error: Mapped[str | None] = mapped_column(Text)
    #: Reading warnings as Diagnostic dicts (missing terminator, text after it).
    warnings: Mapped[list[Any]] = mapped_column(default=list)
    chunk_size: Mapped[int] = mapped_column(Integer)
    total: Mapped[int] = mapped_column(Integer, default=0)
    done: Mapped[int] = mapped_column(Integer, default=0)
    #: Cases that could not be solved (time budget); they count towards finishing.
    failed_cases: Mapped[int] = mapped_column(Integer, default=0)
    cache_hits: Mapped[int] = mapped_column(Integer, default=0)
    #: Solved cases by outcome, e.g. {"win": 45, "loss": 1946, "draw": 9}.
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    #: Solved (not cached) cases by solve time: one count per bucket of SOLVE_BUCKETS_US, then the rest.
    solve_hist: Mapped[list[Any]] = mapped_column(default=list)
    solve_us: Mapped[int] = mapped_column(BigInteger, default=0)
    rerun_of: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    client: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    started_at: Mapped[datetime | None] = mapped_column()
    split_at: Mapped[datetime | None] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()
    #: While splitting: the split task renews this; a lapsed lease means it died.
    lease_until: Mapped[datetime | None] = mapped_column()
    #: Last time a chunk of this job finished (or the job was dispatched): the sweep's clock.
    progress_at: Mapped[datetime | None] = mapped_column()

    chunks: Mapped[list[Chunk]] = relationship(back_populates="job", cascade="all, delete-orphan",
                                               passive_deletes=True)


class Chunk(Base):
    __tablename__ = "chunks"
    __table_args__ = (UniqueConstraint("job_id", "seq"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    first_index: Mapped[int] = mapped_column(Integer)
    count: Mapped[int] = mapped_column(Integer)
    #: zstd of the cases' canonical inputs, one per line; dropped once the chunk is done.
    inputs: Mapped[bytes | None] = mapped_column(LargeBinary)
    status: Mapped[str] = mapped_column(String(16), default=ChunkStatus.PENDING, index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(String(255))
    dispatched_at: Mapped[datetime | None] = mapped_column()
    lease_until: Mapped[datetime | None] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()

    job: Mapped[Job] = relationship(back_populates="chunks")


class CaseRow(Base):
    """One solved deck or hand. ``(job_id, index)`` is unique: writing a chunk twice adds nothing."""

    __tablename__ = "cases"
    __table_args__ = (
        UniqueConstraint("job_id", "index", name="uq_cases_job_index"),
        Index("ix_cases_game_outcome_number", "game", "outcome", "number"),
        Index("ix_cases_game_input_hash", "game", "input_hash"),
        Index("ix_cases_job_outcome_number", "job_id", "outcome", "number"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    game: Mapped[str] = mapped_column(String(16))
    input: Mapped[str] = mapped_column(Text)
    #: A 63-bit hash of (game, canonical input): finds the same deck in any job.
    input_hash: Mapped[int] = mapped_column(BigInteger)
    outcome: Mapped[str | None] = mapped_column(String(16))
    number: Mapped[int | None] = mapped_column(Integer)
    detail: Mapped[list[Any] | None] = mapped_column()
    line: Mapped[str | None] = mapped_column(Text)
    #: zstd-compressed JSON of the engine's trace.
    trace: Mapped[bytes | None] = mapped_column(LargeBinary)
    error: Mapped[str | None] = mapped_column(Text)
    cached: Mapped[bool] = mapped_column(default=False)
    solve_us: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(String(255))
    solved_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class WorkerRow(Base):
    """A worker process's heartbeat, for the dashboard and /healthz."""

    __tablename__ = "workers"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    seen_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    concurrency: Mapped[int] = mapped_column(Integer, default=1)
    processed: Mapped[int] = mapped_column(Integer, default=0)
