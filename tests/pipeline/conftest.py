"""Pipeline tests run on both databases: SQLite always, PostgreSQL when it answers (required in CI)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from worker.config import Settings


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    from tests.support import create_postgres_database, drop_postgres_database
    from worker.migrate import upgrade

    url = create_postgres_database()
    upgrade(url)
    yield url
    drop_postgres_database(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    from worker.migrate import upgrade

    if request.param == "postgresql":
        return postgres_settings(request.getfixturevalue("postgres_url"), tmp_path)
    settings = Settings.from_env({}, data_dir=tmp_path / "data", chunk_size=7)
    upgrade(settings.database_url)
    return settings


def postgres_settings(url: str, tmp_path: Path) -> Settings:
    """Settings on the session's PostgreSQL database, emptied first."""
    from worker.db import get_engine

    with get_engine(url).begin() as connection:
        connection.execute(text("TRUNCATE jobs, chunks, cases, workers RESTART IDENTITY CASCADE"))
    return Settings.from_env({"DEALER_DATABASE_URL": url}, data_dir=tmp_path / "data", chunk_size=7)
