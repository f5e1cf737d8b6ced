"""Uploads through Flask's test client."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from tests.support.paths import judge


def post_file(client: Any, data: bytes | Path, game: str | None = None, name: str = "judge.in",
              headers: dict[str, str] | None = None, **kwargs: Any) -> Any:
    """POST a file to /api/jobs as the multipart field ``file``; returns the response."""
    body = data.read_bytes() if isinstance(data, Path) else data
    form: dict[str, Any] = {"file": (io.BytesIO(body), name)}
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
    job = finished(client, post_file(client, judge("mahjong", "sample"), "mahjong", "good.in", headers))
    assert job["status"] == "succeeded" and job["done"] == 2, job
    assert client.get("/api/overview").status_code == 200
    assert client.get("/").status_code == 200
