"""A chunk's cases may skip numbers

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07 10:00:00

The split no longer ends a chunk at each bad case of a file: a chunk holds the good cases on both sides
of it, and ``chunks.gaps`` the numbers its cases skip (the bad cases', kept so that every case has its
place in the file as its number). Chunks stored before hold consecutive cases (``gaps`` null).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Added in place (no batch copy of ``chunks``: a nullable column needs none).
    op.add_column("chunks", sa.Column("gaps", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chunks") as batch:
        batch.drop_column("gaps")
