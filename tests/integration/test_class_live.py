"""A class on the real service (gunicorn, a Celery worker, a broker and a database), production mode:
a teacher's admin key shares a job; thirty students' user keys each download its input and check an
output against it at once. Every check ends with its verdict, no case is solved again (the job's solve
time does not change, no job is made), a student reads no answer, and the teacher's table lists
thirty rows, as JSON and as CSV. The judge file is the judge data's 2,000 decks; ``DEALER_CLASS_DECKS``
runs the same class on a file of that many decks made by ``dealer generate`` (issue 41 asked for
100,000)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import JUDGE_DATA
from worker.client import Client
from worker.testing.live import DEALER, LiveService, live_service

pytestmark = pytest.mark.slow

#: Decks of a file made for the run; none: the judge data's.
DECKS = int(os.environ.get("DEALER_CLASS_DECKS", "0"))
TEACHER = "teacher-live-key-0123456789abcdef"
STUDENTS = {f"s{k:02d}": f"s{k:02d}-live-key-0123456789abcdef" for k in range(30)}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    keys = ",".join([f"teacher:{TEACHER}", *(f"{name}:{key}:user" for name, key in STUDENTS.items())])
    with live_service("production", tmp_path_factory.mktemp("class"), DEALER_API_KEYS=keys) as service:
        yield service


def get(live: LiveService, path: str, key: str) -> tuple[int, bytes]:
    request = urllib.request.Request(live.url + path, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture(scope="module")
def judge_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bytes]]:
    """The class's judge file and its judge output's lines."""
    if not DECKS:
        path = JUDGE_DATA / "accordion" / "random-2000.in"
        return path, path.with_suffix(".out").read_bytes().split(b"\n")
    path = tmp_path_factory.mktemp("class-file") / "class.in"
    with path.open("wb") as made:
        subprocess.run([*DEALER, "generate", "accordion", "--cases", str(DECKS), "--seed", "41"], stdout=made,
                       check=True)
    solved = subprocess.run([*DEALER, "solve", "accordion", str(path)], capture_output=True, check=True)
    return path, solved.stdout.split(b"\n")


def wrong(answers: list[bytes], k: int) -> bytes:
    """Student k's output: its first k cases wrong (student 0's all right)."""
    lines = answers[:]
    for n in range(k):
        lines[n] = b"1 pile remaining: 52" if lines[n] != b"1 pile remaining: 52" else b"2 piles remaining: 51 1"
    return b"\n".join(lines)


def test_thirty_students_check_a_shared_job_at_once(live: LiveService, tmp_path: Path,
                                                    judge_file: tuple[Path, list[bytes]]) -> None:
    path, answers = judge_file
    cases = len(answers) - 1  # the output ends with a newline
    teacher = Client(live.url, api_key=TEACHER)
    job = teacher.wait(teacher.submit(str(path), "accordion", shared=True)["id"])
    assert job["status"] == "succeeded" and job["shared"]
    solved = get(live, f"/api/jobs/{job['id']}/timings", TEACHER)[1]

    def student(item: tuple[int, str]) -> dict[str, Any]:
        k, name = item
        status, text = get(live, f"/api/jobs/{job['id']}/input", STUDENTS[name])
        assert status == 200 and text.count(b"\n") == cases + 1  # a deck a line, then the terminator
        output = tmp_path / f"{name}.out"
        output.write_bytes(wrong(answers, k))
        client = Client(live.url, api_key=STUDENTS[name])
        return client.wait_check(client.check(job["id"], str(output))["id"])

    with ThreadPoolExecutor(max_workers=10) as pool:
        checks = list(pool.map(student, enumerate(STUDENTS)))
    for k, check in enumerate(checks):
        assert check["status"] == "done", check
        assert check["verdict"] == ("accepted" if k == 0 else "wrong_answer")
        assert check["counts"]["accepted"] == cases - k and check["counts"]["wrong_answer"] == k
        assert check["answers_shown"] is False
        assert k == 0 or check["first_difference"]["expected"] is None
    # Nothing solved again: the job's timings (its cases solved, their solve time) are as they were, and
    # no other job was made.
    assert get(live, f"/api/jobs/{job['id']}/timings", TEACHER)[1] == solved
    assert json.loads(get(live, "/api/jobs", TEACHER)[1])["total"] == 1
    for path in (f"/api/jobs/{job['id']}/output", f"/api/jobs/{job['id']}/cases",
                 f"/api/jobs/{job['id']}/standings"):
        assert get(live, path, STUDENTS["s05"])[0] == 404, path
    table = json.loads(get(live, f"/api/jobs/{job['id']}/standings?per_page=100", TEACHER)[1])
    assert [row["name"] for row in table["items"]] == list(STUDENTS)
    assert [row["wrong_answer"] for row in table["items"]] == list(range(30))
    assert [row["check_id"] for row in table["items"]] == [check["id"] for check in checks]
    rows = list(csv.DictReader(io.StringIO(get(live, f"/api/jobs/{job['id']}/standings?format=csv",
                                               TEACHER)[1].decode())))
    assert [(row["name"], int(row["accepted"]), row["verdict"]) for row in rows] == [
        (row["name"], row["accepted"], row["verdict"]) for row in table["items"]]
