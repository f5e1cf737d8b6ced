"""Fault scenarios, each run against a live service and measured: shared by tests/faults/
(which assert on the report, on recovery timings shortened through Settings) and bench/faults.py
(which prints it, with the shipped defaults)."""

from __future__ import annotations

import http.client
import io
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select

from worker import engines
from worker.jobs.dispatch import owner, worker_name
from worker.solving import solve_file
from worker.states import ChunkStatus
from worker.store.chunks import coverage
from worker.store.models import Chunk, Job, Upload, utcnow
from worker.testing.data import random_judge_file
from worker.testing.live import DEALER, LiveService, live_service
from worker.testing.servers import NetworkNamespace, PrivatePostgres, PrivateRedis, ServiceMissing

#: With the shipped defaults (``worker/config.py``), a fault may cost its job this much time at most,
#: over a clean run of a file of the same size in the same service (bench/faults.py).
RECOVERY_TARGET_SECONDS = 30.0
#: How long the database stays down in :func:`postgres_restarted` (and :func:`outages_in_one_job`).
OUTAGE_SECONDS = 3.0
#: How long Redis stays down in the issue's run of three faults (:func:`three_faults`).
REDIS_DOWN_SECONDS = 15.0
#: The targets of a run of faults in one job, with the shipped defaults: solving again this soon after the
#: database or the broker is back, and the job ended this soon after the last fault.
RESUME_TARGET_SECONDS = 5.0
END_TARGET_SECONDS = 15.0


