"""A class working on one judge file: a teacher (an admin key) shares a job; students (user keys) download its
input and check their outputs against it, each seeing only their own checks, judged against the stored
answers (nothing is solved again), the judge's lines hidden unless the teacher revealed them; the teacher's
table lists one row per student. A job that is not shared stays another's: not found by any route."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, replace
from typing import Any

import pytest

from tests.support.inline import InlineDispatcher
from tests.support.paths import JUDGE_DATA
from tests.web.test_access import csrf_of, login
from tests.web.test_access_private import filled, routes_of_a_job
from worker import engines
from worker.config import Settings
from worker.store.database import Database

TEACHER = "teacher-0123456789abcdef-key"
STUDENTS = {name: f"{name}-0123456789abcdef-key" for name in ("ann", "ben", "cat", "dan")}
KEYS = ",".join([f"teacher:{TEACHER}", *(f"{name}:{token}:user" for name, token in STUDENTS.items())])
JUDGE = (JUDGE_DATA / "mahjong" / "random-2000.in").read_bytes()
ANSWERS = (JUDGE_DATA / "mahjong" / "random-2000.out").read_bytes().decode().splitlines()
#: What the teacher's own check of the job sends (its right answers).
RIGHT = "\n".join(ANSWERS) + "\n"
#: The routes of a job's answers, for whoever does not read the job.
ANSWER_ROUTES = ("api.job_output", "results.job_cases", "results.job_case", "results.get_case",
                 "results.job_distribution", "api.job_timings", "api.job_throughput", "pages.case", "pages.job_case",
                 "check_api.job_standings", "live.job_events")


def as_(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def wrong_line(line: str) -> str:
    return line[:-1] + ("X" if line[-1] != "X" else "Y")


def outputs() -> dict[str, tuple[str, str, dict[str, int]]]:
    """Each student's output, with the verdict and counts its check must end with."""
    cases = len(ANSWERS)
    wrong = ANSWERS[:]
    wrong[6] = wrong_line(wrong[6])
    spaced = ANSWERS[:]
    spaced[2] = spaced[2].replace(" ", "  ", 1)
    return {
        "ann": (RIGHT, "accepted", {"accepted": cases}),
        "ben": ("\n".join(wrong) + "\n", "wrong_answer", {"accepted": cases - 1, "wrong_answer": 1}),
        "cat": ("\n".join(spaced) + "\n", "presentation_error", {"accepted": cases - 1, "presentation_error": 1}),
        "dan": ("\n".join(ANSWERS[:-3] + ["extra line"]) + "\n", "wrong_answer",
                {"accepted": cases - 3, "wrong_answer": 1, "missing": 2}),
    }


@dataclass
class Class:
    app: Any
    job: dict[str, Any]

    def get(self, path: str, token: str | None) -> Any:
        return self.app.test_client().get(path, headers=as_(token))

    def check(self, token: str, text: str) -> dict[str, Any]:
        made = self.app.test_client().post(f"/api/jobs/{self.job['id']}/checks", headers=as_(token),
                                           data={"file": (io.BytesIO(text.encode()), "mine.out")},
                                           content_type="multipart/form-data")
        assert made.status_code == 201, made.get_json()
        return made.get_json()

    def share(self, token: str, **fields: bool) -> Any:
        return self.app.test_client().patch(f"/api/jobs/{self.job['id']}", json=fields, headers=as_(token))


def a_class(db: Database, settings: Settings, shared: bool = True) -> Class:
    """The teacher's job, solved, with a check of the teacher's own (shared from its upload when ``shared``)."""
    from webui.app import create_app

    # Chunks sized as shipped: the class's 2,000 hands in chunks of the tests' seven cost more than all the
    # rest, and what a class may see does not depend on how its job is cut.
    settings = replace(settings, api_keys=KEYS, chunk_size=0)
    app = create_app(settings, InlineDispatcher(db, settings), config={"TESTING": True}, db=db)
    form: dict[str, Any] = {"file": (io.BytesIO(JUDGE), "class.in"), "game": "mahjong",
                            "expected": (io.BytesIO(RIGHT.encode()), "teacher.out")}
    if shared:
        form["shared"] = "true"
    made = app.test_client().post("/api/jobs", data=form, content_type="multipart/form-data", headers=as_(TEACHER))
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["shared"] is shared and made.get_json()["reveal_answers"] is False
    job = app.test_client().get(f"/api/jobs/{made.get_json()['id']}", headers=as_(TEACHER)).get_json()
    assert job["status"] == "succeeded" and len(job["checks"]) == 1
    return Class(app, job)


