"""The fixtures every test folder shares (loaded from ``tests/conftest.py``), in the manner of Flask's
tutorial: ``settings`` → ``db`` → ``dispatcher`` → ``service`` / ``queries`` (``case_queries``,
``overview_queries``, ``checks`` / ``check_queries``) → ``app`` → ``client``.

Tests that take ``settings`` run twice: on SQLite, and on PostgreSQL when it answers
(required where ``DEALER_REQUIRE_SERVICES`` is set, as in CI). A harness of
``worker.testing`` that finds a server or tool missing skips the test the same way.

Modules whose tests only read what a module-scoped fixture stored use ``module_settings`` and
:func:`unchanged`. Tests that take ``shared_live`` run against the session's live service of each
mode (see there).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import CodeType
from typing import Any

import psycopg
import pytest
from flask import Flask
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from jinja2 import BytecodeCache
from jinja2.bccache import Bucket
from werkzeug.routing import Rule
from sqlalchemy import Dialect, text

from tests.support.inline import InlineDispatcher
from tests.support.paths import JUDGE_DATA, ROOT
from worker.config import Settings
from worker.store import database as database_module
from worker.store.database import Database
from worker.store.migrate import upgrade
from worker.store.models import Base
from worker.testing.live import MODES, LiveService, live_service
from worker.testing.servers import (
    PG_HOST,
    PG_PORT,
    ServiceMissing,
    create_postgres_database,
    drop_postgres_database,
)

#: Cases per chunk in the tests: small, so that even a judge file's sample spans several chunks.
TEST_CHUNK_SIZE = 7
#: What the tests' settings change: small chunks; and no copying of a file solved before, since tests
#: send the same judge files again and again to watch them solved (the tests of copying turn it on).
#: A split sent while its file arrives runs in the send with the inline dispatcher, inside the upload:
#: it can wait for no block (tests of the wait give it patience and a writer of its own).
TEST_SETTINGS = {"chunk_size": TEST_CHUNK_SIZE, "result_cache": False, "split_patience_seconds": 0}

# Hypothesis judges by the clock unless told not to: a deadline for each example (200 ms) and a health
# check failing data that is slow to generate, both of which a busy machine trips. How fast the code is
# is bench/'s to say, side by side; here only what it does.
hypothesis_settings.register_profile("dealer", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("dealer")


class CompiledTemplates(BytecodeCache):
    """The pages' templates compiled once a process, not once an app: every test's app has a Jinja
    environment of its own, and compiling a page's three templates again cost each test that renders one
    a tenth of a second of CPU, more than the rest of its request. Jinja checks each template's source
    against its checksum before it takes the code."""

    def __init__(self) -> None:
        self._code: dict[str, tuple[str, CodeType]] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        kept = self._code.get(bucket.key)
        if kept is not None and kept[0] == bucket.checksum:
            bucket.code = kept[1]

    def dump_bytecode(self, bucket: Bucket) -> None:
        if bucket.code is not None:
            self._code[bucket.key] = (bucket.checksum, bucket.code)


# Every app of this process (each made by ``create_app``, whose Jinja options are Flask's) shares them.
Flask.jinja_options = {**Flask.jinja_options, "bytecode_cache": CompiledTemplates()}

_compile_builder = Rule._compile_builder
_builders: dict[tuple[Any, ...], Any] = {}


def _compiled_once(rule: Rule, append_unknown: bool = True) -> Any:
    """Werkzeug's URL builder of a rule, compiled once a process, not once an app: it writes and compiles
    the Python of two functions a route, two thirds of the CPU of ``create_app``, which ~2,000 tests call.
    The function reads everything of its rule through its first argument but what the key holds (the
    parsed route, its defaults); werkzeug is held below 3.2 (pyproject.toml), where it is so."""
    key = (tuple(rule._trace), repr(sorted((rule.defaults or {}).items())), append_unknown)
    if key not in _builders:
        _builders[key] = _compile_builder(rule, append_unknown)
    return _builders[key]


Rule._compile_builder = _compiled_once  # type: ignore[method-assign]


class SharedStatements(dict[tuple[Any, ...], Any]):
    """SQLAlchemy's compiled statements, shared by every database a test process opens: each test opens
    databases of its own, and SQLAlchemy compiles statements once an engine (its own cache) and keys each
    by the engine's dialect, so every test compiled each statement it ran again (a third of the CPU of a
    test on the Flask client). A statement compiled for one dialect serves every other of the same kind
    on the same server: the key is made with the first such dialect instead."""

    def __init__(self) -> None:
        super().__init__()
        self._dialects: dict[tuple[Any, ...], Dialect] = {}

    def _key(self, key: tuple[Any, ...]) -> tuple[Any, ...]:
        dialect = key[0]
        first = self._dialects.setdefault((type(dialect), dialect.server_version_info), dialect)
        return (first, *key[1:])

    def get(self, key: tuple[Any, ...], default: Any = None) -> Any:  # type: ignore[override]
        return super().get(self._key(key), default)

    def __setitem__(self, key: tuple[Any, ...], value: Any) -> None:
        super().__setitem__(self._key(key), value)


STATEMENTS = SharedStatements()
_create_engine = database_module._create


def _sharing_statements(url: str, idle_timeout: float) -> Any:
    engine = _create_engine(url, idle_timeout)
    engine.update_execution_options(compiled_cache=STATEMENTS)
    return engine


database_module._create = _sharing_statements
# The ORM's writes go through each mapper's own cache, keyed by dialect too.
for _mapper in Base.registry.mappers:
    _mapper.__dict__["_compiled_cache"] = STATEMENTS


def pytest_configure(config: pytest.Config) -> None:
    """The user's data folder (the embedded default, ``worker.config.default_data_dir``) is one of this run's
    own: a command a test runs without naming a data folder must not write to the real one, nor find what
    an earlier run left there. Set before any test's process starts, so that the live services inherit it."""
    os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="dealer-test-xdg-")


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


