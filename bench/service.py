"""The service end to end, side by side with ``dealer solve --jobs 2 --traces`` (``make bench-service``).

1. A file of random 10-20-30 decks (``--decks``, 100,000 by default; fixed seed) through
   Redis + PostgreSQL and through the embedded mode (SQLite, file broker), each with
   ``--workers`` worker processes (separate ``dealer worker`` processes, as on separate hosts;
   one by default) of 2 pool processes, traces stored, shipped defaults: the wall time from
   upload to ``succeeded`` as a ratio to ``dealer solve --jobs 2 --traces`` on the same file
   (targets: at most 2.0x on Redis + PostgreSQL, 2.5x embedded), beside ``dealer solve --jobs 2``
   without traces and on the pure-Python engines.
2. Where the CPU goes, in CPU-seconds per 100,000 decks, part by part: the engine's solving
   calls, the worker processes around them (the split, storing, Celery's side in the pool),
   Celery's main processes, the database server, the web process and the broker (target: at
   most 1.5 in all). PostgreSQL and Redis are private servers started for the benchmark
   (PostgreSQL with ``fsync`` on, as in production), so that their CPU is this run's alone.
3. The same file submitted again: its results are copied from the first job (target: no
   slower than the first run).
4. Time from upload to the first result visible in the API for a 3-deck file (target: under 1 s),
   and the web process's peak memory taking a 100 MB and a 1 GB upload (target: under 150 MB
   RSS, flat in file size).

Run it with ``python -m bench.service`` from the project's folder.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench.engines import CACHE, judge_file
from bench import figures
from worker import engines
from worker.testing.live import DEALER, LiveService, live_service
from worker.testing.servers import PrivatePostgres, PrivateRedis, ServiceMissing

ROOT = Path(__file__).resolve().parents[1]
#: Upload to ``succeeded`` over ``dealer solve --jobs 2 --traces``, and CPU-seconds per 100,000 decks.
TARGETS = {"production": 2.0, "embedded": 2.5}
CPU_TARGET = 1.5
TICKS = os.sysconf("SC_CLK_TCK")


def solve_locally(path: Path, traces: bool = False, pure: bool = False) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds, output) of ``dealer solve --jobs 2`` (``pure``: on the
    pure-Python engines, as where the native core is not built)."""
    command = [*DEALER, "solve", "10-20-30", str(path), "--jobs", "2", "--no-progress"]
    env = {**os.environ, "DEALER_PURE_PYTHON": "1" if pure else "0"}
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as trace_file:
        if traces:
            command += ["--traces", trace_file.name]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, check=True, cwd=ROOT, env=env)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, done.stdout


# --- CPU accounting from /proc -------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process, its live descendants and the children it has reaped."""
    fields = _stat(pid)
    if fields is None:
        return 0.0
    total = sum(int(value) for value in fields[11:15]) / TICKS  # utime, stime, cutime, cstime
    for child in _children(pid):
        total += tree_cpu(child)
    return total


def own_cpu(pid: int) -> float:
    fields = _stat(pid)
    return sum(int(value) for value in fields[11:13]) / TICKS if fields else 0.0


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _descendants(pid: int) -> list[int]:
    found = _children(pid)
    return found + [g for c in found for g in _descendants(c)]


def postmaster_pid(data_dir: Path) -> int:
    return int((data_dir / "postmaster.pid").read_text().split()[0])


@dataclass
class Account:
    """CPU seconds spent in one run, by where."""

    engine: float
    #: The workers' pool processes outside the engine's solving calls (the split, storing, Celery's side).
    workers: float
    #: Each worker's main process (Celery: receiving messages, handing them to the pool; the heartbeat).
    celery: float
    database: float
    web: float
    broker: float

    def total(self) -> float:
        return self.engine + self.workers + self.celery + self.database + self.web + self.broker

    def line(self, cases: int) -> str:
        per = 100_000 / cases
        parts = [("engine", self.engine), ("workers around it", self.workers), ("celery main", self.celery),
                 ("database", self.database), ("web", self.web), ("broker", self.broker)]
        return ", ".join(f"{name} {value * per:.2f}" for name, value in parts) + f"; total {self.total() * per:.2f}"


@dataclass
class Servers:
    """The private servers of a production run, whose CPU the account reads (``None`` embedded)."""

    postgres: PrivatePostgres | None = None
    redis: PrivateRedis | None = None

    def cpu(self) -> tuple[float, float]:
        database = tree_cpu(postmaster_pid(self.postgres.dir / "data")) if self.postgres else 0.0
        broker = tree_cpu(self.redis.process.pid) if self.redis and self.redis.process else 0.0
        return database, broker


