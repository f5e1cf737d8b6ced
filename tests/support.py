"""Helpers for tests: services that may or may not be running, and an in-process dispatcher."""

from __future__ import annotations

import os
import socket
import uuid
from collections import deque
from collections.abc import Sequence

import pytest

from worker import pipeline
from worker.config import Settings

PG_HOST, PG_PORT = "127.0.0.1", 5432
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379


def services_required() -> bool:
    return os.environ.get("DEALER_REQUIRE_SERVICES", "") not in ("", "0", "false", "no")


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def need_service(name: str, host: str, port: int) -> None:
    """Skip when a server is not running here, or fail when CI requires it."""
    if _listening(host, port):
        return
    message = f"{name} is not running on {host}:{port}"
    if services_required():
        pytest.fail(message + " (DEALER_REQUIRE_SERVICES is set)")
    pytest.skip(message)


def create_postgres_database() -> str:
    """A fresh PostgreSQL database for one test session; returns its URL."""
    need_service("PostgreSQL", PG_HOST, PG_PORT)
    import psycopg

    name = f"dealer_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"host={PG_HOST} port={PG_PORT} user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://postgres@{PG_HOST}:{PG_PORT}/{name}"


def drop_postgres_database(url: str) -> None:
    import psycopg

    from worker.db import get_engine

    get_engine(url).dispose()
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(f"host={PG_HOST} port={PG_PORT} user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def redis_url(db: int = 0) -> str:
    need_service("Redis", REDIS_HOST, REDIS_PORT)
    return f"redis://{REDIS_HOST}:{REDIS_PORT}/{db}"


class InlineDispatcher:
    """Runs split and solve tasks in this process, in the order they were sent (no broker)."""

    def __init__(self, settings: Settings, immediate: bool = True) -> None:
        self.settings = settings
        self.immediate = immediate
        self.queue: deque[tuple[str, int]] = deque()
        self.sent: list[tuple[str, int]] = []
        self._running = False

    def split(self, job_id: int) -> None:
        self._send("split", job_id)

    def solve(self, chunk_ids: Sequence[int]) -> None:
        for chunk_id in chunk_ids:
            self._send("solve", chunk_id)

    def queue_depth(self) -> int | None:
        return len(self.queue)

    def _send(self, kind: str, ident: int) -> None:
        self.queue.append((kind, ident))
        self.sent.append((kind, ident))
        if self.immediate and not self._running:
            self.drain()

    def drain(self) -> None:
        """Run everything queued, including what running it queues."""
        self._running = True
        try:
            while self.queue:
                kind, ident = self.queue.popleft()
                if kind == "split":
                    pipeline.split_job(self.settings, ident, self)
                else:
                    pipeline.solve_chunk(self.settings, ident)
        finally:
            self._running = False
