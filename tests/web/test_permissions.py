"""Who may do what to whose jobs: every row of the guide's permission table (docs/security.md), from one table.

Each row is a viewer (an admin key, a user key, no key; with reads private or public) and whose
job it acts on (its own or another's); each is tried on every action of the API and the pages.
What a viewer may not see is not found (404), never forbidden, so that an id says nothing of
another's jobs; only where reads are public is another's job there to read but not to change (403).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, replace
from typing import Any

import pytest

from tests.support.inline import InlineDispatcher
from tests.support.paths import JUDGE_DATA
from tests.web.test_access import csrf_of
from worker.config import Settings
from worker.store.database import Database
from worker.store.models import case_id

ROOT, ALICE, BOB = "root-0123456789abcdef-key", "alice-0123456789abcdef-key", "bob-0123456789abcdef-key"
KEYS = f"root:{ROOT},alice:{ALICE}:user,bob:{BOB}:user"
TOKENS = {"root": ROOT, "alice": ALICE, "bob": BOB}
HANDS = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()
ANSWERS = (JUDGE_DATA / "mahjong" / "sample.out").read_bytes()

#: The guide's table: who (its key's role, or none; reads public or not), whose job, and what it may do
#: to it: read (see it, its results, cases, output, checks; find it in lists, searches and exports) and
#: write (check an output against it, rerun, cancel, delete). ok: allowed (listed); 404: not found (not
#: listed); 403: seen but not changed; 401: a key is needed (the pages send to the login).
PERMISSIONS = [
    # who                      whose      read   write
    ("admin",                  "own",     "ok",  "ok"),
    ("admin",                  "other's", "ok",  "ok"),
    ("user",                   "own",     "ok",  "ok"),
    ("user",                   "other's", "404", "404"),
    ("user, public reads",     "own",     "ok",  "ok"),
    ("user, public reads",     "other's", "ok",  "403"),
    ("no key",                 "other's", "401", "401"),
    ("no key, public reads",   "other's", "ok",  "401"),
]


@dataclass(frozen=True)
class Action:
    name: str
    method: str
    path: str
    #: The status when allowed (a list: 200, and the job is in it).
    ok: int = 200
    write: bool = False
    page: bool = False
    listed: bool = False
    #: A form's file (the output to check).
    output: bool = False


ACTIONS = [
    Action("list jobs", "GET", "/api/jobs?per_page=100", listed=True),
    Action("list jobs by owner", "GET", "/api/jobs?owner={owner}", listed=True),
    Action("read a job", "GET", "/api/jobs/{job}"),
    Action("its results", "GET", "/api/jobs/{job}/cases"),
    Action("one case", "GET", "/api/cases/{case}"),
    Action("one case by number", "GET", "/api/jobs/{job}/cases/1"),
    Action("its judge output", "GET", "/api/jobs/{job}/output"),
    Action("its input", "GET", "/api/jobs/{job}/input"),
    Action("its timings", "GET", "/api/jobs/{job}/timings"),
    Action("its distribution", "GET", "/api/jobs/{job}/distribution"),
    Action("its throughput", "GET", "/api/jobs/{job}/throughput"),
    Action("search the history", "GET", "/api/results?game=mahjong&per_page=100", listed=True),
    Action("search its results", "GET", "/api/results?job_id={job}"),
    Action("export its results", "GET", "/api/results/export?job_id={job}"),
    Action("export the history", "GET", "/api/results/export", listed=True),
    Action("its checks", "GET", "/api/jobs/{job}/checks"),
    Action("a check", "GET", "/api/checks/{check}"),
    Action("a check's cases", "GET", "/api/checks/{check}/cases"),
    Action("its standings", "GET", "/api/jobs/{job}/standings"),
    Action("the dashboard", "GET", "/", page=True, listed=True),
    Action("the job page", "GET", "/jobs/{job}", page=True),
    Action("the case page", "GET", "/cases/{case}", page=True),
    Action("the check page", "GET", "/checks/{check}", page=True),
    Action("check an output", "POST", "/api/jobs/{job}/checks", ok=201, write=True, output=True),
    Action("check an output (page)", "POST", "/jobs/{job}/checks", ok=303, write=True, page=True, output=True),
    Action("rerun", "POST", "/api/jobs/{job}/rerun", ok=201, write=True),
    Action("cancel", "POST", "/api/jobs/{queued}/cancel", write=True),
    Action("delete", "DELETE", "/api/jobs/{job}", ok=204, write=True),
]


def upload(client: Any, token: str, expected: bool) -> dict[str, Any]:
    form: dict[str, Any] = {"file": (io.BytesIO(HANDS), "hands.in"), "game": "mahjong"}
    if expected:
        form["expected"] = (io.BytesIO(ANSWERS), "hands.out")
    response = client.post("/api/jobs", data=form, content_type="multipart/form-data",
                           headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 201, response.get_json()
    job: dict[str, Any] = response.get_json()
    return job


@dataclass
class World:
    """Each key's solved job (with a check) and its queued job, made through the API."""

    app: Any
    jobs: dict[str, dict[str, Any]]
    queued: dict[str, int]


