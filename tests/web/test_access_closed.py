"""Closed once keyed, and no window: the service is open only until a first key is made; a key works, as its
owner, from the moment it is made (by this process or another: ``dealer keys add``), however warm the web
app's caches; revoking every key leaves the service closed, and a revoke takes effect at once."""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

import pytest

from tests.support.inline import InlineDispatcher
from tests.support.paths import JUDGE_DATA
from tests.test_cli_keys import dealer
from worker.config import Settings
from worker.store.database import Database
from worker.store.keys import Keys, Role

HANDS = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()
SEEDED = "ops-0123456789abcdef-secret"


def as_(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def service(db: Database, settings: Settings) -> Any:
    from webui.app import create_app

    return create_app(settings, InlineDispatcher(db, settings), config={"TESTING": True}, db=db).test_client()


def upload(client: Any, token: str | None = None) -> Any:
    return client.post("/api/jobs", data={"file": (io.BytesIO(HANDS), "hands.in"), "game": "mahjong"},
                       content_type="multipart/form-data", headers=as_(token))


def another_process(db: Database) -> Keys:
    """The keys as another process (the command line, another web process) sees them: no cache shared."""
    return Keys(db)


def test_a_key_made_by_another_process_works_as_its_owner_at_once(db: Database, settings: Settings) -> None:
    client = service(db, settings)
    opened = upload(client)
    assert opened.status_code == 201 and opened.get_json()["owner"] is None  # open: no key made yet
    for _ in range(3):  # whatever this process may remember of "no key", warmed
        assert client.get("/api/jobs").status_code == 200
    token = another_process(db).add("alice", Role.USER)
    made = upload(client, token)  # the very next request
    assert made.status_code == 201 and made.get_json()["owner"] == "alice"
    assert client.get(f"/api/jobs/{made.get_json()['id']}", headers=as_(token)).status_code == 200
    assert upload(client).status_code == 401
    assert client.get("/api/jobs").status_code == 401


def test_a_key_made_on_the_command_line_works_at_once(db: Database, settings: Settings) -> None:
    client = service(db, settings)
    assert client.get("/api/jobs").status_code == 200
    added = dealer(settings, "add", "bob")
    assert added.exit_code == 0, added.output
    token = added.stdout.strip()
    made = upload(client, token)
    assert made.status_code == 201 and made.get_json()["owner"] == "bob"
    listed = client.get("/api/jobs", headers=as_(token)).get_json()["items"]
    assert [job["id"] for job in listed] == [made.get_json()["id"]]


@pytest.mark.parametrize("public", [False, True], ids=["private", "public reads"])
def test_revoking_every_key_leaves_the_service_closed(db: Database, settings: Settings, public: bool) -> None:
    client = service(db, replace(settings, public_reads=public))
    token = dealer(settings, "add", "alice", "--role", "admin").stdout.strip()
    job_id = upload(client, token).get_json()["id"]
    assert dealer(settings, "revoke", "alice").exit_code == 0
    assert client.get("/api/jobs", headers=as_(token)).status_code == 401  # at once
    assert upload(client, token).status_code == 401
    refused = upload(client)
    assert refused.status_code == 401 and "needs an API key" in refused.get_json()["error"]
    assert client.post(f"/api/jobs/{job_id}/rerun").status_code == 401
    assert client.get(f"/api/jobs/{job_id}").status_code == (200 if public else 401)
    assert client.get("/login").status_code == 200  # the pages ask for a key, as with keys
    # A fresh process of the service (a restart) finds it closed too.
    assert upload(service(db, settings)).status_code == 401
    # The command line can always make a new key.
    again = dealer(settings, "add", "carol", "--role", "admin").stdout.strip()
    assert upload(client, again).status_code == 201


def test_a_key_of_the_variable_taken_out_leaves_the_service_closed(db: Database, settings: Settings) -> None:
    seeded = service(db, replace(settings, api_keys=f"ops:{SEEDED}"))
    assert upload(seeded, SEEDED).status_code == 201
    restarted = service(db, settings)  # the same database, DEALER_API_KEYS now empty
    assert upload(restarted, SEEDED).status_code == 401  # the variable's key is revoked...
    assert upload(restarted).status_code == 401  # ...and the service stays closed


def test_only_a_key_made_is_remembered(db: Database, settings: Settings) -> None:
    web = another_process(db)
    assert web.any_made() is False
    another_process(db).add("dave", Role.USER)
    assert web.any_made() is True  # "none" was not remembered
    another_process(db).revoke("dave")
    assert web.any_made() is True and another_process(db).any_made() is True
