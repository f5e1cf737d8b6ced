"""Reads at scale: every page and API call timed on a database of 10,000,000 stored cases (``make bench-scale``).

1. Fills a PostgreSQL database (``dealer_scale`` on the machine's server, kept for the next
   run and for ``bench/load.py``) with ``--cases`` cases (10 million by default) in jobs of
   a million, one of them of two million, through the real schema: chunks of random decks
   and hands, each solved by the engine's chunk call and packed as the solve path packs
   them, stored by COPY.
2. Times every endpoint the pages and scripts use, in the server (Flask's test client,
   no network): median of 5, against the target of 300 ms; exports and the judge output of
   a million-case job by their first byte (target under 1 s) and whole (CSV under 10 s,
   output under 1 s).

Run it with ``python -m bench.scale`` from the project's folder (``--sqlite`` runs it on an
embedded database instead, with fewer cases).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import func, select, text

from bench import figures
from worker import engines
from worker.config import Settings
from worker.jobs.lifecycle import Progress
from worker.jobs.sizing import chunk_size
from worker.jobs.solve import progress_of
from worker.store.chunks import Solved, Span, Tally, pack, pack_inputs
from worker.store.database import Database
from worker.store.migrate import upgrade
from worker.store.models import Job, case_id, utcnow

ROOT = Path(__file__).resolve().parents[1]
DATABASE = "dealer_scale"
TARGET_MS = 300
JOB_GAMES = ["10-20-30", "accordion", "mahjong"]


def _texts(game: str, rng: random.Random, count: int) -> list[str]:
    """Random canonical inputs of a game, each its own (as in a judge file of random decks)."""
    engine = engines.get(game)
    return [" ".join(engine.generate(rng).split()) for _ in range(count)]


def _job_sizes(cases: int) -> list[int]:
    sizes = [min(cases, 2_000_000)]
    while sum(sizes) < cases:
        sizes.append(min(1_000_000, cases - sum(sizes)))
    return sizes


def fill(db: Database, cases: int) -> None:
    """Load ``cases`` cases in jobs of a million (the first of two million), unless already there."""
    with db.session(write=False) as session:
        have = session.scalar(select(func.coalesce(func.sum(Job.total), 0))) or 0
    if have >= cases:
        print(f"the database already holds {have:,} cases")
        return
    rng = random.Random(246)
    started = time.perf_counter()
    for number, size in enumerate(_job_sizes(cases - have)):
        game = JOB_GAMES[number % len(JOB_GAMES)] if number else "10-20-30"
        _load_job(db, game, size, rng)
        print(f"  job of {size:,} {game} cases loaded ({time.perf_counter() - started:.0f} s)", flush=True)
    with db.engine.connect() as connection:
        connection = connection.execution_options(isolation_level="AUTOCOMMIT")
        connection.execute(text("ANALYZE"))  # a bulk load leaves no statistics; autovacuum may be off here


def _load_job(db: Database, game: str, size: int, rng: random.Random) -> None:
    """A job of ``size`` random cases of ``game``, solved and stored as the service stores them (the engine's
    chunk call, ``store.chunks.pack``), its chunks by COPY."""
    engine = engines.get(game)
    now = utcnow()
    chunk = chunk_size(Settings.from_env({}), game, size * engine.case_bytes)
    with db.session() as session:
        job = Job(game=game, filename=f"scale-{size}.in", upload_id=None, sha256=f"{rng.getrandbits(256):064x}",
                  size=size * engine.case_bytes, status="succeeded", warnings=[], chunk_size=chunk, total=size,
                  bytes_read=size * engine.case_bytes, done=size, failed_cases=0, cache_hits=0, counts={},
                  distribution={}, solve_hist=[], solve_us=0, solve_cpu_us=0, created_at=now - timedelta(hours=1),
                  started_at=now - timedelta(hours=1), split_at=now - timedelta(minutes=50), finished_at=now,
                  progress_at=now)
        session.add(job)
        session.flush()
        job_id = job.id
    total = Progress()
    finished = now.replace(tzinfo=None)

    def chunks() -> Any:
        for seq, first in enumerate(range(1, size + 1, chunk)):
            count = min(chunk, size - first + 1)
            texts = _texts(game, rng, count)
            solution = engine.solve_chunk("\n".join(texts).encode(), first, True)
            tally = Tally.of(solution.outcomes, solution.numbers, solution.solve_us)
            progress = progress_of(engine, solution, tally, Span(first, count))
            total.solved += progress.solved
            total.numbers.update(progress.numbers)
            total.histogram = [a + b for a, b in zip(total.histogram, progress.histogram)] or progress.histogram
            total.solve_us += progress.solve_us
            if progress.slowest and (total.slowest is None or progress.slowest > total.slowest):
                total.slowest = progress.slowest
            blobs = pack(Solved(count, solution.lines, solution.offsets, solution.traces, solution.outcomes,
                                solution.numbers, solution.extras, solution.solve_us, solution.hashes, None), tally)
            yield (job_id, seq, first, count, blobs.facets, blobs.bloom, blobs.facts, pack_inputs(texts),
                   blobs.lines, blobs.traces, "done", 1, "scale:1", finished - timedelta(seconds=(size - first) / 20_000))

    _bulk(db, "chunks", ("job_id", "seq", "first_index", "count", "facets", "bloom", "facts", "inputs", "lines",
                         "traces", "status", "attempts", "worker", "finished_at"),
          ["int4", "int4", "int4", "int4", "bytea", "bytea", "bytea", "bytea", "bytea", "bytea", "varchar", "int4",
           "varchar", "timestamp"], chunks())
    distribution: dict[str, dict[str, int]] = {}
    counts: Counter[str] = Counter()
    for (outcome, number), count in total.numbers.items():
        distribution.setdefault(outcome, {})[str(number)] = count
        counts[outcome] += count
    with db.session() as session:
        job = session.get(Job, job_id)
        assert job is not None
        job.counts, job.distribution, job.solve_hist = dict(counts), distribution, total.histogram
        job.solve_us = job.solve_cpu_us = total.solve_us
        job.slowest_us, job.slowest_index = total.slowest or (None, None)


def _bulk(db: Database, table: str, columns: tuple[str, ...], types: list[str], rows: Any) -> None:
    """Rows into a table as fast as the database takes them: COPY on PostgreSQL, executemany on SQLite."""
    names = ", ".join(f'"{name}"' for name in columns)
    with db.engine.connect() as connection:
        raw = connection.connection.driver_connection
        assert raw is not None
        if db.postgres:
            with raw.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(types)
                for row in rows:
                    copy.write_row(row)
        else:
            sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(columns))})"
            raw.execute("BEGIN")
            batch: list[Any] = []
            for row in rows:
                batch.append(tuple(v.strftime("%Y-%m-%d %H:%M:%S.%f") if hasattr(v, "strftime") else v for v in row))
                if len(batch) == 10_000:
                    raw.executemany(sql, batch)
                    batch = []
            raw.executemany(sql, batch)
        raw.commit()


# --- timing the endpoints ------------------------------------------------------------------------


class NoBroker:
    """Reads need no broker: the pages are timed in the server alone."""

    def split(self, job_id: int) -> None: ...
    def solve(self, chunk_ids: Any) -> None: ...
    def check(self, check_id: int) -> None: ...

    def queue_depth(self) -> int | None:
        return 0


def test_client(db: Database, settings: Settings) -> Any:
    from webui.app import create_app

    return create_app(settings, NoBroker(), db=db).test_client()


def scale_settings(fresh: bool = False) -> Settings:
    """Settings on the scale database (made when missing, emptied first when ``fresh``)."""
    return Settings.from_env({"DEALER_DATABASE_URL": _scale_database(fresh)}, data_dir=ROOT / ".scale")


def _median_ms(call: Callable[[], Any], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def endpoints(db: Database, client: Any) -> list[tuple[str, str]]:
    """(what, path) of every read the pages and the API make, on the biggest job and across all."""
    with db.session(write=False) as session:
        big = session.scalars(select(Job).order_by(Job.total.desc(), Job.id).limit(1)).one()
        million = _second_job(session)
        rare = min(big.counts, key=lambda outcome: big.counts[outcome])
        middle = big.total // 2
    j, n = big.id, big.total
    first_case = case_id(j, 1)
    since = quote((big.finished_at - timedelta(seconds=n / 2 / 20_000)).isoformat())
    deck = client.get(f"/api/jobs/{j}/cases/{n // 3}").get_json()["input"]
    pages = [
        ("dashboard (page)", "/"), ("jobs (API)", "/api/jobs"), ("overview", "/api/overview"), ("metrics", "/metrics"),
        ("health", "/healthz"),
        (f"job page, {n:,} cases", f"/jobs/{j}"), ("job (API)", f"/api/jobs/{j}"), ("timings", f"/api/jobs/{j}/timings"),
        ("distribution", f"/api/jobs/{j}/distribution"),
        ("results, first page", f"/api/jobs/{j}/cases"),
        ("results, middle (cursor)", f"/api/jobs/{j}/cases?after={j}:{middle}"),
        ("results, last page", f"/api/jobs/{j}/cases?last=1"),
        ("results by number", f"/api/jobs/{j}/cases?sort=number"),
        ("results by number, last", f"/api/jobs/{j}/cases?sort=-number&last=1"),
        ("results by outcome", f"/api/jobs/{j}/cases?sort=-outcome"),
        ("results by solve time", f"/api/jobs/{j}/cases?sort=-solve_us"),
        (f"results, rarest outcome ({rare})", f"/api/jobs/{j}/cases?outcome={rare}"),
        (f"results, {rare} last page", f"/api/jobs/{j}/cases?outcome={rare}&last=1"),
        ("results, number range", f"/api/jobs/{j}/cases?number_min=100&number_max=120"),
        ("results, number range by number", f"/api/jobs/{j}/cases?number_min=100&number_max=120&sort=-number"),
        ("results, solved since", f"/api/jobs/{j}/cases?since={since}"),
        ("history", "/api/results?sort=-solved_at"), ("history, one game", "/api/results?game=accordion&sort=-solved_at"),
        ("history, outcome", "/api/results?outcome=draw&sort=-solved_at"),
        ("history, number range", "/api/results?number_min=200&number_max=210&sort=-solved_at"),
        ("history, by input", f"/api/results?game=10-20-30&input={quote(deck)}"),
        ("history, since", f"/api/results?since={since}&sort=-solved_at"),
        ("history, by number (every job)", "/api/results?sort=number"),
        ("history page", "/history"),
        ("case page (replay)", f"/jobs/{j}/cases/{n // 2}"), ("case (API)", f"/api/cases/{first_case}"),
        (f"results of a {million.total:,}-case job", f"/api/jobs/{million.id}/cases?sort=solve_us"),
    ]
    return pages


def _bytes_per_case(db: Database, stored: int) -> str:
    """What a stored case costs on disk: its share of its chunk (its blobs, facets and filter)."""
    if not db.postgres:
        path = Path(db.url.split("///", 1)[1])
        return f"{path.stat().st_size / stored:.0f} bytes each (the whole database file)"
    with db.engine.connect() as connection:
        chunks = connection.execute(text("SELECT pg_total_relation_size('chunks')")).scalar_one()
    return f"{chunks / stored:.0f} bytes each (its share of its chunk: inputs, judge lines, facts, traces, facets, filter)"


def _second_job(session: Any) -> Job:
    """The second biggest job (a million cases at full scale), or the only one."""
    jobs = session.scalars(select(Job).order_by(Job.total.desc(), Job.id).limit(2)).all()
    return jobs[-1]


def _streamed(client: Any, path: str) -> tuple[float, float, int]:
    """(first byte ms, whole ms, bytes) of a streamed answer."""
    start = time.perf_counter()
    response = client.get(path, buffered=False)
    iterator = iter(response.response)
    size = len(next(iterator))
    first = (time.perf_counter() - start) * 1000
    for piece in iterator:
        size += len(piece)
    response.close()
    return first, (time.perf_counter() - start) * 1000, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10_000_000)
    parser.add_argument("--sqlite", type=Path, help="an embedded database in this folder instead of PostgreSQL")
    parser.add_argument("--fresh", action="store_true", help="start from an empty database")
    args = parser.parse_args()

    if args.sqlite:
        settings = Settings.from_env({}, data_dir=args.sqlite)
        if args.fresh:
            (args.sqlite / "dealer.db").unlink(missing_ok=True)
    else:
        settings = scale_settings(args.fresh)
    db = Database(settings)
    upgrade(db)
    fill(db, args.cases)

    client = test_client(db, settings)
    with db.session(write=False) as session:
        stored = session.scalar(select(func.coalesce(func.sum(Job.total), 0))) or 0
    print(f"\n{stored:,} cases stored, {_bytes_per_case(db, stored)}; server time, median of 5 "
          f"(target {TARGET_MS} ms)\n")
    failures = 0
    for what, path in endpoints(db, client):
        status = client.get(path).status_code
        ms = _median_ms(lambda: client.get(path).get_data())
        # /healthz answers 503 here (no worker runs): what counts is how fast it answers.
        ok = status in ((200, 503) if path == "/healthz" else (200,)) and ms < TARGET_MS
        failures += not ok
        print(f"  {what:<38} {ms:8.1f} ms  {'ok' if ok else 'MISSED' if status in (200, 503) else f'HTTP {status}'}")
    with db.session(write=False) as session:
        million = _second_job(session)
    print()
    n = f"{million.total:,}"
    for what, path, whole_target in (
            (f"CSV export, {n} cases", f"/api/results/export?job_id={million.id}&format=csv", 10_000),
            (f"NDJSON export, {n} cases", f"/api/results/export?job_id={million.id}", None),
            (f"judge output, {n} cases", f"/api/jobs/{million.id}/output", 1_000)):
        first, whole, size = _streamed(client, path)
        ok = first < 1000 and (whole_target is None or whole < whole_target)
        failures += not ok
        target = f"{whole_target / 1000:g} s" if whole_target else "—"
        print(f"  {what:<38} first byte {first:6.0f} ms, whole {whole / 1000:6.2f} s (target {target}), "
              f"{size / 1e6:.1f} MB  {'ok' if ok else 'MISSED'}")
    return 1 if failures else 0


def _scale_database(fresh: bool) -> str:
    import psycopg

    from worker.testing.servers import PG_HOST, PG_PORT, need_listening

    need_listening("PostgreSQL", PG_HOST, PG_PORT)
    with psycopg.connect(f"host={PG_HOST} port={PG_PORT} user=postgres dbname=postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone()
        if exists and fresh:
            conn.execute(f'DROP DATABASE "{DATABASE}" WITH (FORCE)')
        if not exists or fresh:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    return f"postgresql+psycopg://postgres@{PG_HOST}:{PG_PORT}/{DATABASE}"


if __name__ == "__main__":
    sys.exit(figures.record("scale", main))
