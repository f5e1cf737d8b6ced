"""Results stored per chunk, narrow case rows, uploads in the database

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 20:00:00

Each case used to be a wide row (input, judge line, detail, trace, six indexes). Now a
chunk keeps its cases' inputs, judge lines, results and traces as compressed blobs, and
``cases`` holds one narrow index row per case keyed by (job_id, index). Uploads move
from the web host's disk into the database (``uploads``, ``upload_blocks``), so that
workers elsewhere need no shared disk.

Existing data is moved: every stored case into its chunk's blobs and a new index row;
each job's counts by outcome and number and its slowest case into the job row; the
upload of every job not yet split (or failed) into the database, when its file is
still on disk. Case ids change: a case is now ``job_id * 10**9 + index`` in the API.

The format of the blobs is written out here (not imported), so that this migration
keeps doing what it did when the code moves on.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from typing import Any

import sqlalchemy as sa
import zstandard
from alembic import op

import worker.store.models

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

OUTCOME_CODES = {"win": 1, "loss": 2, "draw": 3, "ready": 4, "not-ready": 5}
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
BLOCK_BYTES = 1 << 20


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    op.create_table(
        "uploads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=True),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("blocks", sa.Integer(), nullable=False),
        sa.Column("receiver", sa.String(length=255), nullable=True),
        sa.Column("created_at", worker.store.models.UTCDateTime(), nullable=False),
        sa.Column("seen_at", worker.store.models.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_uploads_sha256", "uploads", ["sha256"])
    op.create_table(
        "upload_blocks",
        sa.Column("upload_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["upload_id"], ["uploads.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("upload_id", "seq"),
    )
    references = "REFERENCES uploads (id) ON DELETE SET NULL"
    op.execute(f"ALTER TABLE jobs ADD COLUMN upload_id INTEGER {references}")
    op.create_index("ix_jobs_upload_id", "jobs", ["upload_id"])
    for name, kind, default in (("bytes_read", sa.BigInteger(), "0"), ("distribution", sa.JSON(), "{}"),
                                ("solve_cpu_us", sa.BigInteger(), "0")):
        op.add_column("jobs", sa.Column(name, kind, nullable=False, server_default=default))
    op.add_column("jobs", sa.Column("slowest_us", sa.Integer(), nullable=True))
    op.add_column("jobs", sa.Column("slowest_index", sa.Integer(), nullable=True))
    for name in ("lines", "results", "traces"):
        op.add_column("chunks", sa.Column(name, sa.LargeBinary(), nullable=True))
    if not sqlite:
        # The blobs are compressed already: PostgreSQL's own compression of them only costs CPU.
        for name in ("inputs", "lines", "results", "traces"):
            op.execute(f"ALTER TABLE chunks ALTER COLUMN {name} SET STORAGE EXTERNAL")
        op.execute("ALTER TABLE upload_blocks ALTER COLUMN data SET STORAGE EXTERNAL")
    op.create_index("ix_chunks_job_first_index", "chunks", ["job_id", "first_index"])
    op.create_table(
        "cases_v3",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.SmallInteger(), nullable=True),
        sa.Column("number", sa.Integer(), nullable=True),
        sa.Column("input_hash", sa.BigInteger(), nullable=False),
        sa.Column("solve_us", sa.Integer(), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("job_id", "index", name="cases_v3_pkey"),
        sqlite_with_rowid=False,
    )
    _move_data(bind)
    op.drop_table("cases")
    op.rename_table("cases_v3", "cases")
    if not sqlite:
        op.execute("ALTER TABLE cases RENAME CONSTRAINT cases_v3_pkey TO cases_pkey")
    op.create_index("ix_cases_job_outcome_number", "cases", ["job_id", "outcome", "number", "index"])
    op.create_index("ix_cases_job_solve_us", "cases", ["job_id", "solve_us", "index"])
    op.create_index("ix_cases_input_hash", "cases", ["input_hash"])
    # SQLite 3.35 and later drop a column in place (a batch copy of ``jobs`` would, with foreign
    # keys on, take every chunk with it).
    op.execute("ALTER TABLE jobs DROP COLUMN upload_path")


def downgrade() -> None:
    raise NotImplementedError("0003 moves every case into a new layout; restore a backup taken before it instead")


# --- moving the data -------------------------------------------------------------------------

_jobs = sa.table("jobs", sa.column("id"), sa.column("status"), sa.column("split_at"), sa.column("size"),
                 sa.column("sha256"), sa.column("upload_path"), sa.column("upload_id"), sa.column("bytes_read"),
                 sa.column("distribution", sa.JSON()), sa.column("slowest_us"), sa.column("slowest_index"),
                 sa.column("created_at"))
_chunks = sa.table("chunks", sa.column("id"), sa.column("job_id"), sa.column("first_index"), sa.column("count"),
                   sa.column("inputs"), sa.column("lines"), sa.column("results"), sa.column("traces"),
                   sa.column("status"), sa.column("worker"))
_old_cases = sa.table("cases", sa.column("job_id"), sa.column("index"), sa.column("input"), sa.column("input_hash"),
                      sa.column("outcome"), sa.column("number"), sa.column("detail", sa.JSON()), sa.column("line"),
                      sa.column("trace"), sa.column("error"), sa.column("cached"), sa.column("solve_us"),
                      sa.column("worker"))
_new_cases = sa.table("cases_v3", sa.column("job_id"), sa.column("index"), sa.column("outcome"), sa.column("number"),
                      sa.column("input_hash"), sa.column("solve_us"), sa.column("cached"))
_uploads = sa.table("uploads", sa.column("id"), sa.column("state"), sa.column("sha256"), sa.column("size"),
                    sa.column("blocks"), sa.column("created_at"), sa.column("seen_at"))
_blocks = sa.table("upload_blocks", sa.column("upload_id"), sa.column("seq"), sa.column("data"))


def _move_data(bind: Any) -> None:
    compressor = zstandard.ZstdCompressor(level=3)
    decompressor = zstandard.ZstdDecompressor()
    jobs = bind.execute(sa.select(_jobs.c.id, _jobs.c.status, _jobs.c.split_at, _jobs.c.size, _jobs.c.sha256,
                                  _jobs.c.upload_path, _jobs.c.created_at).order_by(_jobs.c.id)).all()
    for job in jobs:
        distribution: dict[str, dict[str, int]] = {}
        slowest: tuple[int, int] | None = None
        chunks = bind.execute(sa.select(_chunks.c.id, _chunks.c.first_index, _chunks.c.count, _chunks.c.inputs)
                              .where(_chunks.c.job_id == job.id).order_by(_chunks.c.first_index)).all()
        for chunk in chunks:
            rows = bind.execute(sa.select(_old_cases).where(
                _old_cases.c.job_id == job.id, _old_cases.c.index >= chunk.first_index,
                _old_cases.c.index < chunk.first_index + chunk.count).order_by(_old_cases.c.index)).all()
            if len(rows) != chunk.count:
                continue  # not solved (yet): it keeps its inputs and is solved as before
            for row in rows:
                if row.outcome is not None:
                    by_number = distribution.setdefault(row.outcome, {})
                    by_number[str(row.number)] = by_number.get(str(row.number), 0) + 1
                    if not row.cached and (slowest is None or row.solve_us > slowest[0]):
                        slowest = (row.solve_us, row.index)
            bind.execute(_chunks.update().where(_chunks.c.id == chunk.id).values(
                inputs=compressor.compress("\n".join(row.input for row in rows).encode()),
                worker=rows[0].worker, **_blobs(rows, compressor, decompressor)))
            bind.execute(_new_cases.insert(), [
                {"job_id": row.job_id, "index": row.index, "outcome": OUTCOME_CODES.get(row.outcome),
                 "number": row.number, "input_hash": row.input_hash, "solve_us": row.solve_us,
                 "cached": bool(row.cached)} for row in rows])
        values: dict[str, Any] = {"distribution": distribution, "bytes_read": job.size if job.split_at else 0}
        if slowest is not None:
            values.update(slowest_us=slowest[0], slowest_index=slowest[1])
        if job.split_at is None:
            values["upload_id"] = _import_upload(bind, job, compressor)
        bind.execute(_jobs.update().where(_jobs.c.id == job.id).values(**values))


def _blobs(rows: list[Any], compressor: Any, decompressor: Any) -> dict[str, bytes | None]:
    """The chunk's ``lines``, ``results`` and ``traces`` blobs from its old case rows."""
    lines = compressor.compress("\n".join(row.line or "" for row in rows).encode())
    results = compressor.compress(json.dumps(
        [[row.outcome, row.number, row.detail, row.solve_us, bool(row.cached), row.error] for row in rows],
        separators=(",", ":")).encode())
    traces = []
    for row in rows:
        blob = row.trace or b""
        # A trace was stored as zstd of its JSON, or as the engine's compact bytes as they are.
        traces.append(decompressor.decompress(blob) if blob[:4] == ZSTD_MAGIC else bytes(blob))
    if not any(traces):
        return {"lines": lines, "results": results, "traces": None}
    offsets = array("I", [0] * (len(traces) + 1))
    for k, trace in enumerate(traces):
        offsets[k + 1] = offsets[k] + len(trace)
    packed = array("I", [len(traces)]).tobytes() + offsets.tobytes() + b"".join(traces)
    return {"lines": lines, "results": results, "traces": compressor.compress(packed)}


def _import_upload(bind: Any, job: Any, compressor: Any) -> int | None:
    """Copy a job's upload file into the database (it still has to be split, or may be re-run)."""
    existing = bind.execute(sa.select(_uploads.c.id).where(_uploads.c.sha256 == job.sha256,
                                                           _uploads.c.state == "stored")).scalar()
    if existing is not None:
        return int(existing)
    try:
        stream = open(job.upload_path, "rb")
    except (OSError, TypeError):
        return None
    digest = hashlib.sha256()
    with stream:
        upload_id = bind.execute(_uploads.insert().values(state="receiving", sha256=None, size=0, blocks=0,
                                                          created_at=job.created_at, seen_at=job.created_at)
                                 .returning(_uploads.c.id)).scalar_one()
        seq = size = 0
        while block := stream.read(BLOCK_BYTES):
            digest.update(block)
            bind.execute(_blocks.insert().values(upload_id=upload_id, seq=seq, data=compressor.compress(block)))
            seq, size = seq + 1, size + len(block)
    bind.execute(_uploads.update().where(_uploads.c.id == upload_id).values(
        state="stored", sha256=digest.hexdigest(), size=size, blocks=seq))
    return int(upload_id)
