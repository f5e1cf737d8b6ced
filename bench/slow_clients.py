"""Slow clients against ``dealer web``: how long the dashboard, the API and an upload take while 32
uploads send their body a byte a second, side by side with the same requests on an idle server
(target: every one under 1 s; ``webui.pacing``).

The server is ``dealer web`` with its shipped defaults (one process here: the slow clients all land
on it) on the machine's PostgreSQL and Redis (``--mode embedded``: SQLite and the file broker), with
no worker. The requests are asked one after another, each on a new connection, for as long as the
slow clients are still held (they are cut off after ``pacing.GRACE_SECONDS``).
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import tempfile
import time
from pathlib import Path

from webui.pacing import GRACE_SECONDS
from worker.testing.live import live_service
from worker.testing.slow import SlowClients

ROOT = Path(__file__).resolve().parents[1]
HANDS = (ROOT / "tests" / "data" / "judge" / "mahjong" / "sample.in").read_bytes()
TARGET_SECONDS = 1.0
BOUNDARY = "dealer-bench"
UPLOAD = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"hands.in\"\r\n\r\n".encode()
          + HANDS + f"\r\n--{BOUNDARY}--\r\n".encode())
REQUESTS = {
    "dashboard GET /": ("GET", "/", None),
    "API GET /api/jobs": ("GET", "/api/jobs", None),
    "API GET /api/overview": ("GET", "/api/overview", None),
    "upload POST /api/jobs": ("POST", "/api/jobs", UPLOAD),
}


def timed(port: int, method: str, path: str, body: bytes | None) -> float:
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"} if body else {}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        if response.status >= 400:
            raise RuntimeError(f"{method} {path} answered {response.status}")
    finally:
        connection.close()
    return time.perf_counter() - started


def measure(port: int, seconds: float) -> dict[str, list[float]]:
    """Each request in turn, for ``seconds``."""
    found: dict[str, list[float]] = {name: [] for name in REQUESTS}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for name, (method, path, body) in REQUESTS.items():
            found[name].append(timed(port, method, path, body))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("production", "embedded"), default="production")
    parser.add_argument("--slow", type=int, default=32, help="slow uploads (default 32)")
    args = parser.parse_args()
    window = GRACE_SECONDS * 0.6  # well before the slow clients are cut off
    with tempfile.TemporaryDirectory() as tmp, live_service(
            args.mode, Path(tmp), workers=0,  # the uploads' jobs wait: no per-client limit refuses them
            DEALER_MAX_ACTIVE_JOBS_PER_CLIENT="0", DEALER_MAX_JOBS_PER_MINUTE_PER_CLIENT="0") as live:
        port = int(live.url.rsplit(":", 1)[1])
        measure(port, 1)  # warm up
        idle = measure(port, window)
        with SlowClients("127.0.0.1", port).running() as slow:
            slow.add(args.slow)
            while min(upload.sent for upload in slow.uploads) < 2:
                time.sleep(0.1)
            loaded = measure(port, window)
            held = sum(1 for upload in slow.uploads if not upload.read_answer() and not upload.closed)
    print(f"dealer web ({args.mode}), {args.slow} uploads sending a byte a second ({held} still held at the end)")
    print(f"{'request':<24}{'idle median':>13}{'idle max':>10}{'slow median':>13}{'slow max':>10}{'ratio':>8}")
    worst = 0.0
    for name in REQUESTS:
        a, b = idle[name], loaded[name]
        worst = max(worst, max(b))
        print(f"{name:<24}{statistics.median(a) * 1000:>10.0f} ms{max(a) * 1000:>7.0f} ms"
              f"{statistics.median(b) * 1000:>10.0f} ms{max(b) * 1000:>7.0f} ms"
              f"{statistics.median(b) / statistics.median(a):>7.2f}x")
    met = worst < TARGET_SECONDS and held == args.slow
    print(f"slowest answer under slow clients: {worst * 1000:.0f} ms (target < {TARGET_SECONDS * 1000:.0f} ms): "
          f"{'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
