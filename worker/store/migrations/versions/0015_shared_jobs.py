"""Shared jobs

Revision ID: 0015
Revises: 0013
Create Date: 2026-12-07 04:00:00

A job's owner shares it with every user of the service (``jobs.shared``): they see its figures and its
input and check their outputs against it; ``jobs.reveal_answers`` lets those checks show the judge's
lines. Jobs made before are shared with nobody.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Added in place (no batch copy of ``jobs``: on SQLite, with foreign keys on, it would take the chunks).
    op.add_column("jobs", sa.Column("shared", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.add_column("jobs", sa.Column("reveal_answers", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("reveal_answers")
        batch.drop_column("shared")
