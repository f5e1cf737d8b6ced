"""The faults of a job's file, read past

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 03:40:00

A file with bad cases is read to its end, its good cases solved and kept; the job then lists its
faults:

- ``jobs.faults``: the first hundred, each with its line, column, message and the lines around it;
- ``jobs.fault_count``: all of them;
- ``jobs.fault_case``: the place of the first bad case, before which the partial output stops.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("faults", sa.JSON(), nullable=False, server_default="[]"))
    op.add_column("jobs", sa.Column("fault_count", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("jobs", sa.Column("fault_case", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("fault_case")
        batch.drop_column("fault_count")
        batch.drop_column("faults")
