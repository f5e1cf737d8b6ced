"""The fixtures every test folder shares (loaded from ``tests/conftest.py``), in the manner of Flask's
tutorial: ``settings`` → ``dispatcher`` → ``service`` / ``queries`` → ``app`` → ``client``.

Tests that take ``settings`` run twice: on SQLite, and on PostgreSQL when it answers
(required where ``DEALER_REQUIRE_SERVICES`` is set, as in CI). A harness of
``worker.testing`` that finds a server or tool missing skips the test the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.support.inline import InlineDispatcher
from tests.support.paths import JUDGE_DATA
from worker.config import Settings
from worker.store.database import Database
from worker.store.migrate import upgrade
from worker.store.models import Base
from worker.testing.servers import ServiceMissing, create_postgres_database, drop_postgres_database

#: Cases per chunk in the tests: small, so that even a judge file's sample spans several chunks.
TEST_CHUNK_SIZE = 7


def services_required() -> bool:
    """Whether missing servers (PostgreSQL, Redis, Chromium) fail tests instead of skipping them."""
    return os.environ.get("DEALER_REQUIRE_SERVICES", "") not in ("", "0", "false", "no")


def missing(message: str) -> None:
    """Skip for ``message``, or fail where the services are required."""
    if services_required():
        pytest.fail(message + " (DEALER_REQUIRE_SERVICES is set)")
    pytest.skip(message)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    try:
        return (yield)
    except ServiceMissing as error:
        missing(str(error))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        return (yield)
    except ServiceMissing as error:
        missing(str(error))


@pytest.fixture(scope="session")
def judge_data() -> Path:
    if not JUDGE_DATA.is_dir():
        pytest.fail(f"judge data not found at {JUDGE_DATA} (set DEALER_SHARED)")
    return JUDGE_DATA


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A database on the machine's PostgreSQL for the whole session, schema migrated."""
    url = create_postgres_database()
    upgrade(Database.of(Settings.from_env({"DEALER_DATABASE_URL": url})))
    yield url
    Database.close_all()
    drop_postgres_database(url)


def postgres_settings(url: str, tmp_path: Path, **overrides: Any) -> Settings:
    """Settings on the session's PostgreSQL database, emptied first."""
    settings = Settings.from_env({"DEALER_DATABASE_URL": url}, data_dir=tmp_path / "data",
                                 **{"chunk_size": TEST_CHUNK_SIZE, **overrides})
    with Database.of(settings).engine.begin() as connection:
        tables = ", ".join(table.name for table in Base.metadata.sorted_tables)
        connection.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    return settings


def sqlite_settings(tmp_path: Path, **overrides: Any) -> Settings:
    """Embedded settings in a fresh data folder, schema migrated."""
    settings = Settings.from_env({}, data_dir=tmp_path / "data", **{"chunk_size": TEST_CHUNK_SIZE, **overrides})
    upgrade(Database.of(settings))
    return settings


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    if request.param == "postgresql":
        return postgres_settings(request.getfixturevalue("postgres_url"), tmp_path)
    return sqlite_settings(tmp_path)


@pytest.fixture
def dispatcher(settings: Settings) -> InlineDispatcher:
    return InlineDispatcher(settings)


@pytest.fixture
def service(settings: Settings, dispatcher: InlineDispatcher) -> Any:
    from worker.jobs.service import JobService

    return JobService(settings, dispatcher)


@pytest.fixture
def queries(settings: Settings) -> Any:
    from worker.jobs.queries import JobQueries

    return JobQueries(settings)


@pytest.fixture
def app(settings: Settings, dispatcher: InlineDispatcher) -> Any:
    from webui.app import create_app

    return create_app(settings, dispatcher, config={"TESTING": True})


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()