@contextlib.contextmanager
def servers(mode: str) -> Iterator[Servers]:
    if mode != "production":
        yield Servers()
        return
    postgres, redis = PrivatePostgres(durable=os.environ.get("BENCH_FSYNC", "1") == "1"), PrivateRedis()
    try:
        postgres.start()
        redis.start()
        yield Servers(postgres, redis)
    finally:
        redis.stop()
        postgres.destroy()


def _snapshot(live: LiveService, found: Servers) -> dict[str, float]:
    assert live.web is not None
    database, broker = found.cpu()
    return {"web": tree_cpu(live.web.pid), "workers": sum(tree_cpu(w.pid) for w in live.workers),
            "celery": sum(own_cpu(w.pid) for w in live.workers), "database": database, "broker": broker}


def through_service(live: LiveService, found: Servers, path: Path, game: str = "10-20-30"
                    ) -> tuple[float, bytes, Account, dict[str, object]]:
    before = _snapshot(live, found)
    start = time.time()
    job = live.submit(path, game)
    while job["status"] not in ("succeeded", "failed", "cancelled"):
        # The end is read from the job's own clock (its finished_at): a client polling ten times a second
        # would cost the web process more than the job does, and more the slower the machine.
        time.sleep(0.5)
        job = live.client.job(job["id"])
    elapsed = datetime.fromisoformat(job["finished_at"].replace("Z", "+00:00")).timestamp() - start
    after = _snapshot(live, found)
    assert job["status"] == "succeeded", job
    engine = _engine_cpu(live, job["id"])
    used = {key: after[key] - before[key] for key in after}
    account = Account(engine=engine, workers=max(0.0, used["workers"] - used["celery"] - engine),
                      celery=used["celery"], database=used["database"], web=used["web"], broker=used["broker"])
    return elapsed, live.output(job["id"]), account, job


def _engine_cpu(live: LiveService, job_id: int) -> float:
    from worker.store.models import Job

    with live.db.session(write=False) as session:
        job = session.get(Job, job_id)
        return (job.solve_cpu_us if job is not None else 0) / 1e6


# --- memory and latency --------------------------------------------------------------------------


def peak_rss_mb(pid: int) -> float:
    """VmHWM of a process and its children (gunicorn serves from a child)."""
    total = 0.0
    for candidate in [pid, *_descendants(pid)]:
        try:
            for line in Path(f"/proc/{candidate}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total = max(total, int(line.split()[1]) / 1024)
        except FileNotFoundError:
            pass
    return total


def big_upload(size_mb: int) -> Path:
    """A 10-20-30 judge file of about ``size_mb`` MB (random decks)."""
    path = CACHE / f"10-20-30-{size_mb}MB.in"
    if not path.exists():
        engine = engines.get("10-20-30")
        rng = random.Random(size_mb)
        decks = [engine.generate(rng) + "\n" for _ in range(2000)]
        CACHE.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".tmp"), "w") as out:
            written = 0
            while written < size_mb << 20:
                block = "".join(decks)
                out.write(block)
                written += len(block)
            out.write("0\n")
        path.with_suffix(".tmp").rename(path)
    return path


def upload_memory(live: LiveService, size_mb: int) -> float:
    assert live.web is not None
    path = big_upload(size_mb)
    before = peak_rss_mb(live.web.pid)
    job = live.submit(path, "10-20-30")
    live.client._json("POST", f"/api/jobs/{job['id']}/cancel")
    return max(before, peak_rss_mb(live.web.pid))


