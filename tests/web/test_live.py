"""What the pages watch: the workers and their throughput, a job's own throughput, the dashboard's
filters, and the live event streams (fanned out from one poller, with their limits)."""

from __future__ import annotations

import re
import threading
from datetime import timedelta
from typing import Any, Self

from sqlalchemy import event, select

from tests.support.events import next_write
from tests.support.paths import first_cases
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



def test_a_heartbeat_records_its_processes_chunks_per_interval(db: Database, settings: Settings, submit: Any,
                                                               overview_queries: Any, queries: JobQueries) -> None:
    job = submit("10-20-30/sample", "10-20-30")
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
    view = overview_queries.workers()
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


def test_the_workers_view_shows_the_chunk_each_process_solves_now(db: Database, settings: Settings, submit: Any,
                                                                  overview_queries: Any, queries: JobQueries) -> None:
    job = submit("mahjong/sample", "mahjong")
    now = utcnow()
    with db.session() as session:
        session.add(WorkerRow(name="box:1", concurrency=2, seen_at=now - timedelta(seconds=3)))
        session.add(WorkerRow(name="gone:5", concurrency=1, seen_at=now - timedelta(minutes=5)))
        chunk = session.scalars(select(Chunk).where(Chunk.job_id == job["id"]).order_by(Chunk.seq)).first()
        chunk.status, chunk.worker, chunk.dispatched_at = ChunkStatus.RUNNING, "box:1:42", now
        chunk.gaps = [[chunk.first_index + 1, 3]]  # its cases skip three bad ones: its last case is three further
    view = {w.name: w for w in overview_queries.workers().workers}
    since = (utcnow() - now).total_seconds()  # what the age may hold beyond the 3 s, the look having taken it
    busy = view["box:1"].busy
    assert [(p.pid, p.job_id, p.first_index, p.last_index, p.cases) for p in busy] == [
        (42, job["id"], chunk.first_index, chunk.first_index + chunk.count + 2, chunk.count)]
    assert view["box:1"].alive and 3 <= view["box:1"].heartbeat_age_seconds <= 3 + since + 0.05  # to a tenth
    assert not view["gone:5"].alive and view["gone:5"].busy == []
    assert [w.name for w in overview_queries.workers().workers] == ["box:1", "gone:5"]  # alive first


def test_a_jobs_throughput_covers_its_run(client: Any, submit: Any) -> None:
    job = submit(first_cases("10-20-30", 1000), "10-20-30")
    data = client.get(f"/api/jobs/{job['id']}/throughput").get_json()
    assert data["cases"] == 1000 and sum(p["cases"] for p in data["points"]) == 1000
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


def test_cases_waiting_are_never_below_none_while_a_file_is_read(db: Database, settings: Settings, submit: Any,
                                                                 overview_queries: Any, queries: JobQueries) -> None:
    job = submit("10-20-30/sample", "10-20-30")
    with db.session() as session:
        row = session.get(Job, job["id"])
        # The split has counted fewer cases read than the solve tasks answered already.
        row.status, row.split_at, row.total, row.done, row.bytes_read = JobStatus.SPLITTING, None, 2, 5, row.size // 2
        row.started_at = row.progress_at = utcnow()
    assert overview_queries.overview(0).queued_cases == 0  # half read: about 4 cases in all, 5 answered already
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
    first = next_write(chunks).decode()  # what changed, in one write
    response.close()
    overview, jobs = first.split("\n\n")[:2]
    assert overview.startswith("event: overview\n") and jobs.startswith("event: jobs\n") and "a.in" in jobs
    assert client.get("/events/dashboard?status=nonsense").status_code == 400


def _running(db: Database, job: dict[str, Any]) -> int:
    """``job`` made running again (the tests have no worker: a job submitted is solved at once)."""
    with db.session() as session:
        row = session.get(Job, job["id"])
        row.status, row.finished_at = JobStatus.SOLVING, None
    return int(job["id"])


