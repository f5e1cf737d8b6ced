"""``dealer submit --shared`` and ``dealer check --job``, run against the service served over HTTP in this
process as a class uses them: the teacher shares a job, a student checks an output against it, printed as
``dealer check`` prints a local check, exiting as the exit table says (``worker/exits.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from werkzeug.serving import make_server

from tests.support.inline import InlineDispatcher
from tests.support.paths import JUDGE_DATA
from tests.test_cli_exits import running
from worker.cli import main
from worker.config import Settings
from worker.exits import Exit
from worker.store.database import Database

INPUT = JUDGE_DATA / "mahjong" / "random-2000.in"
ANSWERS = INPUT.with_suffix(".out").read_bytes()
TEACHER, STUDENT = "teacher-" + "t" * 32, "student-" + "s" * 32


def dealer(*arguments: str, key: str | None = None, url: str | None = None) -> Any:
    env = {"DEALER_API_KEY": key} if key else {}
    if url:
        env["DEALER_URL"] = url
    return CliRunner().invoke(main, list(arguments), env=env)


@pytest.fixture
def url(db: Database, settings: Settings) -> Iterator[str]:
    """The service with a teacher's admin key and a student's user key, its jobs in chunks sized as
    shipped (the 2,000 hands in chunks of the tests' seven cost more than the rest of a test)."""
    from webui.app import create_app

    keyed = replace(settings, api_keys=f"teacher:{TEACHER},student:{STUDENT}:user", chunk_size=0)
    app = create_app(keyed, InlineDispatcher(db, keyed), config={"TESTING": True}, db=db)
    with running(make_server("127.0.0.1", 0, app, threaded=True)) as served:
        yield served


def shared_job(url: str) -> int:
    made = dealer("submit", str(INPUT), "--game", "mahjong", "--shared", key=TEACHER, url=url)
    assert made.exit_code == Exit.DONE, made.output
    return int(made.stdout.strip())


def test_a_student_checks_against_a_shared_job_as_dealer_check_prints(url: str, tmp_path: Path) -> None:
    job = shared_job(url)
    lines = ANSWERS.split(b"\n")
    lines[9] = lines[9].replace(b": ", b":  ")
    lines[41] = b"Case 42: 1S"
    wrong = tmp_path / "mine.out"
    wrong.write_bytes(b"\n".join(lines[:1998]))
    checked = dealer("check", "--job", str(job), str(wrong), "--show", "3", key=STUDENT, url=url)
    local = dealer("check", "mahjong", str(INPUT), str(wrong), "--show", "3")
    assert checked.exit_code == local.exit_code == Exit.NOT_ACCEPTED, checked.output
    # The same verdict, counts and places; the judge's lines are the teacher's to reveal.
    assert checked.stdout == "\n".join(line for line in local.stdout.split("\n")
                                       if not line.startswith("  expected: "))
    assert checked.stdout.splitlines()[0] == "Wrong answer: 1,996 of 2,000 cases accepted"
    assert "expected:" not in checked.stdout
    right = tmp_path / "right.out"
    right.write_bytes(ANSWERS)
    accepted = dealer("check", "--job", str(job), str(right), key=STUDENT, url=url)
    assert accepted.exit_code == Exit.DONE, accepted.output
    assert accepted.stdout.splitlines()[0] == "Accepted: 2,000 of 2,000 cases accepted"


def test_the_judge_lines_show_once_revealed(url: str, tmp_path: Path) -> None:
    import json
    import urllib.request

    job = shared_job(url)
    request = urllib.request.Request(f"{url}/api/jobs/{job}", data=json.dumps({"reveal_answers": True}).encode(),
                                     method="PATCH", headers={"Authorization": f"Bearer {TEACHER}",
                                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert json.load(answer)["reveal_answers"] is True
    lines = ANSWERS.split(b"\n")
    lines[41] = b"Case 42: 1S"
    wrong = tmp_path / "mine.out"
    wrong.write_bytes(b"\n".join(lines))
    checked = dealer("check", "--job", str(job), str(wrong), key=STUDENT, url=url)
    local = dealer("check", "mahjong", str(INPUT), str(wrong))
    assert checked.exit_code == local.exit_code == Exit.NOT_ACCEPTED
    assert checked.stdout == local.stdout


def test_an_unshared_job_of_another_is_refused_with_the_exit_table(url: str, tmp_path: Path) -> None:
    made = dealer("submit", str(INPUT), "--game", "mahjong", key=TEACHER, url=url)
    job = int(made.stdout.strip())
    right = tmp_path / "right.out"
    right.write_bytes(ANSWERS)
    refused = dealer("check", "--job", str(job), str(right), key=STUDENT, url=url)
    assert refused.exit_code == Exit.BAD_INPUT, refused.output  # a 404, as the table maps it
    assert f"no job {job}" in refused.output


@pytest.mark.parametrize("arguments, says", [
    (("--job", "1"), "Missing argument"), (("--job", "1", "a", "b"), "give only OUTPUT"),
    (("mahjong", "x"), "give GAME INPUT OUTPUT")])
def test_a_check_given_the_wrong_arguments_is_a_usage_error(arguments: tuple[str, ...], says: str) -> None:
    refused = dealer("check", *arguments)
    assert refused.exit_code == Exit.BAD_INPUT and says in refused.output


def test_the_service_unreachable_exits_3(tmp_path: Path) -> None:
    from worker.testing.servers import free_port

    right = tmp_path / "right.out"
    right.write_bytes(ANSWERS)
    refused = dealer("check", "--job", "1", str(right), url=f"http://127.0.0.1:{free_port()}")
    assert refused.exit_code == Exit.UNREACHABLE, refused.output
