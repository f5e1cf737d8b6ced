"""Viewers of the live pages against ``dealer web``: 1,000 event streams of a job and 500 of the dashboard open
on one web process during a job, while ``GET /api/jobs`` is asked every 0.25 s (``webui.live``).

Targets: at least 99 % of the streams served, each written to at least every 2 s (its figures, or a comment
line when they did not change; a job stream that received ``end`` counts as served); ``GET /api/jobs`` p99
<= 500 ms; the database's transactions a second within 2x of those of the same run with 10 streams (one
poller a process reads each thing watched once a tick, whatever the number of its viewers); a refused
stream's cost, in this process, well under a millisecond (100 µs).

The service is ``dealer web`` and one ``dealer worker`` with their shipped settings on the machine's
PostgreSQL and Redis, but for the worker: one pool process on the pure-Python engines, so that the job
lasts through the run, its figures changing at every tick (issue 40 named a 200,000-deck job, which even
so ends within seconds on a quiet machine: the job has ``--decks``, 1,500,000 by default). They are
started by the live-service harness (``worker.testing.live``: one web process); the
streams come from a process of their own, from many addresses of ``127.0.0.0/8`` (each address a client
within its share, ``DEALER_LIVE_STREAMS_PER_CLIENT``). First 10 streams for ``--seconds``, then all of them
for as long: each phase's transactions a second (``pg_stat_database``), the API's latency and the web
processes' CPU. ``python -m bench.viewers`` writes its figure into ``docs/figures/viewers.md``.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import psycopg
from flask import Flask

from bench import figures
from bench.engines import judge_file
from bench.slow_clients import FAIL_SECONDS, measure, summary
from webui.live import Admission
from worker.config import Settings
from worker.testing.live import LiveService, live_service
from worker.testing.streams import Stream, Streams

TARGET_SERVED = 0.99
TARGET_GAP_SECONDS = 2.0
TARGET_P99_SECONDS = 0.5
TARGET_QUERIES_RATIO = 2.0
TARGET_REFUSAL_SECONDS = 100e-6
#: Streams a phase opens with few viewers: the baseline of the database's load.
FEW = 10
SHARE = next(f.default for f in fields(Settings) if f.name == "live_streams_per_client")


@dataclass
class Phase:
    streams: int
    served: int
    refused: int
    worst_gap: float
    transactions_per_second: float
    api: dict[str, float]
    api_failures: int
    web_cpu: float
    job_status: str
    unserved: dict[str, int]


def watch(port: int, paths: list[str], ready: Any, measuring: Any, done: Any, results: Any) -> None:
    """The streams, in a process of their own: opened, read until ``done``; what each saw while
    ``measuring`` (from its setting to ``done``'s) goes to ``results``."""
    per_address = max(1, SHARE * 9 // 10)
    with Streams("127.0.0.1", port).running() as streams:
        opened = [streams.open(path, source=f"127.0.{1 + k // per_address // 250}.{2 + k // per_address % 250}")
                  for k, path in enumerate(paths)]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not all(s.status is not None and (s.events or s.ended)
                                                      for s in opened):
            time.sleep(0.2)
        ready.set()
        measuring.wait()
        start = time.monotonic()
        for stream in opened:  # gaps are counted from here on
            stream.longest_gap, stream.last_at = 0.0, start
        done.wait()
        end = time.monotonic()
        gaps = [max(s.longest_gap, 0.0 if s.ended else end - (s.last_at or start)) for s in opened]
        served = sum(1 for s, gap in zip(opened, gaps, strict=True)
                     if s.status == 200 and s.events and (gap <= TARGET_GAP_SECONDS or s.finished)
                     and (not s.ended or s.finished))
        refused = sum(1 for s in opened if s.status == 429)
        unserved = Counter(_why(s, gap) for s, gap in zip(opened, gaps, strict=True))
        unserved.pop("", None)
        results.put((served, refused, max(gaps, default=0.0), dict(unserved)))


def _why(stream: Stream, gap: float) -> str:
    """Why a stream was not served ("" when it was)."""
    if stream.status is None:
        return "no answer" + (" (closed)" if stream.ended else "")
    if stream.status != 200:
        return f"answered {stream.status}"
    if not stream.events:
        return "no event"
    if stream.ended and not stream.finished:
        return "ended before its time"
    if gap > TARGET_GAP_SECONDS and not stream.finished:
        return f"silent over {TARGET_GAP_SECONDS:g} s"
    return ""


def transactions(url: str) -> int:
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as connection:
        found = connection.execute("SELECT xact_commit + xact_rollback FROM pg_stat_database "
                                   "WHERE datname = current_database()").fetchone()
    return int(found[0]) if found else 0


def cpu_seconds(pid: int) -> float:
    """CPU seconds of ``pid`` and its children (the web's arbiter and its web process)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for found in [pid, *_children(pid)]:
        try:
            stat = Path(f"/proc/{found}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(stat[11]) + int(stat[12])) / tick
    return total


def _children(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            listed = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        found += [int(child) for child in listed]
        todo += [int(child) for child in listed]
    return found


def phase(live: LiveService, port: int, paths: list[str], seconds: float, job_id: int) -> Phase:
    context = multiprocessing.get_context("fork")
    ready, measuring, done, results = context.Event(), context.Event(), context.Event(), context.Queue()
    viewers = context.Process(target=watch, args=(port, paths, ready, measuring, done, results), daemon=True)
    viewers.start()
    if not ready.wait(300):
        raise SystemExit("the streams could not be opened")
    url, web = live.env["DEALER_DATABASE_URL"], live.web
    assert web is not None
    began, cpu, xacts = time.monotonic(), cpu_seconds(web.pid), transactions(url)
    measuring.set()
    asked = measure(port, seconds, 0.25)
    done.set()
    elapsed = time.monotonic() - began
    xacts, cpu = transactions(url) - xacts, cpu_seconds(web.pid) - cpu
    served, refused, gap, unserved = results.get(timeout=120)
    viewers.join()
    status = (live.get(f"/api/jobs/{job_id}") or {}).get("status", "?")
    return Phase(len(paths), served, refused, gap, xacts / elapsed, summary(asked), len(asked.failures),
                 cpu / elapsed, status, unserved)


def refusal_seconds(count: int = 10_000) -> float:
    """CPU seconds of one refusal by :class:`webui.live.Admission` (a client at its share), in this process:
    what a refused stream costs the web before any other work (its request's parsing by gunicorn aside)."""
    app = Flask("refusal")
    app.wsgi_app = lambda environ, start_response: [b""]  # type: ignore[method-assign]  # the app admitted to
    admission = Admission(app, per_client=1)
    environ = {"PATH_INFO": "/events/dashboard", "REMOTE_ADDR": "127.0.0.1", "SERVER_SOFTWARE": "gunicorn/23",
               "wsgi.multithread": True, "HTTP_AUTHORIZATION": "Bearer " + "k" * 40,
               "HTTP_COOKIE": "dealer_session=" + "s" * 80}
    admission(dict(environ), lambda status, headers: None)  # the client's one stream, held open
    began = time.process_time()
    for _ in range(count):
        admission(dict(environ), lambda status, headers: None)
    return (time.process_time() - began) / count


def streams_of(job_id: int, jobs: int, boards: int) -> list[str]:
    return [f"/events/jobs/{job_id}"] * jobs + ["/events/dashboard"] * boards


def show(name: str, found: Phase) -> None:
    api = ", ".join(f"{key} {value * 1000:.0f} ms" for key, value in found.api.items()) or "none answered"
    print(f"{name}: {found.streams} streams, {found.served} served ({found.served / found.streams:.1%}), "
          f"{found.refused} refused, longest silence {found.worst_gap:.1f} s; GET /api/jobs {api}, "
          f"{found.api_failures} failed (over {FAIL_SECONDS:.0f} s or not 200); database "
          f"{found.transactions_per_second:.0f} transactions/s; web CPU {found.web_cpu:.0%} of a CPU; "
          f"the job {found.job_status} at the end")
    if found.unserved:
        print("  not served: " + ", ".join(f"{count} {why}" for why, count in sorted(found.unserved.items())))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1000, help="streams of the job (default 1000)")
    parser.add_argument("--dashboards", type=int, default=500, help="streams of the dashboard (default 500)")
    parser.add_argument("--decks", type=int, default=1_500_000, help="the job's decks (default 1,500,000)")
    parser.add_argument("--seconds", type=float, default=30, help="how long each phase is measured (default 30)")
    args = parser.parse_args()
    path = judge_file("10-20-30", args.decks, 40)
    # The worker on the pure-Python engines (as bench/faults.py has it) in one process, so that the job lasts
    # through both phases; the web's part in the streams runs no engine.
    with tempfile.TemporaryDirectory() as tmp, live_service("production", Path(tmp), concurrency=1,
                                                            DEALER_PURE_PYTHON="1") as live:
        port = int(live.url.rsplit(":", 1)[1])
        job = live.submit(path, "10-20-30")
        live.wait_until(lambda: (live.get(f"/api/jobs/{job['id']}") or {}).get("done", 0) > 0, "the job to start",
                        timeout=300)
        few = phase(live, port, streams_of(job["id"], FEW * 2 // 3, FEW - FEW * 2 // 3), args.seconds, job["id"])
        show("few viewers", few)
        many = phase(live, port, streams_of(job["id"], args.jobs, args.dashboards), args.seconds, job["id"])
        show("many viewers", many)
    refusal = refusal_seconds()
    print(f"a stream refused (a client beyond its share) costs {refusal * 1e6:.0f} µs of CPU before any other "
          "work (the Admission alone, in-process)")
    served = many.served / many.streams
    ratio = many.transactions_per_second / few.transactions_per_second if few.transactions_per_second else math.inf
    p99 = many.api.get("p99", math.inf)
    checks = [
        ((f"streams served {served:.1%} (target >= {TARGET_SERVED:.0%}, written to at least every "
          f"{TARGET_GAP_SECONDS:g} s)"), served >= TARGET_SERVED),
        ((f"GET /api/jobs p99 {p99 * 1000:.0f} ms, {many.api_failures} failed "
          f"(target <= {TARGET_P99_SECONDS * 1000:.0f} ms, none failing)"),
         p99 <= TARGET_P99_SECONDS and not many.api_failures),
        ((f"database transactions a second {ratio:.2f}x those with {FEW} streams "
          f"(target <= {TARGET_QUERIES_RATIO:g}x)"), ratio <= TARGET_QUERIES_RATIO),
        (f"a refusal {refusal * 1e6:.0f} µs (target <= {TARGET_REFUSAL_SECONDS * 1e6:.0f} µs)",
         refusal <= TARGET_REFUSAL_SECONDS),
        (f"the job still running through both phases ({few.job_status}, then {many.job_status})",
         many.job_status not in ("succeeded", "failed", "cancelled")),
    ]
    for text, met in checks:
        print(f"{text}: {'met' if met else 'NOT met'}")
    return 0 if all(met for _, met in checks) else 1


if __name__ == "__main__":
    sys.exit(figures.record("viewers", main))