class _Statements:
    """Counts the SQL statements this thread sends while in the block (the poller's thread, which reads on
    its own, is not counted)."""

    def __init__(self, db: Database) -> None:
        self.engine = db.engine
        self.count = 0
        self.thread = threading.current_thread()

    def _seen(self, *_: Any) -> None:
        if threading.current_thread() is self.thread:
            self.count += 1

    def __enter__(self) -> Self:
        event.listen(self.engine, "before_cursor_execute", self._seen)
        return self

    def __exit__(self, *_: object) -> None:
        event.remove(self.engine, "before_cursor_execute", self._seen)


def _opened(client: Any, url: str, **environ: Any) -> Any:
    """A stream opened and read until its first figures came (its thing is watched and was read)."""
    response = client.get(url, buffered=False, environ_overrides=environ)
    assert response.status_code == 200, response.get_data(as_text=True)
    chunks = iter(response.response)
    assert next(chunks).startswith(b"retry: ")
    assert next_write(chunks).startswith(b"event: ")
    return response


def test_a_tick_reads_each_thing_watched_once_whatever_the_number_of_its_viewers(
        app: Any, client: Any, db: Database, settings: Settings, submit: Any) -> None:
    jobs = [_running(db, submit(HAND, "mahjong", name=f"{k}.in")) for k in range(3)]
    hub = live.Hub.of(app)
    opened = [_opened(client, f"/events/jobs/{jobs[0]}"), _opened(client, "/events/dashboard?game=mahjong")]
    try:
        with _Statements(db) as few:
            hub.tick()
        assert few.count > 0
        for k in range(30):
            opened += [_opened(client, f"/events/jobs/{jobs[k % 3]}"), _opened(client, "/events/dashboard?game=mahjong")]
        assert hub.watched() == 4  # three jobs and one view of the dashboard, for 62 streams
        with _Statements(db) as many:
            hub.tick()
        assert many.count == few.count  # every job watched in one query, the dashboard's view read once
        opened.append(_opened(client, "/events/dashboard?game=10-20-30"))
        with _Statements(db) as more:
            hub.tick()
        assert more.count > many.count  # another view of the dashboard is read on its own
    finally:
        for response in opened:
            response.close()
    assert hub.watched() == 0
    with _Statements(db) as none:
        hub.tick()
    assert none.count == 0  # nobody watches: nothing is read


def test_streams_beyond_a_clients_share_or_the_process_ceiling_are_refused_before_any_database_work(
        app: Any, client: Any, db: Database, settings: Settings, submit: Any, monkeypatch: Any) -> None:
    job = _running(db, submit(HAND, "mahjong"))
    admission = app.wsgi_app
    assert isinstance(admission, live.Admission) and admission.per_client == settings.live_streams_per_client
    monkeypatch.setattr(admission, "per_client", 2)
    held = [_opened(client, "/events/dashboard") for _ in range(2)]
    try:
        with _Statements(db) as statements:
            refused = client.get(f"/events/jobs/{job}")
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "5"
        assert "at most 2" in refused.get_json()["error"]
        assert statements.count == 0
        # Another client: another address, or another key (or login) from the same address.
        held.append(_opened(client, f"/events/jobs/{job}", REMOTE_ADDR="10.0.0.2"))
        held.append(_opened(client, f"/events/jobs/{job}", HTTP_AUTHORIZATION="Bearer another-key"))
        monkeypatch.setattr(live, "MAX_STREAMS", 4)
        with _Statements(db) as statements:
            full = client.get(f"/events/jobs/{job}", environ_overrides={"REMOTE_ADDR": "10.0.0.3"})
        assert full.status_code == 429 and "as many live streams as it can" in full.get_json()["error"]
        assert statements.count == 0 and admission.open == 4
    finally:
        for response in held:
            response.close()
    assert admission.open == 0
    monkeypatch.setattr(admission, "per_client", 0)  # no share: the process's ceiling alone
    held = [_opened(client, f"/events/jobs/{job}") for _ in range(3)]
    for response in held:
        response.close()


