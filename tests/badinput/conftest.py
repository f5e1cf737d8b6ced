"""Bad input through the Flask client, on SQLite and on PostgreSQL (like the web tests)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from tests.conftest import JUDGE_DATA
# Every bad-input test that takes `settings` runs on both databases.
from tests.pipeline.conftest import postgres_url, settings  # noqa: F401

CORPUS = Path(__file__).parent / "corpus"


def post(client: Any, data: bytes, game: str | None = None, name: str = "upload.in",
         headers: dict[str, str] | None = None, **kwargs: Any) -> Any:
    """POST bytes to /api/jobs as the multipart field ``file``; returns the response."""
    form: dict[str, Any] = {"file": (io.BytesIO(data), name)}
    if game:
        form["game"] = game
    return client.post("/api/jobs", data=form, content_type="multipart/form-data", headers=headers or {},
                       **kwargs)


def finished(client: Any, response: Any) -> dict[str, Any]:
    """The job a 201 answer created, as it is now (the inline dispatcher has run it)."""
    assert response.status_code == 201, response.get_json()
    return client.get(f"/api/jobs/{response.get_json()['id']}").get_json()


def assert_healthy(client: Any, headers: dict[str, str] | None = None) -> None:
    """The service still takes a good file and solves it, and still answers reads."""
    sample = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()
    job = finished(client, post(client, sample, "mahjong", "good.in", headers))
    assert job["status"] == "succeeded" and job["done"] == 2, job
    assert client.get("/api/overview").status_code == 200
    assert client.get("/").status_code == 200
