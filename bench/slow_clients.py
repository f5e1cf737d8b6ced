"""Slow clients against ``dealer web``: 1,000 connections sending a request's head a byte a second and 100
uploads sending their body a byte a second, each opened again as soon as the server drops it, while
``GET /api/jobs`` is asked every 0.5 s for a minute (target: p99 <= 500 ms, none failing; ``webui.pacing``).

The server is ``dealer web`` with its shipped settings and no proxy in front, started by the live-service
harness (``worker.testing.live``: one web process, so every slow client lands on it), on the machine's
PostgreSQL and Redis (``--mode embedded``: SQLite and the file broker), with no worker; the slow clients
run in a process of their own, beside the one asking. ``--record``
writes the figures, the settings and the machine into ``docs/figures/slow_clients.md``.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webui.pacing import CONNECTIONS, GRACE_SECONDS, HEADER_SECONDS, MIN_RATE
from worker.testing.live import live_service
from worker.testing.slow import SlowClients

ROOT = Path(__file__).resolve().parents[1]
FIGURE = ROOT / "docs" / "figures" / "slow_clients.md"
TARGET_P99_SECONDS = 0.5
#: What one request may take before it counts as failed.
FAIL_SECONDS = 10.0


@dataclass
class Asked:
    seconds: list[float]
    failures: list[str]


def ask(port: int) -> float:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=FAIL_SECONDS)
    try:
        connection.request("GET", "/api/jobs")
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"answered {response.status}")
    finally:
        connection.close()
    return time.perf_counter() - started


def attack(port: int, heads: int, uploads: int, ready: Any, results: Any) -> None:
    """The slow clients, in a process of their own (so that the requests measured do not wait for their
    thread's turn), until ``ready`` is cleared; then what they saw goes to ``results``."""
    with SlowClients("127.0.0.1", port, reconnect=True).running() as slow:
        slow.add_heads(heads)
        slow.add_uploads(uploads)
        ready.set()
        while ready.is_set():
            time.sleep(0.2)
        held = len(slow.connections) - len(slow.answered(slow.connections))
        dropped = sum(1 for kind, answer in slow.ended if kind == "head" and not answer)
        cut = sum(1 for kind, answer in slow.ended if kind == "upload" and answer.startswith(b"HTTP/1.1 408"))
    results.put((held, dropped, cut))


def measure(port: int, seconds: float, every: float) -> Asked:
    """``GET /api/jobs`` every ``every`` seconds (at once when the one before took longer) for ``seconds``."""
    asked = Asked([], [])
    start = time.monotonic()
    at = start
    while at < start + seconds:
        time.sleep(max(0.0, at - time.monotonic()))
        try:
            asked.seconds.append(ask(port))
        except (OSError, RuntimeError) as failed:
            asked.failures.append(f"{type(failed).__name__}: {failed}")
        at += every
    return asked


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor() or "unknown")
    return f"{os.cpu_count()} CPUs (`nproc`), {model}, {platform.system()} {platform.release()}"


def busiest() -> str:
    """The processes using the most CPU over a second now (top's second sample), other than this
    benchmark and the server it started."""
    mine = {os.getpid(), *_descendants(os.getpid())}
    sampled = subprocess.run(["top", "-b", "-n", "2", "-d", "1", "-w", "200"], capture_output=True, text=True,
                             check=False).stdout
    last = sampled[sampled.rfind("\ntop -"):].splitlines()
    header = next((at for at, line in enumerate(last) if line.lstrip().startswith("PID")), len(last))
    found = []
    for line in last[header + 1:]:
        fields = line.split()
        if len(fields) >= 12 and int(fields[0]) not in mine and float(fields[8]) >= 5:
            found.append(f"{fields[11]} {float(fields[8]):.0f}%")
    return ", ".join(found[:8]) or "nothing above 5% of a CPU"


