"""Throughput over time: cases each worker stored per interval, written by its heartbeat

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 23:30:00

- ``throughput``: one row per worker per interval with work (kept about an hour), for the
  workers view's charts;
- ``chunks.finished_at`` indexed: a heartbeat counts the chunks its processes stored in the
  last seconds without reading the whole table.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import worker.store.models

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "throughput",
        sa.Column("worker", sa.String(length=255), nullable=False),
        sa.Column("at", worker.store.models.UTCDateTime(), nullable=False),
        sa.Column("cases", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("worker", "at"),
    )
    op.create_index("ix_throughput_at", "throughput", ["at"])
    op.create_index("ix_chunks_finished_at", "chunks", ["finished_at"])


def downgrade() -> None:
    op.drop_index("ix_chunks_finished_at", table_name="chunks")
    op.drop_index("ix_throughput_at", table_name="throughput")
    op.drop_table("throughput")
