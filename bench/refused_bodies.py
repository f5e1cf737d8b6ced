"""Refused bodies against ``dealer web``: six clients each sending an upload the service refuses from its
first MiB (a binary file: zero bytes), announced as 1 GiB and pushed as fast as loopback takes it, again as
soon as the connection is closed, for 20 s, while ``GET /api/jobs`` is asked every 0.1 s (targets: p99 <=
250 ms, none failing; every refused connection closed within 1 s of its answer: ``webui.pacing``).

The server is ``dealer web`` with its shipped settings and no proxy in front, started by the live-service
harness (``worker.testing.live``: one web process, so every client lands on it), on the machine's
PostgreSQL and Redis (``--mode embedded``: SQLite and the file broker), with no worker. The refused clients
are threads of a process of their own, beside the one asking. Printed too: what the clients pushed, against
what they announced, and the web process's CPU seconds over the run.
"""

from __future__ import annotations

import argparse
import errno
import multiprocessing
import os
import select
import socket
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import figures
from bench.slow_clients import Asked, measure, percentile
from worker.testing.live import live_service

TARGET_P99_SECONDS = 0.25
#: The longest a refused client's connection may stay open once its answer has come.
TARGET_CLOSED_SECONDS = 1.0
#: What each refused client announces (Content-Length): far more than it can send in the run.
BODY_BYTES = 1 << 30
#: How long a refused client waits for its answer, or for the close after it, before it counts as failed.
FAIL_SECONDS = 10.0
BOUNDARY = "dealer-bench"


@dataclass
class Pushed:
    """One refused client's connection: its answer's status (0: none), the seconds from its answer to the
    connection's close (None: not closed within :data:`FAIL_SECONDS`), the body bytes it managed to send."""

    status: int
    closed_after: float | None
    sent: int


def push(port: int) -> Pushed:
    """Send a refused upload, pushing its body as fast as the connection takes it, reading whatever comes
    back meanwhile, until the connection is closed (its end, or a reset)."""
    head = (f"POST /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {BODY_BYTES}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n\r\n"
            f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"zeros.in\"\r\n\r\n").encode()
    block = bytes(1 << 16)
    answer, answered, sent = b"", None, 0
    with socket.create_connection(("127.0.0.1", port), timeout=FAIL_SECONDS) as sock:
        sock.sendall(head)
        sock.setblocking(False)
        while True:
            readable, writable, _ = select.select([sock], [sock] if sent < BODY_BYTES else [], [], FAIL_SECONDS)
            if not readable and not writable:  # neither read nor answered, or answered and held open
                return Pushed(_status(answer), None, sent)
            try:
                if readable:
                    data = sock.recv(1 << 16)
                    if not data:
                        break
                    answer += data
                    answered = answered or time.monotonic()
                if writable:
                    sent += sock.send(block[:BODY_BYTES - sent])
            except BlockingIOError:
                continue
            except OSError as error:
                if error.errno not in (errno.ECONNRESET, errno.EPIPE):
                    raise
                answer += _rest(sock)
                answered = answered or (time.monotonic() if answer else None)
                break
    closed = time.monotonic()
    return Pushed(_status(answer), None if answered is None else max(0.0, closed - answered), sent)


def _rest(sock: socket.socket) -> bytes:
    """What is left to read of a reset connection (the answer may have come just before the reset)."""
    got = b""
    try:
        while data := sock.recv(1 << 16):
            got += data
    except OSError:
        pass
    return got


def _status(answer: bytes) -> int:
    parts = answer.split(b" ", 2)
    return int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else 0


