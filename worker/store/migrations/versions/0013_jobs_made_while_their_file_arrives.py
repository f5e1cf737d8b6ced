"""Jobs made while their file arrives

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 09:45:00

A job is made as its file's first MiB is stored and split while the rest arrives; its ``sha256`` is
known only once the file is whole (``''`` until then). ``jobs.head_sha256``, the SHA-256 of the
file's first MiB (of all of it when shorter), tells a file whose start an earlier job's had: its job is
made once it is whole instead, for the result cache to judge by the whole file's hash. Jobs made before
have none, and are matched by no file.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Added in place (no batch copy of ``jobs``: on SQLite, with foreign keys on, it would take the chunks).
    op.add_column("jobs", sa.Column("head_sha256", sa.String(64), nullable=True))
    op.create_index("ix_jobs_head_sha256", "jobs", ["head_sha256"])


def downgrade() -> None:
    op.drop_index("ix_jobs_head_sha256", "jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("head_sha256")
