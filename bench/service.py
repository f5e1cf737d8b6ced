"""The service end to end, side by side with ``dealer solve --jobs 2`` (``make bench-service``).

1. A file of random 10-20-30 decks (``--decks``, 100,000 by default; fixed seed) through
   Redis + PostgreSQL with a 2-process worker, traces stored: wall time from upload to
   ``succeeded`` as a ratio to ``dealer solve --jobs 2`` on the same file (target: at most
   1.5x), and the same in embedded mode (SQLite + filesystem broker; target: at most 2x).
2. Where the CPU time goes in each run, in CPU-seconds per 100,000 cases: the engine's
   solving loops, the workers' time outside them, the database server, the web process
   and the broker.
3. Time from upload to the first result visible in the API for a 3-deck file on Redis
   (target: under 1 s).
4. Peak memory of the web process while it takes a 100 MB and a 1 GB upload (target: under
   150 MB RSS, flat in file size).

Run it with ``python -m bench.service`` from the project's folder.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.engines import CACHE, judge_file
from worker import engines
from worker.engines.native import PURE_PYTHON
from worker.testing.live import DEALER, LiveService, live_service

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"production": 1.5, "embedded": 2.0}
TICKS = os.sysconf("SC_CLK_TCK")


def solve_locally(path: Path, traces: bool = False, pure: bool = False) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds, output) of ``dealer solve --jobs 2`` (``pure``: on the
    pure-Python engines, as where the native core is not built)."""
    command = [*DEALER, "solve", "10-20-30", str(path), "--jobs", "2", "--no-progress"]
    env = {**os.environ, PURE_PYTHON: "1"} if pure else None
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


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def named_cpu(name: str) -> float:
    """CPU seconds of every process tree of the machine whose root is named ``name`` (a PostgreSQL
    server and every backend it started, also those that have ended since)."""
    names: dict[int, tuple[str, int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = _stat(int(entry.name))
                if fields is not None:
                    names[int(entry.name)] = ((entry / "comm").read_text().strip(), int(fields[1]))
            except OSError:
                pass
    roots = [pid for pid, (comm, parent) in names.items()
             if comm == name and names.get(parent, ("", 0))[0] != name]
    return sum(tree_cpu(pid) for pid in roots)


@dataclass
class Account:
    """CPU seconds spent in one run, by where."""

    engine: float
    #: The worker's pool processes outside the engine's solving loops (the split, storing, Celery's side).
    workers: float
    #: Each worker's main process (Celery: receiving messages, handing them to the pool).
    celery: float
    database: float
    web: float
    broker: float

    def line(self, cases: int) -> str:
        per = 100_000 / cases
        parts = [("engine", self.engine), ("workers outside it", self.workers), ("celery main", self.celery),
                 ("database", self.database), ("web", self.web), ("broker", self.broker)]
        total = sum(value for _, value in parts)
        return ", ".join(f"{name} {value * per:.2f}" for name, value in parts) + f"; total {total * per:.2f}"


def own_cpu(pid: int) -> float:
    fields = _stat(pid)
    return sum(int(value) for value in fields[11:13]) / TICKS if fields else 0.0


def _snapshot(live: LiveService) -> dict[str, float]:
    assert live.web is not None
    return {"web": tree_cpu(live.web.pid), "workers": sum(tree_cpu(w.pid) for w in live.workers),
            "celery": sum(own_cpu(w.pid) for w in live.workers),
            "database": named_cpu("postgres"), "broker": named_cpu("redis-server")}


def through_service(live: LiveService, path: Path) -> tuple[float, bytes, Account]:
    before = _snapshot(live)
    start = time.perf_counter()
    job = live.submit(path, "10-20-30")
    job = live.wait(job["id"], timeout=3600)
    elapsed = time.perf_counter() - start
    after = _snapshot(live)
    assert job["status"] == "succeeded", job
    engine = _engine_cpu(live, job["id"])
    used = {key: after[key] - before[key] for key in after}
    if live.mode == "embedded":  # SQLite works inside the web and worker processes; no broker process
        used["database"] = used["broker"] = 0.0
    account = Account(engine=engine, workers=max(0.0, used["workers"] - used["celery"] - engine),
                      celery=used["celery"], database=used["database"], web=used["web"], broker=used["broker"])
    return elapsed, live.output(job["id"]), account


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


def _descendants(pid: int) -> list[int]:
    found = _children(pid)
    return found + [g for c in found for g in _descendants(c)]


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
    for _ in range(3):
        start = time.perf_counter()
        job = live.submit(Path(handle.name), "10-20-30")
        live.wait_until(lambda: live.client.job(job["id"])["done"] > 0, "a first result", timeout=30)
        best = min(best, time.perf_counter() - start)
    os.unlink(handle.name)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decks", type=int, default=100_000)
    parser.add_argument("--modes", nargs="*", default=["production", "embedded"])
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()

    path = judge_file("10-20-30", args.decks, 246)
    local, local_cpu, expected = solve_locally(path)
    traced, _, _ = solve_locally(path, traces=True)
    pure, pure_cpu, pure_output = solve_locally(path, pure=True)
    print(f"dealer solve --jobs 2, {args.decks:,} decks: {local:.2f} s, {local_cpu * 100_000 / args.decks:.2f} "
          f"CPU-s per 100,000 ({traced:.2f} s with --traces); on the pure-Python engines {pure:.2f} s, "
          f"{pure_cpu * 100_000 / args.decks:.2f} CPU-s per 100,000{'' if pure_output == expected else ', output DIFFERS'}")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes:
            with live_service(mode, Path(tmp), concurrency=2) as live:
                elapsed, output, account = through_service(live, path)
                same = output == expected
                ratio = elapsed / local
                ok = same and ratio <= TARGETS[mode]
                failures += not ok
                print(f"{mode:<10} upload→succeeded {elapsed:6.2f} s  ratio {ratio:4.2f}x (target ≤{TARGETS[mode]:.2f}x;"
                      f" {elapsed / traced:4.2f}x of solve --traces, {elapsed / pure:4.2f}x of the pure-Python"
                      f" solve)  output {'identical' if same else 'DIFFERS'}"
                      f"  {'ok' if ok else 'MISSED'}")
                print(f"{mode:<10} CPU-s per 100,000 cases: {account.line(args.decks)}")
                if mode == "production":
                    latency = first_result_latency(live)
                    failures += latency >= 1
                    print(f"{mode:<10} first result of a 3-deck file after {latency:.3f} s (target < 1 s)"
                          f"  {'ok' if latency < 1 else 'MISSED'}")
                    if not args.skip_memory:
                        small, large = upload_memory(live, 100), upload_memory(live, 1024)
                        failures += large >= 150
                        print(f"{mode:<10} web peak RSS: {small:.0f} MB for a 100 MB upload, {large:.0f} MB for "
                              f"1 GB (target < 150 MB, flat)  {'ok' if large < 150 else 'MISSED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
