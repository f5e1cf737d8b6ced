"""A job's or a check's callback when it ends

Revision ID: 0016
Revises: 0013
Create Date: 2026-12-07 04:00:00

``POST /api/jobs`` and ``POST /api/jobs/<id>/checks`` take a ``notify_url``: the row keeps it, its
secret, its page's address, and the callback's state and last outcome (``worker/checks/notify.py``).
Rows made before have none (``notify_state`` null).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

TABLES = ("jobs", "checks")


def upgrade() -> None:
    # Added in place (no batch copy: on SQLite, with foreign keys on, it would take the rows referring to them).
    for table in TABLES:
        op.add_column(table, sa.Column("notify_url", sa.String(2048), nullable=True))
        op.add_column(table, sa.Column("notify_secret", sa.String(256), nullable=True))
        op.add_column(table, sa.Column("notify_page", sa.String(2048), nullable=True))
        op.add_column(table, sa.Column("notify_state", sa.String(16), nullable=True))
        op.add_column(table, sa.Column("notify_next_at", sa.DateTime(), nullable=True))
        op.add_column(table, sa.Column("notify_attempts", sa.Integer(), nullable=False, server_default="0"))
        op.add_column(table, sa.Column("notify_code", sa.Integer(), nullable=True))
        op.add_column(table, sa.Column("notify_error", sa.Text(), nullable=True))
        op.add_column(table, sa.Column("notify_delivered_at", sa.DateTime(), nullable=True))
        op.create_index(f"ix_{table}_notify_state", table, ["notify_state"])


def downgrade() -> None:
    for table in TABLES:
        op.drop_index(f"ix_{table}_notify_state", table)
        with op.batch_alter_table(table) as batch:
            for column in ("notify_url", "notify_secret", "notify_page", "notify_state", "notify_next_at",
                           "notify_attempts", "notify_code", "notify_error", "notify_delivered_at"):
                batch.drop_column(column)
