"""/healthz and /metrics."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from tests.support.jobs import submit as submit_job
from tests.support.paths import JUDGE_DATA
from worker.jobs.overview import STUCK_AFTER_STALLS
from worker.store.database import Database
from worker.store.chunks import read_chunks
from worker.store.models import SOLVE_BUCKETS_US, Chunk, Job, WorkerRow, utcnow


ACCORDION = (JUDGE_DATA / "accordion" / "sample.in").read_bytes()


def _heartbeat(db: Database, name: str = "test-worker") -> None:
    with db.session() as session:
        session.merge(WorkerRow(name=name, started_at=utcnow(), seen_at=utcnow(), concurrency=2, processed=0))


def test_healthz_is_503_without_workers(client: Any) -> None:
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "unavailable" and body["ok"] is False
    assert body["database"] == {"ok": True, "error": None}
    assert body["broker"] == {"ok": True, "error": None, "queue_depth": 0}
    assert body["workers"] == {"ok": False, "error": "no worker heard from in the last 10 s", "seen": 0, "names": []}


def test_healthz_is_200_when_everything_answers(client: Any, db: Database, settings: Any) -> None:
    _heartbeat(db)
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "ok" and body["workers"] == {"ok": True, "error": None, "seen": 1,
                                                                 "names": ["test-worker"]}


def test_healthz_is_503_when_the_broker_does_not_answer(client: Any, db: Database, settings: Any, dispatcher: Any,
                                                          monkeypatch: Any) -> None:
    _heartbeat(db)
    monkeypatch.setattr(dispatcher, "queue_depth", lambda: None)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.get_json()["broker"] == {"ok": False, "error": "the broker cannot be reached", "queue_depth": None}
    assert response.get_json()["database"]["ok"] is True


def test_healthz_is_503_when_the_database_does_not_answer(settings: Any, dispatcher: Any, tmp_path: Any) -> None:
    from dataclasses import replace

    from webui.app import create_app

    (tmp_path / "a-file").write_text("not a folder")
    broken = replace(settings, database_url=f"sqlite:///{tmp_path}/a-file/dealer.db")
    client = create_app(broken, dispatcher, config={"TESTING": True}).test_client()
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["database"]["ok"] is False and body["database"]["error"]
    assert body["workers"]["ok"] is False


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? '
                    r"(-?[0-9.e+-]+|NaN|\+Inf|-Inf)$")


def parse_metrics(text: str) -> dict[str, float]:
    """Check the exposition format line by line; return {'name{labels}': value}."""
    samples: dict[str, float] = {}
    declared: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("counter", "gauge", "histogram", "summary", "untyped"), line
            assert name not in declared, f"{name} declared twice"
            declared[name] = kind
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name = match.group(1)
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in declared else name
        assert family in declared, f"{name} has no # TYPE"
        samples[line.rsplit(" ", 1)[0]] = float(match.group(4))
    return samples


def test_metrics_in_prometheus_text_format(client: Any, submit: Any, db: Database, settings: Any) -> None:
    submit("10-20-30/sample")
    submit("accordion/sample")
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    text = response.get_data(as_text=True)
    assert text.endswith("\n")
    samples = parse_metrics(text)
    assert samples['dealer_jobs{status="succeeded"}'] == 2
    assert samples['dealer_jobs{status="failed"}'] == 0
    assert samples['dealer_cases_solved{game="10-20-30",outcome="draw"}'] == 1
    assert samples['dealer_cases_solved{game="accordion",outcome="loss"}'] == 1
    assert samples['dealer_cases_solved{game="accordion",outcome="win"}'] == 1
    assert samples["dealer_queue_depth"] == 0 and samples["dealer_broker_up"] == 1
    assert samples["dealer_workers"] == 0 and samples["dealer_pending_chunks"] == 0
    # The histogram: cumulative buckets, +Inf equal to the count, sum in seconds.
    with db.session() as session:
        ids = session.scalars(select(Chunk.id).join(Job, Job.id == Chunk.job_id).where(Job.game == "10-20-30")).all()
        solve_us = [us for data in read_chunks(session, ids).values() for us in data.facts.solve_us]
    buckets = [samples[f'dealer_solve_seconds_bucket{{game="10-20-30",le="{le}"}}']
               for le in [_le(b) for b in SOLVE_BUCKETS_US] + ["+Inf"]]
    assert buckets == sorted(buckets) and buckets[-1] == 3
    assert buckets[:-1] == [sum(1 for us in solve_us if us <= b) for b in SOLVE_BUCKETS_US]
    assert samples['dealer_solve_seconds_count{game="10-20-30"}'] == 3
    assert abs(samples['dealer_solve_seconds_sum{game="10-20-30"}'] - sum(solve_us) / 1e6) < 1e-6
    assert samples['dealer_solve_seconds_count{game="mahjong"}'] == 0  # every game is always there


def _le(bound_us: int) -> str:
    from webui.ops import _number

    return _number(bound_us / 1e6)


def test_metrics_without_a_broker(client: Any, dispatcher: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(dispatcher, "queue_depth", lambda: None)
    samples = parse_metrics(client.get("/metrics").get_data(as_text=True))
    assert samples["dealer_broker_up"] == 0 and "dealer_queue_depth" not in samples


@pytest.mark.parametrize("broker", ["filesystem", pytest.param("redis", marks=pytest.mark.services)])
def test_healthz_and_overview_with_a_real_broker(db: Database, settings: Any, broker: str) -> None:
    """An empty queue is depth 0 (Redis keeps no key for it), a sent message is depth 1."""
    from dataclasses import replace

    from webui.app import create_app
    from worker.broker import CeleryDispatcher
    from worker.testing.servers import fresh_redis_url

    if broker == "redis":
        settings = replace(settings, broker_url=fresh_redis_url())
    dispatcher = CeleryDispatcher.for_settings(settings)
    client = create_app(settings, dispatcher, config={"TESTING": True}, db=db).test_client()
    _heartbeat(db)
    health = client.get("/healthz")
    assert health.status_code == 200, health.get_json()
    assert health.get_json()["broker"] == {"ok": True, "error": None, "queue_depth": 0}
    dispatcher.split(123456)  # a message no worker will take
    assert client.get("/api/overview").get_json()["queue_depth"] == 1
    if broker == "filesystem":
        assert [p.name.endswith(".dealer.msg") for p in (settings.broker_dir / "queue").iterdir()] == [True]


def test_sends_from_every_thread_read_one_result_backend(tmp_path: Path) -> None:
    """The web sends work from a greenlet a request, and under gevent a thread-local is a greenlet's: the
    result backend every send reads (no result is kept) is made once an app, not once a greenlet, each
    making looking it up among every installed distribution's entry points."""
    import threading

    from celery.backends.base import DisabledBackend

    from worker.broker import CeleryDispatcher, create_celery
    from worker.config import Settings

    app = create_celery(Settings.from_env({}, data_dir=tmp_path))
    CeleryDispatcher(app).prepare()  # as create_app does, in the process's first thread
    seen: list[Any] = [app.backend]
    threads = [threading.Thread(target=lambda: seen.append(app.backend)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(backend) for backend in seen}) == 1 and isinstance(seen[0], DisabledBackend)


