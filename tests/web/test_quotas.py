"""Per-owner quotas: bytes kept and jobs kept, per role, refused uploads included; clear 413/429 answers
in the API and the pages; admins unlimited unless named; open mode without quotas; retention per role."""

from __future__ import annotations

import io
import threading
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import func, select, text

from tests.support.inline import InlineDispatcher
from worker.testing.waiting import until
from tests.web.test_access import csrf_of, login
from tests.web.test_owners import as_, keyed, upload
from tests.web.test_permissions import ALICE, BOB, HANDS, KEYS, ROOT
from tests.web.test_refused_early import CountingBody, prose, random_bytes
from worker import work
from worker.config import PerRole, Settings
from worker.store.database import Database
from worker.store.models import Job, RefusedBytes, UploadBlock, utcnow
from worker.store.uploads import BLOCK_BYTES, count_refused

MiB = 1 << 20


def limits(**values: str) -> dict[str, PerRole]:
    return {name: PerRole.parse(name.upper(), value) for name, value in values.items()}


def test_jobs_kept_are_limited_per_owner_with_a_429_naming_the_limit(db: Database, settings: Settings) -> None:
    client = keyed(db, settings, **limits(quota_jobs="user=2")).test_client()
    first = upload(client, ALICE)
    upload(client, ALICE)
    response = client.post("/api/jobs", data={"file": (io.BytesIO(HANDS), "hands.in"), "game": "mahjong"},
                           content_type="multipart/form-data", headers=as_(ALICE))
    assert response.status_code == 429
    assert response.get_json()["error"].startswith("you keep 2 jobs, and a user may keep 2 (DEALER_QUOTA_JOBS)")
    assert client.post(f"/api/jobs/{first['id']}/rerun", headers=as_(ALICE)).status_code == 429
    upload(client, BOB)  # each owner its own count
    for _ in range(3):
        upload(client, ROOT)  # an admin has no limit unless its role is named
    assert client.delete(f"/api/jobs/{first['id']}", headers=as_(ALICE)).status_code == 204
    upload(client, ALICE)  # a deleted job no longer counts, before the purge even ran


def test_bytes_kept_are_limited_with_a_413_before_the_file_is_read(db: Database, settings: Settings) -> None:
    client = keyed(db, settings, **limits(quota_bytes=f"user={2 * len(HANDS)}")).test_client()
    upload(client, ALICE)
    upload(client, ALICE)
    body = CountingBody("file", 8 * MiB, prose)
    response = client.post("/api/jobs", input_stream=body, content_length=body.length,
                           content_type="multipart/form-data; boundary=dealer-test-boundary", headers=as_(ALICE))
    assert response.status_code == 413
    message = response.get_json()["error"]
    assert message.startswith("you keep ") and "a user may keep" in message and "(DEALER_QUOTA_BYTES)" in message
    assert body.read_bytes == 0, "refused before the body is read"
    upload(client, BOB)


