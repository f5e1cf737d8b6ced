"""Private Redis and PostgreSQL servers that a fault test may stop and restart at will,
without touching the machine's own."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.live import free_port
from tests.support import services_required

PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), None)


def _need(condition: bool, message: str) -> None:
    if not condition:
        if services_required():
            pytest.fail(message)
        pytest.skip(message)


class PrivateRedis:
    def __init__(self, also_on: tuple[str, ...] = ()) -> None:
        _need(shutil.which("redis-server") is not None, "redis-server is not installed")
        self.port = free_port()
        self.addresses = ("127.0.0.1", *also_on)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", *self.addresses, "--protected-mode", "no",
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                redis.Redis(port=self.port).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise TimeoutError("private redis did not start")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()  # like a crash: the queue's contents are lost
            self.process.wait()

    def restart(self) -> None:
        self.stop()
        self.start()


class PrivatePostgres:
    """A throw-away cluster owned by the postgres user (initdb refuses to run as root)."""

    def __init__(self, also_on: tuple[str, ...] = ()) -> None:
        _need(PG_BIN is not None, "PostgreSQL server binaries are not installed")
        self.addresses = ("127.0.0.1", *also_on)
        _need(os.geteuid() != 0 or shutil.which("runuser") is not None, "runuser is needed to run as postgres")
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="dealer-pg-"))
        shutil.chown(self.dir, "postgres", "postgres")
        self._as_postgres(str(PG_BIN / "initdb"), "-D", str(self.dir / "data"), "-A", "trust", "-U", "postgres",
                          "--no-sync")
        with open(self.dir / "data" / "pg_hba.conf", "a") as hba:
            for address in also_on:
                hba.write(f"host all all {address}/24 trust\n")

    def _as_postgres(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *command], check=True, capture_output=True)

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.dir / "data"), "-w", "-l",
                          str(self.dir / "log"), "-o",
                          f"-p {self.port} -k {self.dir} -c listen_addresses={','.join(self.addresses)} -c fsync=off",
                          "start")

    def stop(self) -> None:
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.dir / "data"), "-w", "-m", "immediate", "stop")

    def destroy(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)
