"""Results per chunk: no index row per case, facets and a filter per chunk, a file's results copied whole

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 23:00:00

A case had an index row in ``cases`` (outcome, number, solve time, input hash) under four
B-trees, and its chunk a JSON row of its result: storing a case cost the database more than
the native core spends solving it. Now a chunk keeps, beside its inputs, judge lines and
traces, its cases' facts as arrays (``facts``: outcome code, number, extra, solve time), its
facets (how many cases came to each outcome and number, and each outcome and solve time:
what pages of results find their chunks by) and a Bloom filter of its inputs' hashes (what a
search for one deck reads); ``errors`` says why a case was not solved. ``jobs.copied_from``
names the earlier job of the same file a job copied its results from, which replaces the
per-case result cache.

Existing data is moved, chunk by chunk: each stored chunk's results become its facts,
facets and filter, its judge lines gain a newline each, and the case rows are dropped. This
cannot be undone (``downgrade`` refuses): back the database up first. It reads every stored
chunk once; the guide's Operating page (docs/operating.md) says how to time it.

The blobs' layout is written out here, so that this migration keeps doing what it did when
the code moves on; the input hash and the filter are imported, as their values are stored
and so never change (their doctests pin them).
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter
from collections.abc import Callable
from typing import Any

import orjson
import sqlalchemy as sa
import zstandard
from alembic import op

from worker.engines.chunks import case_hash
from worker.store import bloom

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

#: Each game's outcomes in their order: an outcome's code is 1 + its place (0: a case not solved).
OUTCOMES = {"10-20-30": ("win", "loss", "draw"), "accordion": ("win", "loss"), "mahjong": ("ready", "not-ready")}
#: Chunks converted per statement batch.
BATCH = 64


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    # Added in place: a batch copy of ``jobs`` on SQLite would, with foreign keys on, take every chunk with it.
    op.execute("ALTER TABLE jobs ADD COLUMN copied_from INTEGER REFERENCES jobs (id) ON DELETE SET NULL")
    for name in ("facets", "bloom", "facts"):
        op.add_column("chunks", sa.Column(name, sa.LargeBinary(), nullable=True))
    op.add_column("chunks", sa.Column("errors", sa.JSON(), nullable=True))
    if not sqlite:
        # Already compressed, each (zstd): PostgreSQL's own compression would only redo the work.
        for name in ("facts", "bloom"):
            op.execute(f"ALTER TABLE chunks ALTER COLUMN {name} SET STORAGE EXTERNAL")
    _move_data(bind)
    op.drop_table("cases")
    # SQLite 3.35 and later drop a column in place (a batch copy of ``chunks`` is not needed).
    op.execute("ALTER TABLE chunks DROP COLUMN results")


def downgrade() -> None:
    raise NotImplementedError("0007 moves every case into its chunk and drops the case rows; "
                              "restore a backup taken before it instead")


# --- moving the data -------------------------------------------------------------------------

_jobs = sa.table("jobs", sa.column("id"), sa.column("game"))
_chunks = sa.table("chunks", sa.column("id"), sa.column("job_id"), sa.column("count"), sa.column("status"),
                   sa.column("inputs"), sa.column("lines"), sa.column("results"), sa.column("facts"),
                   sa.column("facets"), sa.column("bloom"), sa.column("errors", sa.JSON()))


def _move_data(bind: Any) -> None:
    compressor, decompressor = zstandard.ZstdCompressor(level=1), zstandard.ZstdDecompressor()
    hash_of = _hasher()
    games = dict(bind.execute(sa.select(_jobs.c.id, _jobs.c.game)).all())
    last = 0
    while True:
        rows = bind.execute(sa.select(_chunks.c.id, _chunks.c.job_id, _chunks.c.count, _chunks.c.inputs,
                                      _chunks.c.lines, _chunks.c.results)
                            .where(_chunks.c.id > last, _chunks.c.results.is_not(None), _chunks.c.status == "done")
                            .order_by(_chunks.c.id).limit(BATCH)).all()
        if not rows:
            return
        for row in rows:
            outcomes = OUTCOMES.get(games.get(row.job_id, ""), ())
            values = _convert(row, outcomes, compressor, decompressor, hash_of)
            bind.execute(_chunks.update().where(_chunks.c.id == row.id).values(**values))
        last = rows[-1].id


def _convert(row: Any, outcomes: tuple[str, ...], compressor: Any, decompressor: Any,
             hash_of: Callable[[bytes], int]) -> dict[str, Any]:
    """A chunk's new columns from its inputs, lines and results (JSON ``[outcome, number, detail,
    solve_us, cached, error]`` a case: one array of them, or one a line)."""
    raw = decompressor.decompress(row.results)
    results = orjson.loads(raw if raw[:2] in (b"[[", b"[]") else b"[" + raw.replace(b"\n", b",") + b"]")
    count = row.count
    codes, numbers, extras, times = bytearray(count), array("i", bytes(4 * count)), array("i", bytes(4 * count)), \
        array("I", bytes(4 * count))
    errors: dict[str, str] = {}
    for k, (outcome, number, detail, solve_us, _cached, error) in enumerate(results[:count]):
        if outcome in outcomes:
            codes[k] = outcomes.index(outcome) + 1
            numbers[k] = number
            # What a judge line leaves out: the deal at which a 10-20-30 draw's state was first seen.
            extras[k] = detail[0] if outcome == "draw" and detail else 0
            times[k] = solve_us or 0
        else:
            errors[str(k)] = error or "not solved"
    texts = decompressor.decompress(row.inputs).split(b"\n")
    hashes = array("Q", [hash_of(text) for text in texts[:count]])
    lines = decompressor.decompress(row.lines) if row.lines is not None else b"\n" * (count - 1)
    by_number = Counter((c, n) for c, n in zip(codes, numbers, strict=True) if c)
    by_time = Counter(zip(codes, times, strict=True))
    arrays = [numbers, extras, times]
    if sys.byteorder == "big":
        for values in arrays:
            values.byteswap()
    return {
        "facts": compressor.compress(bytes(codes) + b"".join(values.tobytes() for values in arrays)),
        "facets": orjson.dumps({"n": sorted((c, n, k) for (c, n), k in by_number.items()),
                                "t": sorted((c, us, k) for (c, us), k in by_time.items())}),
        "bloom": bloom.build(hashes),
        "errors": errors or None,
        "lines": compressor.compress(lines + b"\n"),
    }


def _hasher() -> Callable[[bytes], int]:
    """The input hash, in C where the native core is built (the same values)."""
    try:
        from worker.engines import out

        return out.case_hash  # type: ignore[no-any-return]
    except ImportError:
        return case_hash
