"""What the pages watch: the workers and their throughput, a job's own throughput, the dashboard's
filters, and the live event streams (with their limit)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from webui import live
from worker.config import Settings
from worker.jobs import throughput
from worker.jobs.queries import JobQueries
from worker.states import ChunkStatus, JobStatus
from worker.store.database import Database
from worker.store.models import Chunk, Job, ThroughputRow, WorkerRow, utcnow

HAND = b"1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T\n0\n"


def _events(response: Any) -> list[tuple[str, str]]:
    """(event, data) pairs of a whole event stream (closed once read, as a server closes it)."""
    text = b"".join(response.response).decode()
    response.close()
    found = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
        if "event" in fields:
            found.append((fields["event"], fields["data"]))
    return found


def test_a_heartbeat_records_its_processes_chunks_per_interval(settings: Settings, submit: Any,
                                                               queries: JobQueries) -> None:
    job = submit("10-20-30/sample", "10-20-30")
    db = Database.of(settings)
    now = utcnow()
    with db.session() as session:
        chunks = session.scalars(select(Chunk).where(Chunk.job_id == job["id"]).order_by(Chunk.seq)).all()
        for k, chunk in enumerate(chunks):
            # Two processes of worker box:1, and one of box:10 (whose name starts like box:1's).
            chunk.worker = "box:10:7" if k == 0 else f"box:1:{2 + k % 2}"
            chunk.finished_at = now - timedelta(seconds=k)
        session.add_all([WorkerRow(name="box:1", concurrency=2, seen_at=now), WorkerRow(name="box:10", seen_at=now)])
        session.add(ThroughputRow(worker="box:1", at=throughput.interval_start(now - timedelta(hours=2)), cases=5))
    with db.session() as session:
        throughput.record(session, "box:1", now)
        throughput.record(session, "box:1", now)  # counted again, not added again
        throughput.record(session, "box:10", now)
        throughput.prune(session, now)
    mine = sum(c.count for c in chunks[1:])
    view = queries.workers()
    by_name = {w.name: w for w in view.workers}
    assert set(by_name) == {"box:1", "box:10"}
    assert by_name["box:1"].solved_last_minute == mine and by_name["box:1"].throughput.cases == mine
    assert by_name["box:10"].solved_last_minute == chunks[0].count
    assert view.solved_last_minute == job["total"] and view.total.cases == job["total"]
    assert by_name["box:1"].alive and by_name["box:1"].heartbeat_age_seconds >= 0
    points = view.total.points
    assert len(points) >= 360 and all(p.rate >= 0 for p in points)
    assert sum(p.cases for p in points) == job["total"]
    with db.session(write=False) as session:
        assert session.scalar(select(ThroughputRow.at).order_by(ThroughputRow.at).limit(1)) >= now - throughput.KEEP


def test_the_workers_view_shows_the_chunk_each_process_solves_now(settings: Settings, submit: Any,
                                                                  queries: JobQueries) -> None:
    job = submit("mahjong/sample", "mahjong")
    now = utcnow()
    with Database.of(settings).session() as session:
        session.add(WorkerRow(name="box:1", concurrency=2, seen_at=now - timedelta(seconds=3)))
        session.add(WorkerRow(name="gone:5", concurrency=1, seen_at=now - timedelta(minutes=5)))
        chunk = session.scalars(select(Chunk).where(Chunk.job_id == job["id"]).order_by(Chunk.seq)).first()
        chunk.status, chunk.worker, chunk.dispatched_at = ChunkStatus.RUNNING, "box:1:42", now
    view = {w.name: w for w in queries.workers().workers}
    busy = view["box:1"].busy
    assert [(p.pid, p.job_id, p.first_index, p.cases) for p in busy] == [(42, job["id"], chunk.first_index, chunk.count)]
    assert view["box:1"].alive and 2.5 <= view["box:1"].heartbeat_age_seconds < 10
    assert not view["gone:5"].alive and view["gone:5"].busy == []
    assert [w.name for w in queries.workers().workers] == ["box:1", "gone:5"]  # alive first


def test_a_jobs_throughput_covers_its_run(client: Any, submit: Any) -> None:
    job = submit("10-20-30/random-2000", "10-20-30")
    data = client.get(f"/api/jobs/{job['id']}/throughput").get_json()
    assert data["cases"] == 2000 and sum(p["cases"] for p in data["points"]) == 2000
    assert data["interval_seconds"] >= 1 and 1 <= len(data["points"]) <= 121
    assert client.get("/api/jobs/999999/throughput").status_code == 404
    assert client.get("/api/workers").get_json()["workers"] == []  # no heartbeat in these tests


def test_jobs_are_filtered_by_file_name_status_and_game(client: Any, submit: Any) -> None:
    submit(HAND, "mahjong", name="a_b.in")
    submit(HAND, "mahjong", name="AXB.in")
    submit("10-20-30/sample", "10-20-30")

    def names(url: str) -> list[str]:
        return [j["filename"] for j in client.get(url).get_json()["items"]]

    assert names("/api/jobs?filename=a_b") == ["a_b.in"]  # "_" is a character, not a wildcard
    assert names("/api/jobs?filename=axb") == ["AXB.in"]
    assert names("/api/jobs?filename=%25") == []
    assert names("/api/jobs?game=mahjong&status=succeeded") == ["AXB.in", "a_b.in"]
    assert client.get("/api/jobs?filename=" + "x" * 256).status_code == 400
    assert client.get("/api/jobs?filename=a%00b").status_code in (200, 400)  # never a 5xx, whatever the database
    page = client.get("/?filename=a_b&game=mahjong").get_data(as_text=True)
    assert len(re.findall(r'<tr data-job="[1-9]', page)) == 1 and 'value="a_b"' in page
    assert "No job matches these filters" in client.get("/?filename=nothing").get_data(as_text=True)
    assert client.get("/?status=nonsense").status_code == 400


def test_cases_waiting_are_never_below_none_while_a_file_is_read(settings: Settings, submit: Any,
                                                                 queries: JobQueries) -> None:
    job = submit("10-20-30/sample", "10-20-30")
    with Database.of(settings).session() as session:
        row = session.get(Job, job["id"])
        # The split has counted fewer cases read than the solve tasks answered already.
        row.status, row.split_at, row.total, row.done, row.bytes_read = JobStatus.SPLITTING, None, 2, 5, row.size // 2
        row.started_at = row.progress_at = utcnow()
    assert queries.overview(0).queued_cases == 0  # half read: about 4 cases in all, 5 answered already
    view = queries.job(job["id"])
    assert 0 <= view.progress <= 1 and view.eta_seconds is None or view.eta_seconds >= 0


def test_a_finished_jobs_stream_sends_its_figures_and_ends(client: Any, submit: Any) -> None:
    job = submit("mahjong/sample", "mahjong")
    response = client.get(f"/events/jobs/{job['id']}", buffered=False)
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache" and response.headers["X-Accel-Buffering"] == "no"
    events = _events(response)
    assert [name for name, _ in events] == ["job", "timings", "end"]
    assert '"status":"succeeded"' in events[0][1]
    assert client.get("/events/jobs/999999").status_code == 404


def test_the_dashboard_stream_sends_the_overview_and_its_page(client: Any, submit: Any) -> None:
    submit(HAND, "mahjong", name="a.in")
    response = client.get("/events/dashboard?filename=a.in", buffered=False)
    chunks = iter(response.response)
    assert next(chunks).startswith(b"retry: ")
    first, second = next(chunks).decode(), next(chunks).decode()
    response.close()
    assert first.startswith("event: overview\n") and second.startswith("event: jobs\n") and "a.in" in second
    assert client.get("/events/dashboard?status=nonsense").status_code == 400


def test_streams_beyond_the_limit_are_refused_so_the_page_polls(client: Any, submit: Any) -> None:
    job = submit(HAND, "mahjong")
    held = [client.get("/events/dashboard", buffered=False) for _ in range(live.MAX_STREAMS)]
    try:
        refused = client.get(f"/events/jobs/{job['id']}")
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "5"
    finally:
        for response in held:
            response.close()
    assert _events(client.get(f"/events/jobs/{job['id']}", buffered=False))[-1][0] == "end"


def test_under_gunicorns_sync_workers_no_stream_holds_a_process(client: Any, submit: Any) -> None:
    job = submit(HAND, "mahjong")
    sync = client.get(f"/events/jobs/{job['id']}",
                      environ_overrides={"SERVER_SOFTWARE": "gunicorn/23.0.0", "wsgi.multithread": False})
    assert sync.status_code == 429 and "one request at a time" in sync.get_json()["error"]
    threaded = client.get(f"/events/jobs/{job['id']}", buffered=False,
                          environ_overrides={"SERVER_SOFTWARE": "gunicorn/23.0.0", "wsgi.multithread": True})
    assert threaded.status_code == 200 and _events(threaded)[-1][0] == "end"