def world(db: Database, settings: Settings, public: bool) -> World:
    from webui.app import create_app

    settings = replace(settings, api_keys=KEYS, public_reads=public)
    dispatcher = InlineDispatcher(db, settings, immediate=False)
    app = create_app(settings, dispatcher, config={"TESTING": True}, db=db)
    client = app.test_client()
    made = {name: upload(client, token, expected=True)["id"] for name, token in TOKENS.items()}
    dispatcher.drain()
    jobs = {name: client.get(f"/api/jobs/{ident}", headers={"Authorization": f"Bearer {ROOT}"}).get_json()
            for name, ident in made.items()}
    assert all(job["status"] == "succeeded" and job["checks"] for job in jobs.values())
    queued = {name: upload(client, token, expected=False)["id"] for name, token in TOKENS.items()}
    return World(app, jobs, queued)


def viewer_of(who: str) -> str | None:
    """The key a row's viewer uses."""
    return "root" if who == "admin" else "alice" if who.startswith("user") else None


def target_of(who: str, whose: str) -> str:
    """Whose job a row acts on."""
    me = viewer_of(who)
    if whose == "own":
        assert me is not None
        return me
    return {"root": "alice", "alice": "bob", None: "alice"}[me]


def request(world: World, who: str, action: Action, owner: str) -> Any:
    client = world.app.test_client()
    name = viewer_of(who)
    headers: dict[str, str] = {}
    data: dict[str, Any] | None = None
    if name is not None and action.page:  # the pages as a person uses them: logged in, the form's token
        csrf = csrf_of(client.get("/login").get_data(as_text=True))
        assert client.post("/login", data={"key": TOKENS[name], "csrf_token": csrf}).status_code == 303
        csrf = csrf_of(client.get("/").get_data(as_text=True))
        data = {"csrf_token": csrf}
    elif name is not None:
        headers["Authorization"] = f"Bearer {TOKENS[name]}"
    if action.output:
        data = {**(data or {}), "file": (io.BytesIO(ANSWERS), "hands.out")}
    job = world.jobs[owner]
    path = action.path.format(job=job["id"], case=case_id(job["id"], 1), check=job["checks"][0],
                              queued=world.queued[owner], owner=owner)
    return client.open(path, method=action.method, headers=headers, data=data,
                       content_type="multipart/form-data" if data else None)


def listed(response: Any, job_id: int, page: bool) -> bool:
    body = response.get_data(as_text=True)
    if page:
        return f'data-job="{job_id}"' in body
    if response.mimetype == "application/x-ndjson":
        return any(json.loads(line)["job_id"] == job_id for line in body.splitlines())
    return any(item.get("job_id", item.get("id")) == job_id for item in response.get_json()["items"])


@pytest.mark.slow
@pytest.mark.parametrize("who, whose, read, write", PERMISSIONS, ids=[f"{w} on {o}" for w, o, _, _ in PERMISSIONS])
def test_every_action_on_a_job_is_allowed_or_refused_as_the_table_says(db: Database, settings: Settings, who: str, whose: str,
                                                                       read: str, write: str) -> None:
    made = world(db, settings, public="public reads" in who)
    owner = target_of(who, whose)
    job_id = made.jobs[owner]["id"]
    for action in ACTIONS:
        expected = write if action.write else read
        response = request(made, who, action, owner)
        what = f"{who} → {action.name} of {owner}'s job: {response.status_code} {response.get_data(as_text=True)[:200]}"
        if expected == "401":
            assert response.status_code == (302 if action.page and not action.write else 401), what
        elif action.listed:
            assert response.status_code == 200, what
            assert listed(response, job_id, action.page) == (expected == "ok"), what
        elif expected == "ok":
            assert response.status_code == action.ok, what
        else:
            assert response.status_code == int(expected), what
        if action.name == "the job page" and expected == "ok":
            assert f"by {owner}" in response.get_data(as_text=True), what  # the pages show whose it is
    if write == "ok":
        assert made.app.test_client().get(f"/api/jobs/{job_id}", headers={"Authorization": f"Bearer {ROOT}"}
                                          ).status_code == 404  # deleted
    else:
        assert made.app.test_client().get(f"/api/jobs/{job_id}", headers={"Authorization": f"Bearer {ROOT}"}
                                          ).get_json()["status"] == "succeeded"
        queued = made.app.test_client().get(f"/api/jobs/{made.queued[owner]}",
                                            headers={"Authorization": f"Bearer {ROOT}"}).get_json()
        assert queued["status"] == "queued"
