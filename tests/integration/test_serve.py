"""``dealer serve``: web and worker in one command, which a Ctrl-C stops whole: every process it started
gone, exit status 0, nothing logged as an error (the web process leaves within its grace, an open live
stream and an upload half sent included, instead of being killed at its end), and the terminal quiet:
no line of Celery's per task, no warning of kombu's or Celery's, one line saying which core solves."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.paths import JUDGE_DATA
from worker.testing.waiting import until
from worker.cli import SERVE_GRACE_SECONDS, WORKER_GRACE_SECONDS
from worker.client import Client
from worker.testing.servers import free_port

pytestmark = [pytest.mark.slow]

#: What a stop may take: the web's and the worker's graces run side by side, so either bounds it; the
#: rest is room for a machine four times slower than a quiet one (a quiet one stops within a few seconds).
STOP_LIMIT_SECONDS = max(SERVE_GRACE_SECONDS, WORKER_GRACE_SECONDS) + 25


def _get(url: str) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            data: dict[str, object] = json.loads(response.read())
            return data
    except OSError:
        return None


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _receiving(database: Path) -> int:
    """Uploads the web process is receiving, as the embedded database has them."""
    with contextlib.closing(sqlite3.connect(database, timeout=10)) as connection:
        return int(connection.execute("SELECT count(*) FROM uploads WHERE state = 'receiving'").fetchone()[0])


def _descendants(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, check=False, text=True)
    children = [int(child) for child in found.stdout.split()]
    return children + [grandchild for child in children for grandchild in _descendants(child)]


def _serve(port: int, data: Path) -> subprocess.Popen[bytes]:
    """``dealer serve`` of two worker processes on ``port``, in a session of its own (as a terminal starts
    it), with none of this environment's settings: its output on its stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEALER_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return subprocess.Popen([sys.executable, "-m", "worker.cli", "serve", "--port", str(port), "--data-dir",
                             str(data), "--concurrency", "2"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)


def test_ctrl_c_stops_web_and_worker_and_leaves_nothing_running(tmp_path: Path) -> None:
    port = free_port()
    serve = _serve(port, tmp_path / "data")
    url = f"http://127.0.0.1:{port}"
    stream = upload = None
    try:
        until(lambda: (serve.poll(), _get(url + "/api/overview")),
              lambda seen: seen[0] is not None or (seen[1] or {}).get("workers"),
              "dealer serve to answer with a worker (exit status, /api/overview)", 120)
        assert serve.poll() is None, "dealer serve ended as it started"
        # gunicorn's web process, Celery's worker and its two processes.
        family = until(lambda: _descendants(serve.pid), lambda found: len(found) >= 4, "all of its processes")
        # The harder case: a job in hand, and a page's live stream open (it would last 30 s).
        client = Client(url)
        client.wait(client.submit(str(JUDGE_DATA / "10-20-30" / "random-2000.in"), "10-20-30")["id"])
        client.submit(str(JUDGE_DATA / "10-20-30" / "random-2000.in"), "10-20-30")
        stream = socket.create_connection(("127.0.0.1", port), timeout=10)
        stream.sendall(b"GET /events/dashboard HTTP/1.1\r\nHost: dealer\r\n\r\n")
        assert stream.recv(64).startswith(b"HTTP/1.1 200"), "the live stream did not open"
        # And an upload in hand, half sent: its request thread waits for the rest, which never comes (it
        # held the web process until gunicorn killed it, which gunicorn logs as an error).
        upload = socket.create_connection(("127.0.0.1", port), timeout=10)
        boundary = b"dealerboundary"
        decks = (JUDGE_DATA / "10-20-30" / "random-2000.in").read_bytes().removesuffix(b"0\n")  # good decks
        part = (b"--" + boundary + b'\r\nContent-Disposition: form-data; name="file"; filename="half.in"\r\n'
                b"Content-Type: application/octet-stream\r\n\r\n" + decks * 13)
        upload.sendall(b"POST /api/jobs HTTP/1.1\r\nHost: dealer\r\nContent-Type: multipart/form-data; boundary="
                       + boundary + b"\r\nContent-Length: " + str(len(part) * 4).encode() + b"\r\n\r\n" + part)
        until(lambda: _receiving(tmp_path / "data" / "dealer.db"), bool, "the upload to be received")
        started = time.monotonic()
        # What a terminal's Ctrl-C does: SIGINT to the foreground process group, that of dealer serve.
        os.killpg(serve.pid, signal.SIGINT)
        try:
            output, _ = serve.communicate(timeout=STOP_LIMIT_SECONDS)
        except subprocess.TimeoutExpired as late:
            pytest.fail(f"dealer serve still ran {STOP_LIMIT_SECONDS} s after Ctrl-C: "
                        f"{(late.output or b'').decode(errors='replace')[-2000:]}")
        took = time.monotonic() - started
    finally:
        if stream is not None:
            stream.close()
        if upload is not None:
            upload.close()
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait()
    text = output.decode(errors="replace")
    assert serve.returncode == 0, f"exit status {serve.returncode}: {text[-2000:]}"
    # A process killed with its group is gone at once, but may take a moment to be reaped.
    until(lambda: [pid for pid in family if _alive(pid)], lambda left: not left,
          "every process dealer serve started to end", 10)
    assert "ERROR" not in text and "Traceback" not in text, f"after {took:.1f} s: {text[-2000:]}"
    # A quiet terminal: no line per task (the job above ran some), no warning of kombu's or Celery's, and
    # which core solves said once, at the start.
    for noise in (" received", "succeeded in", "No hostname was supplied", "SecurityWarning", "superuser"):
        assert noise not in text, f"{noise!r} in what dealer serve printed: {text[-3000:]}"
    cores = [line for line in text.splitlines() if line.startswith("dealer: native core")]
    assert len(cores) == 1, text[-3000:]


