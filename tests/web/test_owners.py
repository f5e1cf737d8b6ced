"""Owners beyond the permission table: what every count shows a user, the result cache kept to its
owner, the owner in the answers, the admin's filter by owner, the keys page, and open mode as before."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from typing import Any

from tests.support.inline import InlineDispatcher
from tests.web.test_access import csrf_of
from tests.web.test_ops import parse_metrics
from tests.web.test_permissions import ALICE, BOB, HANDS, KEYS, ROOT
from worker.config import Settings
from worker.store.database import Database


def keyed(db: Database, settings: Settings, immediate: bool = True, **more: Any) -> Any:
    from webui.app import create_app

    settings = replace(settings, api_keys=KEYS, public_reads=False, **more)
    return create_app(settings, InlineDispatcher(db, settings, immediate=immediate), config={"TESTING": True}, db=db)


def as_(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def upload(client: Any, token: str, data: bytes = HANDS) -> dict[str, Any]:
    response = client.post("/api/jobs", data={"file": (io.BytesIO(data), "hands.in"), "game": "mahjong"},
                           content_type="multipart/form-data", headers=as_(token))
    assert response.status_code == 201, response.get_json()
    job: dict[str, Any] = response.get_json()
    return job


def test_every_count_shows_a_user_only_its_own_jobs(db: Database, settings: Settings) -> None:
    client = keyed(db, settings).test_client()
    for token in (ALICE, ALICE, BOB):
        upload(client, token)
    overview = client.get("/api/overview", headers=as_(ALICE)).get_json()
    assert overview["jobs_by_status"]["succeeded"] == 2 and overview["queue_depth"] is None
    assert client.get("/api/overview", headers=as_(ROOT)).get_json()["jobs_by_status"]["succeeded"] == 3
    assert client.get("/api/overview", headers=as_(ROOT)).get_json()["queue_depth"] == 0
    mine = parse_metrics(client.get("/metrics", headers=as_(BOB)).get_data(as_text=True))
    everyone = parse_metrics(client.get("/metrics", headers=as_(ROOT)).get_data(as_text=True))
    assert mine['dealer_jobs{status="succeeded"}'] == 1 and everyone['dealer_jobs{status="succeeded"}'] == 3
    assert mine["dealer_broker_up"] == 1 and "dealer_queue_depth" not in mine
    solved = 'dealer_cases_solved{game="mahjong",outcome="ready"}'
    assert everyone[solved] == 3 * mine[solved] > 0
    assert client.get("/api/results?game=mahjong", headers=as_(BOB)).get_json()["total"] == mine[
        solved] + mine['dealer_cases_solved{game="mahjong",outcome="not-ready"}']


def test_a_file_solved_before_is_copied_only_from_its_owners_jobs(db: Database, settings: Settings) -> None:
    client = keyed(db, settings, result_cache=True).test_client()
    first = upload(client, ALICE)
    assert first["cache_hits"] == 0
    bobs = client.get(f"/api/jobs/{upload(client, BOB)['id']}", headers=as_(BOB)).get_json()
    assert bobs["status"] == "succeeded" and bobs["cache_hits"] == 0  # solved anew: nothing of alice's said
    again = client.get(f"/api/jobs/{upload(client, ALICE)['id']}", headers=as_(ALICE)).get_json()
    assert again["cache_hits"] == again["total"] > 0


def test_answers_name_the_owner_and_an_admin_filters_by_it(db: Database, settings: Settings) -> None:
    client = keyed(db, settings).test_client()
    alices, bobs = upload(client, ALICE), upload(client, BOB)
    assert (alices["owner"], bobs["owner"]) == ("alice", "bob")
    listed = client.get("/api/jobs?owner=bob", headers=as_(ROOT)).get_json()["items"]
    assert [job["id"] for job in listed] == [bobs["id"]]
    assert client.get("/api/jobs?owner=bob", headers=as_(ALICE)).get_json()["items"] == []
    assert client.get(f"/api/jobs?owner={'x' * 65}", headers=as_(ROOT)).status_code == 400
    dashboard = client.get("/", headers=as_(ROOT)).get_data(as_text=True)
    assert 'id="jf-owner"' in dashboard and re.search(r'data-f="owner"[^>]*>alice<', dashboard)
    assert 'id="jf-owner"' not in client.get("/", headers=as_(ALICE)).get_data(as_text=True)


def test_open_mode_keeps_todays_behaviour(client: Any) -> None:
    job = upload(client, "no-key-is-asked-for")  # a bearer token is not even looked at without keys
    assert job["owner"] is None
    assert client.post(f"/api/jobs/{job['id']}/rerun").status_code == 201
    assert client.get("/api/jobs").get_json()["total"] == 2
    assert client.get("/api/overview").get_json()["queue_depth"] == 0
    assert 'data-f="owner"' not in client.get("/").get_data(as_text=True)


def login(client: Any, token: str) -> str:
    csrf = csrf_of(client.get("/login").get_data(as_text=True))
    assert client.post("/login", data={"key": token, "csrf_token": csrf}).status_code == 303
    return csrf_of(client.get("/").get_data(as_text=True))


def test_an_admin_makes_and_revokes_keys_on_the_keys_page(db: Database, settings: Settings) -> None:
    app = keyed(db, settings)
    admin = app.test_client()
    csrf = login(admin, ROOT)
    page = admin.get("/keys").get_data(as_text=True)
    assert all(f'data-key="{name}"' in page for name in ("root", "alice", "bob"))
    assert admin.post("/keys", data={"name": "carol", "role": "user"}).status_code == 403  # no CSRF token
    made = admin.post("/keys", data={"name": "carol", "role": "user", "csrf_token": csrf})
    assert made.status_code == 201
    token = re.search(r'<code id="key-token">([^<]+)</code>', made.get_data(as_text=True)).group(1)
    assert token not in admin.get("/keys").get_data(as_text=True)  # shown once
    assert app.test_client().get("/api/jobs", headers=as_(token)).status_code == 200
    twice = admin.post("/keys", data={"name": "carol", "role": "user", "csrf_token": csrf})
    assert twice.status_code == 400 and "There is a key named" in twice.get_data(as_text=True)
    student = app.test_client()
    student_csrf = login(student, token)
    assert student.get("/keys").status_code == 403
    assert student.post("/keys", data={"name": "eve", "role": "admin", "csrf_token": student_csrf}).status_code == 403
    assert admin.post("/keys/carol/revoke", data={"csrf_token": csrf}).status_code == 200
    assert app.test_client().get("/api/jobs", headers=as_(token)).status_code == 401
    assert student.get("/upload").status_code == 302  # its session ended with it
    assert admin.post("/keys/root/revoke", data={"csrf_token": csrf}).status_code == 409  # not one's own
    assert app.test_client().get("/keys").status_code == 302  # to the login


def test_the_live_figures_of_anothers_job_are_not_found(db: Database, settings: Settings) -> None:
    client = keyed(db, settings).test_client()
    bobs = upload(client, BOB)
    assert client.get(f"/events/jobs/{bobs['id']}", headers=as_(ALICE)).status_code == 404
    assert client.get(f"/events/jobs/{bobs['id'] + 1000}", headers=as_(ALICE)).status_code == 404
    # Bob watching it (its owner known to the web process without asking the database) changes nothing.
    watching = client.get(f"/events/jobs/{bobs['id']}", headers=as_(BOB), buffered=False)
    chunks = iter(watching.response)
    assert next(chunks).startswith(b"retry: ") and next(chunks).startswith(b"event: job")
    try:
        assert client.get(f"/events/jobs/{bobs['id']}", headers=as_(ALICE)).status_code == 404
    finally:
        watching.close()
