"""The live harness holds a service's workers still outside a write (``held_still``): a
worker stopped while it held the embedded database's write lock would keep the web from storing an
upload for as long as it is held (a browser test's upload timed out so, on a loaded machine)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from sqlalchemy import make_url

from worker.config import Settings
from worker.testing.live import LiveService, held_still

#: A stand-in worker that writes as a worker does: the write lock taken and let go, again and again.
WRITER = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
print("ready", flush=True)
while True:
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("INSERT INTO beats VALUES (1)")
    time.sleep(0.02)
    connection.execute("COMMIT")
    time.sleep(0.02)
"""


def test_workers_are_held_at_a_moment_they_hold_no_write_lock(tmp_path: Path) -> None:
    settings = Settings.from_env({}, data_dir=tmp_path)
    path = str(make_url(settings.database_url).database)
    with closing(sqlite3.connect(path, isolation_level=None)) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE beats (n INTEGER)")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, path], stdout=subprocess.PIPE, start_new_session=True)
    live = LiveService("embedded", "http://127.0.0.1:1", {"DEALER_DATA_DIR": str(tmp_path)}, tmp_path, 1,
                       workers=[writer])
    assert live.settings.database_url == settings.database_url
    try:
        assert writer.stdout is not None and writer.stdout.readline() == b"ready\n"
        for _ in range(25):  # held mid-write about half the time, were it held anywhere
            with held_still(live), closing(sqlite3.connect(path, isolation_level=None, timeout=0)) as connection:
                connection.execute("BEGIN IMMEDIATE")  # raises "database is locked" if held with the lock
                connection.execute("ROLLBACK")
    finally:
        writer.kill()
        writer.wait()
