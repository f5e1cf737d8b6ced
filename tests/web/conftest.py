"""Flask test-client tests of the pages and the JSON API, on SQLite and on PostgreSQL.

The inline dispatcher runs the whole pipeline inside the upload request, so a job is
finished by the time ``POST /api/jobs`` answers (unless a test turns ``immediate`` off).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import JUDGE_DATA
# The pipeline tests' database fixtures: every web test runs on SQLite and on PostgreSQL.
from tests.pipeline.conftest import postgres_url, settings  # noqa: F401


def upload(client: Any, data: bytes | Path, game: str | None = None, name: str = "judge.in") -> Any:
    """POST a file to /api/jobs; returns the response."""
    body = data.read_bytes() if isinstance(data, Path) else data
    form: dict[str, Any] = {"file": (io.BytesIO(body), name)}
    if game:
        form["game"] = game
    return client.post("/api/jobs", data=form, content_type="multipart/form-data")


def judge(game: str, name: str) -> Path:
    return JUDGE_DATA / game / f"{name}.in"


@pytest.fixture
def submit(client: Any):
    """Upload a judge file (``game/name``) or bytes and return the finished job."""

    def _submit(what: str | bytes, game: str | None = None, name: str = "judge.in") -> dict[str, Any]:
        if isinstance(what, str):
            game_dir, stem = what.split("/")
            response = upload(client, judge(game_dir, stem), game, f"{stem}.in")
        else:
            response = upload(client, what, game, name)
        assert response.status_code == 201, response.get_json()
        return client.get(f"/api/jobs/{response.get_json()['id']}").get_json()

    return _submit


@pytest.fixture
def three_jobs(submit: Any) -> dict[str, dict[str, Any]]:
    """One finished job per game, from judge files with every outcome of the game."""
    return {"10-20-30": submit("10-20-30/sample", "10-20-30"), "accordion": submit("accordion/sample"),
            "mahjong": submit("mahjong/sample", "mahjong")}