def attack(port: int, clients: int, ready: Any, results: Any) -> None:
    """``clients`` threads pushing refused bodies, each again as soon as its connection is closed, until
    ``ready`` is cleared; then what they saw goes to ``results``."""
    seen: list[Pushed] = []

    def run() -> None:
        while ready.is_set():
            try:
                seen.append(push(port))
            except OSError as error:
                seen.append(Pushed(-1, None, 0))
                print(f"a refused client failed: {error}", file=sys.stderr)

    ready.set()
    threads = [threading.Thread(target=run, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(seen)


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` and its children still running (the web process:
    gunicorn's arbiter and the worker it forked)."""
    total = 0.0
    for each in (pid, *_children(pid)):
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children = task / "children"
        if children.exists():
            found += [int(child) for child in children.read_text().split()]
    return [grand for child in found for grand in (child, *_children(child))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("production", "embedded"), default="production")
    parser.add_argument("--clients", type=int, default=6, help="clients pushing refused bodies (default 6)")
    parser.add_argument("--seconds", type=float, default=20, help="how long they push (default 20)")
    parser.add_argument("--every", type=float, default=0.1, help="seconds between two asks (default 0.1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, live_service(args.mode, Path(tmp), workers=0) as live:
        port = int(live.url.rsplit(":", 1)[1])
        assert live.web is not None
        measure(port, 1, 0.1)  # warm up
        # The same requests with no refused client first, for a third as long: what this machine, as loaded
        # as it is now, gives anyway.
        alone = measure(port, args.seconds / 3, args.every)
        context = multiprocessing.get_context("fork")
        ready, results = context.Event(), context.Queue()
        cpu_before = cpu_seconds(live.web.pid)
        pushing = context.Process(target=attack, args=(port, args.clients, ready, results), daemon=True)
        pushing.start()
        if not ready.wait(60):
            raise SystemExit("the refused clients did not start")
        asked = measure(port, args.seconds, args.every)
        ready.clear()  # tells the refused clients to stop after their connection in hand
        seen: list[Pushed] = results.get(timeout=FAIL_SECONDS * 3)
        pushing.join()
        cpu = cpu_seconds(live.web.pid) - cpu_before
    return report(args, asked, alone, seen, cpu)


def report(args: argparse.Namespace, asked: Asked, alone: Asked, seen: list[Pushed], cpu: float) -> int:
    figures_, baseline = summary(asked), summary(alone)
    closed = [each.closed_after for each in seen if each.closed_after is not None]
    refused = sum(1 for each in seen if each.status == 400)
    unclosed = sum(1 for each in seen if each.closed_after is None)
    sent = sum(each.sent for each in seen)
    probes_met = bool(figures_) and figures_["p99"] <= TARGET_P99_SECONDS and not asked.failures
    closed_met = bool(seen) and refused == len(seen) and not unclosed and max(closed) <= TARGET_CLOSED_SECONDS
    print(f"dealer web ({args.mode}), shipped settings, one web process: {args.clients} clients pushing refused "
          f"uploads (zero bytes, announced as {BODY_BYTES >> 20:,} MiB each) as fast as they can for "
          f"{args.seconds:g} s, each again once its connection is closed")
    print(f"refused connections: {len(seen)}, {refused} answered 400, {unclosed} not closed within "
          f"{FAIL_SECONDS:g} s of their answer; {sent / (1 << 20):,.0f} MiB pushed in all "
          f"({sent / max(len(seen), 1) / (1 << 20):.1f} MiB a connection, of {BODY_BYTES >> 20:,} announced)")
    if closed:
        print(f"from the answer to the connection's close: p50 {statistics.median(closed) * 1000:.1f} ms, "
              f"max {max(closed) * 1000:.1f} ms")
    print(f"web CPU over the run: {cpu:.1f} s")
    count = len(asked.seconds) + len(asked.failures)
    print(f"GET /api/jobs every {args.every:g} s for {args.seconds:g} s: {count} asked, "
          + ", ".join(f"{name} {value * 1000:.0f} ms" for name, value in figures_.items())
          + f", {len(asked.failures)} failed")
    print(f"the same with no refused client first ({args.seconds / 3:.0f} s): "
          + ", ".join(f"{name} {value * 1000:.0f} ms" for name, value in baseline.items())
          + f", {len(alone.failures)} failed")
    for failure in sorted(set(asked.failures)):
        print(f"  failed: {failure} ({asked.failures.count(failure)}x)")
    print(f"API p99 {figures_.get('p99', float('nan')) * 1000:.0f} ms, {len(asked.failures)} failing (target: p99 <= "
          f"{TARGET_P99_SECONDS * 1000:.0f} ms, none failing): {'met' if probes_met else 'missed'}")
    print(f"refused connections closed within {TARGET_CLOSED_SECONDS:g} s of their answer, each answered 400 "
          f"(target: all): {'met' if closed_met else 'missed'}")
    return 0 if probes_met and closed_met else 1


def summary(asked: Asked) -> dict[str, float]:
    return {"p50": statistics.median(asked.seconds), "p99": percentile(asked.seconds, 0.99),
            "max": max(asked.seconds)} if asked.seconds else {}


if __name__ == "__main__":
    sys.exit(figures.record("refused_bodies", main))
