"""Checks on the real service (gunicorn, a Celery worker, a real broker and database, embedded and
production): ``dealer submit --expected --wait`` and a check sent to a worker when its job ends."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import JUDGE_DATA
from worker.testing.live import DEALER, LiveService

pytestmark = pytest.mark.slow

INPUT = JUDGE_DATA / "accordion" / "random-2000.in"


@pytest.fixture
def live(shared_live: LiveService) -> LiveService:
    """The session's live service of each mode (tests/support/plugin.py), shared with other modules:
    these tests look only at the jobs they made."""
    return shared_live


def submit(live: LiveService, output: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DEALER, "submit", str(INPUT), "--game", "accordion", "--expected", str(output), "--wait",
                           "--url", live.url], capture_output=True, text=True, timeout=180,
                          env={**os.environ, **live.env}, check=False)


def test_submit_with_expected_prints_the_verdict(live: LiveService, tmp_path: Path) -> None:
    right = tmp_path / "right.out"
    right.write_bytes(INPUT.with_suffix(".out").read_bytes().replace(b"\n", b"\r\n"))
    done = submit(live, right)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "Accepted: 2,000 of 2,000 cases accepted"

    lines = INPUT.with_suffix(".out").read_bytes().split(b"\n")
    lines[1234] = b"1 pile remaining: 52"
    wrong = tmp_path / "wrong.out"
    wrong.write_bytes(b"\n".join(lines))
    done = submit(live, wrong)
    assert done.returncode == 1, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == "Wrong answer: 1,999 of 2,000 cases accepted"
    assert out[2] == "case 1,235, line 1,235, column 1: Wrong answer"


def test_submit_with_expected_prints_every_difference_as_dealer_check_does(live: LiveService,
                                                                           tmp_path: Path) -> None:
    lines = INPUT.with_suffix(".out").read_bytes().split(b"\n")
    for k in (16, 249, 1998):
        lines[k] = b"1 pile remaining: 52" if lines[k] != b"1 pile remaining: 52" else b"2 piles remaining: 51 1"
    wrong = tmp_path / "three-wrong.out"
    wrong.write_bytes(b"\n".join(lines))
    done = submit(live, wrong)
    local = subprocess.run([*DEALER, "check", "accordion", str(INPUT), str(wrong)], capture_output=True, text=True,
                           timeout=180, check=False)
    assert done.returncode == local.returncode == 1, (done.stderr, local.stderr)
    assert done.stdout == local.stdout
    assert [line.split(", line")[0] for line in done.stdout.splitlines() if line.startswith("case ")] == \
        ["case 17", "case 250", "case 1,999"]


def test_more_checks_of_a_finished_job_go_to_a_worker(live: LiveService, tmp_path: Path) -> None:
    job = live.submit(INPUT, "accordion")
    assert live.wait(job["id"])["status"] == "succeeded"
    output = tmp_path / "short.out"
    output.write_bytes(b"\n".join(INPUT.with_suffix(".out").read_bytes().split(b"\n")[:1500]))
    made = live.client.check(job["id"], str(output))
    assert made["status"] in ("pending", "done")
    check = live.client.wait_check(made["id"])
    assert check["verdict"] == "wrong_answer" and check["counts"]["missing"] == 500
    assert live.client.job(job["id"])["checks"] == [made["id"]]
