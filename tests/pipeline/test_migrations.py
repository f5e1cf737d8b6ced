"""The migrations: they build the models' schema, and 0003 moves data stored by the earlier layout.

The data of the earlier layout is written here as the code of that time wrote it (wide case
rows; traces as zstd-compressed JSON, or the engine's compact bytes as they are; chunks
whose inputs were dropped once done; uploads as files on disk), then upgraded.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from tests.support.paths import JUDGE_DATA
from worker import engines
from worker.config import Settings
from worker.engines.reading import Case
from worker.jobs.cases import CaseQueries
from worker.jobs.queries import JobQueries
from worker.store.database import Database
from worker.store.migrate import current, upgrade
from worker.store.models import Base


@pytest.fixture
def blank(request: pytest.FixtureRequest, tmp_path: Path, db: Database, settings: Settings) -> Settings:
    """``settings`` on an empty database (the fixture's own is migrated to head already)."""
    with db.engine.begin() as connection:
        if db.postgres:
            connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        else:
            for (name,) in connection.execute(text("SELECT name FROM sqlite_master WHERE type = 'table'")).all():
                connection.execute(text(f'DROP TABLE "{name}"'))
    yield settings
    if db.postgres:  # leave the session's database as the other tests expect it
        with db.engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        upgrade(db)


def test_the_migrations_build_the_models_schema(db: Database, blank: Settings) -> None:
    upgrade(db)
    assert current(db) == "0017"
    with db.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
        if not db.postgres:
            # SQLite adds a column's foreign key inline (ALTER TABLE ADD COLUMN ... REFERENCES), and
            # SQLAlchemy's reflection of SQLite reads ON DELETE only from table-level clauses; the
            # database itself has it, as PRAGMA foreign_key_list shows.
            keys = {row[3]: row[3:7] for row in connection.exec_driver_sql("PRAGMA foreign_key_list(jobs)")}
            inline = ("upload_id", "copied_from")
            for name in inline:
                assert keys[name] == (name, "id", "NO ACTION", "SET NULL")
            differences = [d for d in differences if d[0] not in ("add_fk", "remove_fk")
                           or [c.name for c in d[1].columns] not in [[name] for name in inline]]
    assert differences == []


def test_blobs_compressed_by_the_service_are_not_compressed_again_by_postgresql(db: Database, settings: Settings) -> None:
    if not db.postgres:
        pytest.skip("a PostgreSQL setting")
    blobs = {("upload_blocks", "data"), ("chunks", "inputs"), ("chunks", "lines"), ("chunks", "facts"),
             ("chunks", "traces"), ("chunks", "bloom"), ("check_parts", "verdicts"), ("check_parts", "got")}
    with db.engine.connect() as connection:
        storage = dict(((table, column), kind) for table, column, kind in connection.execute(text(
            "SELECT c.relname, a.attname, a.attstorage FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            "WHERE c.relname IN ('upload_blocks', 'chunks', 'check_parts') AND a.attnum > 0 AND NOT a.attisdropped "
            "AND a.atttypid = 'bytea'::regtype")))
    assert {key for key, kind in storage.items() if kind == "e"} == blobs, storage


def test_the_hot_tables_are_vacuumed_sooner_and_at_full_speed(db: Database, settings: Settings) -> None:
    if not db.postgres:
        pytest.skip("a PostgreSQL setting (SQLite reuses freed pages by itself)")
    with db.engine.connect() as connection:
        options = {name: (table or [], toast or []) for name, table, toast in connection.execute(text(
            "SELECT c.relname, c.reloptions, t.reloptions FROM pg_class c LEFT JOIN pg_class t ON t.oid = c.reltoastrelid "
            "WHERE c.relname IN ('chunks', 'upload_blocks', 'check_parts', 'jobs')"))}
    assert set(options) == {"chunks", "upload_blocks", "check_parts", "jobs"}
    for name, (table, toast) in options.items():
        assert {"autovacuum_vacuum_scale_factor=0.02", "autovacuum_vacuum_insert_scale_factor=0.02",
                "autovacuum_vacuum_cost_delay=0"} <= set(table), (name, table)
        assert {"autovacuum_vacuum_scale_factor=0.02", "autovacuum_vacuum_cost_delay=0"} <= set(toast), (name, toast)


def _old_trace(packed: bytes) -> bytes:
    """How the earlier layout stored a packed trace."""
    return zstandard.ZstdCompressor().compress(packed) if packed[:1] == b"{" else packed


def _insert(connection: Any, table: str, **values: Any) -> int:
    names = ", ".join(f'"{name}"' for name in values)
    marks = ", ".join(f":{name}" for name in values)
    return connection.execute(text(f'INSERT INTO {table} ({names}) VALUES ({marks}) RETURNING id'), values).scalar_one()


def _old_job(connection: Any, game: str, name: str, upload: Path, status: str, split: bool, chunk_size: int) -> int:
    """A job of the earlier layout, solved as its code solved it (or queued, not yet split)."""
    engine = engines.get(game)
    data = (JUDGE_DATA / game / f"{name}.in").read_bytes()
    upload.write_bytes(data)
    cases = list(engine.parse(io.BytesIO(data), []))
    now = "2026-11-30 10:00:00"
    job_id = _insert(connection, "jobs", game=game, filename=f"{name}.in", upload_path=str(upload), sha256="ab" * 32,
                     size=len(data), status=status, warnings="[]", chunk_size=chunk_size,
                     total=len(cases) if split else 0, done=len(cases) if split else 0, failed_cases=0, cache_hits=0,
                     counts="{}", solve_hist="[]", solve_us=0, created_at=now, split_at=now if split else None)
    if not split:
        return job_id
    for seq, first in enumerate(range(0, len(cases), chunk_size)):
        batch = cases[first:first + chunk_size]
        _insert(connection, "chunks", job_id=job_id, seq=seq, first_index=batch[0].index, count=len(batch),
                inputs=None, status="done", attempts=1, worker="old:1", finished_at=now)
        for case in batch:
            result, packed = engine.solve_packed(case)
            _insert(connection, "cases", job_id=job_id, index=case.index, game=game, input=case.text,
                    input_hash=case.index, outcome=result.outcome, number=result.number,
                    detail=orjson.dumps(result.detail).decode(), line=result.line, trace=_old_trace(packed),
                    error=None, cached=False, solve_us=100 + case.index, worker="old:1", solved_at=now)
    return job_id


def test_0003_moves_what_the_earlier_layout_stored(db: Database, blank: Settings, tmp_path: Path) -> None:
    upgrade(db, "0002")
    with db.engine.begin() as connection:
        solved = _old_job(connection, "10-20-30", "sample", tmp_path / "a.in", "succeeded", True, 2)
        mahjong = _old_job(connection, "mahjong", "sample", tmp_path / "b.in", "succeeded", True, 7)
        queued = _old_job(connection, "accordion", "sample", tmp_path / "c.in", "queued", False, 7)
    upgrade(db)
    queries, cases = JobQueries(db), CaseQueries(db)
    for job_id, game in ((solved, "10-20-30"), (mahjong, "mahjong")):
        assert b"".join(queries.output(job_id)) == (JUDGE_DATA / game / "sample.out").read_bytes()
        engine = engines.get(game)
        job = queries.job(job_id)
        for index in range(1, job.total + 1):
            case = cases.case_by_index(job_id, index)
            assert case.trace == engine.solve(Case(index, case.input)).trace
            assert case.solve_us == 100 + index and case.worker == "old:1"
        assert sum(n.count for n in queries.distribution(job_id).by_number) == job.total
    timings = queries.timings(solved)
    assert timings.slowest_case is not None and timings.slowest_case.index == 3 and timings.solve_us_max == 103
    # The job that was still queued has its upload in the database now, and runs as any other.
    with db.engine.connect() as connection:
        upload_id = connection.execute(text("SELECT upload_id FROM jobs WHERE id = :j"), {"j": queued}).scalar()
    assert upload_id is not None
    from tests.support.inline import InlineDispatcher
    from worker.jobs.split import split_job

    dispatcher = InlineDispatcher(db, blank)
    split_job(db, blank, queued, dispatcher)
    assert queries.job(queued).status == "succeeded"
    assert b"".join(queries.output(queued)) == (JUDGE_DATA / "accordion" / "sample.out").read_bytes()


def _job_at_0006(connection: Any, game: str, name: str, chunk_size: int, unsolved: int | None = None) -> int:
    """A succeeded job as the code of 0006 stored it: chunks with their inputs, judge lines (joined
    without a last newline), results (a JSON row a case) and packed traces, and an index row per case."""
    from array import array

    engine = engines.get(game)
    data = (JUDGE_DATA / game / f"{name}.in").read_bytes()
    cases = list(engine.parse(io.BytesIO(data), []))
    pack = zstandard.ZstdCompressor(level=1).compress
    codes = {"win": 1, "loss": 2, "draw": 3, "ready": 4, "not-ready": 5}
    now = "2026-12-01 10:00:00"
    job_id = _insert(connection, "jobs", game=game, filename=f"{name}.in", sha256="cd" * 32, size=len(data),
                     status="succeeded", warnings="[]", chunk_size=chunk_size, total=len(cases), bytes_read=len(data),
                     done=len(cases), failed_cases=0, cache_hits=0, counts="{}", distribution="{}", solve_hist="[]",
                     solve_us=0, solve_cpu_us=0, rate=0, check_ids="[]", created_at=now, split_at=now,
                     finished_at=now)
    distribution: dict[str, dict[str, int]] = {}
    for seq, first in enumerate(range(0, len(cases), chunk_size)):
        batch = cases[first:first + chunk_size]
        lines, results, traces = [], [], []
        for case in batch:
            result, packed = engine.solve_packed(case)
            if case.index == unsolved:
                lines.append("")
                results.append([None, None, None, 0, False, "took longer than its time budget of 60 s"])
                traces.append(b"")
            else:
                lines.append(result.line)
                results.append([result.outcome, result.number, result.detail, 100 + case.index, False, None])
                traces.append(packed)
                by_number = distribution.setdefault(result.outcome, {})
                by_number[str(result.number)] = by_number.get(str(result.number), 0) + 1
            connection.execute(text('INSERT INTO cases (job_id, "index", outcome, number, input_hash, solve_us, '
                                    "cached) VALUES (:j, :i, :o, :n, :h, :s, false)"),
                               {"j": job_id, "i": case.index, "o": codes.get(results[-1][0] or ""),
                                "n": results[-1][1], "h": case.index, "s": results[-1][3]})
        offsets = array("I", [0])
        for trace in traces:
            offsets.append(offsets[-1] + len(trace))
        _insert(connection, "chunks", job_id=job_id, seq=seq, first_index=batch[0].index, count=len(batch),
                inputs=pack("\n".join(case.text for case in batch).encode()), lines=pack("\n".join(lines).encode()),
                results=pack(b"\n".join(orjson.dumps(row) for row in results)),
                traces=pack(array("I", [len(batch)]).tobytes() + offsets.tobytes() + b"".join(traces)),
                status="done", attempts=1, worker="w:1:2", finished_at=now)
    counts = {outcome: sum(by_number.values()) for outcome, by_number in distribution.items()}
    connection.execute(text("UPDATE jobs SET distribution = :d, counts = :c, done = :n WHERE id = :j"),
                       {"d": orjson.dumps(distribution).decode(), "c": orjson.dumps(counts).decode(),
                        "n": sum(counts.values()), "j": job_id})
    return job_id


def test_0007_moves_the_case_rows_into_their_chunks(db: Database, blank: Settings) -> None:
    """Jobs stored by the code of 0006 read the same after 0007: output, every case with its detail and
    trace, pages sorted by number, a search for one deck, and a case that was not solved."""
    from worker.jobs.filters import ResultFilter

    upgrade(db, "0006")
    with db.engine.begin() as connection:
        decks = _job_at_0006(connection, "10-20-30", "sample", 2)
        hands = _job_at_0006(connection, "mahjong", "many-waits", 5)
        short = _job_at_0006(connection, "accordion", "sample", 7, unsolved=2)
    upgrade(db)
    with db.engine.connect() as connection:
        assert "cases" not in {name for (name,) in connection.execute(text(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'" if db.postgres
            else "SELECT name FROM sqlite_master WHERE type = 'table'"))}
    queries, cases = JobQueries(db), CaseQueries(db)
    for job_id, game, name in ((decks, "10-20-30", "sample"), (hands, "mahjong", "many-waits")):
        assert b"".join(queries.output(job_id)) == (JUDGE_DATA / game / f"{name}.in").with_suffix(".out").read_bytes()
        engine = engines.get(game)
        total = queries.job(job_id).total
        for index in range(1, total + 1):
            case = cases.case_by_index(job_id, index)
            solved = engine.solve(Case(index, case.input))
            assert (case.outcome, case.number, case.detail, case.line) == (
                solved.outcome, solved.number, solved.detail, solved.line)
            assert case.trace == solved.trace and case.solve_us == 100 + index and case.worker == "w:1:2"
        by_number = cases.results(ResultFilter(job_id=job_id, sort="number", per_page=500).checked()).items
        assert [c.number for c in by_number] == sorted(c.number for c in by_number) and len(by_number) == total
        deck = cases.case_by_index(job_id, total).input
        found = cases.results(ResultFilter(game=game, input_text=deck).checked())
        assert [c.index for c in found.items] == [total]
    case = cases.case_by_index(short, 2)
    assert (case.outcome, case.line, case.error) == (None, None, "took longer than its time budget of 60 s")
    solved = cases.results(ResultFilter(job_id=short, sort="number").checked()).items
    assert [c.index for c in solved] == [1] and solved[0].outcome == cases.case_by_index(short, 1).outcome