def test_streams_that_cannot_open_in_time_are_refused_before_any_database_work(
        app: Any, client: Any, db: Database, settings: Settings, submit: Any, monkeypatch: Any) -> None:
    job = _running(db, submit(HAND, "mahjong"))
    monkeypatch.setattr(live, "OPENING_WAIT_SECONDS", 0.1)
    monkeypatch.setattr(app.wsgi_app, "_opening", threading.BoundedSemaphore(1))
    app.wsgi_app._opening.acquire()  # another stream is opening, and takes its time
    with _Statements(db) as statements:
        refused = client.get(f"/events/jobs/{job}")
    assert refused.status_code == 429 and "opening at once" in refused.get_json()["error"]
    assert statements.count == 0 and app.wsgi_app.open == 0
    app.wsgi_app._opening.release()
    _opened(client, f"/events/jobs/{job}").close()


def test_a_stream_opened_after_a_change_starts_from_a_reading_made_after_it(
        client: Any, db: Database, settings: Settings, submit: Any) -> None:
    """The dashboard's page opened again after a job was deleted: its new stream must not start from the
    reading the poller made before the delete (it showed the job again for a tick)."""
    kept, deleted = (_running(db, submit(HAND, "mahjong", name=f"{name}.in")) for name in ("kept", "gone"))
    watching = _opened(client, "/events/dashboard?game=mahjong")  # the view is watched, and was read
    try:
        with db.session() as session:
            session.get(Job, deleted).deleted_at = utcnow()
        again = client.get("/events/dashboard?game=mahjong", buffered=False)
        chunks = iter(again.response)
        assert next(chunks).startswith(b"retry: ")
        jobs = next_write(chunks).decode().split("event: jobs\n", 1)[1]
        again.close()
        assert f'"id":{kept}' in jobs and f'"id":{deleted}' not in jobs
    finally:
        watching.close()


def test_a_watched_job_ends_its_streams_when_it_finishes_or_is_deleted(client: Any, db: Database, settings: Settings,
                                                                         submit: Any) -> None:
    finishing = _running(db, submit(HAND, "mahjong", name="finishing.in"))
    deleted = _running(db, submit(HAND, "mahjong", name="deleted.in"))
    streams = [_opened(client, f"/events/jobs/{finishing}") for _ in range(3)] + [_opened(client, f"/events/jobs/{deleted}")]
    with db.session() as session:
        row = session.get(Job, finishing)
        row.status, row.finished_at = JobStatus.SUCCEEDED, utcnow()
        session.get(Job, deleted).deleted_at = utcnow()
    ends = [_events(response) for response in streams]  # each ends by itself
    for found in ends[:3]:
        assert found[-1][0] == "end" and '"status":"succeeded"' in [data for name, data in found if name == "job"][-1]
    assert "end" not in [name for name, _ in ends[3]]  # gone: no end (the page's reconnection is a 404)
    assert client.get(f"/events/jobs/{deleted}").status_code == 404


def test_a_process_told_to_stop_ends_every_stream_at_once(client: Any, db: Database, settings: Settings, submit: Any) -> None:
    job = _running(db, submit(HAND, "mahjong"))
    streams = [_opened(client, f"/events/jobs/{job}"), _opened(client, "/events/dashboard")]
    try:
        live.stop()
        assert all("end" not in [name for name, _ in _events(response)] for response in streams)
    finally:
        live.stopping.clear()


def test_under_gunicorns_sync_workers_no_stream_holds_a_process(client: Any, submit: Any) -> None:
    job = submit(HAND, "mahjong")
    sync = client.get(f"/events/jobs/{job['id']}",
                      environ_overrides={"SERVER_SOFTWARE": "gunicorn/23.0.0", "wsgi.multithread": False})
    assert sync.status_code == 429 and "one request at a time" in sync.get_json()["error"]
    threaded = client.get(f"/events/jobs/{job['id']}", buffered=False,
                          environ_overrides={"SERVER_SOFTWARE": "gunicorn/23.0.0", "wsgi.multithread": True})
    assert threaded.status_code == 200 and _events(threaded)[-1][0] == "end"