#: The folders of tests/ whose tests start real processes (a service's web and workers, Chromium, private
#: servers, ``dealer serve``): marked ``live`` (``pytest -m live`` runs them alone, ``-m "not live"`` the rest).
LIVE_FOLDERS = ("browser", "faults", "integration")


#: The parameters of the shared fixtures that run on the machine's PostgreSQL or Redis: a test that
#: takes one is marked ``services``, as is one that takes the session's PostgreSQL database.
ON_SERVICES = {"settings": "postgresql", "module_settings": "postgresql", "shared_live": "production"}


@functools.cache
def _parts(path: Path) -> tuple[str, ...]:
    # Once a file, not once a test: resolving a path costs a system call a part, ~3,500 tests a process.
    return path.resolve().relative_to(ROOT).parts


def pytest_itemcollected(item: pytest.Item) -> None:
    parts = _parts(Path(str(item.path)))
    if parts[0] == "tests" and len(parts) > 2 and parts[1] in LIVE_FOLDERS:
        item.add_marker(pytest.mark.live)
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "postgres_url" in getattr(item, "fixturenames", ()) or any(
            params.get(name) == value for name, value in ON_SERVICES.items()):
        item.add_marker(pytest.mark.services)


def _place(item: pytest.Item, slow_files: set[Path]) -> int:
    if item.get_closest_marker("live") is None:
        return 3 if item.path in slow_files else 4
    if "shared_live" in getattr(item, "fixturenames", ()):
        return 2
    return 0 if "faults" in Path(str(item.path)).parts else 1


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The live tests first, the longest first (the fault scenarios), then those on the shared live
    services, then the files with a slow test (verifyproblem's install and run, the schema fuzzing, the
    differential of the cores), then the rest: ``make test`` hands out whole files in this order
    (pytest-xdist's ``loadfile`` without its reordering, see :func:`pytest_xdist_make_scheduler`), so
    that the files that take longest start first and the many short ones fill the processes at the end.

    pytest keeps one instance of a session-scoped parametrized fixture at a time and groups the tests
    that use it by parameter, so that each mode's shared service starts once in a process; the sort
    keeps that order (it is stable).
    """
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: _place(item, slow_files))


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collecting made (every test module, its parameters, the libraries they import) lives until the
    run ends: it is moved out of the garbage collector's sight, which otherwise walked all of it again at
    each of its full collections: on four modules of 568 tests, the collector took 2.1-2.6 of 32-38
    CPU-seconds before, 1.4 after."""
    gc.collect()
    gc.freeze()


#: The ids of the shared live services' modes: a test file's tests on each form a work unit of their own.
_MODE_IDS = frozenset(MODES)


def _unit(nodeid: str) -> str:
    """The work unit of a test under ``make test``: its file, or for a file on the shared live services,
    its file and mode."""
    path, _, rest = nodeid.partition("::")
    ids = rest[rest.find("[") + 1 : -1].split("-") if rest.endswith("]") else []
    mode = next((name for name in ids if name in _MODE_IDS), None)
    return path if mode is None else f"{path}[{mode}]"


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, a file to a process, but with a file's tests on each shared live service a
    unit of their own, handed out in the order collected (all of one mode's first, see above): a process
    that runs several such units starts each mode's service once (a file whole would take both
    modes' in turn and start them again with the next file), and the two halves of a long file run
    side by side."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class ByFileAndMode(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    return ByFileAndMode(config, log)


@pytest.fixture(scope="session", params=MODES)
def shared_live(request: pytest.FixtureRequest,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """The session's live service (web + worker processes) of each mode, shared by the modules that
    need no service of their own: starting one takes seconds. A test on it looks only at the jobs
    it made (others' are there too) and leaves the service as it found it: no worker stopped or
    killed, no settings of its own (which need a service of their own, as the fault, the API-key
    and the time-left tests have)."""
    # Every test sends from one address, so the service takes them all for one client: on a quick machine
    # they create more jobs a minute than the shipped limit lets one client (tests/web/test_access.py
    # tests the limit).
    # In production, on a database of the quick kind (see quick_postgres_database).
    database = quick_postgres_database() if request.param == "production" else None
    try:
        with live_service(request.param, tmp_path_factory.mktemp(f"shared-{request.param}"),
                          database_url=database, DEALER_MAX_JOBS_PER_MINUTE_PER_CLIENT="100000") as service:
            yield service
    finally:
        if database:
            drop_postgres_database(database, wait=False)


@pytest.fixture(scope="session")
def judge_data() -> Path:
    if not JUDGE_DATA.is_dir():
        pytest.fail(f"judge data not found at {JUDGE_DATA}: it is part of the repository")
    return JUDGE_DATA


def quick_postgres_database() -> str:
    """A fresh database on the machine's PostgreSQL whose commits do not wait for the disk
    (``synchronous_commit`` off, for this database only): nothing of it outlives the run, and a commit
    that waits for the disk cost 5-13 ms on a busy machine, against under 3 ms, where a test commits
    dozens of times. What a crash keeps is the fault tests' (tests/faults), on servers of their own."""
    url = create_postgres_database()
    with psycopg.connect(f"host={PG_HOST} port={PG_PORT} user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{url.rsplit("/", 1)[1]}" SET synchronous_commit TO off')
    return url


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A database on the machine's PostgreSQL for the whole session, schema migrated."""
    url = quick_postgres_database()
    with contextlib.closing(Database(Settings.from_env({"DEALER_DATABASE_URL": url}))) as database:
        upgrade(database)
    yield url
    drop_postgres_database(url, wait=False)


def postgres_settings(url: str, tmp_path: Path, **overrides: Any) -> Settings:
    """Settings on the session's PostgreSQL database, emptied first (its ids started again at 1): by
    ``DELETE``, since what a test leaves is a few rows, and a ``TRUNCATE`` of every table, which makes
    each a new file, cost a test three times as much (hundreds of tests start so)."""
    settings = Settings.from_env({"DEALER_DATABASE_URL": url}, data_dir=tmp_path / "data",
                                 **{**TEST_SETTINGS, **overrides})
    with contextlib.closing(Database(settings)) as database, database.engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())
        for sequence in connection.scalars(text("SELECT sequence_name FROM information_schema.sequences"
                                                " WHERE sequence_schema = 'public'")).all():
            connection.execute(text(f'ALTER SEQUENCE "{sequence}" RESTART'))
    return settings


@functools.cache
def _migrated_sqlite() -> bytes:
    """An embedded database with the schema migrated, as its file holds it: made once a run, since
    hundreds of tests start from one and running the migrations costs each of them 40 ms."""
    folder = Path(tempfile.mkdtemp(prefix="dealer-test-schema-"))
    try:
        with contextlib.closing(Database(Settings.from_env({}, data_dir=folder))) as database:
            upgrade(database)
        with contextlib.closing(sqlite3.connect(folder / "dealer.db")) as connection:
            return connection.serialize()  # with what the write-ahead log still holds
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sqlite_settings(tmp_path: Path, **overrides: Any) -> Settings:
    """Embedded settings in a fresh data folder, schema migrated (a copy of a migrated database)."""
    settings = Settings.from_env({}, data_dir=tmp_path / "data", **{**TEST_SETTINGS, **overrides})
    path = Path(settings.database_url.split("///", 1)[1])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_migrated_sqlite())
    return settings


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    if request.param == "postgresql":
        return postgres_settings(request.getfixturevalue("postgres_url"), tmp_path)
    return sqlite_settings(tmp_path)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def module_settings(request: pytest.FixtureRequest,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """Like ``settings``, but one database for the whole module, of its own (never emptied by another
    test): for a module-scoped fixture that stores what the module's tests then only read (see
    :func:`unchanged`), where storing it again for each test would cost more than the test."""
    folder = tmp_path_factory.mktemp(f"module-{request.param}")
    if request.param == "sqlite":
        yield sqlite_settings(folder)
        return
    url = quick_postgres_database()
    settings = Settings.from_env({"DEALER_DATABASE_URL": url}, data_dir=folder / "data",
                                 **TEST_SETTINGS)
    try:
        with contextlib.closing(Database(settings)) as database:
            upgrade(database)
        yield settings
    finally:
        drop_postgres_database(url, wait=False)


@pytest.fixture(scope="module")
def module_db(module_settings: Settings) -> Iterator[Database]:
    """The database of ``module_settings``, for the module's fixtures."""
    database = Database(module_settings)
    yield database
    database.close()


def _contents(settings: Settings) -> dict[str, str]:
    """A digest of every table's rows, by table."""
    digests: dict[str, str] = {}
    with contextlib.closing(Database(settings)) as database, database.engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            rows = connection.execute(table.select().order_by(*table.primary_key.columns)).all()
            digests[table.name] = hashlib.sha256(repr(rows).encode()).hexdigest()
    return digests


@contextlib.contextmanager
def unchanged(settings: Settings) -> Iterator[None]:
    """Fail if the database changed inside the block: the guard of data that tests share because they
    only read it (a test that writes would make the others' outcome depend on the order)."""
    before = _contents(settings)
    yield
    changed = [name for name, digest in _contents(settings).items() if before[name] != digest]
    assert not changed, f"tests that were to only read changed the tables {changed}"


#: Every table's rows, by table: what :func:`rows_of` read and :func:`put_rows` writes back.
Rows = dict[str, list[dict[str, Any]]]


def rows_of(db: Database) -> Rows:
    """Every row of the database, to put back into an empty one of its kind (:func:`put_rows`): for a
    module whose tests each start from the same jobs and change them, made once (the split and the solve
    of several jobs cost a test seconds, putting their rows back a few milliseconds)."""
    with db.engine.connect() as connection:
        return {table.name: [dict(row._mapping) for row in connection.execute(table.select())]
                for table in Base.metadata.sorted_tables}


def put_rows(db: Database, rows: Rows) -> None:
    """Write ``rows`` (:func:`rows_of`) into ``db``, empty, as they were: the same ids, and on PostgreSQL
    its sequences on past them, as making the rows would have left them."""
    with db.engine.begin() as connection:
        for table in Base.metadata.sorted_tables:
            if rows[table.name]:
                connection.execute(table.insert(), rows[table.name])
        if db.dialect == "postgresql":
            for table in Base.metadata.sorted_tables:
                key = list(table.primary_key.columns)
                if rows[table.name] and len(key) == 1 and isinstance(rows[table.name][0][key[0].name], int):
                    name, column = table.name, key[0].name
                    connection.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', '{column}'),"
                                            f" (SELECT max({column}) FROM {name}))"))


@pytest.fixture
def db(settings: Settings) -> Iterator[Database]:
    """The test's database, closed after it (what a process's composition root makes once)."""
    database = Database(settings)
    yield database
    database.close()


@pytest.fixture
def dispatcher(db: Database, settings: Settings) -> InlineDispatcher:
    return InlineDispatcher(db, settings)


@pytest.fixture
def service(db: Database, settings: Settings, dispatcher: InlineDispatcher) -> Any:
    from worker.jobs.service import JobService

    return JobService(db, settings, dispatcher)


@pytest.fixture
def queries(db: Database, settings: Settings) -> Any:
    from worker.jobs.queries import JobQueries

    return JobQueries(db)


@pytest.fixture
def case_queries(db: Database) -> Any:
    from worker.jobs.cases import CaseQueries

    return CaseQueries(db)


@pytest.fixture
def overview_queries(db: Database, settings: Settings) -> Any:
    from worker.jobs.overview import OverviewQueries

    return OverviewQueries(db, settings)


@pytest.fixture
def checks(db: Database, settings: Settings, dispatcher: InlineDispatcher, service: Any) -> Any:
    from worker.checks.service import CheckService

    return CheckService(db, settings, dispatcher, service)


@pytest.fixture
def check_queries(db: Database) -> Any:
    from worker.checks.queries import CheckQueries

    return CheckQueries(db)


@pytest.fixture
def app(db: Database, settings: Settings, dispatcher: InlineDispatcher) -> Any:
    from webui.app import create_app

    return create_app(settings, dispatcher, config={"TESTING": True}, db=db)


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()
