"""Many readers at once: 16 clients for 30 s against the pages and API calls people keep open
(dashboard, jobs, a job's results, history), on the scale benchmark's database of 10,000,000
stored cases (``make bench-load``).

The web server is ``dealer web`` with its shipped defaults (gunicorn's gevent worker, 2 processes)
on the machine's PostgreSQL and Redis; the clients are threads of this process, each
with a kept-alive connection, taking the reads of ``bench/scale.py`` in turn. Printed: requests
per second, errors, and the latency percentiles overall and of the slowest reads (targets:
no error, p99 under 1 s).

Run ``python -m bench.scale`` once first, or let this fill the database (it takes minutes).
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bench import figures
from bench.scale import endpoints, fill, scale_settings, test_client
from worker.store.database import Database
from worker.store.migrate import upgrade
from worker.testing.live import DEALER
from worker.testing.servers import free_port, fresh_redis_url, listening

TARGET_P99_MS = 1000


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def client(port: int, reads: list[tuple[str, str]], start: int, until: float, tally: Tally) -> None:
    """One client: the reads in turn from ``start`` on, each answer read whole, until ``until``."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    mine: list[tuple[str, float]] = []
    errors: list[str] = []
    turn = start
    while time.monotonic() < until:
        what, path = reads[turn % len(reads)]
        turn += 1
        began = time.perf_counter()
        try:
            connection.request("GET", path, headers={"Accept": "application/json, text/html"})
            response = connection.getresponse()
            response.read()
            status = response.status
        except (OSError, http.client.HTTPException) as error:
            errors.append(f"{what}: {error.__class__.__name__}: {error}")
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            continue
        mine.append((what, (time.perf_counter() - began) * 1000))
        # /healthz answers 503 here by design (no worker runs): it still answered.
        if status != 200 and not (path == "/healthz" and status == 503):
            errors.append(f"{what}: HTTP {status}")
    connection.close()
    with tally.lock:
        for what, ms in mine:
            tally.latencies[what].append(ms)
        tally.errors.extend(errors)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--cases", type=int, default=10_000_000, help="cases the database holds (filled if fewer)")
    parser.add_argument("--web-workers", type=int, help="gunicorn processes (default: dealer web's)")
    args = parser.parse_args()

    settings = scale_settings()
    db = Database(settings)
    upgrade(db)
    fill(db, args.cases)
    reads = endpoints(db, test_client(db, settings))

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEALER_")}
    env.update(DEALER_DATABASE_URL=settings.database_url, DEALER_BROKER_URL=fresh_redis_url(),
               DEALER_DATA_DIR=str(settings.data_dir), PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    log = open(settings.data_dir / "load-web.log", "ab")
    more = ["--workers", str(args.web_workers)] if args.web_workers else []
    server = subprocess.Popen([*DEALER, "web", "--host", "127.0.0.1", "--port", str(port), *more], env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not listening("127.0.0.1", port):
            if time.monotonic() > deadline or server.poll() is not None:
                print(f"the web server did not start: see {settings.data_dir / 'load-web.log'}")
                return 1
            time.sleep(0.2)
        for _, path in reads:  # one round first, so that every process has its connections and caches
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", path)
            connection.getresponse().read()
            connection.close()
        tally = Tally()
        began = time.monotonic()
        until = began + args.seconds
        threads = [threading.Thread(target=client, args=(port, reads, n * 7, until, tally))
                   for n in range(args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - began
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)

    every = [ms for values in tally.latencies.values() for ms in values]
    p99 = percentile(every, 0.99)
    print(f"{args.clients} clients for {elapsed:.0f} s against `dealer web` (shipped defaults) on "
          f"{args.cases:,} stored cases: {len(every):,} requests, {len(every) / elapsed:.0f} requests/s, "
          f"{len(tally.errors)} errors")
    print(f"latency: median {statistics.median(every):.0f} ms, p95 {percentile(every, 0.95):.0f} ms, "
          f"p99 {p99:.0f} ms (target under {TARGET_P99_MS} ms), max {max(every):.0f} ms\n")
    print("the slowest reads by p99:")
    for what, values in sorted(tally.latencies.items(), key=lambda item: -percentile(item[1], 0.99))[:8]:
        print(f"  {what:<38} {len(values):6,} requests  median {statistics.median(values):6.0f} ms  "
              f"p99 {percentile(values, 0.99):6.0f} ms")
    for error in sorted(set(tally.errors))[:10]:
        print(f"  error: {error}")
    ok = not tally.errors and p99 < TARGET_P99_MS
    print("\nok" if ok else "\nMISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(figures.record("load", main))
