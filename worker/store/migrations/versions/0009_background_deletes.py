"""Background deletes and quotas: a job is deleted at once for every read, its rows removed later in small
batches; the bytes of an owner's refused uploads, counted by the hour

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 00:10:00

``jobs.deleted_at`` marks a job deleted: every read leaves it out from then on, and the
workers' purge (``worker/store/purge.py``) removes its checks, chunks and row a few
rows at a time, so that no transaction holds the database for long. An upload no job
needs any more is marked ``deleting`` (``uploads.state``, no schema change) and its
blocks go the same way. ``refused_bytes`` counts, per owner and hour, the bytes of uploads
that were refused or abandoned: they count against the owner's quota for an hour.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("deleted_at", sa.DateTime(), nullable=True))
    op.create_index("ix_jobs_deleted_at", "jobs", ["deleted_at"])
    op.create_table(
        "refused_bytes",
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("hour", sa.DateTime(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("owner", "hour"),
    )


def downgrade() -> None:
    op.drop_table("refused_bytes")
    op.drop_index("ix_jobs_deleted_at", "jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("deleted_at")