def forbid_solving(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, any engine asked to solve a case fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a case was solved again")

    for name in engines.names():
        for method in ("solve", "solve_packed", "solve_batch", "_batch_case", "solve_chunk", "chunk_case"):
            monkeypatch.setattr(type(engines.get(name)), method, refuse)


@pytest.mark.slow
def test_students_check_against_a_shared_job_and_the_teacher_reads_the_table(db: Database, settings: Settings) -> None:
    world = a_class(db, settings)
    job_id, cases = world.job["id"], len(ANSWERS)
    expected = outputs()
    # Every student finds the job, and downloads the judge file whole.
    for name, token in STUDENTS.items():
        listed = world.get("/api/jobs?shared=true", token).get_json()
        assert [job["id"] for job in listed["items"]] == [job_id], name
        assert world.get("/api/jobs", token).get_json()["total"] == 0  # their own jobs: none
        seen = world.get(f"/api/jobs/{job_id}", token).get_json()
        assert seen["total"] == cases and seen["shared"] and seen["checks"] == []  # not the teacher's check
        given = world.get(f"/api/jobs/{job_id}/input", token)
        assert given.status_code == 200
        assert given.get_data() == world.get(f"/api/jobs/{job_id}/input", TEACHER).get_data()
        assert given.get_data().count(b"\n") == cases + 1  # each case's line, then the terminator
    return_checks = {}
    for name, (text, verdict, counts) in expected.items():
        return_checks[name] = world.check(STUDENTS[name], text)
    ben_first = return_checks["ben"]["id"]
    return_checks["ben"] = world.check(STUDENTS["ben"], expected["ben"][0])  # a second try
    for name, (text, verdict, counts) in expected.items():
        found = world.get(f"/api/checks/{return_checks[name]['id']}", STUDENTS[name]).get_json()
        assert found["status"] == "done" and found["verdict"] == verdict, name
        assert {k: v for k, v in found["counts"].items() if v} == counts, name
        assert found["answers_shown"] is False
        own = world.get(f"/api/jobs/{job_id}/checks", STUDENTS[name]).get_json()
        assert {c["owner"] for c in own} == {name}, name  # their own checks alone
        assert world.get(f"/api/jobs/{job_id}", STUDENTS[name]).get_json()["checks"] == [c["id"] for c in own]
    # Another's check is not found.
    assert world.get(f"/api/checks/{return_checks['ann']['id']}", STUDENTS["ben"]).status_code == 404
    assert world.get(f"/api/checks/{return_checks['ann']['id']}/cases", STUDENTS["ben"]).status_code == 404
    # The teacher's table: one row per student, the latest check's verdict and counts.
    table = world.get(f"/api/jobs/{job_id}/standings", TEACHER).get_json()
    rows = {row["name"]: row for row in table["items"]}
    assert table["total"] == len(rows) == len(STUDENTS) + 1  # the teacher checked too
    for name, (text, verdict, counts) in expected.items():
        row = rows[name]
        assert (row["check_id"], row["verdict"], row["status"]) == (return_checks[name]["id"], verdict, "done")
        assert row["checks"] == (2 if name == "ben" else 1)
        for verdict_name in ("accepted", "presentation_error", "wrong_answer", "missing", "extra"):
            assert row[verdict_name] == counts.get(verdict_name, 0), (name, verdict_name)
    assert rows["ben"]["check_id"] != ben_first
    sheet = world.get(f"/api/jobs/{job_id}/standings?format=csv", TEACHER)
    assert sheet.status_code == 200 and sheet.mimetype == "text/csv"
    read = list(csv.DictReader(io.StringIO(sheet.get_data(as_text=True))))
    assert [r["name"] for r in read] == [r["name"] for r in table["items"]]
    assert {r["name"]: (int(r["check_id"]), r["verdict"], int(r["missing"])) for r in read} == {
        name: (row["check_id"], row["verdict"], row["missing"]) for name, row in rows.items()}
    paged = world.get(f"/api/jobs/{job_id}/standings?per_page=2&page=3", TEACHER).get_json()
    assert [r["name"] for r in paged["items"]] == [r["name"] for r in table["items"]][4:6]
    assert paged["pages"] == 3
    # Students read no one's table.
    assert world.get(f"/api/jobs/{job_id}/standings", STUDENTS["ann"]).status_code == 404


def test_a_check_against_a_shared_job_solves_nothing(db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    world = a_class(db, settings)
    forbid_solving(monkeypatch)
    for name, (text, verdict, _) in outputs().items():
        made = world.check(STUDENTS[name], text)
        assert world.get(f"/api/checks/{made['id']}", STUDENTS[name]).get_json()["verdict"] == verdict


def test_nothing_of_the_answers_reaches_a_student_unless_revealed(db: Database, settings: Settings) -> None:
    world = a_class(db, settings)
    job_id = world.job["id"]
    student = STUDENTS["ben"]
    made = world.check(student, outputs()["ben"][0])
    right = ANSWERS[6]
    # Every route of the job's answers is not found.
    routes = dict(routes_of_a_job(world.app))
    assert set(ANSWER_ROUTES) <= set(routes)
    values = {**world.job, "checks": [made["id"]]}
    for endpoint in ANSWER_ROUTES:
        path = filled(routes[endpoint], values)
        assert world.get(path, STUDENTS["ben"]).status_code == 404, endpoint
        assert world.get(path, TEACHER).status_code == 200, endpoint
    for path in (f"/api/results?job_id={job_id}", f"/api/results/export?job_id={job_id}"):
        assert world.get(path, student).status_code == 404, path
    assert world.get("/api/results?game=mahjong", student).get_json()["total"] == 0
    assert world.get("/api/results/export", student).get_data() == b""
    client = world.app.test_client()
    for method, path in (("POST", f"/api/jobs/{job_id}/rerun"), ("POST", f"/api/jobs/{job_id}/cancel"),
                         ("DELETE", f"/api/jobs/{job_id}")):
        assert client.open(path, method=method, headers=as_(student)).status_code == 404, path
    # The check says where, not what was expected.
    shown = [world.get(f"/api/checks/{made['id']}", student).get_data(as_text=True),
             world.get(f"/api/checks/{made['id']}/cases", student).get_data(as_text=True),
             world.get(f"/api/checks/{made['id']}/cases?verdict=wrong_answer", student).get_data(as_text=True),
             world.get(f"/checks/{made['id']}", student).get_data(as_text=True),
             world.get(f"/jobs/{job_id}", student).get_data(as_text=True)]
    for text in shown:
        assert right not in text
    assert 'id="answers-hidden"' in shown[3] and f"/jobs/{job_id}/cases/" not in shown[3]
    first = world.get(f"/api/checks/{made['id']}", student).get_json()["first_difference"]
    assert (first["index"], first["line"], first["expected"], first["got"]) == (7, 7, None, wrong_line(right))
    (item,) = world.get(f"/api/checks/{made['id']}/cases?verdict=wrong_answer", student).get_json()["items"]
    assert (item["expected"], item["case_url"], item["replay_url"], item["case_id"]) == (None, None, None, None)
    assert item["column"] == first["column"] and first["column"] is not None
    # Only the teacher may reveal them; then they show.
    assert world.share(student, reveal_answers=True).status_code == 404
    revealed = world.share(TEACHER, reveal_answers=True)
    assert revealed.status_code == 200 and revealed.get_json()["reveal_answers"] is True
    assert world.get(f"/api/checks/{made['id']}", student).get_json()["first_difference"]["expected"] == right
    page = world.get(f"/checks/{made['id']}", student).get_data(as_text=True)
    assert 'id="answers-hidden"' not in page and "<mark>" in page  # the lines' differences marked
    # The answers' routes stay the teacher's all the same.
    assert world.get(f"/api/jobs/{job_id}/output", student).status_code == 404


def test_withdrawn_a_shared_job_is_anothers_again(db: Database, settings: Settings) -> None:
    world = a_class(db, settings)
    job_id = world.job["id"]
    made = world.check(STUDENTS["ann"], RIGHT)
    withdrawn = world.share(TEACHER, shared=False)
    assert withdrawn.status_code == 200 and withdrawn.get_json()["shared"] is False
    for path in (f"/api/jobs/{job_id}", f"/api/jobs/{job_id}/input", f"/api/jobs/{job_id}/checks",
                 f"/api/checks/{made['id']}", f"/jobs/{job_id}"):
        assert world.get(path, STUDENTS["ann"]).status_code == 404, path
    assert world.get("/api/jobs?shared=true", STUDENTS["ann"]).get_json()["total"] == 0
    # The teacher still sees the student's check in the table.
    assert [row["name"] for row in world.get(f"/api/jobs/{job_id}/standings", TEACHER).get_json()["items"]] == [
        "ann", "teacher"]


@pytest.mark.slow
@pytest.mark.parametrize("body, says", [
    ({}, "JSON object"), ({"shared": "yes"}, "shared: must be true or false"),
    ({"owner": "ann"}, "owner: no such field"), ([True], "JSON object")])
def test_a_bad_sharing_body_is_refused_saying_why(db: Database, settings: Settings, body: Any, says: str) -> None:
    world = a_class(db, settings, shared=False)
    refused = world.app.test_client().patch(f"/api/jobs/{world.job['id']}", json=body, headers=as_(TEACHER))
    assert refused.status_code == 400 and says in refused.get_json()["error"]


def test_a_bad_shared_field_is_refused_and_makes_no_job(db: Database, settings: Settings) -> None:
    from webui.app import create_app

    settings = replace(settings, api_keys=KEYS)
    app = create_app(settings, InlineDispatcher(db, settings), config={"TESTING": True}, db=db)
    form = {"file": (io.BytesIO(JUDGE), "class.in"), "shared": "maybe"}
    refused = app.test_client().post("/api/jobs", data=form, content_type="multipart/form-data", headers=as_(TEACHER))
    assert refused.status_code == 400 and "shared must be" in refused.get_json()["error"]
    assert app.test_client().get("/api/jobs", headers=as_(TEACHER)).get_json()["total"] == 0


def test_an_unshared_job_of_another_is_not_found_by_any_route(db: Database, settings: Settings) -> None:
    world = a_class(db, settings, shared=False)
    job_id = world.job["id"]
    values = {**world.job, "checks": world.job["checks"]}
    for endpoint, rule in routes_of_a_job(world.app):
        path = filled(rule, values)
        response = world.get(path, STUDENTS["ann"])
        assert response.status_code == 404, f"{endpoint} {path}: {response.status_code}"
    client = world.app.test_client()
    headers = as_(STUDENTS["ann"])
    assert client.post(f"/api/jobs/{job_id}/checks", data={"file": (io.BytesIO(RIGHT.encode()), "a.out")},
                       content_type="multipart/form-data", headers=headers).status_code == 404
    assert client.patch(f"/api/jobs/{job_id}", json={"shared": True}, headers=headers).status_code == 404
    assert world.get("/api/jobs?shared=true", STUDENTS["ann"]).get_json()["total"] == 0


def test_the_pages_share_a_job_and_show_the_class(db: Database, settings: Settings) -> None:
    world = a_class(db, settings, shared=False)
    job_id = world.job["id"]
    teacher = world.app.test_client()
    login(teacher, TEACHER, f"/jobs/{job_id}")
    page = teacher.get(f"/jobs/{job_id}").get_data(as_text=True)
    assert 'id="sharing-form"' in page and 'id="class-table"' in page  # the teacher's own check is a row
    shared = teacher.post(f"/jobs/{job_id}/sharing", data={"shared": "1", "csrf_token": csrf_of(page)})
    assert shared.status_code == 303
    assert teacher.get(f"/api/jobs/{job_id}").get_json()["shared"] is True
    world.check(STUDENTS["cat"], outputs()["cat"][0])
    student = world.app.test_client()
    login(student, STUDENTS["cat"])
    dashboard = student.get("/").get_data(as_text=True)
    assert 'id="shared-with-you"' in dashboard and f'href="/jobs/{job_id}"' in dashboard
    theirs = student.get(f"/jobs/{job_id}").get_data(as_text=True)
    assert 'id="download-input"' in theirs and 'id="check-form"' in theirs
    assert "download-output" not in theirs and "export-csv" not in theirs and "sharing-form" not in theirs
    table = teacher.get(f"/jobs/{job_id}").get_data(as_text=True)
    names = re.findall(r'<tr data-name="([^"]*)"', table)
    assert names == ["cat", "teacher"]
    (cats,) = [c for c in world.get(f"/api/jobs/{job_id}/checks", TEACHER).get_json() if c["owner"] == "cat"]
    assert f'href="/checks/{cats["id"]}"' in table
    # The upload page's box shares a new job as it is made.
    upload = teacher.get("/upload").get_data(as_text=True)
    assert 'id="shared"' in upload
    made = teacher.post("/upload", data={"file": (io.BytesIO(JUDGE), "again.in"), "shared": "true",
                                         "csrf_token": csrf_of(upload)}, content_type="multipart/form-data")
    assert made.status_code == 303
    again = int(made.headers["Location"].rsplit("/", 1)[1])
    assert again != job_id and student.get(f"/api/jobs/{again}").get_json()["shared"] is True
