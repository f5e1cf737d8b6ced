"""The service end to end, side by side with ``dealer solve --jobs 2`` (``make bench-service``).

1. A 100,000-deck 10-20-30 file (fixed seed) through Redis + PostgreSQL with a
   2-process worker, traces stored: wall time from upload to ``succeeded`` as a
   ratio to ``dealer solve --jobs 2`` on the same file (target: at most 1.5x).
2. The same in embedded mode (SQLite + filesystem broker).
3. Peak memory of the web process while it takes a 200 MB upload (target: under
   150 MB RSS, flat in file size: 50 MB is measured too).
4. Time from upload to the first result visible in the API for a 3-deck file on
   Redis (target: under 1 s).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from bench.engines import CACHE, judge_file
from worker.testing.live import DEALER, LiveService, live_service
from worker import engines


def solve_locally(path: Path, traces: bool = False) -> tuple[float, bytes]:
    command = [*DEALER, "solve", "10-20-30", str(path), "--jobs", "2", "--no-progress"]
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as trace_file:
        if traces:
            command += ["--traces", trace_file.name]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, check=True, cwd=ROOT)
        return time.perf_counter() - start, done.stdout


def through_service(live: LiveService, path: Path) -> tuple[float, bytes]:
    start = time.perf_counter()
    job = live.submit(path, "10-20-30")
    job = live.wait(job["id"], timeout=1800)
    elapsed = time.perf_counter() - start
    assert job["status"] == "succeeded", job
    return elapsed, live.output(job["id"])


def peak_rss_mb(pid: int) -> float:
    """VmHWM of a process and its children (gunicorn serves from a child)."""
    total = 0.0
    for candidate in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{candidate}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total = max(total, int(line.split()[1]) / 1024)
        except FileNotFoundError:
            pass
    return total


def _children(pid: int) -> list[int]:
    try:
        found = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []
    return found + [g for c in found for g in _children(c)]


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
    local, expected = solve_locally(path)
    traced, _ = solve_locally(path, traces=True)
    print(f"dealer solve --jobs 2, {args.decks:,} decks: {local:.2f} s ({traced:.2f} s with --traces)")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes:
            with live_service(mode, Path(tmp), concurrency=2) as live:
                elapsed, output = through_service(live, path)
                same = output == expected
                ratio = elapsed / local
                ok = same and ratio <= 1.5
                failures += not ok
                print(f"{mode:<10} upload→succeeded {elapsed:6.2f} s  ratio {ratio:4.2f}x (target ≤1.50x;"
                      f" {elapsed / traced:4.2f}x of solve --traces)  output {'identical' if same else 'DIFFERS'}"
                      f"  {'ok' if ok else 'MISSED'}")
                if mode == "production":
                    latency = first_result_latency(live)
                    failures += latency >= 1
                    print(f"{mode:<10} first result of a 3-deck file after {latency:.3f} s (target < 1 s)"
                          f"  {'ok' if latency < 1 else 'MISSED'}")
                    if not args.skip_memory:
                        small, large = upload_memory(live, 50), upload_memory(live, 200)
                        failures += large >= 150
                        print(f"{mode:<10} web peak RSS: {small:.0f} MB for a 50 MB upload, {large:.0f} MB for "
                              f"200 MB (target < 150 MB, flat)  {'ok' if large < 150 else 'MISSED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
