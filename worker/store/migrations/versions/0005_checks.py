"""Checks: outputs judged case by case against a job's judge output

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 22:00:00

- ``checks``: one row per output checked, with its counts, verdict and first difference;
  its output is kept as an upload until judged;
- ``check_parts``: a check's verdicts in compressed parts (with the lines not accepted);
- ``jobs.check_ids``: a job's checks, so that its view needs no query.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import worker.store.models

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("check_ids", sa.JSON(), nullable=False, server_default="[]"))
    op.create_table(
        "checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=True),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("verdict", sa.String(length=24), nullable=True),
        sa.Column("counts", sa.JSON(), nullable=False),
        sa.Column("first_difference", sa.JSON(), nullable=True),
        sa.Column("lines", sa.BigInteger(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("lease_until", worker.store.models.UTCDateTime(), nullable=True),
        sa.Column("created_at", worker.store.models.UTCDateTime(), nullable=False),
        sa.Column("finished_at", worker.store.models.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["upload_id"], ["uploads.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_checks_job_id", "checks", ["job_id"])
    op.create_index("ix_checks_upload_id", "checks", ["upload_id"])
    op.create_index("ix_checks_status", "checks", ["status"])
    op.create_table(
        "check_parts",
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("first_line", sa.BigInteger(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("counts", sa.JSON(), nullable=False),
        sa.Column("verdicts", sa.LargeBinary(), nullable=False),
        sa.Column("got", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["check_id"], ["checks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("check_id", "attempt", "seq"),
    )


def downgrade() -> None:
    op.drop_table("check_parts")
    op.drop_index("ix_checks_status", table_name="checks")
    op.drop_index("ix_checks_upload_id", table_name="checks")
    op.drop_index("ix_checks_job_id", table_name="checks")
    op.drop_table("checks")
    op.drop_column("jobs", "check_ids")
