"""Owners of jobs, uploads and checks; API keys kept in the database

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 23:40:00

- ``jobs.owner``, ``uploads.owner``, ``checks.owner``: the name of the API key that made the
  row (a page's login stands for its key), ``NULL`` for what was made in open mode (no keys).
  Rows made before this migration keep ``NULL``: once keys exist only admins see them.
  ``ix_jobs_owner_created_at`` serves a user's job list and the per-owner counts.
- ``api_keys``: a key's unique ``name`` (the owner), its ``role`` (``admin`` or ``user``), the
  hex SHA-256 ``digest`` of its token (unique: a request's key is looked up by it), its
  ``origin`` (``env``, ``command``, ``page``), ``created_at``, ``revoked_at`` and ``used_at``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import worker.store.models

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Added in place (no batch copy of the tables on SQLite): each is a nullable column.
    for table in ("jobs", "uploads", "checks"):
        op.add_column(table, sa.Column("owner", sa.String(length=64), nullable=True))
    op.create_index("ix_jobs_owner_created_at", "jobs", ["owner", "created_at"])
    op.create_index("ix_uploads_owner", "uploads", ["owner"])
    op.create_index("ix_checks_owner", "checks", ["owner"])
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=8), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("origin", sa.String(length=8), nullable=False),
        sa.Column("created_at", worker.store.models.UTCDateTime(), nullable=False),
        sa.Column("revoked_at", worker.store.models.UTCDateTime(), nullable=True),
        sa.Column("used_at", worker.store.models.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
        sa.UniqueConstraint("digest"),
    )


def downgrade() -> None:
    op.drop_table("api_keys")
    op.drop_index("ix_checks_owner", table_name="checks")
    op.drop_index("ix_uploads_owner", table_name="uploads")
    op.drop_index("ix_jobs_owner_created_at", table_name="jobs")
    for table in ("checks", "uploads", "jobs"):
        op.drop_column(table, "owner")
