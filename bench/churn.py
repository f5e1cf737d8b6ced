"""Churn: three clients uploading 20,000-deck files without pause, two readers on the API, and every job
older than the latest 30 deleted through the API, for ``--minutes`` (default 30), against a live service
in production mode (``dealer web`` + ``dealer worker`` on the machine's PostgreSQL and Redis, shipped
settings but for the jobs a client may create in a minute: the three clients share this machine's
address, which the limit takes for one client).

Every ``--every`` seconds it samples the database's size (and the chunks' with their TOAST, their dead
rows, the oldest transaction's age), and the web's and the worker's memory (RSS of each process tree);
the readers time ``GET /api/results?game=10-20-30&per_page=50`` and ``GET /api/jobs`` and count every
``5xx``. At the end, the load stopped and the purge done, the database is dumped into a fresh one: its
size is the size of the same live jobs stored anew. Targets, printed met / missed: the database within
2x that size + 200 MB, web and worker memory flat (the last sample within 25 % + 32 MB of the one
after the first minute), API p99 <= 300 ms, no 5xx.

``python -m bench.churn --minutes 30`` writes what it printed to ``docs/figures/churn.md`` (``bench.figures``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from bench import figures
from worker import engines
from worker.testing.live import LiveService, live_service
from worker.testing.servers import create_postgres_database, drop_postgres_database

UPLOADERS = 3
READERS = 2
KEEP = 30
DECKS = 20_000
TARGET_P99_SECONDS = 0.3
TARGET_SLACK_BYTES = 200 << 20
MEMORY_GROWTH = 1.25
MEMORY_SLACK_BYTES = 32 << 20
MB = 1 << 20


@dataclass
class Tally:
    """What the clients saw, shared by their threads."""

    seconds: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    jobs: int = 0
    deleted: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answered(self, status: int, seconds: float | None = None) -> None:
        with self.lock:
            self.statuses[status] += 1
            if seconds is not None:
                self.seconds.append(seconds)

    def failed(self, what: str) -> None:
        with self.lock:
            self.errors[what] += 1

    @property
    def server_errors(self) -> int:
        return sum(count for status, count in self.statuses.items() if status >= 500)


def request(port: int, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None, timeout: float = 60) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def upload_body(cases: list[str], terminator: str, rng: random.Random) -> tuple[bytes, str]:
    """A judge file of the cases turned by a random offset (a file no job had: none is copied), as a
    multipart body."""
    turn = rng.randrange(len(cases))
    data = ("\n".join(cases[turn:] + cases[:turn]) + f"\n{terminator}\n").encode()
    boundary = f"churn{rng.getrandbits(64):x}"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"game\"\r\n\r\n10-20-30\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"churn.in\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def uploader(port: int, cases: list[str], seed: int, until: float, tally: Tally) -> None:
    """Uploads a file, waits for its job to end, and uploads the next, until ``until``."""
    rng = random.Random(seed)
    terminator = engines.get("10-20-30").terminator
    while time.monotonic() < until:
        body, kind = upload_body(cases, terminator, rng)
        try:
            status, answer = request(port, "POST", "/api/jobs", body, {"Content-Type": kind})
            tally.answered(status)
            if status != 201 and status != 200:
                tally.failed(f"upload answered {status}: {answer[:120]!r}")
                time.sleep(1)
                continue
            job_id = json.loads(answer)["id"]
            with tally.lock:
                tally.jobs += 1
            while time.monotonic() < until + 60:
                status, answer = request(port, "GET", f"/api/jobs/{job_id}")
                tally.answered(status)
                if status != 200 or json.loads(answer)["status"] in ("succeeded", "failed", "cancelled"):
                    break
                time.sleep(0.2)
        except (OSError, ValueError, KeyError) as error:
            tally.failed(f"upload: {type(error).__name__}: {error}")


def reader(port: int, until: float, tally: Tally) -> None:
    """The history search and the jobs' list in turn, timed."""
    paths = ("/api/results?game=10-20-30&per_page=50", "/api/jobs")
    turn = 0
    while time.monotonic() < until:
        started = time.perf_counter()
        try:
            status, _ = request(port, "GET", paths[turn % 2])
            tally.answered(status, time.perf_counter() - started)
        except OSError as error:
            tally.failed(f"read: {type(error).__name__}: {error}")
        turn += 1
        time.sleep(0.1)