#: Holds a port until its standard input closes, and says which.
HOLD_A_PORT = """
import socket, sys
held = socket.socket()
held.bind(("127.0.0.1", 0))
held.listen()
print(held.getsockname()[1], flush=True)
sys.stdin.read()
"""


def _marked(mark: str) -> list[int]:
    """Processes whose environment holds ``mark`` (every process a command starts inherits it)."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and mark.encode() in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("command", [["serve"], ["web", "--host", "127.0.0.1"]])
def test_a_port_in_use_is_named_in_one_line_and_nothing_starts(tmp_path: Path, command: list[str]) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD_A_PORT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None
        port = int(holder.stdout.readline())
        mark = f"DEALER_SERVE_TEST_MARK={tmp_path.name}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEALER_")}
        env |= {"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "DEALER_SERVE_TEST_MARK": tmp_path.name,
                "DEALER_DATA_DIR": str(tmp_path / "data")}
        done = subprocess.run([sys.executable, "-m", "worker.cli", *command, "--port", str(port)], env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (f"port {port} is in use: stop what holds it or choose another with --port "
                               "/ make run PORT=…\n")
        assert done.stdout == ""
        # Nothing was started: no worker, no web process, not even the embedded database.
        assert _marked(mark) == []
        assert not (tmp_path / "data").exists()
    finally:
        holder.communicate("")


def test_an_address_not_of_this_machine_is_named_with_the_way_out() -> None:
    from webui.server import port_refusal

    port = free_port()
    assert port_refusal("127.0.0.1", port) is None
    # TEST-NET-3 (RFC 5737): no interface of this machine has it.
    assert port_refusal("203.0.113.7", port) == ("203.0.113.7 is no address of this machine: choose another with "
                                                 "--host / make run HOST=…")


def test_serve_says_it_serves_once_its_worker_is_ready(tmp_path: Path) -> None:
    """The line saying where Dealer serves comes once the worker has said it is ready (its row in
    ``workers``, written once its pool processes are warm): a job sent on reading it is taken at once."""
    port = free_port()
    serve = _serve(port, tmp_path / "data")
    workers_then: list[int] = []
    # Reading waits for a line: a serve that never says it would hold the test for good.
    guard = threading.Timer(120, os.killpg, (serve.pid, signal.SIGKILL))
    guard.start()
    try:
        assert serve.stdout is not None
        for line in serve.stdout:
            if line.startswith(b"Dealer is serving on"):
                with contextlib.closing(sqlite3.connect(tmp_path / "data" / "dealer.db", timeout=10)) as db:
                    workers_then.append(int(db.execute("SELECT count(*) FROM workers").fetchone()[0]))
                break
    finally:
        guard.cancel()
        # Ctrl-C, as a terminal sends it: serve stops its worker, which runs in a session of its own (a
        # SIGKILL of serve's group would leave the worker running); whatever is left after is killed.
        family = _descendants(serve.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(serve.pid, signal.SIGINT)
        try:
            serve.wait(timeout=60)
        finally:
            for pid in [serve.pid, *family]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            serve.wait()
    assert workers_then == [1]
