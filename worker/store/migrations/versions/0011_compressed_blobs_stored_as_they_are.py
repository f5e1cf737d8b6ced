"""Blobs compressed by the service are stored as they are

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 04:40:00

PostgreSQL tries to compress (pglz) every value over 2 KB it moves out of line, which for blobs
zstd has already compressed is work that saves nothing: in a profile of a job being stored it was
4 % of the database server's CPU. ``STORAGE EXTERNAL`` keeps them out of line, uncompressed. It is
a change of the catalogue only (rows written before keep their form); SQLite has no such setting.
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

#: The columns the service writes zstd-compressed (or incompressible: a Bloom filter's bits).
COMPRESSED = {
    "upload_blocks": ("data",),
    "chunks": ("inputs", "lines", "facts", "traces", "bloom"),
    "check_parts": ("verdicts", "got"),
}


def _storage(kind: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, columns in COMPRESSED.items():
        changes = ", ".join(f"ALTER COLUMN {column} SET STORAGE {kind}" for column in columns)
        op.execute(f"ALTER TABLE {table} {changes}")


def upgrade() -> None:
    _storage("EXTERNAL")


def downgrade() -> None:
    _storage("EXTENDED")
