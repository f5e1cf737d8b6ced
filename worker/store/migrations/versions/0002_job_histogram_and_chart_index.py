"""A job's solve-time histogram, and an index for the job page's charts

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 02:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch_op:
        batch_op.add_column(sa.Column("solve_hist", sa.JSON(), nullable=False, server_default="[]"))
        batch_op.add_column(sa.Column("solve_us", sa.BigInteger(), nullable=False, server_default="0"))
    op.create_index("ix_cases_job_outcome_number", "cases", ["job_id", "outcome", "number"])


def downgrade() -> None:
    op.drop_index("ix_cases_job_outcome_number", table_name="cases")
    with op.batch_alter_table("jobs") as batch_op:
        batch_op.drop_column("solve_us")
        batch_op.drop_column("solve_hist")
