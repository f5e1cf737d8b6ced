"""The corpus of layout faults (``tests/data/layout-faults/``) through a live service of each mode, its work
done by Celery workers (embedded: SQLite and a file broker; production: PostgreSQL and Redis): each job's
faults, kept cases and partial output are what the file's mutation says, and byte for byte what ``dealer
solve`` and the engine's reader make of the same file (``tests/badinput/test_layout_faults.py`` holds the
inline mode and the readers to the same). Every file is sent at once, on the session's shared service."""

from __future__ import annotations

import urllib.request

import pytest

from tests.support.layout_corpus import Entry, digest, entries
from tests.support.readings import agree, by_command_line, by_service
from worker.testing.live import LiveService

ENTRIES = entries()


@pytest.fixture(scope="module")
def jobs(shared_live: LiveService) -> dict[str, int]:
    """Each corpus file sent to the service, its job finished: the job's id by the file's name. No more are
    under way at once than half what the shipped limit lets one client have (the other half left to what
    another module's tests may have left running)."""
    limit = shared_live.settings.max_active_jobs_per_client // 2
    sent: dict[str, int] = {}
    for k, entry in enumerate(ENTRIES):
        if k >= limit:
            shared_live.wait(sent[ENTRIES[k - limit].name])
        sent[entry.name] = shared_live.submit(entry.path, entry.game)["id"]
    for job_id in sent.values():
        shared_live.wait(job_id)
    return sent


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry.name for entry in ENTRIES])
def test_the_celery_service_and_dealer_solve_agree_on_each_file(shared_live: LiveService, jobs: dict[str, int],
                                                                 entry: Entry) -> None:
    def get(path: str) -> bytes:
        with urllib.request.urlopen(shared_live.url + path, timeout=30) as response:
            return bytes(response.read())

    service = by_service(get, jobs[entry.name])
    agree(entry.game, entry.path.read_bytes(), by_command_line(entry.game, entry.path), service)
    service.holds_to(entry.expected, entry.cases, digest)
