"""How long migration 0007 (results per chunk) takes per million cases, for the guide's Operating page (docs/operating.md).

Builds a PostgreSQL database at revision 0006 holding ``--cases`` solved 10-20-30 decks as the code
of 0006 stored them (jobs of 2,000 decks in chunks of 100: inputs, judge lines, a JSON result row a
case and packed traces in each chunk, and an index row a case in ``cases``), the way
``tests/pipeline/test_migrations.py`` does for a few, then times ``dealer db upgrade`` to 0007 and
prints the time per million cases, with the database's size before and after.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from array import array
from pathlib import Path

import orjson
import zstandard
from sqlalchemy import text

from bench import figures
from worker import engines
from worker.config import Settings
from worker.store.database import Database
from worker.store.migrate import upgrade
from worker.testing.servers import create_postgres_database, drop_postgres_database

FILE = Path(__file__).resolve().parents[1] / "tests" / "data" / "judge" / "10-20-30" / "random-2000.in"
CHUNK = 100
CODES = {"win": 1, "loss": 2, "draw": 3}


def fill(db: Database, cases: int) -> None:
    engine = engines.get("10-20-30")
    parsed = list(engine.parse(io.BytesIO(FILE.read_bytes()), []))
    solved = [engine.solve_packed(case) for case in parsed]
    pack = zstandard.ZstdCompressor(level=1).compress
    now = "2026-12-01 10:00:00"
    chunks = []
    for first in range(0, len(parsed), CHUNK):
        batch = list(zip(parsed[first:first + CHUNK], solved[first:first + CHUNK], strict=True))
        offsets = array("I", [0])
        for _, (_, trace) in batch:
            offsets.append(offsets[-1] + len(trace))
        chunks.append((batch[0][0].index, len(batch), {
            "inputs": pack("\n".join(case.text for case, _ in batch).encode()),
            "lines": pack("\n".join(result.line for _, (result, _) in batch).encode()),
            "results": pack(b"\n".join(orjson.dumps([result.outcome, result.number, result.detail, 100, False, None])
                                       for _, (result, _) in batch)),
            "traces": pack(array("I", [len(batch)]).tobytes() + offsets.tobytes()
                           + b"".join(trace for _, (_, trace) in batch))}))
    rows = [{"i": case.index, "o": CODES[result.outcome], "n": result.number, "h": case.index}
            for case, (result, _) in zip(parsed, solved, strict=True)]
    for _ in range(max(1, cases // len(parsed))):
        with db.engine.begin() as connection:
            job_id = connection.execute(text(
                "INSERT INTO jobs (game, filename, sha256, size, status, warnings, chunk_size, total, bytes_read, done, "
                "failed_cases, cache_hits, counts, distribution, solve_hist, solve_us, solve_cpu_us, rate, check_ids, "
                "created_at, split_at, finished_at) VALUES ('10-20-30', 'random-2000.in', :sha, 0, 'succeeded', '[]', "
                ":chunk, :n, 0, :n, 0, 0, '{}', '{}', '[]', 0, 0, 0, '[]', :now, :now, :now) RETURNING id"),
                {"sha": "cd" * 32, "chunk": CHUNK, "n": len(parsed), "now": now}).scalar_one()
            connection.execute(text(
                "INSERT INTO chunks (job_id, seq, first_index, count, inputs, lines, results, traces, status, attempts, "
                "worker, finished_at) VALUES (:j, :seq, :first, :count, :inputs, :lines, :results, :traces, 'done', 1, "
                "'w:1:2', :now)"),
                [{"j": job_id, "seq": seq, "first": first, "count": count, "now": now, **blobs}
                 for seq, (first, count, blobs) in enumerate(chunks)])
            connection.execute(text('INSERT INTO cases (job_id, "index", outcome, number, input_hash, solve_us, cached) '
                                    "VALUES (:j, :i, :o, :n, :h, 100, false)"), [{"j": job_id, **row} for row in rows])


def size(db: Database) -> int:
    with db.engine.connect() as connection:
        return int(connection.scalar(text("SELECT pg_database_size(current_database())")) or 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=200_000)
    args = parser.parse_args()
    url = create_postgres_database()
    try:
        db = Database(Settings.from_env({"DEALER_DATABASE_URL": url}))
        upgrade(db, "0006")
        started = time.monotonic()
        fill(db, args.cases)
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE"))
        filled, before = time.monotonic() - started, size(db)
        started = time.monotonic()
        upgrade(db, "0007")
        took = time.monotonic() - started
        after = size(db)
        with db.engine.connect() as connection:
            chunks = connection.scalar(text("SELECT count(*) FROM chunks"))
        db.engine.dispose()
    finally:
        drop_postgres_database(url)
    cases = (args.cases // 2000 or 1) * 2000
    print(f"{cases:,} cases in {chunks:,} chunks at 0006 (made in {filled:.0f} s): database {before / 2**20:,.0f} MiB")
    print(f"upgrade to 0007: {took:.1f} s, {took * 1_000_000 / cases:.0f} s per million cases; "
          f"database {after / 2**20:,.0f} MiB after (before VACUUM FULL)")
    return 0


if __name__ == "__main__":
    sys.exit(figures.record("migrate_0007", main))