def deleter(port: int, until: float, tally: Tally) -> None:
    """Deletes every finished job older than the latest ``KEEP``, through the API, every second."""
    while time.monotonic() < until:
        try:
            status, answer = request(port, "GET", "/api/jobs?per_page=200")
            tally.answered(status)
            if status == 200:
                for job in json.loads(answer)["items"][KEEP:]:
                    if job["status"] in ("succeeded", "failed", "cancelled"):
                        status, _ = request(port, "DELETE", f"/api/jobs/{job['id']}")
                        tally.answered(status)
                        if status in (200, 204):
                            with tally.lock:
                                tally.deleted += 1
        except (OSError, ValueError, KeyError) as error:
            tally.failed(f"delete: {type(error).__name__}: {error}")
        time.sleep(1)


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and its descendants."""
    listed = subprocess.run(["ps", "-eo", "pid=,ppid=,rss="], capture_output=True, text=True, check=False).stdout
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for line in listed.splitlines():
        child, parent, kib = map(int, line.split())
        children.setdefault(parent, []).append(child)
        rss[child] = kib * 1024
    total, todo = 0, [pid]
    while todo:
        at = todo.pop()
        total += rss.get(at, 0)
        todo += children.get(at, [])
    return total


STORE_SQL = text("""
    SELECT pg_database_size(current_database()) AS database,
           pg_total_relation_size('chunks') AS chunks,
           (SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'chunks') AS live,
           (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'chunks') AS dead,
           (SELECT n_dead_tup FROM pg_stat_all_tables s JOIN pg_class c ON c.reltoastrelid = s.relid
             WHERE c.relname = 'chunks') AS toast_dead,
           (SELECT coalesce(max(age(backend_xmin)), 0) FROM pg_stat_activity
             WHERE datname = current_database()) AS oldest_xmin_age
