"""Private unless shared: with keys and the shipped settings (reads private), a user — and a request with no
key — finds nothing of another's: not a job by any route that names one, nor a trace of its activity in a
list, a search, an export, a stream, the service's figures or the workers'. An admin sees it all, and
``DEALER_PUBLIC_READS=true`` shares every read as before."""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from tests.support.events import next_write
from tests.support.inline import InlineDispatcher
from tests.web.test_permissions import ALICE, ANSWERS, BOB, HANDS, KEYS, ROOT
from worker.config import Settings
from worker.jobs import throughput
from worker.states import JobStatus
from worker.store.database import Database
from worker.store.models import Chunk, Job, WorkerRow, case_id, utcnow

#: The names a route of one job, case or check takes, and what each is for alice's job.
ROUTE_ARGUMENTS = ("job_id", "index", "case_id", "check_id")


def as_(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


@dataclass
class Alices:
    """A service with keys, as shipped, where alice has one solved job with a check, solved by worker
    box:1 a moment ago (and bob nothing)."""

    app: Any
    job: dict[str, Any]
    chunks: int

    def get(self, path: str, token: str | None) -> Any:
        return self.app.test_client().get(path, headers=as_(token))


def alices(db: Database, settings: Settings, **more: Any) -> Alices:
    from webui.app import create_app

    settings = replace(settings, api_keys=KEYS, **more)
    app = create_app(settings, InlineDispatcher(db, settings), config={"TESTING": True}, db=db)
    form = {"file": (io.BytesIO(HANDS), "hands.in"), "game": "mahjong", "expected": (io.BytesIO(ANSWERS), "h.out")}
    made = app.test_client().post("/api/jobs", data=form, content_type="multipart/form-data", headers=as_(ALICE))
    assert made.status_code == 201, made.get_json()
    job = app.test_client().get(f"/api/jobs/{made.get_json()['id']}", headers=as_(ALICE)).get_json()
    assert job["status"] == "succeeded" and job["checks"]
    now = utcnow()
    with db.session() as session:
        chunks = session.scalars(select(Chunk).where(Chunk.job_id == job["id"])).all()
        for chunk in chunks:
            chunk.worker, chunk.finished_at = "box:1:7", now
        session.add(WorkerRow(name="box:1", concurrency=2, processed=len(chunks), seen_at=now))
    with db.session() as session:
        throughput.record(session, "box:1", now)  # what the worker's heartbeat writes
    return Alices(app, job, len(chunks))


def routes_of_a_job(app: Any) -> list[tuple[str, str]]:
    """Every GET route that names a job, a case or a check, filled in for alice's job."""
    found = []
    for rule in app.url_map.iter_rules():
        if "GET" in rule.methods and rule.arguments and rule.arguments <= set(ROUTE_ARGUMENTS):
            found.append((rule.endpoint, rule.rule))
    assert {"api.get_job", "api.job_output", "api.job_input", "results.get_case", "live.job_events",
            "check_api.job_checks", "check_api.get_check", "pages.job", "pages.case"} <= {e for e, _ in found}
    return found


def filled(rule: str, job: dict[str, Any]) -> str:
    values = {"job_id": job["id"], "index": 1, "case_id": case_id(job["id"], 1), "check_id": job["checks"][0]}
    return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(values[m.group(1)]), rule)


def test_anothers_job_is_not_found_by_any_route_that_names_it(db: Database, settings: Settings) -> None:
    world = alices(db, settings)
    for endpoint, rule in routes_of_a_job(world.app):
        path = filled(rule, world.job)
        mine = world.get(path, ALICE)
        assert mine.status_code == 200, f"alice {endpoint} {path}: {mine.status_code}"
        mine.close()  # a live stream ends with its reader
        assert world.get(path, BOB).status_code == 404, f"bob {endpoint} {path}"
        nobody = world.get(path, None)
        assert nobody.status_code in (401, 302), f"no key {endpoint} {path}: {nobody.status_code}"
        assert nobody.status_code == 401 or nobody.headers["Location"].startswith("/login?next=")
    exported = world.get(f"/api/results/export?job_id={world.job['id']}", BOB)
    assert exported.status_code == 404


