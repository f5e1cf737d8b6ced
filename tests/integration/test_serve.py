"""``dealer serve``: web and worker in one command, which a Ctrl-C stops within 3 s, quietly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.paths import JUDGE_DATA
from worker.client import Client
from worker.testing.servers import free_port

pytestmark = [pytest.mark.slow]


def _get(url: str) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            data: dict[str, object] = json.loads(response.read())
            return data
    except OSError:
        return None


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _descendants(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, check=False, text=True)
    children = [int(child) for child in found.stdout.split()]
    return children + [grandchild for child in children for grandchild in _descendants(child)]


def test_ctrl_c_stops_web_and_worker_within_3_s_without_errors(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEALER_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    serve = subprocess.Popen([sys.executable, "-m", "worker.cli", "serve", "--port", str(port), "--data-dir",
                              str(tmp_path / "data"), "--concurrency", "2"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not (_get(url + "/api/overview") or {}).get("workers"):
            assert time.monotonic() < deadline and serve.poll() is None, "dealer serve did not start"
            time.sleep(0.2)
        # A job in hand: the worker is stopped busy, the harder case.
        Client(url).submit(str(JUDGE_DATA / "10-20-30" / "random-2000.in"), "10-20-30")
        family = _descendants(serve.pid)
        assert len(family) >= 4, family  # gunicorn's worker, Celery's worker and its two processes
        started = time.monotonic()
        # What a terminal's Ctrl-C does: SIGINT to the foreground process group, that of dealer serve.
        os.killpg(serve.pid, signal.SIGINT)
        output, _ = serve.communicate(timeout=15)
        took = time.monotonic() - started
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait()
    text = output.decode(errors="replace")
    assert took < 3, f"dealer serve took {took:.1f} s to stop"
    assert serve.returncode == 0, text[-2000:]
    assert "ERROR" not in text and "Traceback" not in text, text[-2000:]
    assert not [pid for pid in family if _alive(pid)], "a process outlived dealer serve"
