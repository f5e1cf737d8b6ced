"""Faults with real processes: a killed worker, a restarted broker or database, a web process that dies
mid-upload, a worker cut off from the network. Every job must still end ``succeeded`` with each case
stored once and the output identical to a clean run, recovered by the service's liveness (heartbeats,
the sweep), never by a lease running out: the leases here outlast the test.

The recovery is the shipped code on shorter timings (:data:`TIMINGS`, in the shipped proportions), so
that each fault costs seconds less to wait out; how long it takes is bench/faults.py's to say, measured
with the shipped defaults against its 30 s target."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import JUDGE_DATA
from worker.testing import faults as scenarios
from worker.testing.live import LiveService, live_service
from worker.testing.servers import PrivatePostgres, PrivateRedis

pytestmark = pytest.mark.slow

DECKS = 20_000
#: A quarter of the shipped heartbeat, worker timeout and sweep (2 s, 10 s, 4 s); a stall after 4 s (10 s
#: shipped; not much less, or a job whose chunk is merely slow on a busy machine is sent again) and the
#: database's limits that free a cut-off worker's locks after 5 s (10 s shipped); a lease longer than the
#: test (a lost chunk waited five minutes for its lease before recovery followed liveness: a job that
#: needed the lease now never ends within the wait for it).
TIMINGS = {"DEALER_HEARTBEAT_SECONDS": "0.5", "DEALER_WORKER_TIMEOUT": "2.5", "DEALER_SWEEP_SECONDS": "1",
           "DEALER_STALL_SECONDS": "4", "DEALER_DB_IDLE_TIMEOUT": "5", "DEALER_LEASE_SECONDS": "3600"}
#: How long the outages test waits for solving to resume after each fault: a bound on a wait, generous
#: for a loaded machine; how soon it resumes is bench/faults.py's figure.
PATIENCE_SECONDS = 100
#: A sweep period, a stall period and a lease far longer than the test: what is taken up again after an
#: outage must be so because the outage ended, not because one of them ran out.
LONG_PERIODS = {"DEALER_SWEEP_SECONDS": "3600", "DEALER_STALL_SECONDS": "3600",
                "DEALER_LEASE_SECONDS": "3600"}


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    return scenarios.judge_file(tmp_path_factory.mktemp("faults"), DECKS)


#: The job of the outages test: so many decks that its worker, one pure-Python process, is still solving it at
#: the second fault however fast the machine. Solving goes on through a Redis outage, the chunks taken from
#: the database (20,000 decks once ended before PostgreSQL's turn came, on a quiet machine): one process
#: solves about 11,000 decks a second, some 40,000 over the outage, so the faults come as soon as the job
#: has moved on :data:`OUTAGE_STEP` decks since the last, and a third as many decks as the even shares of
#: 300,000 needed hold both faults with the same margin, at a third of the work.
OUTAGE_DECKS = 100_000
OUTAGE_STEP = 2_000


@pytest.fixture(scope="module")
def long_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    return scenarios.judge_file(tmp_path_factory.mktemp("outages"), OUTAGE_DECKS)


@pytest.fixture(scope="module")
def recovering(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveService, PrivatePostgres,
                                                                          PrivateRedis]]:
    """One service on private servers for the faults it recovers from whole (a worker killed, Redis or
    PostgreSQL restarted): each test's job ends with the service as healthy as the last left it, which
    is what the next one starts from (they come last, so that it stops with the module). Without the
    result cache, each job solves the same file afresh."""
    folder = tmp_path_factory.mktemp("recovering")
    with scenarios.private_servers() as (postgres, redis), \
            scenarios.production(folder, postgres, redis, DEALER_RESULT_CACHE="0", **TIMINGS) as live:
        yield live, postgres, redis


def assert_recovered(report: scenarios.Report) -> None:
    assert report.ok, report.line()


def test_worker_killed_mid_job_embedded(big_file: tuple[Path, bytes], tmp_path: Path) -> None:
    with live_service("embedded", tmp_path, **TIMINGS) as live:
        assert_recovered(scenarios.worker_killed(live, *big_file, DECKS))


def test_web_killed_during_an_upload_leaves_nothing_behind(big_file: tuple[Path, bytes], tmp_path: Path) -> None:
    with live_service("embedded", tmp_path) as live:
        partial, jobs = scenarios.web_killed_during_upload(live, big_file[0])
        assert partial == 0 and jobs == 0
        job = live.submit(JUDGE_DATA / "10-20-30" / "sample.in", "10-20-30")
        assert live.wait(job["id"])["status"] == "succeeded"


def test_worker_cut_off_from_the_network(big_file: tuple[Path, bytes], tmp_path: Path) -> None:
    with scenarios.other_host() as (net, postgres, redis), \
            scenarios.production(tmp_path, postgres, redis, **TIMINGS) as live:
        assert_recovered(scenarios.worker_cut_off(live, net, postgres, redis, *big_file, DECKS))


def test_a_worker_on_another_host_needs_no_shared_disk(big_file: tuple[Path, bytes], tmp_path: Path) -> None:
    with scenarios.other_host() as (net, postgres, redis), \
            scenarios.production(tmp_path, postgres, redis, workers=0, **TIMINGS) as live:
        assert_recovered(scenarios.worker_elsewhere(live, net, postgres, redis, *big_file, DECKS))


def test_a_split_handed_out_while_the_broker_is_down_is_sent_once_it_is_back(big_file: tuple[Path, bytes],
                                                                             tmp_path: Path) -> None:
    with scenarios.private_servers() as (postgres, redis), \
            scenarios.production(tmp_path, postgres, redis, DEALER_RESULT_CACHE="0", DEALER_CHUNK_SIZE="20",
                                 **TIMINGS) as live:
        # Ended at all is the point (it stayed splitting for good before): its small chunks make the job
        # slow on a loaded machine, and how fast it recovers is bench/faults.py's to say.
        report = scenarios.split_handed_out_while_the_broker_is_down(live, redis, *big_file, DECKS)
        assert report.ok, report.line()


def test_solving_resumes_when_redis_and_postgres_return(long_file: tuple[Path, bytes], tmp_path: Path) -> None:
    """Redis down (every message lost), then PostgreSQL restarted, in one job whose worker solves on the
    pure-Python engines (so that the job lasts through both): after each, solving resumes, and the job
    ends exact, long before any period of the recovery's could have run out."""
    with scenarios.private_servers() as (postgres, redis), \
            scenarios.production(tmp_path, postgres, redis, concurrency=1, DEALER_RESULT_CACHE="0",
                                 DEALER_PURE_PYTHON="1", **LONG_PERIODS) as live:
        report = scenarios.outages_in_one_job(
            live, "redis down, postgresql restarted", [scenarios.redis_down(redis, scenarios.OUTAGE_SECONDS),
                                                       scenarios.postgres_down(postgres)],
            *long_file, OUTAGE_DECKS, patience=PATIENCE_SECONDS, step=OUTAGE_STEP)
    assert_recovered(report)
    assert [name for name, _ in report.resumed] == ["redis down 3 s", "postgresql restarted"], report.line()
    assert all(seconds is not None for _, seconds in report.resumed), report.line()


def test_worker_killed_mid_job_production(big_file: tuple[Path, bytes], recovering) -> None:
    live, _, _ = recovering
    assert_recovered(scenarios.worker_killed(live, *big_file, DECKS))


def test_redis_restarted_mid_job(big_file: tuple[Path, bytes], recovering) -> None:
    live, _, redis = recovering
    assert_recovered(scenarios.redis_restarted(live, redis, *big_file, DECKS))


def test_postgres_restarted_mid_job_and_web_says_so(big_file: tuple[Path, bytes], recovering) -> None:
    live, postgres, _ = recovering
    report = scenarios.postgres_restarted(live, postgres, *big_file, DECKS)
    assert_recovered(report)
    assert live.get("/api/overview") is not None  # the web recovered by itself
