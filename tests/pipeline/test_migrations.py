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
from worker.engines.base import Case
from worker.jobs.queries import JobQueries
from worker.store.database import Database
from worker.store.migrate import current, upgrade
from worker.store.models import Base


@pytest.fixture
def blank(request: pytest.FixtureRequest, tmp_path: Path, settings: Settings) -> Settings:
    """``settings`` on an empty database (the fixture's own is migrated to head already)."""
    db = Database.of(settings)
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


def test_the_migrations_build_the_models_schema(blank: Settings) -> None:
    db = Database.of(blank)
    upgrade(db)
    assert current(db) == "0007"
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


def test_0003_moves_what_the_earlier_layout_stored(blank: Settings, tmp_path: Path) -> None:
    db = Database.of(blank)
    upgrade(db, "0002")
    with db.engine.begin() as connection:
        solved = _old_job(connection, "10-20-30", "sample", tmp_path / "a.in", "succeeded", True, 2)
        mahjong = _old_job(connection, "mahjong", "sample", tmp_path / "b.in", "succeeded", True, 7)
        queued = _old_job(connection, "accordion", "sample", tmp_path / "c.in", "queued", False, 7)
    upgrade(db)
    queries = JobQueries(blank)
    for job_id, game in ((solved, "10-20-30"), (mahjong, "mahjong")):
        assert b"".join(queries.output(job_id)) == (JUDGE_DATA / game / "sample.out").read_bytes()
        engine = engines.get(game)
        job = queries.job(job_id)
        for index in range(1, job.total + 1):
            case = queries.case_by_index(job_id, index)
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

    dispatcher = InlineDispatcher(blank)
    split_job(blank, queued, dispatcher)
    assert queries.job(queued).status == "succeeded"
    assert b"".join(queries.output(queued)) == (JUDGE_DATA / "accordion" / "sample.out").read_bytes()
