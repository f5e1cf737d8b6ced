"""When the sweep last sent a job's split

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 23:50:00

- ``jobs.split_sent_at``: the recovery sweep sends a split that no split took again a stall period
  after it last sent it, whatever became of that send (``progress_at`` stays the time the job last
  moved, which the stuck-job figures read).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import worker.store.models

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("split_sent_at", worker.store.models.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("split_sent_at")
