"""Flask test-client tests of the pages and the JSON API, on SQLite and on PostgreSQL.

The inline dispatcher runs the whole pipeline inside the upload request, so a job is
finished by the time ``POST /api/jobs`` answers (unless a test turns ``immediate`` off).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.http import post_file
from tests.support.inline import InlineDispatcher
from tests.support.paths import judge
from tests.support.plugin import unchanged
from worker.config import Settings
from worker.store.database import Database
from worker import engines
from worker.engines import Engine


def submit_to(client: Any, what: str | bytes, game: str | None = None,
              name: str = "judge.in") -> dict[str, Any]:
    """Upload a judge file (``game/name``) or bytes through ``client`` and return the finished job."""
    if isinstance(what, str):
        game_dir, stem = what.split("/")
        response = post_file(client, judge(game_dir, stem), game, f"{stem}.in")
    else:
        response = post_file(client, what, game, name)
    assert response.status_code == 201, response.get_json()
    return client.get(f"/api/jobs/{response.get_json()['id']}").get_json()


def three_jobs_in(client: Any) -> dict[str, dict[str, Any]]:
    """One finished job per game, from judge files with every outcome of the game."""
    return {"10-20-30": submit_to(client, "10-20-30/sample", "10-20-30"),
            "accordion": submit_to(client, "accordion/sample"),
            "mahjong": submit_to(client, "mahjong/sample", "mahjong")}


@pytest.fixture
def submit(client: Any):
    """Upload a judge file (``game/name``) or bytes and return the finished job."""

    def _submit(what: str | bytes, game: str | None = None, name: str = "judge.in") -> dict[str, Any]:
        return submit_to(client, what, game, name)

    return _submit


@dataclass(frozen=True)
class Reading:
    """A module's app on its own database holding one finished job per game (:func:`three_jobs_in`)."""

    app: Any
    db: Database
    jobs: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def reading(module_db: Database, module_settings: Settings) -> Iterator[Reading]:
    """For the tests of a module that only read: the app and its three jobs made once a module and
    database, not once a test (an app and three jobs cost a test a quarter of a second, many times the
    reads), held to reading by :func:`unchanged`."""
    from webui.app import create_app

    app = create_app(module_settings, InlineDispatcher(module_db, module_settings), config={"TESTING": True},
                     db=module_db)
    jobs = three_jobs_in(app.test_client())
    with unchanged(module_settings):
        yield Reading(app, module_db, jobs)


@pytest.fixture
def three_jobs(client: Any) -> dict[str, dict[str, Any]]:
    """One finished job per game, from judge files with every outcome of the game."""
    return three_jobs_in(client)


@pytest.fixture
def coins(monkeypatch: pytest.MonkeyPatch) -> Engine:
    """The toy game's line (tests/web/toy.py) in the registry, and a registry that forgets it after the
    test: test_a_new_game's and test_generate_api's."""
    monkeypatch.setitem(engines._MODULES, "coins", "tests.web.toy")
    monkeypatch.setattr(engines, "_loaded", dict(engines._loaded))
    return engines.get("coins")