def _descendants(pid: int) -> set[int]:
    listed = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True, check=False).stdout
    children: dict[int, list[int]] = {}
    for line in listed.splitlines():
        child, parent = map(int, line.split())
        children.setdefault(parent, []).append(child)
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("production", "embedded"), default="production")
    parser.add_argument("--heads", type=int, default=1000, help="connections trickling a head (default 1000)")
    parser.add_argument("--uploads", type=int, default=100, help="uploads trickling a body (default 100)")
    parser.add_argument("--seconds", type=float, default=60, help="how long GET /api/jobs is asked (default 60)")
    parser.add_argument("--every", type=float, default=0.5, help="seconds between two asks (default 0.5)")
    parser.add_argument("--record", action="store_true", help=f"write the figures into {FIGURE.relative_to(ROOT)}")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, live_service(args.mode, Path(tmp), workers=0) as live:
        port = int(live.url.rsplit(":", 1)[1])
        measure(port, 1, 0.1)  # warm up
        # The same requests with no slow client first, for as long as a third of the run: what this machine,
        # as loaded as it is now, gives anyway.
        alone = measure(port, args.seconds / 3, args.every)
        context = multiprocessing.get_context("fork")
        ready, results = context.Event(), context.Queue()
        slow = context.Process(target=attack, args=(port, args.heads, args.uploads, ready, results), daemon=True)
        slow.start()
        if not ready.wait(120):
            raise SystemExit("the slow clients could not connect")
        others = busiest()
        asked = measure(port, args.seconds, args.every)
        ready.clear()  # tells the slow clients to stop
        held, dropped, cut = results.get(timeout=120)
        slow.join()
    load_after = os.getloadavg()
    count = len(asked.seconds) + len(asked.failures)
    figures, baseline = summary(asked), summary(alone)
    met = bool(figures) and figures["p99"] <= TARGET_P99_SECONDS and not asked.failures
    verdict = (f"p99 {figures.get('p99', float('nan')) * 1000:.0f} ms, {len(asked.failures)} failing "
               f"(target: p99 <= {TARGET_P99_SECONDS * 1000:.0f} ms, none failing): {'met' if met else 'NOT met'}")
    print(f"dealer web ({args.mode}): {args.heads} slow heads and {args.uploads} slow uploads, a byte a second "
          f"each, opened again when dropped ({dropped} heads dropped, {cut} uploads answered 408, "
          f"{held} connections held at the end)")
    print(f"GET /api/jobs every {args.every} s for {args.seconds:.0f} s: {count} asked, "
          + ", ".join(f"{name} {value * 1000:.0f} ms" for name, value in figures.items())
          + f", {len(asked.failures)} failed")
    print(f"the same with no slow client first ({args.seconds / 3:.0f} s): "
          + ", ".join(f"{name} {value * 1000:.0f} ms" for name, value in baseline.items())
          + f", {len(alone.failures)} failed")
    for failure in sorted(set(asked.failures)):
        print(f"  failed: {failure} ({asked.failures.count(failure)}x)")
    print(verdict)
    if args.record:
        record(args, figures, baseline, len(asked.failures), count, verdict, (held, dropped, cut),
               (load_before, load_after), others)
    return 0 if met else 1


def summary(asked: Asked) -> dict[str, float]:
    return {"p50": statistics.median(asked.seconds), "p90": percentile(asked.seconds, 0.9),
            "p99": percentile(asked.seconds, 0.99), "max": max(asked.seconds)} if asked.seconds else {}


def record(args: argparse.Namespace, figures: dict[str, float], baseline: dict[str, float], failed: int,
           count: int, verdict: str,
           slow: tuple[int, int, int], load: tuple[tuple[float, ...], tuple[float, ...]], others: str) -> None:
    held, dropped, cut = slow
    loads = " → ".join(" ".join(f"{value:.2f}" for value in each) for each in load)
    rows = [
        ("command", f"`python -m bench.slow_clients --mode {args.mode} --heads {args.heads} "
                    f"--uploads {args.uploads} --seconds {args.seconds:g} --every {args.every:g}`"),
        ("server", f"`dealer web`, shipped settings, no proxy, one web process (gunicorn's gevent worker, "
                   f"{CONNECTIONS:,} connections a process), {args.mode} mode, no Dealer worker"),
        ("pacing", f"a head within {HEADER_SECONDS} s; a body after {GRACE_SECONDS:.0f} s at {MIN_RATE} bytes "
                   "a second or 408"),
        ("slow clients", f"{args.heads} heads and {args.uploads} upload bodies, a byte a second each, opened "
                         f"again when dropped: {dropped} heads dropped, {cut} uploads answered 408, {held} "
                         "connections held at the end"),
        ("requests", f"`GET /api/jobs` every {args.every:g} s for {args.seconds:g} s: {count} asked, "
                     f"{failed} failed (over {FAIL_SECONDS:.0f} s or not 200)"),
        ("latency", ", ".join(f"{name} {value * 1000:.0f} ms" for name, value in figures.items()) or "none answered"),
        ("with no slow client", "the same requests for a third as long, just before: "
         + ", ".join(f"{name} {value * 1000:.0f} ms" for name, value in baseline.items())),
        ("verdict", verdict),
        ("machine", machine()),
        ("what else ran", f"load average (1, 5, 15 min) {loads} (before → after); the busiest other "
                          f"processes over a second as the slow clients started (CPU share of one CPU): {others}; "
                          "the machine is shared: other sessions' tests and builds ran meanwhile"),
        ("when", time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())),
    ]
    FIGURE.parent.mkdir(parents=True, exist_ok=True)
    FIGURE.write_text("| | slow clients against `dealer web` |\n|---|---|\n"
                      + "".join(f"| {name} | {value} |\n" for name, value in rows))
    print(f"recorded in {FIGURE.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