@pytest.mark.slow
def test_an_upload_over_the_quota_is_refused_while_it_arrives_nothing_kept(db: Database, settings: Settings) -> None:
    # The chunks sized as shipped (from the upload): at the tests' seven cases a chunk, the 3 MiB split
    # while the file arrives made some 10,000 chunks, which cost a minute and tested nothing of the quota.
    client = keyed(db, settings, chunk_size=0, **limits(quota_bytes="user=3M")).test_client()
    sample = HANDS.splitlines(keepends=True)[0]
    data = sample * ((6 * MiB) // len(sample))
    response = client.post("/api/jobs", data={"file": (io.BytesIO(data), "big.in"), "game": "mahjong"},
                           content_type="multipart/form-data", headers=as_(ALICE))
    assert response.status_code == 413, response.get_json()
    assert "a user may keep 3 MiB (DEALER_QUOTA_BYTES)" in response.get_json()["error"]
    work.purge(db, settings)
    with db.session(write=False) as session:
        assert session.scalar(select(func.count()).select_from(UploadBlock)) == 0
        assert session.scalar(select(func.count()).select_from(Job)) == 0


def test_refused_uploads_count_against_the_quota_for_an_hour(db: Database, settings: Settings) -> None:
    client = keyed(db, settings, **limits(quota_bytes="user=3M")).test_client()
    answers = []
    for _ in range(4):  # a file of random bytes, refused from its first MiB each time
        body = CountingBody("file", 64 * MiB, random_bytes)
        response = client.post("/api/jobs", input_stream=body, content_length=body.length,
                               content_type="multipart/form-data; boundary=dealer-test-boundary",
                               headers=as_(ALICE))
        answers.append((response.status_code, body.read_bytes))
    assert [status for status, _ in answers] == [400, 400, 400, 413]
    assert all(read < 2 * BLOCK_BYTES for _, read in answers)
    message = client.post("/api/jobs", data={"file": (io.BytesIO(HANDS), "hands.in")},
                          content_type="multipart/form-data", headers=as_(ALICE)).get_json()["error"]
    assert "of them refused in the last hour" in message, message
    with db.session() as session:  # an hour later they no longer count
        for row in session.scalars(select(RefusedBytes)):
            row.hour -= timedelta(hours=2)
    upload(client, ALICE)


def test_refusals_of_one_owner_racing_in_a_new_hour_are_all_counted(db: Database, settings: Settings) -> None:
    failures: list[BaseException] = []

    def refuse() -> None:
        try:
            with db.session() as session:
                count_refused(session, "alice", 1000)
        except BaseException as error:  # noqa: BLE001 - the test says which
            failures.append(error)

    others = [threading.Thread(target=refuse) for _ in range(4)]
    with db.session() as first:
        count_refused(first, "alice", 1000)
        first.flush()  # the hour's row written, not yet committed: the others find none
        for thread in others:
            thread.start()
        if db.dialect == "postgresql":  # each waits on the first's row (SQLite: on the first's transaction)
            until(lambda: _waiting_on_locks(db), lambda count: count == len(others),
                  what="the other refusals waiting on the first's row")
    for thread in others:
        thread.join()
    assert failures == []
    with db.session(write=False) as session:
        assert session.execute(select(RefusedBytes.owner, RefusedBytes.bytes)).all() == [("alice", 5000)]


def _waiting_on_locks(db: Database) -> int:
    with db.session(write=False) as session:
        return session.scalar(text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                   "AND wait_event_type = 'Lock'")) or 0


def test_the_upload_page_shows_the_quota(db: Database, settings: Settings) -> None:
    client = keyed(db, settings, **limits(quota_jobs="user=1")).test_client()
    upload(client, ALICE)
    assert login(client, ALICE).status_code == 303
    token = csrf_of(client.get("/upload").get_data(as_text=True))
    response = client.post("/upload", data={"file": (io.BytesIO(HANDS), "hands.in"), "csrf_token": token},
                           content_type="multipart/form-data")
    assert response.status_code == 429 and response.mimetype == "text/html"
    assert "you keep 1 jobs, and a user may keep 1 (DEALER_QUOTA_JOBS)" in response.get_data(as_text=True)


def test_open_mode_has_no_quota(db: Database, settings: Settings) -> None:
    from webui.app import create_app

    settings = replace(settings, **limits(quota_jobs="1", quota_bytes="1"))
    client = create_app(settings, InlineDispatcher(db, settings), config={"TESTING": True}, db=db).test_client()
    for _ in range(2):
        response = client.post("/api/jobs", data={"file": (io.BytesIO(HANDS), "hands.in")},
                               content_type="multipart/form-data")
        assert response.status_code == 201


def test_keep_days_per_role(db: Database, settings: Settings) -> None:
    settings = replace(settings, api_keys=KEYS, **limits(keep_days="user=30,admin=365"))
    client = keyed(db, settings).test_client()
    alices, roots = upload(client, ALICE), upload(client, ROOT)
    with db.session() as session:
        for job_id in (alices["id"], roots["id"]):
            session.get(Job, job_id).finished_at = utcnow() - timedelta(days=40)
    dispatcher = InlineDispatcher(db, settings)
    assert work.sweep(db, settings, dispatcher)["expired_jobs"] == 1
    assert client.get(f"/api/jobs/{alices['id']}", headers=as_(ROOT)).status_code == 404
    assert client.get(f"/api/jobs/{roots['id']}", headers=as_(ROOT)).status_code == 200
