"""A class in Chromium: the teacher's job shared, students' checks made against it, and the job page's
Class view (one row per student, sorted by any column, each row leading to that check) under the
Content-Security-Policy; the student's page of the shared job, with no way to its answers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_access_ui import log_in
from tests.browser.test_ui_live import axe_problems
from tests.support.paths import JUDGE_DATA
from worker.client import Client
from worker.testing.live import LiveService, live_service

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TEACHER = "teacher-browser-key-0123456789abcdef"
STUDENTS = {"ann": "ann-browser-key-0123456789abcdef", "ben": "ben-browser-key-0123456789abcdef",
            "cat": "cat-browser-key-0123456789abcdef"}
INPUT = JUDGE_DATA / "mahjong" / "random-2000.in"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """One embedded service with a teacher's admin key and students' user keys."""
    keys = ",".join([f"teacher:{TEACHER}", *(f"{name}:{key}:user" for name, key in STUDENTS.items())])
    with live_service("embedded", tmp_path_factory.mktemp("browser-class"), DEALER_API_KEYS=keys) as service:
        yield service


@pytest.fixture(scope="module")
def job(live: LiveService, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The teacher's shared job, with a check by each student: ann right, ben 3 wrong, cat 1 wrong."""
    teacher = Client(live.url, api_key=TEACHER)
    made = teacher.submit(str(INPUT), "mahjong", shared=True)
    assert teacher.wait(made["id"])["status"] == "succeeded"
    answers = INPUT.with_suffix(".out").read_bytes().split(b"\n")
    folder = tmp_path_factory.mktemp("outputs")
    for name, wrong in (("ann", 0), ("ben", 3), ("cat", 1)):
        lines = answers[:]
        for k in range(wrong):
            lines[10 * k] = b"Case %d: 1S" % (10 * k + 1)
        path: Path = folder / f"{name}.out"
        path.write_bytes(b"\n".join(lines))
        student = Client(live.url, api_key=STUDENTS[name])
        assert student.wait_check(student.check(made["id"], str(path))["id"])["status"] == "done"
    return made


def column(page: Any, index: int) -> list[str]:
    return [cell.strip() for cell in page.locator(f"#class-table tbody tr td:nth-child({index})").all_inner_texts()]


def test_the_teacher_sorts_the_class_and_opens_a_check(page: Any, live: LiveService, job: dict[str, Any]) -> None:
    log_in(page, TEACHER)
    page.goto(f"/jobs/{job['id']}")
    assert page.locator("#share-job").is_checked() and not page.locator("#reveal-answers").is_checked()
    assert column(page, 1) == ["ann", "ben", "cat"]  # by name
    page.click("#class-table button[data-key='accepted']")
    assert column(page, 1) == ["ben", "cat", "ann"]  # fewest accepted first
    page.click("#class-table button[data-key='accepted']")
    assert column(page, 1) == ["ann", "cat", "ben"]
    header = page.locator("#class-table th", has=page.locator("button[data-key='accepted']"))
    assert header.get_attribute("aria-sort") == "descending"
    assert axe_problems(page) == []
    page.locator("#class-table tbody tr", has_text="ben").locator("a").click()
    page.wait_for_url(re.compile(r"/checks/\d+$"))
    assert page.locator("#verdict").inner_text().strip() == "Wrong answer"
    assert "sent by ben" in page.locator("#check").inner_text()


def test_a_student_sees_the_shared_job_but_not_its_answers(page: Any, live: LiveService,
                                                          job: dict[str, Any]) -> None:
    log_in(page, STUDENTS["cat"])
    page.goto("/")
    page.locator("#shared-with-you a", has_text=f"Job #{job['id']}").click()
    page.wait_for_url(re.compile(rf"/jobs/{job['id']}$"))
    assert page.locator("#download-input").is_visible()
    assert page.locator("#download-output").count() == 0 and page.locator("#class").count() == 0
    assert page.locator("#job-checks li").count() == 1  # cat's own check alone
    page.locator("#job-checks a").click()
    page.wait_for_url(re.compile(r"/checks/\d+$"))
    assert page.locator("#answers-hidden").is_visible()
    assert page.locator("#check-cases td.expected").first.inner_text().strip() == "not shown"
    assert axe_problems(page) == []