@dataclass
class Report:
    """One scenario's outcome. A fault is judged on what it cost the job; a scenario of several, on the
    time from its last fault to the end, as the target reads:

    >>> from dataclasses import replace
    >>> one = Report("x", 10, 10, 0, True, recovery_seconds=8.0, status="succeeded", lost_seconds=33.0)
    >>> one.ok, one.in_time, replace(one, several=True).in_time
    (True, False, True)
    """

    scenario: str
    expected: int
    stored: int
    duplicates: int
    identical: bool
    #: From the fault to the job's end.
    recovery_seconds: float
    status: str
    note: str = ""
    #: From the upload to the job's end.
    total_seconds: float = 0.0
    #: What the fault cost: ``total_seconds`` less a clean run's (set by bench/faults.py).
    lost_seconds: float | None = None
    #: A scenario of several faults, ``recovery_seconds`` from the last: judged on that, as the target
    #: reads (what all of them cost, the time a fault itself lasts included, is ``lost_seconds``).
    several: bool = False
    #: Each fault, and the seconds from its end to the job being solved again (``None``: it was not,
    #: within the scenario's patience): :func:`outages_in_one_job`.
    resumed: list[tuple[str, float | None]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "succeeded" and self.stored == self.expected and not self.duplicates and self.identical

    @property
    def in_time(self) -> bool:
        judged = self.lost_seconds if self.lost_seconds is not None and not self.several else self.recovery_seconds
        return judged <= RECOVERY_TARGET_SECONDS

    def line(self) -> str:
        verdict = "FAILED " + self.status if not self.ok else "ok" if self.in_time else \
            f"SLOW: over the {RECOVERY_TARGET_SECONDS:.0f} s target"
        lost = f"  lost {self.lost_seconds:5.1f} s" if self.lost_seconds is not None else ""
        resumed = "".join(f"  {name} to solving {'never' if seconds is None else f'{seconds:.1f} s'}"
                          for name, seconds in self.resumed)
        return (f"{self.scenario:<34} stored {self.stored:>7} of {self.expected:>7}  duplicates "
                f"{self.duplicates:>3}  output identical {'yes' if self.identical else 'NO ':<3}  "
                f"{'last fault' if self.several else 'fault'} to end "
                f"{self.recovery_seconds:5.1f} s{lost}{resumed}  {verdict}"
                + (f"  ({self.note})" if self.note else ""))


def judge_file(folder: Path, decks: int, seed: int = 20_000) -> tuple[Path, bytes]:
    """A 10-20-30 judge file of random decks and its judge output from a clean local run."""
    path = random_judge_file(folder / f"decks-{decks}.in", "10-20-30", decks, seed)
    out = io.StringIO()
    with open(path, "rb") as stream:
        solve_file(engines.get("10-20-30"), stream, out)
    return path, out.getvalue().encode()


@dataclass(frozen=True)
class Started:
    job_id: int
    #: When it was uploaded (``time.monotonic()``).
    at: float


def clean_run(live: LiveService, path: Path) -> float:
    """Seconds from the upload of ``path`` to its job's end, with no fault."""
    start = time.monotonic()
    job = live.wait(int(live.submit(path, "10-20-30")["id"]), timeout=300)
    if job["status"] != "succeeded":
        raise RuntimeError(f"the clean run ended {job['status']}: {job.get('error')}")
    return time.monotonic() - start


def measure(live: LiveService, scenario: str, started: Started, expected: bytes, decks: int, fault_at: float,
            note: str = "", several: bool = False) -> Report:
    job_id = started.job_id
    job = live.wait(job_id, timeout=300)
    end = time.monotonic()
    recovered = end - fault_at
    with live.db.session(write=False) as session:
        stored, distinct = coverage(session, job_id)
    identical = job["status"] == "succeeded" and live.output(job_id) == expected
    return Report(scenario, decks, int(stored), int(stored - distinct), identical, recovered, job["status"], note,
                  total_seconds=end - started.at, several=several)


def start_job(live: LiveService, path: Path, progress: int = 1000) -> Started:
    start = time.monotonic()
    job = live.submit(path, "10-20-30")
    live.wait_until(lambda: live.client.job(job["id"])["done"] >= progress, "the job to make progress")
    return Started(int(job["id"]), start)


@contextmanager
def private_servers() -> Iterator[tuple[PrivatePostgres, PrivateRedis]]:
    postgres, redis = PrivatePostgres(), PrivateRedis()
    postgres.start()
    redis.start()
    try:
        yield postgres, redis
    finally:
        redis.stop()
        postgres.destroy()


@contextmanager
def production(tmp: Path, postgres: PrivatePostgres, redis: PrivateRedis, workers: int = 1, concurrency: int = 2,
               **env: str) -> Iterator[LiveService]:
    """A live service on the private servers (``env``: more of its settings, ``DEALER_…``)."""
    with live_service("production", tmp, concurrency=concurrency, workers=workers, database_url=postgres.url,
                      broker_url=redis.url, **env) as live:
        yield live


@contextmanager
def other_host() -> Iterator[tuple[NetworkNamespace, PrivatePostgres, PrivateRedis]]:
    """A second host (a network namespace) and private servers it reaches over the veth link."""
    why_not = NetworkNamespace.available()
    if why_not:
        raise ServiceMissing(why_not)
    net = NetworkNamespace()
    try:
        postgres, redis = PrivatePostgres(also_on=(net.host_ip,)), PrivateRedis(also_on=(net.host_ip,))
        postgres.start()
        redis.start()
        try:
            yield net, postgres, redis
        finally:
            redis.stop()
            postgres.destroy()
    finally:
        net.remove()


def remote_worker(live: LiveService, net: NetworkNamespace, postgres: PrivatePostgres, redis: PrivateRedis,
                  data_dir: Path | None = None, **settings: str) -> subprocess.Popen[bytes]:
    """A worker process on the other host, reaching the servers by the link's address (and with a data
    folder of its own when ``data_dir`` is given; ``settings``: more of its own, ``DEALER_…``)."""
    env = dict(live.env, DEALER_DATABASE_URL=postgres.url.replace("127.0.0.1", net.host_ip),
               DEALER_BROKER_URL=redis.url.replace("127.0.0.1", net.host_ip), **settings)
    if data_dir is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
        env["DEALER_DATA_DIR"] = str(data_dir)
    return net.run([*DEALER, "worker", "--concurrency", "1", "--loglevel", "WARNING"], env,
                   live.data_dir / "remote-worker.log")


def worker_elsewhere(live: LiveService, net: NetworkNamespace, postgres: PrivatePostgres, redis: PrivateRedis,
                     path: Path, expected: bytes, decks: int) -> Report:
    """The only worker is on another host, with an empty data folder of its own: it splits and solves
    the whole job from what the database holds."""
    elsewhere = live.data_dir.parent / "other-host"
    remote = remote_worker(live, net, postgres, redis, elsewhere)
    try:
        live.wait_for_workers(1)
        start = time.monotonic()
        started = Started(int(live.submit(path, "10-20-30")["id"]), start)
        report = measure(live, "only a worker on another host", started, expected, decks, start)
        left = [p for p in elsewhere.rglob("*") if p.is_file()]
        return report if not left else replace(report, status=f"the other host's folder holds {left}")
    finally:
        os.killpg(remote.pid, signal.SIGKILL)
        remote.wait()


def worker_killed(live: LiveService, path: Path, expected: bytes, decks: int) -> Report:
    started = start_job(live, path)
    worker = next(worker for worker in live.workers if worker.poll() is None)
    os.killpg(worker.pid, signal.SIGKILL)  # the main process and its pool, mid-task
    worker.wait()
    fault_at = time.monotonic()
    live.start_worker()
    return measure(live, "worker kill -9 mid-job", started, expected, decks, fault_at)


def redis_restarted(live: LiveService, redis: PrivateRedis, path: Path, expected: bytes, decks: int) -> Report:
    started = start_job(live, path)
    redis.restart()  # every queued message is gone
    return measure(live, "redis restarted mid-job", started, expected, decks, time.monotonic())


def postgres_restarted(live: LiveService, postgres: PrivatePostgres, path: Path, expected: bytes,
                       decks: int) -> Report:
    started = start_job(live, path)
    postgres.stop()
    fault_at = time.monotonic()
    # The web answers for the database's absence as soon as it finds it gone (its pooled connections
    # first fail), within the outage; then the database is down for the rest of it.
    while True:
        status, body = raw_get(live, f"/api/jobs/{started.job_id}")
        if status == 503 or time.monotonic() - fault_at >= OUTAGE_SECONDS:
            break
        time.sleep(0.1)
    note = f"web said {status} meanwhile"
    if status != 503 or b"database unavailable" not in body:
        note += f" (expected 503 'database unavailable', got {body[:100]!r})"
    time.sleep(max(0.0, fault_at + OUTAGE_SECONDS - time.monotonic()))
    postgres.start()
    report = measure(live, "postgresql restarted mid-job", started, expected, decks, fault_at, note)
    return report if status == 503 else replace(report, status=f"web answered {status} while the database was down")


#: How long PostgreSQL stays down in :func:`five_faults`.
FIVE_FAULTS_OUTAGE_SECONDS = 5.0


def five_faults(live: LiveService, postgres: PrivatePostgres, redis: PrivateRedis, path: Path, expected: bytes,
                decks: int) -> Report:
    """Five faults in one job, each once the job has moved on an eighth since the one before: the worker
    killed (its process group, ``kill -9``; a new one started), Redis restarted (every message lost), the
    worker killed, PostgreSQL stopped for :data:`FIVE_FAULTS_OUTAGE_SECONDS`, the worker killed. Measured
    from the last fault."""

    def kill() -> None:
        worker = next(worker for worker in live.workers if worker.poll() is None)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        live.start_worker()

    def outage() -> None:
        postgres.stop()
        time.sleep(FIVE_FAULTS_OUTAGE_SECONDS)
        postgres.start()

    faults = (kill, redis.restart, kill, outage, kill)
    started = start_job(live, path)
    step, done, hit = max(decks // 8, 1), 0, 0
    for fault in faults:
        mark = done + step
        live.wait_until(lambda: _done(live, started.job_id) >= min(mark, decks), "the job to move on", timeout=600)
        done = _done(live, started.job_id)
        if done >= decks:
            break
        fault()
        hit += 1
    fault_at = time.monotonic()
    return measure(live, "five faults in one job", started, expected, decks, fault_at,
                   note="" if hit == len(faults) else f"the job ended after {hit} of the faults", several=True)


#: A fault of :func:`outages_in_one_job`: its name, and what does it (returning once it is over).
Fault = tuple[str, Callable[[], None]]


def kill_worker(live: LiveService) -> Fault:
    """A worker killed (its process group, ``kill -9``) and a new one started in its place."""

    def kill() -> None:
        worker = next(worker for worker in live.workers if worker.poll() is None)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        live.start_worker()

    return "worker killed", kill


def redis_down(redis: PrivateRedis, seconds: float) -> Fault:
    """Redis stopped (every message lost) for ``seconds``, then started again."""

    def down() -> None:
        redis.stop()
        time.sleep(seconds)
        redis.start()

    return f"redis down {seconds:g} s", down


def postgres_down(postgres: PrivatePostgres, seconds: float = OUTAGE_SECONDS) -> Fault:
    """PostgreSQL stopped (as by a crash) for ``seconds``, then started again."""

    def down() -> None:
        postgres.stop()
        time.sleep(seconds)
        postgres.start()

    return "postgresql restarted", down


def outages_in_one_job(live: LiveService, scenario: str, faults: list[Fault], path: Path, expected: bytes,
                       decks: int, patience: float = 120.0, step: int | None = None) -> Report:
    """One job with ``faults`` in it, each once the job has moved on ``step`` cases since the one before
    (by default a share of its cases, the shares even, the last after the last fault): for each, the
    seconds from its end to the job being solved again (:func:`resumed_after`, waiting ``patience`` at
    most); measured to the end from the last."""
    started = start_job(live, path)
    step, done = step or max(decks // (len(faults) + 1), 1), 0
    resumed: list[tuple[str, float | None]] = []
    fault_at = time.monotonic()
    for name, fault in faults:
        mark = min(done + step, decks)
        live.wait_until(lambda mark=mark: _done(live, started.job_id) >= mark, "the job to move on",
                        timeout=600)
        if _done(live, started.job_id) >= decks:
            break
        fault()
        fault_at = time.monotonic()
        resumed.append((name, resumed_after(live, started.job_id, patience)))
        done = (_answered(live, started.job_id) or (0, "", False))[0]
    note = "" if len(resumed) == len(faults) else f"the job ended after {len(resumed)} of the faults"
    report = measure(live, scenario, started, expected, decks, fault_at, note=note, several=True)
    report.resumed = resumed
    return report


def resumed_after(live: LiveService, job_id: int, patience: float) -> float | None:
    """Seconds from now (a fault's end) until the job is being solved again: a task has taken one of its
    chunks since, or it has answered more cases than it had by then (read from the database as soon as it
    answers), or it has ended; ``None`` if none of these within ``patience``."""
    start, since = time.monotonic(), utcnow()
    before: int | None = None
    while (elapsed := time.monotonic() - start) < patience:
        answered = _answered(live, job_id, since + timedelta(seconds=live.settings.lease_seconds))
        if answered is not None:
            done, status, taken = answered
            if status not in ("queued", "splitting", "solving") or taken:
                return elapsed
            if before is not None and done > before:
                return elapsed
            before = done if before is None else before
        time.sleep(0.05)
    return None


def _answered(live: LiveService, job_id: int,
              leased_after: datetime | None = None) -> tuple[int, str, bool] | None:
    """The job's cases answered, its status, and whether a task holds one of its chunks under a lease that
    ends after ``leased_after`` (one taken since a moment, its lease added); ``None`` while the database
    is away."""
    try:
        with live.db.session(write=False) as session:
            done, status = session.execute(select(Job.done, Job.status).where(Job.id == job_id)).one()
            taken = leased_after is not None and session.scalar(select(func.count()).select_from(Chunk).where(
                Chunk.job_id == job_id, Chunk.status == ChunkStatus.RUNNING,
                Chunk.lease_until > leased_after))
    except Exception:  # noqa: BLE001 - the database is not back yet
        return None
    return int(done), str(status), bool(taken)


def three_faults(live: LiveService, postgres: PrivatePostgres, redis: PrivateRedis, path: Path,
                 expected: bytes, decks: int) -> Report:
    """The issue's run: a worker killed, Redis down :data:`REDIS_DOWN_SECONDS`, PostgreSQL restarted, in
    one job (run with workers on the pure-Python engines, for a job long enough to hold them)."""
    faults = [kill_worker(live), redis_down(redis, REDIS_DOWN_SECONDS), postgres_down(postgres)]
    return outages_in_one_job(live, "three faults in one job", faults, path, expected, decks)


def _done(live: LiveService, job_id: int) -> int:
    """Cases the job has answered (0 while the web cannot tell, the database being down)."""
    try:
        return int(live.client.job(job_id)["done"])
    except Exception:  # noqa: BLE001 - the web answers 503 during the outage
        return 0


def split_handed_out_while_the_broker_is_down(live: LiveService, redis: PrivateRedis, path: Path, expected: bytes,
                                              decks: int) -> Report:
    """The worker splitting a job is killed; another worker's sweep hands the split out again while the
    broker is down, so that sending it fails; the broker comes back a few sweeps later (and empty). The
    job must end by itself: nothing else sends the split again. (Small chunks make the split long enough
    to be caught half-way: ``DEALER_CHUNK_SIZE``.) Measured from the broker's return, its last fault.

    The other worker runs from the start, and the broker goes as soon as the splitter is killed: the split
    counts as lost only ``worker_timeout`` later, so it is handed out with the broker away, whatever the
    machine's pace (a worker started after the kill could find it lost at its first beat, broker there)."""
    live.start_worker()
    live.wait_for_own_workers()
    start = time.monotonic()
    job_id = int(live.submit(path, "10-20-30")["id"])
    live.wait_until(lambda: _split_held(live, job_id), "the split to be under way")
    worker = next(worker for worker in live.workers if worker_name(worker.pid) == _splitter(live, job_id))
    os.killpg(worker.pid, signal.SIGKILL)
    redis.stop()
    worker.wait()
    fault_at = time.monotonic()
    if not _split_held(live, job_id):
        raise RuntimeError("the split ended before its worker was killed: make the chunks smaller")
    live.wait_until(lambda: not _split_held(live, job_id), "the sweep to hand the split out again",
                    timeout=live.settings.worker_timeout * 4 + 60)
    # A few sweeps more with the broker away: each finds the split handed out and cannot send it.
    time.sleep(live.settings.sweep_seconds * 3)
    redis.start()
    back_at = time.monotonic()
    return measure(live, "split handed out while redis is down", Started(job_id, start), expected, decks, back_at,
                   note=f"from Redis's return; the worker was killed {back_at - fault_at:.1f} s before", several=True)


def _split_held(live: LiveService, job_id: int) -> bool:
    """Whether a split of the job is under way (its lease held, some chunks stored)."""
    with live.db.session(write=False) as session:
        job = session.get(Job, job_id)
        return job is not None and job.status == "splitting" and job.lease_until is not None and job.total > 0


def _splitter(live: LiveService, job_id: int) -> str | None:
    """The worker (``host:pid``) whose process splits the job."""
    with live.db.session(write=False) as session:
        return owner(session.scalar(select(Job.splitter).where(Job.id == job_id)))


def raw_get(live: LiveService, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", int(live.url.rsplit(":", 1)[1]), timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.read()


def web_killed_during_upload(live: LiveService, path: Path) -> tuple[int, int]:
    """Kill the web process mid-upload and start it again: returns partial uploads left once the purge ran
    and jobs created."""
    assert live.web is not None
    connection = http.client.HTTPConnection("127.0.0.1", int(live.url.rsplit(":", 1)[1]), timeout=10)
    boundary = "b0undary"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"decks.in\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    connection.putrequest("POST", "/api/jobs")
    connection.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
    connection.putheader("Content-Length", str(len(head) + path.stat().st_size + 100))
    connection.endheaders()
    connection.send(head + path.read_bytes()[: 3 << 20])
    live.wait_until(lambda: _uploads(live) > 0, "the partial upload to reach the database")
    os.killpg(live.web.pid, signal.SIGKILL)
    live.web.wait()
    connection.close()
    live.start_web()
    # What the killed process was writing is marked for the worker's purge, which removes it in batches.
    live.wait_until(lambda: _uploads(live) == 0, "the partial upload to be removed")
    return _uploads(live), int(live.get("/api/jobs")["total"])


def _uploads(live: LiveService) -> int:
    with live.db.session(write=False) as session:
        return session.scalar(select(func.count()).select_from(Upload)) or 0


def worker_cut_off(live: LiveService, net: NetworkNamespace, postgres: PrivatePostgres, redis: PrivateRedis,
                   path: Path, expected: bytes, decks: int) -> Report:
    """A worker in ``net`` takes chunks, is cut off mid-job, and comes back after the job is done."""
    # On the pure-Python engines, so that it holds each chunk long enough to be seen holding one: on the
    # native core its run of chunks solves the whole job between two looks.
    remote = remote_worker(live, net, postgres, redis, DEALER_PURE_PYTHON="1")
    try:
        live.wait_for_workers(2)
        # The local worker is held still until the remote one has a chunk in hand: on the native core
        # it can otherwise solve the whole job before the remote worker's first chunk comes.
        local = live.workers[0].pid
        os.killpg(local, signal.SIGSTOP)
        try:
            started = start_job(live, path, progress=500)
            live.wait_until(lambda: _holds_a_chunk(live, started.job_id, lambda: _process_tree(remote.pid)),
                            "the remote worker to take a chunk")
        finally:
            os.killpg(local, signal.SIGCONT)
        net.cut()
        fault_at = time.monotonic()
        report = measure(live, "worker cut off from the network", started, expected, decks, fault_at)
        net.mend()
        _after_the_late_writes(live, path.parent)
        late = measure(live, "worker cut off from the network", started, expected, decks, fault_at)
        report.stored, report.duplicates = late.stored, late.duplicates
        report.note = "late writes after reconnecting added nothing"
        return report
    finally:
        os.killpg(remote.pid, signal.SIGKILL)
        remote.wait()


def _after_the_late_writes(live: LiveService, folder: Path) -> None:
    """Wait until the cut-off worker, back on the network, has tried its late writes: its only process
    has then solved a job that no other could take (the local worker held still), which it does only
    once the task it held when it was cut off has ended."""
    after = random_judge_file(folder / "after-mending.in", "10-20-30", 20, 4242)
    local = live.workers[0].pid
    os.killpg(local, signal.SIGSTOP)
    try:
        job = live.wait(int(live.submit(after, "10-20-30")["id"]), timeout=300)
    finally:
        os.killpg(local, signal.SIGCONT)
    if job["status"] != "succeeded":
        raise RuntimeError(f"the job sent after mending the network ended {job['status']}: "
                           f"{job.get('error')}")


def _process_tree(pid: int) -> set[int]:
    found = {pid}
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return found
    for child in children:
        found |= _process_tree(int(child))
    return found


def _holds_a_chunk(live: LiveService, job_id: int, pids_of: set[int] | Callable[[], set[int]]) -> bool:
    with live.db.session(write=False) as session:
        owners = session.scalars(select(Chunk.worker).where(Chunk.job_id == job_id,
                                                            Chunk.status == ChunkStatus.RUNNING)).all()
    pids = pids_of() if callable(pids_of) else pids_of
    return any(owner and int(owner.rsplit(":", 1)[1]) in pids for owner in owners)
