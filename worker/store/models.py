"""The tables: uploads, jobs, the chunks a job is split into, checks, and workers.

A job's upload is parsed once by the split task into chunks (each holds its cases'
canonical inputs, compressed); a solve task stores one chunk's results in it, in one
transaction with the job's progress, so a chunk is either wholly stored or not at all.
No row is kept per case: a chunk's cases are found from its facets (:mod:`worker.store.chunks`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
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

from worker.states import ChunkStatus, JobStatus

#: Upper bounds, in microseconds, of the solve-time histogram's buckets (``/metrics``).
SOLVE_BUCKETS_US = (50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000,
                    5000000)


#: ``jobs.sha256`` of a job whose file is still arriving (none is known yet: a column of every job's
#: since the first schema, which SQLite cannot make nullable without copying the table).
ARRIVING = ""


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


#: The longest ``notify_url`` taken, and the longest ``notify_secret``.
NOTIFY_URL_LENGTH = 2048
NOTIFY_SECRET_LENGTH = 256


class Notified:
    """The columns of a job's or a check's callback (``notify_url``), set and sent by
    ``worker/checks/notify.py``; the lifecycles make it due when the row ends."""

    notify_url: Mapped[str | None] = mapped_column(String(NOTIFY_URL_LENGTH))
    notify_secret: Mapped[str | None] = mapped_column(String(NOTIFY_SECRET_LENGTH))
    #: The job's or check's page, as the service's public address names it (told in the body).
    notify_page: Mapped[str | None] = mapped_column(String(NOTIFY_URL_LENGTH))
    #: :class:`worker.states.NotifyState`; ``None``: no callback.
    notify_state: Mapped[str | None] = mapped_column(String(16), index=True)
    #: When a due callback is to be sent (again); while a send runs, when it is given up as lost.
    notify_next_at: Mapped[datetime | None] = mapped_column()
    notify_attempts: Mapped[int] = mapped_column(Integer, default=0)
    #: The last attempt's HTTP status, or why it got none.
    notify_code: Mapped[int | None] = mapped_column(Integer)
    notify_error: Mapped[str | None] = mapped_column(Text)
    notify_delivered_at: Mapped[datetime | None] = mapped_column()


class Upload(Base):
    """A judge file as it came in, kept in the database in compressed blocks (:mod:`worker.store.uploads`).

    Every worker reads it from here, so workers on other hosts need no shared disk. It is
    kept while some job still has to read it, and removed once every job using it is split.
    """

    __tablename__ = "uploads"

    id: Mapped[int] = mapped_column(primary_key=True)
    #: ``receiving`` while the web process writes it, ``stored`` once whole (:class:`worker.states.UploadState`).
    state: Mapped[str] = mapped_column(String(16))
    sha256: Mapped[str | None] = mapped_column(String(64), index=True)
    size: Mapped[int] = mapped_column(BigInteger, default=0)
    blocks: Mapped[int] = mapped_column(Integer, default=0)
    #: ``host:pid`` of the web process receiving it (to clean up after one that died).
    receiver: Mapped[str | None] = mapped_column(String(255))
    #: Who sent it: the name of the API key it came with (:data:`OWNER_LENGTH`); ``None`` in open mode.
    owner: Mapped[str | None] = mapped_column(String(64), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    seen_at: Mapped[datetime] = mapped_column(default=utcnow)


class UploadBlock(Base):
    __tablename__ = "upload_blocks"

    upload_id: Mapped[int] = mapped_column(ForeignKey("uploads.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: zstd of :data:`worker.store.uploads.BLOCK_BYTES` bytes of the file (the last block fewer).
    data: Mapped[bytes] = mapped_column(LargeBinary)


class Job(Notified, Base):
    __tablename__ = "jobs"
    #: An owner's jobs, newest first: a user's list, and what the per-owner limits count.
    __table_args__ = (Index("ix_jobs_owner_created_at", "owner", "created_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game: Mapped[str] = mapped_column(String(16), index=True)
    filename: Mapped[str] = mapped_column(String(255))
    #: The upload to split; ``None`` once every job using it has been split (or it was never stored).
    upload_id: Mapped[int | None] = mapped_column(ForeignKey("uploads.id", ondelete="SET NULL"), index=True)
    #: The file's; :data:`ARRIVING` while it arrives (a job is made from its first MiB and split as the rest
    #: comes, ``worker.jobs.arriving``), when ``size`` is the request's length, an estimate.
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    #: The SHA-256 of the file's first MiB (of all of it when shorter), known as soon as that is: a file
    #: whose start an earlier job's had makes its job once whole (``worker.jobs.arriving``).
    head_sha256: Mapped[str | None] = mapped_column(String(64), index=True)
    size: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default=JobStatus.QUEUED, index=True)
    error: Mapped[str | None] = mapped_column(Text)
    #: Reading warnings as Diagnostic dicts (missing terminator, text after it).
    warnings: Mapped[list[Any]] = mapped_column(default=list)
    #: The file's first bad cases, read past (``worker.engines.reading.Faults``), in file order: each
    #: ``{"line", "column", "message", "context"}``, the context the lines around it as
    #: ``{"line", "text"}``. A job with faults ends failed, its good cases kept.
    faults: Mapped[list[Any]] = mapped_column(default=list)
    #: All its faults, those beyond the ones listed included.
    fault_count: Mapped[int] = mapped_column(Integer, default=0)
    #: The place among the file's cases of the first bad one: the cases before it are the partial output.
    fault_case: Mapped[int | None] = mapped_column(Integer)
    chunk_size: Mapped[int] = mapped_column(Integer)
    #: Cases read so far; final once ``split_at`` is set.
    total: Mapped[int] = mapped_column(Integer, default=0)
    #: Bytes of the upload the split has read (the split's progress).
    bytes_read: Mapped[int] = mapped_column(BigInteger, default=0)
    done: Mapped[int] = mapped_column(Integer, default=0)
    #: Cases that could not be solved (time budget); they count towards finishing.
    failed_cases: Mapped[int] = mapped_column(Integer, default=0)
    #: Cases copied from an earlier job of the same file (all of them, or none).
    cache_hits: Mapped[int] = mapped_column(Integer, default=0)
    #: Solved cases by outcome name, e.g. {"<outcome>": 45, ...}.
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    #: Solved cases by outcome name and number, e.g. {"<outcome>": {"66": 3}}: the charts, and exact counts
    #: for filtered results without counting rows.
    distribution: Mapped[dict[str, Any]] = mapped_column(default=dict)
    #: Solved (not cached) cases by solve time: one count per bucket of SOLVE_BUCKETS_US, then the rest.
    solve_hist: Mapped[list[Any]] = mapped_column(default=list)
    #: Microseconds spent solving (wall clock, per case) and CPU time of the solving loops.
    solve_us: Mapped[int] = mapped_column(BigInteger, default=0)
    solve_cpu_us: Mapped[int] = mapped_column(BigInteger, default=0)
    #: The slowest solved case so far (for the timings panel).
    slowest_us: Mapped[int | None] = mapped_column(Integer)
    slowest_index: Mapped[int | None] = mapped_column(Integer)
    #: Cases solved per second lately: an average over the last chunks that forgets older ones.
    rate: Mapped[float] = mapped_column(Float, default=0.0)
    #: The process splitting the job (``host:worker:pid``): its heartbeat says whether it still is.
    splitter: Mapped[str | None] = mapped_column(String(255))
    rerun_of: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    #: The earlier job of the same file whose stored results this one copied instead of solving.
    copied_from: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    client: Mapped[str | None] = mapped_column(String(64))
    #: Who made it: the name of the API key it came with (or the key the page's login was made
    #: with); ``None`` when made in open mode (no keys), which only an admin sees once keys exist.
    owner: Mapped[str | None] = mapped_column(String(64))
    #: Shared by its owner with every user of the service: they see its figures and input and check their
    #: outputs against it (``worker.store.owners``); its answers stay its owner's.
    shared: Mapped[bool] = mapped_column(Boolean, default=False)
    #: Whether the checks others make against a shared job show the judge's lines where they differ.
    reveal_answers: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    started_at: Mapped[datetime | None] = mapped_column()
    split_at: Mapped[datetime | None] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()
    #: While splitting: the split task renews this; a lapsed lease means it died.
    lease_until: Mapped[datetime | None] = mapped_column()
    #: Last time a chunk of this job finished (or its split began): the sweep's clock of a stall.
    progress_at: Mapped[datetime | None] = mapped_column()
    #: Last time the recovery sweep sent the job's split (none: only when the job was made): the sweep sends
    #: it again a stall period later while no split has taken it.
    split_sent_at: Mapped[datetime | None] = mapped_column()
    #: The ids of the job's checks (``checks``), oldest first: kept here so that a job's view needs no query.
    check_ids: Mapped[list[Any]] = mapped_column(default=list)
    #: When it was deleted: from then on no read shows it, and the purge (``worker/store/purge.py``)
    #: removes its checks, chunks and row in small batches.
    deleted_at: Mapped[datetime | None] = mapped_column(index=True)

    chunks: Mapped[list[Chunk]] = relationship(back_populates="job", cascade="all, delete-orphan",
                                               passive_deletes=True)


class Chunk(Base):
    """A run of a job's cases, handed out as one solve task, and where their results are kept.

    What a case is and what it came to (input, outcome, number, judge line, trace) is stored
    here, compressed per chunk, with what finds the chunk's cases without reading them: its
    facets and the filter of its inputs (:mod:`worker.store.chunks` knows the layouts).
    """

    __tablename__ = "chunks"
    __table_args__ = (UniqueConstraint("job_id", "seq"), Index("ix_chunks_job_first_index", "job_id", "first_index"))

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    first_index: Mapped[int] = mapped_column(Integer)
    count: Mapped[int] = mapped_column(Integer)
    #: The numbers its cases skip, as runs ``[[first skipped, how many], ...]`` (``None``: none, as nearly
    #: always): a file's bad cases, read past by the split, keep their numbers (``worker.store.chunks``).
    gaps: Mapped[list[Any] | None] = mapped_column(JSON)
    #: Once done: how many of its cases came to each (outcome, number) and each (outcome, solve time).
    facets: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: Once done: a Bloom filter of its inputs' hashes (``worker.store.bloom``).
    bloom: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: Once done, when some case was not solved: why, by its place in the chunk.
    errors: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    #: Once done: zstd of each case's outcome code, number, extra and solve time, as arrays.
    facts: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: zstd of the cases' canonical inputs, one per line.
    inputs: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: Once done: zstd of the judge lines, each ending in a newline (a newline alone for a case not solved).
    lines: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: Once done: zstd of each case's packed trace (``Engine.solve_packed``) with their offsets.
    traces: Mapped[bytes | None] = mapped_column(LargeBinary)
    status: Mapped[str] = mapped_column(String(16), default=ChunkStatus.PENDING, index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(String(255))
    dispatched_at: Mapped[datetime | None] = mapped_column()
    lease_until: Mapped[datetime | None] = mapped_column()
    #: Indexed for the heartbeats, which count the chunks their processes stored lately (``throughput``).
    finished_at: Mapped[datetime | None] = mapped_column(index=True)

    job: Mapped[Job] = relationship(back_populates="chunks")


#: How a case's (job, index) make its id in the API: job 3's case 42 is case 3000000042.
CASE_ID_BASE = 1_000_000_000
#: The largest value of an ``integer`` column (PostgreSQL's): ids, indexes and numbers stay within it.
MAX_INT = 2**31 - 1


def case_id(job_id: int, index: int) -> int:
    """The API's id of a case.

    >>> case_id(3, 42), split_case_id(3000000042)
    (3000000042, (3, 42))
    """
    return job_id * CASE_ID_BASE + index


def split_case_id(ident: int) -> tuple[int, int]:
    return divmod(ident, CASE_ID_BASE)


class Check(Notified, Base):
    """An output of some program judged case by case against a job's judge output (``worker/checks``).

    The output is kept as an upload until the check has run (any worker can run it); then
    the check keeps its counts, its first difference and its verdicts in parts.
    """

    __tablename__ = "checks"

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    #: The output to judge; ``None`` once judged (or when it is lost).
    upload_id: Mapped[int | None] = mapped_column(ForeignKey("uploads.id", ondelete="SET NULL"), index=True)
    filename: Mapped[str] = mapped_column(String(255))
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    #: Who sent the output: the name of its API key; ``None`` in open mode. It may differ from its
    #: job's owner only when an admin checks someone else's job.
    owner: Mapped[str | None] = mapped_column(String(64), index=True)
    #: ``pending`` until judged, then ``done``; ``failed`` when its output could not be judged
    #: (:class:`worker.states.CheckStatus`).
    status: Mapped[str] = mapped_column(String(16), index=True)
    verdict: Mapped[str | None] = mapped_column(String(24))
    #: Lines by verdict, e.g. {"accepted": 998, "wrong_answer": 2, ...}.
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    #: The first case (or extra line) not accepted, as ``worker.checks.compare.Difference`` fields.
    first_difference: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    #: Lines the output has.
    lines: Mapped[int] = mapped_column(BigInteger, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    #: Runs started: the parts of run ``attempt`` are this check's (a run that died left others).
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    #: While a run judges it: another run may start once this has passed.
    lease_until: Mapped[datetime | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column()


class CheckPart(Base):
    """A check's verdicts for :data:`worker.checks.compare.PART_LINES` lines of the output in a row,
    compressed, with their counts (a page of cases finds its parts from the counts)."""

    __tablename__ = "check_parts"

    check_id: Mapped[int] = mapped_column(ForeignKey("checks.id", ondelete="CASCADE"), primary_key=True)
    attempt: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: Its first line of the output, from 1 (a case's line is its number).
    first_line: Mapped[int] = mapped_column(BigInteger)
    count: Mapped[int] = mapped_column(Integer)
    #: Lines by verdict, in ``VERDICTS`` order.
    counts: Mapped[list[Any]] = mapped_column()
    #: zstd of one byte per line: its verdict's index in ``VERDICTS``.
    verdicts: Mapped[bytes] = mapped_column(LargeBinary)
    #: zstd of the output's lines judged presentation_error, wrong_answer or extra, joined by LF.
    got: Mapped[bytes] = mapped_column(LargeBinary)


class AuthFailure(Base):
    """Wrong API keys and logins from one client address (``worker/store/throttle.py``)."""

    __tablename__ = "auth_failures"

    bucket: Mapped[str] = mapped_column(String(128), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer)
    first_at: Mapped[datetime] = mapped_column()
    blocked_until: Mapped[datetime | None] = mapped_column()


#: The longest owner, key name included.
OWNER_LENGTH = 64


class ApiKey(Base):
    """An API key: its name is the owner of what is made with it, its role says what it may see.

    Only the SHA-256 digest of its token is kept (a token of at least 128 random bits, so a
    plain digest is enough: no dictionary reaches it). A revoked key stays, so that its name is
    not given to someone else while jobs still carry it; ``origin`` says who made it: ``env``
    (seeded from ``DEALER_API_KEYS`` at start-up), ``command`` (``dealer keys add``) or ``page``.
    """

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(OWNER_LENGTH), unique=True)
    #: ``admin`` or ``user`` (:class:`worker.store.keys.Role`).
    role: Mapped[str] = mapped_column(String(8))
    #: Hex SHA-256 of the token: what a request's key is looked up by.
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    origin: Mapped[str] = mapped_column(String(8))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column()
    #: When it was last used, to the minute or so (a request does not write it every time).
    used_at: Mapped[datetime | None] = mapped_column()


class RefusedBytes(Base):
    """Bytes of an owner's uploads that were refused (or abandoned), by the hour they came in: they count
    against the owner's quota of stored bytes for an hour (``worker/jobs/quotas.py``), so that sending
    refused files again and again is held to the quota too."""

    __tablename__ = "refused_bytes"

    owner: Mapped[str] = mapped_column(String(OWNER_LENGTH), primary_key=True)
    #: The start of the hour.
    hour: Mapped[datetime] = mapped_column(primary_key=True)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)


class WebSession(Base):
    """A signed-in session of the pages: the cookie names it, logging out deletes it."""

    __tablename__ = "web_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key_name: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(index=True)


class WorkerRow(Base):
    """A worker process's heartbeat, for the dashboard and /healthz."""

    __tablename__ = "workers"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    seen_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    concurrency: Mapped[int] = mapped_column(Integer, default=1)
    processed: Mapped[int] = mapped_column(Integer, default=0)


class ThroughputRow(Base):
    """Cases a worker's processes stored in one interval: the workers view's throughput over time.

    Its heartbeat writes it (one row per worker per interval, only for intervals with work)
    and removes rows older than :data:`worker.runner.heartbeat.KEEP_THROUGHPUT`.
    """

    __tablename__ = "throughput"

    worker: Mapped[str] = mapped_column(String(255), primary_key=True)
    #: The interval's start (a multiple of its length since the epoch).
    at: Mapped[datetime] = mapped_column(primary_key=True, index=True)
    cases: Mapped[int] = mapped_column(Integer, default=0)