def first_result_latency(live: LiveService) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".in", delete=False) as handle:
        engine = engines.get("10-20-30")
        rng = random.Random(3)
        handle.write("".join(engine.generate(rng) + "\n" for _ in range(3)) + "0\n")
    best = float("inf")
    for attempt in range(3):
        # Three different files: a file seen before is copied, not solved.
        Path(handle.name).write_text("".join(engine.generate(rng) + "\n" for _ in range(3)) + "0\n")
        start = time.perf_counter()
        job = live.submit(Path(handle.name), "10-20-30")
        live.wait_until(lambda: live.client.job(job["id"])["done"] > 0, "a first result", timeout=30)
        best = min(best, time.perf_counter() - start)
    os.unlink(handle.name)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decks", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=1, help="separate `dealer worker` processes (2 pool processes each)")
    parser.add_argument("--modes", nargs="*", default=["production", "embedded"])
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-pure", action="store_true", help="no pure-Python baseline (it takes minutes)")
    parser.add_argument("--cache-games", nargs="*", default=["accordion", "mahjong"],
                        help="games whose files are also sent twice: solved, then copied")
    parser.add_argument("--cache-cases", type=int, default=100_000)
    args = parser.parse_args()
    # A plain `kill` must still stop the private servers and live processes (their finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    path = judge_file("10-20-30", args.decks, 246)
    local, local_cpu, expected = solve_locally(path)
    traced, traced_cpu, _ = solve_locally(path, traces=True)
    per = 100_000 / args.decks
    print(f"{args.decks:,} decks of 10-20-30, load average before: {os.getloadavg()[0]:.1f}")
    print(f"dealer solve --jobs 2 --traces {traced:6.2f} s ({traced_cpu * per:.2f} CPU-s per 100,000); "
          f"without --traces {local:.2f} s ({local_cpu * per:.2f})")
    if not args.skip_pure:
        pure, pure_cpu, pure_output = solve_locally(path, pure=True)
        print(f"dealer solve --jobs 2 on the pure-Python engines {pure:.2f} s ({pure_cpu * per:.2f} CPU-s per 100,000)"
              f"{'' if pure_output == expected else ', output DIFFERS'}")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes:
            try:
                with servers(mode) as found, live_service(
                        mode, Path(tmp) / mode, concurrency=2, workers=args.workers,
                        database_url=found.postgres.url if found.postgres else None,
                        broker_url=found.redis.url if found.redis else None) as live:
                    failures += _measure(live, found, mode, path, expected, traced, args)
            except ServiceMissing as missing:
                print(f"{mode:<10} skipped: {missing}")
    return 1 if failures else 0


def _measure(live: LiveService, found: Servers, mode: str, path: Path, expected: bytes, traced: float,
             args: argparse.Namespace) -> int:
    failures = 0
    label = f"{mode:<10}"
    elapsed, output, account, job = through_service(live, found, path)
    same = output == expected
    ratio = elapsed / traced
    cpu = account.total() * 100_000 / args.decks
    ok = same and ratio <= TARGETS[mode] and cpu <= CPU_TARGET
    failures += not ok
    print(f"{label} {args.workers} worker(s): upload→succeeded {elapsed:6.2f} s = {ratio:4.2f}x solve --traces "
          f"(target ≤{TARGETS[mode]:.1f}x); {args.decks / elapsed:,.0f} decks/s stored; {job['chunk_size']:,} "
          f"decks a chunk; output {'identical' if same else 'DIFFERS'}  {'ok' if ok else 'MISSED'}")
    print(f"{label} CPU-s per 100,000 decks: {account.line(args.decks)} (target ≤{CPU_TARGET})")
    if mode == "production" and account.database > 0:
        busy = account.total() - account.database - account.broker
        print(f"{label} one PostgreSQL core feeds {busy / account.database:.1f} cores of the rest of the service")
    again, output, _, copied = through_service(live, found, path)
    failures += again > elapsed or output != expected
    print(f"{label} the same file again: {again:6.2f} s ({again / elapsed:.2f}x the first run; "
          f"{copied['cache_hits']:,} decks copied)  {'ok' if again <= elapsed and output == expected else 'MISSED'}")
    for game in args.cache_games:
        other = judge_file(game, args.cache_cases, 127)
        first, _, _, _ = through_service(live, found, other, game)
        second, _, _, copied = through_service(live, found, other, game)
        failures += second > first
        print(f"{label} {args.cache_cases:,} {engines.get(game).unit}s of {game}: solved {first:5.2f} s, the same file "
              f"again (copied) {second:5.2f} s = {second / first:.2f}x  {'ok' if second <= first else 'MISSED'}")
    if mode == "production":
        latency = first_result_latency(live)
        failures += latency >= 1
        print(f"{label} first result of a 3-deck file after {latency:.3f} s (target < 1 s)"
              f"  {'ok' if latency < 1 else 'MISSED'}")
        if not args.skip_memory:
            small, large = upload_memory(live, 100), upload_memory(live, 1024)
            failures += large >= 150
            print(f"{label} web peak RSS: {small:.0f} MB for a 100 MB upload, {large:.0f} MB for "
                  f"1 GB (target < 150 MB, flat)  {'ok' if large < 150 else 'MISSED'}")
    return failures


if __name__ == "__main__":
    sys.exit(figures.record("service", main))
