"""Autovacuum of the hot tables

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07 04:10:00

The purge vacuums what it removes (``worker/store/purge.py``); what it does not remove is left to
autovacuum: a chunk's first version once it is solved (stored at the split, rewritten with its
results), an upload's blocks, the jobs' rows rewritten as they progress, a check's parts. PostgreSQL's
defaults wait for a fifth of a table to be dead and then vacuum it at a pace meant not to be noticed
(``autovacuum_vacuum_cost_delay``); for these tables, where rows come and go by the thousand a minute,
autovacuum comes at 2 %, for the table and its TOAST (where the blobs are), and vacuums at full
speed. A change of the catalogue only; SQLite has no such setting (it reuses freed pages by itself).
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

#: The tables whose rows come and go fastest, each with its TOAST.
HOT = ("chunks", "upload_blocks", "check_parts", "jobs")
#: Autovacuum's settings for each (and its TOAST: ``toast.`` before the name).
SETTINGS = {"autovacuum_vacuum_scale_factor": "0.02", "autovacuum_vacuum_insert_scale_factor": "0.02",
            "autovacuum_vacuum_cost_delay": "0"}
TOAST = ("autovacuum_vacuum_scale_factor", "autovacuum_vacuum_cost_delay")


def _options() -> list[str]:
    return [*SETTINGS, *(f"toast.{name}" for name in TOAST)]


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    values = {**SETTINGS, **{f"toast.{name}": SETTINGS[name] for name in TOAST}}
    for table in HOT:
        op.execute(f"ALTER TABLE {table} SET ({', '.join(f'{name} = {values[name]}' for name in _options())})")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in HOT:
        op.execute(f"ALTER TABLE {table} RESET ({', '.join(_options())})")