def test_healthz_tries_a_broker_that_is_down_once(db: Database, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused connection answers at once; the broker's retries would wait many seconds."""
    from dataclasses import replace

    from kombu import Connection

    from webui.app import create_app
    from worker.broker import CeleryDispatcher

    settings = replace(settings, broker_url="redis://127.0.0.1:1/0")
    client = create_app(settings, CeleryDispatcher.for_settings(settings), config={"TESTING": True},
                        db=db).test_client()
    attempts = []
    connect = Connection._establish_connection  # what kombu calls at each attempt, the retries' too

    def attempt(connection: Connection) -> Any:
        attempts.append(connection.as_uri())
        return connect(connection)

    monkeypatch.setattr(Connection, "_establish_connection", attempt)
    response = client.get("/healthz")
    assert response.status_code == 503 and response.get_json()["broker"]["ok"] is False
    assert attempts == ["redis://127.0.0.1:1/0"]


def _still_since(db: Database, job_id: int, minutes: float, **columns: Any) -> None:
    """Make a job look as if nothing had moved it for ``minutes``."""
    then = utcnow() - timedelta(minutes=minutes)
    with db.session() as session:
        session.execute(update(Job).where(Job.id == job_id).values(created_at=then, progress_at=then, **columns))


def test_a_job_that_does_not_move_is_named_by_healthz_metrics_and_the_dashboard(
        client: Any, db: Database, settings: Any, service: Any, dispatcher: Any) -> None:
    _heartbeat(db)
    dispatcher.immediate = False  # no worker takes them
    stuck, waiting, reading = (submit_job(service, ACCORDION, "accordion", name=f"{name}.in").id
                               for name in ("stuck", "waiting", "reading"))
    still = settings.stall_seconds * STUCK_AFTER_STALLS / 60
    _still_since(db, stuck, still + 1, status="splitting")
    _still_since(db, waiting, still / 2)  # queued a while, not for long enough
    # A split that reads on renews its lease: however old its last answered case, it moves.
    _still_since(db, reading, still + 1, status="splitting",
                 lease_until=utcnow() + timedelta(seconds=settings.lease_seconds - 1))
    response = client.get("/healthz")
    assert response.status_code == 200  # a stuck job is for an operator, not a load balancer
    body = response.get_json()
    assert body["ok"] is True and body["status"] == "degraded"
    assert [(job["id"], job["status"], job["filename"]) for job in body["stuck_jobs"]] == [
        (stuck, "splitting", "stuck.in")]
    assert body["stuck_jobs"][0]["still_seconds"] >= (still + 1) * 60
    assert parse_metrics(client.get("/metrics").get_data(as_text=True))["dealer_jobs_stuck"] == 1
    page = client.get("/").get_data(as_text=True)
    assert f'href="/jobs/{stuck}">Job #{stuck}</a> (splitting, stuck.in)' in page
    assert f"Job #{waiting}<" not in page and f"Job #{reading}<" not in page
    assert client.get("/api/overview").get_json()["stuck_jobs"][0]["id"] == stuck


def test_healthz_is_ok_and_the_gauge_zero_when_every_job_moves(client: Any, db: Database, settings: Any, service: Any) -> None:
    _heartbeat(db)
    submit_job(service, ACCORDION, "accordion")  # solved at once
    assert client.get("/healthz").get_json()["status"] == "ok"
    assert parse_metrics(client.get("/metrics").get_data(as_text=True))["dealer_jobs_stuck"] == 0
    assert 'id="stuck-jobs" role="status" hidden' in client.get("/").get_data(as_text=True)
