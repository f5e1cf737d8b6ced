"""A worker's heartbeat touches ``DEALER_HEARTBEAT_FILE`` each time it reached the database: the
compose file's health check of a worker is that file's age."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from worker.testing.waiting import until
from worker.config import Settings
from worker.runner.heartbeat import Heartbeat
from worker.store.database import Database


def beating(db: Database, settings: Settings, dispatcher: Any, done: Callable[[], bool], what: str) -> None:
    """Run a heartbeat every 10 ms until ``done()`` is true, then stop it."""
    beat = Heartbeat(db, replace(settings, heartbeat_seconds=0.01), dispatcher, 1)
    beat.start()
    try:
        until(done, bool, what, timeout=30, every=0.01)
    finally:
        beat.stop()
        beat.join(10)


def test_each_beat_that_reached_the_database_touches_the_file(db: Database, settings: Settings, dispatcher: Any,
                                                              tmp_path: Path) -> None:
    path = tmp_path / "heartbeat"
    touched: list[int] = []

    def touched_twice() -> bool:
        if path.exists() and path.stat().st_mtime_ns not in touched:
            touched.append(path.stat().st_mtime_ns)
        return len(touched) >= 2

    beating(db, replace(settings, heartbeat_file=str(path)), dispatcher, touched_twice, "the file touched twice")
    assert len(touched) >= 2


def test_a_beat_that_did_not_reach_the_database_leaves_the_file_alone(
        settings: Settings, dispatcher: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "heartbeat"
    away = replace(settings, heartbeat_file=str(path), database_url="postgresql+psycopg://dealer@127.0.0.1:1/dealer")
    with caplog.at_level(logging.ERROR, logger="dealer.worker"):
        beating(Database(away), away, dispatcher, lambda: caplog.text.count("heartbeat failed") >= 2, "two beats failed")
    assert caplog.text.count("heartbeat failed") >= 2
    assert not path.exists()
