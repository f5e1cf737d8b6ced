"""A job's recent rate and its splitter; failed sign-ins counted; sessions kept by the server

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 23:00:00

- ``jobs.rate``: cases per second lately (an average that forgets), for a time left that
  follows the job's pace now rather than since it started;
- ``jobs.splitter``: the process splitting the job, so that a split whose worker died is
  handed out again as soon as its heartbeat stops;
- ``auth_failures``: wrong keys and logins counted per client address;
- ``web_sessions``: the pages' sessions, so that logging out ends every copy of one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import worker.store.models

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("rate", sa.Float(), nullable=False, server_default="0"))
    op.add_column("jobs", sa.Column("splitter", sa.String(length=255), nullable=True))
    op.create_table(
        "auth_failures",
        sa.Column("bucket", sa.String(length=128), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("first_at", worker.store.models.UTCDateTime(), nullable=False),
        sa.Column("blocked_until", worker.store.models.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("bucket"),
    )
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("key_name", sa.String(length=64), nullable=False),
        sa.Column("created_at", worker.store.models.UTCDateTime(), nullable=False),
        sa.Column("expires_at", worker.store.models.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_web_sessions_expires_at", "web_sessions", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_web_sessions_expires_at", table_name="web_sessions")
    op.drop_table("web_sessions")
    op.drop_table("auth_failures")
    op.drop_column("jobs", "splitter")
    op.drop_column("jobs", "rate")