""")


@dataclass
class Sample:
    minute: float
    database: int
    chunks: int
    live: int
    dead: int
    toast_dead: int
    oldest_xmin_age: int
    web: int
    worker: int


def sample(live: LiveService, engine: Any, started: float) -> Sample:
    with engine.connect() as connection:
        row = connection.execute(STORE_SQL).one()
    assert live.web is not None
    return Sample((time.monotonic() - started) / 60, row.database, row.chunks, row.live, row.dead,
                  row.toast_dead, row.oldest_xmin_age, tree_rss(live.web.pid),
                  sum(tree_rss(worker.pid) for worker in live.workers))


def fresh_size(url: str) -> int:
    """The size of the database dumped into a fresh one: the same live rows stored anew."""
    copy = create_postgres_database()
    try:
        source, target = make_url(url), make_url(copy)
        common = ["-h", source.host or "127.0.0.1", "-p", str(source.port or 5432), "-U", source.username or "postgres"]
        dump = subprocess.Popen(["pg_dump", *common, "--no-owner", source.database or ""], stdout=subprocess.PIPE)
        subprocess.run(["psql", *common, "-q", "-o", "/dev/null", target.database or ""], stdin=dump.stdout,
                       check=True)
        dump.wait()
        engine = create_engine(copy.replace("postgresql://", "postgresql+psycopg://", 1)
                               if copy.startswith("postgresql://") else copy)
        try:
            with engine.connect() as connection:
                return int(connection.scalar(text("SELECT pg_database_size(current_database())")) or 0)
        finally:
            engine.dispose()
    finally:
        drop_postgres_database(copy, wait=False)


def purged(live: LiveService, engine: Any, timeout: float = 300) -> None:
    """Wait for the purge to remove every deleted job."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        with engine.connect() as connection:
            if not connection.scalar(text("SELECT count(*) FROM jobs WHERE deleted_at IS NOT NULL")):
                return
        time.sleep(1)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30, help="how long the load runs (default 30)")
    parser.add_argument("--every", type=float, default=30, help="seconds between two samples (default 30)")
    parser.add_argument("--decks", type=int, default=DECKS, help=f"decks a file (default {DECKS:,})")
    args = parser.parse_args()
    rng = random.Random(40)
    engine_10_20_30 = engines.get("10-20-30")
    cases = [engine_10_20_30.generate(rng) for _ in range(args.decks)]
    tally = Tally()
    samples: list[Sample] = []
    with tempfile.TemporaryDirectory() as tmp, live_service(
            "production", Path(tmp), DEALER_MAX_JOBS_PER_MINUTE_PER_CLIENT="100000") as live:
        port = int(live.url.rsplit(":", 1)[1])
        url = live.env["DEALER_DATABASE_URL"]
        engine = create_engine(url, pool_size=1)
        started = time.monotonic()
        until = started + args.minutes * 60
        threads = ([threading.Thread(target=uploader, args=(port, cases, seed, until, tally)) for seed in range(UPLOADERS)]
                   + [threading.Thread(target=reader, args=(port, until, tally)) for _ in range(READERS)]
                   + [threading.Thread(target=deleter, args=(port, until, tally))])
        for thread in threads:
            thread.start()
        print(f"dealer web + dealer worker (concurrency {live.concurrency}), production mode, shipped settings but "
              "DEALER_MAX_JOBS_PER_MINUTE_PER_CLIENT=100000 (the three clients share one address); "
              f"{UPLOADERS} clients uploading {args.decks:,}-deck files, {READERS} readers, all but the latest "
              f"{KEEP} jobs deleted", flush=True)
        print(f"{'minute':>6} {'database':>9} {'chunks':>8} {'live':>6} {'dead':>7} {'toast dead':>10} "
              f"{'xmin age':>8} {'web':>7} {'worker':>7}  (sizes in MB)", flush=True)
        while time.monotonic() < until:
            time.sleep(min(args.every, max(0.0, until - time.monotonic())))
            now = sample(live, engine, started)
            samples.append(now)
            print(f"{now.minute:6.1f} {now.database / MB:9.0f} {now.chunks / MB:8.0f} {now.live:6} {now.dead:7} "
                  f"{now.toast_dead:10} {now.oldest_xmin_age:8} {now.web / MB:7.0f} {now.worker / MB:7.0f}", flush=True)
        for thread in threads:
            thread.join()
        purged(live, engine)
        end = sample(live, engine, started)
        engine.dispose()
        live_size = fresh_size(url)
    peak = max(samples + [end], key=lambda s: s.database)
    after_first = next((s for s in samples if s.minute >= 1), samples[0] if samples else end)
    p99 = percentile(tally.seconds, 0.99)
    bound = 2 * live_size + TARGET_SLACK_BYTES
    flat = {name: getattr(end, name) <= MEMORY_GROWTH * getattr(after_first, name) + MEMORY_SLACK_BYTES
            for name in ("web", "worker")}
    targets = [
        ((f"database {end.database / MB:.0f} MB at the end (peak {peak.database / MB:.0f} MB at minute "
          f"{peak.minute:.1f}) within 2x the same live jobs stored anew ({live_size / MB:.0f} MB) + 200 MB "
          f"= {bound / MB:.0f} MB"), peak.database <= bound),
        (f"web memory flat: {after_first.web / MB:.0f} MB after the first minute, {end.web / MB:.0f} MB at the end",
         flat["web"]),
        ((f"worker memory flat: {after_first.worker / MB:.0f} MB after the first minute, "
          f"{end.worker / MB:.0f} MB at the end"), flat["worker"]),
        ((f"API p99 {p99 * 1000:.0f} ms <= {TARGET_P99_SECONDS * 1000:.0f} ms (p50 "
          f"{statistics.median(tally.seconds) * 1000 if tally.seconds else float('nan'):.0f} ms, "
          f"{len(tally.seconds)} reads)"), p99 <= TARGET_P99_SECONDS),
        (f"{tally.server_errors} answers 5xx (none)", tally.server_errors == 0),
    ]
    print(f"{args.minutes:g} minutes: {tally.jobs} jobs of {args.decks:,} decks made "
          f"({tally.jobs / args.minutes:.0f} a minute), {tally.deleted} deleted, the latest {KEEP} kept; "
          f"answers by status: {dict(sorted(tally.statuses.items()))}")
    for error, count in tally.errors.most_common(5):
        print(f"  client error: {error} ({count}x)")
    for what, met in targets:
        print(f"{'met' if met else 'MISSED'}: {what}")
    return 0 if all(met for _, met in targets) else 1


if __name__ == "__main__":
    sys.exit(figures.record("churn", main))