def test_lists_searches_and_exports_show_none_of_anothers_jobs(db: Database, settings: Settings) -> None:
    world = alices(db, settings)
    job_id = world.job["id"]
    assert world.get("/api/jobs", BOB).get_json()["total"] == 0
    assert world.get("/api/jobs?owner=alice", BOB).get_json()["items"] == []
    assert world.get("/api/results?game=mahjong", BOB).get_json()["total"] == 0
    assert world.get("/api/results/export", BOB).get_data() == b""
    assert f'data-job="{job_id}"' not in world.get("/", BOB).get_data(as_text=True)
    assert "hands.in" not in world.get("/history?game=mahjong", BOB).get_data(as_text=True)
    # Alice's dashboard watched at the same time: the streams share a reading per viewer, never across.
    streams = [world.get("/events/dashboard", token) for token in (ALICE, BOB)]
    pages = []
    for stream in streams:
        chunks = iter(stream.response)
        assert next(chunks).startswith(b"retry: ")
        written = next_write(chunks).decode()  # the overview and the page of jobs, in one write
        pages.append([json.loads(block.split("data: ", 1)[1]) for block in written.split("\n\n")[:2]])
        stream.close()
    (_, alices_page), (overview, jobs) = pages
    assert [job["id"] for job in alices_page["items"]] == [job_id]
    assert sum(overview["jobs_by_status"].values()) == 0 and jobs["items"] == []
    # Alice and the admin find it.
    assert world.get("/api/jobs", ALICE).get_json()["total"] == 1
    assert world.get("/api/jobs", ROOT).get_json()["total"] == 1
    assert len(world.get(f"/api/results/export?job_id={job_id}", ALICE).get_data().splitlines()) == world.job["total"]


def test_the_service_and_the_workers_show_a_user_its_own_activity_alone(db: Database, settings: Settings) -> None:
    world = alices(db, settings)
    total = world.job["total"]
    bobs = world.get("/api/workers", BOB).get_json()
    (box,) = bobs["workers"]
    assert box["name"] == "box:1" and box["alive"]  # the machinery is no one's activity
    assert (box["solved_last_minute"], box["throughput"]["cases"], box["processed"], box["busy"]) == (0, 0, 0, [])
    assert (bobs["solved_last_minute"], bobs["total"]["cases"]) == (0, 0)
    (alices_box,) = world.get("/api/workers", ALICE).get_json()["workers"]
    assert alices_box["solved_last_minute"] == alices_box["throughput"]["cases"] == total
    assert alices_box["processed"] == world.chunks
    everyone = world.get("/api/workers", ROOT).get_json()
    assert everyone["solved_last_minute"] == everyone["total"]["cases"] == total
    overview = world.get("/api/overview", BOB).get_json()
    assert sum(overview["jobs_by_status"].values()) == 0 and overview["queued_cases"] == 0
    assert [w["processed"] for w in overview["workers"]] == [0]
    assert overview["queue_depth"] is None and overview["broker_up"] is True  # the queue is everyone's
    assert world.get("/api/overview", ALICE).get_json()["jobs_by_status"]["succeeded"] == 1
    assert world.get("/api/overview", ROOT).get_json()["queue_depth"] == 0
    page = world.get("/workers", BOB).get_data(as_text=True)
    assert re.findall(r'data-[wf]="minute">([^<]*)<', page) == ["0", "0"]
    assert re.findall(r'data-[wf]="minute">([^<]*)<', world.get("/workers", ALICE).get_data(as_text=True)) == [
        str(total), str(total)]
    for path in ("/api/workers", "/api/overview", "/metrics"):
        assert world.get(path, None).status_code == 401, path


def test_public_reads_share_every_read_but_no_write(db: Database, settings: Settings) -> None:
    world = alices(db, settings, public_reads=True)
    for endpoint, rule in routes_of_a_job(world.app):
        path = filled(rule, world.job)
        for token in (BOB, None):
            response = world.get(path, token)
            assert response.status_code == 200, f"{token} {endpoint} {path}: {response.status_code}"
            response.close()
    assert world.get("/api/workers", None).get_json()["solved_last_minute"] == world.job["total"]
    assert world.app.test_client().post(f"/api/jobs/{world.job['id']}/rerun", headers=as_(BOB)).status_code == 403


@pytest.mark.parametrize("raw, public", [("true", True), ("1", True), ("false", False), ("0", False)])
def test_a_deployment_that_set_public_reads_keeps_its_choice(raw: str, public: bool) -> None:
    assert Settings.from_env({"DEALER_PUBLIC_READS": raw}).public_reads is public


@pytest.mark.parametrize("public", [False, True], ids=["private", "public reads"])
def test_healthz_names_no_stuck_job_where_reads_are_private(db: Database, settings: Settings, public: bool) -> None:
    world = alices(db, settings, public_reads=public)
    then = utcnow() - timedelta(hours=1)  # far past the stall periods that make a job stuck
    with db.session() as session:
        session.execute(update(Job).where(Job.id == world.job["id"]).values(
            status=JobStatus.SPLITTING, created_at=then, progress_at=then, lease_until=None))
    body = world.get("/healthz", None).get_json()
    assert body["status"] == "degraded"  # the load balancer's operator still learns that something is stuck
    assert [job["filename"] for job in body["stuck_jobs"]] == (["hands.in"] if public else [])
    assert [job["id"] for job in world.get("/api/overview", ROOT).get_json()["stuck_jobs"]] == [world.job["id"]]
