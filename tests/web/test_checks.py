"""Checks through the JSON API and the pages, on SQLite and on PostgreSQL: every verdict end to end, several
checks on one job, a check made before its job has finished, refusals, pages of cases, the documented schemas."""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

import pytest

from tests.support.http import post_file
from tests.support.inline import InlineDispatcher
from tests.support.jobs import stored_uploads
from tests.support.paths import FEW_CASES, failing, judge
from tests.web.conftest import submit_to
from tests.web.test_openapi import _validate
from worker.checks import compare
from worker.config import Settings
from worker.store.database import Database

OUT = judge("10-20-30", "sample").with_suffix(".out").read_bytes()  # b"Win : 66\nLoss: 82\nDraw: 73\n"


def post_check(client: Any, job_id: int, data: bytes, name: str = "mine.out") -> Any:
    return client.post(f"/api/jobs/{job_id}/checks", data={"file": (io.BytesIO(data), name)},
                       content_type="multipart/form-data")


def checked(client: Any, job_id: int, data: bytes) -> dict[str, Any]:
    response = post_check(client, job_id, data)
    assert response.status_code == 201, response.get_json()
    assert response.headers["Location"] == f"/api/checks/{response.get_json()['id']}"
    return client.get(f"/api/checks/{response.get_json()['id']}").get_json()


@pytest.fixture
def job(submit: Any) -> dict[str, Any]:
    return submit("10-20-30/sample", "10-20-30")


@pytest.mark.slow
@pytest.mark.parametrize(("output", "verdict", "counts"), [
    (OUT, "accepted", (3, 0, 0, 0, 0)),
    (OUT.replace(b"\n", b"\r\n"), "accepted", (3, 0, 0, 0, 0)),
    (OUT[:-1], "accepted", (3, 0, 0, 0, 0)),
    (OUT.replace(b"Loss: 82", b"Loss:  82"), "presentation_error", (2, 1, 0, 0, 0)),
    (OUT.replace(b"Loss: 82", b"Loss: 28"), "wrong_answer", (2, 0, 1, 0, 0)),
    (OUT.replace(b"Loss: 82", b"Loss:  28"), "wrong_answer", (2, 0, 1, 0, 0)),
    (b"Win : 66\n", "wrong_answer", (1, 0, 0, 2, 0)),
    (OUT + b"Win : 1\n", "wrong_answer", (3, 0, 0, 0, 1)),
    (b"", "wrong_answer", (0, 0, 0, 3, 0)),
])
def test_each_verdict_through_the_api(client: Any, job: dict[str, Any], output: bytes, verdict: str,
                                      counts: tuple[int, ...]) -> None:
    check = checked(client, job["id"], output)
    assert check["status"] == "done" and check["verdict"] == verdict, check
    assert tuple(check["counts"].values()) == counts
    assert check["cases"] == 3 and check["job_id"] == job["id"] and check["error"] is None
    assert (check["first_difference"] is None) == (verdict == "accepted")


def test_the_first_difference_says_where(client: Any, job: dict[str, Any]) -> None:
    check = checked(client, job["id"], OUT.replace(b"Draw: 73", b"Draw: 37") + b"more\n")
    assert check["first_difference"] == {"index": 3, "line": 3, "verdict": "wrong_answer", "expected": "Draw: 73",
                                         "got": "Draw: 37", "column": 7}
    assert check["lines"] == 4


def test_several_checks_on_one_job(client: Any, job: dict[str, Any]) -> None:
    ids = [checked(client, job["id"], output)["id"] for output in (OUT, b"Win : 66\n", OUT.replace(b" : ", b":"))]
    assert client.get(f"/api/jobs/{job['id']}").get_json()["checks"] == ids
    listed = client.get(f"/api/jobs/{job['id']}/checks").get_json()
    assert [c["id"] for c in listed] == ids
    assert [c["verdict"] for c in listed] == ["accepted", "wrong_answer", "presentation_error"]


def test_a_check_made_before_its_job_finishes_is_judged_when_it_does(client: Any, dispatcher: Any) -> None:
    dispatcher.immediate = False
    job = post_file(client, judge("10-20-30", "sample"), "10-20-30").get_json()
    dispatcher.drain()  # not the split yet: it was queued before the check
    dispatcher.queue.clear()
    dispatcher.immediate = False
    response = post_file(client, judge("10-20-30", "sample"), "10-20-30", "again.in")
    job = response.get_json()
    pending = post_check(client, job["id"], OUT.replace(b"Win", b"Loss"))
    assert pending.status_code == 201
    check = pending.get_json()
    assert (check["status"], check["verdict"], check["first_difference"]) == ("pending", None, None)
    assert client.get(f"/api/checks/{check['id']}/cases").get_json()["items"] == []
    assert ("check", check["id"]) not in dispatcher.sent  # nothing to judge against yet
    dispatcher.drain()  # split, solve; the last chunk ends the job and wakes the check
    done = client.get(f"/api/checks/{check['id']}").get_json()
    assert done["status"] == "done" and done["verdict"] == "wrong_answer"
    assert done["counts"]["wrong_answer"] == 1 and done["counts"]["accepted"] == 2


def test_post_jobs_with_an_expected_output(client: Any) -> None:
    response = client.post("/api/jobs", data={"file": (io.BytesIO(judge("10-20-30", "sample").read_bytes()), "a.in"),
                                               "expected": (io.BytesIO(OUT.replace(b"\n", b"\r\n")), "a.out")},
                           content_type="multipart/form-data")
    assert response.status_code == 201, response.get_json()
    job = client.get(f"/api/jobs/{response.get_json()['id']}").get_json()
    assert len(job["checks"]) == 1
    check = client.get(f"/api/checks/{job['checks'][0]}").get_json()
    assert check["verdict"] == "accepted" and check["filename"] == "a.out"


def test_an_expected_output_that_is_no_text_makes_no_job(client: Any, db: Database, settings: Any) -> None:
    before = client.get("/api/jobs").get_json()["total"]
    response = client.post("/api/jobs", data={"file": (io.BytesIO(judge("10-20-30", "sample").read_bytes()), "a.in"),
                                               "expected": (io.BytesIO(b"Win : 66\n\x1f\x8b\x00"), "a.out")},
                           content_type="multipart/form-data")
    assert response.status_code == 415
    assert response.get_json()["error"] == ("the output cannot be checked: line 2, column 2: not UTF-8 text "
                                            "(byte 0x8b)")
    assert client.get("/api/jobs").get_json()["total"] == before
    assert stored_uploads(db) == []


def test_a_failed_job_refuses_checks(client: Any, submit: Any, db: Database, settings: Any) -> None:
    data, line = failing("10-20-30", FEW_CASES)
    failed = submit(data, "10-20-30")
    assert failed["status"] == "failed"
    before = stored_uploads(db)
    response = post_check(client, failed["id"], OUT)
    assert response.status_code == 409
    assert response.get_json()["error"].startswith(f"job {failed['id']} failed (line {line}, column 1")
    assert "no judge output to check against" in response.get_json()["error"]
    assert client.get(f"/api/jobs/{failed['id']}").get_json()["checks"] == []
    assert stored_uploads(db) == before


def test_a_pending_check_of_a_job_that_then_fails_shows_as_failed(client: Any, dispatcher: Any) -> None:
    dispatcher.immediate = False
    job = post_file(client, failing("10-20-30", FEW_CASES)[0], "10-20-30").get_json()
    check = post_check(client, job["id"], OUT).get_json()
    dispatcher.drain()
    assert client.get(f"/api/jobs/{job['id']}").get_json()["status"] == "failed"
    shown = client.get(f"/api/checks/{check['id']}").get_json()
    assert shown["status"] == "failed" and shown["verdict"] is None
    assert shown["error"] == f"job {job['id']} failed: there is no judge output to check against"


@pytest.mark.parametrize(("data", "status", "message"), [
    (b"Win : 66\nLoss: \x00\n", 415, "the output cannot be checked: line 2, column 7: a NUL byte"),
    (b"\x89PNG\r\n\x1a\nxx", 415, "the output cannot be checked: line 1, column 1: this looks like a PNG image"),
    (b"Win : 66\n" + b"9" * ((1 << 20) + 1) + b"\n", 413, "the output cannot be checked: line 2: the line is longer than"),
])
def test_an_output_that_is_no_text_is_refused_and_nothing_stored(client: Any, job: dict[str, Any], db: Database, settings: Any,
                                                                  data: bytes, status: int, message: str) -> None:
    before = stored_uploads(db)
    response = post_check(client, job["id"], data)
    assert response.status_code == status and response.get_json()["error"].startswith(message), response.get_json()
    assert stored_uploads(db) == before
    assert client.get(f"/api/jobs/{job['id']}/checks").get_json() == []


@pytest.fixture
def small_settings(settings: Any) -> Any:
    from dataclasses import replace

    return replace(settings, max_upload_bytes=64, max_line_bytes=65_536)


def test_an_output_over_the_upload_limit_is_413(small_settings: Any, db: Database, dispatcher: Any) -> None:
    from webui.app import create_app

    client = create_app(small_settings, dispatcher, config={"TESTING": True}, db=db).test_client()
    job = post_file(client, judge("10-20-30", "sample"), "10-20-30")
    assert job.status_code == 413  # the judge file itself is over 64 bytes
    response = client.post("/api/jobs/1/checks", data={"file": (io.BytesIO(b"x" * 100), "big.out")},
                           content_type="multipart/form-data")
    assert response.status_code == 413 and "larger than the limit of 64 bytes" in response.get_json()["error"]


def test_refusals_say_why(client: Any, job: dict[str, Any]) -> None:
    assert post_check(client, 999_999, OUT).status_code == 404
    assert client.post(f"/api/jobs/{job['id']}/checks", data={}, content_type="multipart/form-data").status_code == 400
    assert client.get("/api/checks/999999").status_code == 404
    assert client.get("/api/checks/2147483648").status_code == 404
    assert client.get("/api/jobs/999999/checks").status_code == 404
    check = checked(client, job["id"], OUT)
    bad = client.get(f"/api/checks/{check['id']}/cases?verdict=nope")
    assert bad.status_code == 400 and "accepted, presentation_error" in bad.get_json()["error"]
    assert client.get(f"/api/checks/{check['id']}/cases?page=0").status_code == 400
    assert client.get(f"/api/checks/{check['id']}/cases?per_page=100000").status_code == 400


def test_pages_of_cases_by_verdict(db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from webui.app import create_app

    monkeypatch.setattr(compare, "PART_LINES", 64)  # parts of 64 lines: pages cross parts
    # Chunks of 100 cases: pages and parts still cross chunks, and the job is 20 chunks, not 286 of seven.
    settings = replace(settings, chunk_size=100)
    app = create_app(settings, InlineDispatcher(db, settings), config={"TESTING": True}, db=db)
    client = app.test_client()
    path = judge("mahjong", "random-2000")
    job = submit_to(client, "mahjong/random-2000", "mahjong")
    lines = path.with_suffix(".out").read_bytes().split(b"\n")[:-1]
    wrong = {k for k in range(0, 2000, 7)}
    spaced = {k for k in range(3, 2000, 11)} - wrong
    output = [b"Case %d: nonsense" % (k + 1) if k in wrong else line.replace(b": ", b":  ") if k in spaced else line
              for k, line in enumerate(lines)]
    check = checked(client, job["id"], b"\n".join(output) + b"\nextra one\n")
    assert check["counts"] == {"accepted": 2000 - len(wrong | spaced), "presentation_error": len(spaced),
                               "wrong_answer": len(wrong), "missing": 0, "extra": 1}
    seen: list[int] = []
    page = 1
    while True:
        body = client.get(f"/api/checks/{check['id']}/cases?verdict=wrong_answer&per_page=13&page={page}").get_json()
        assert body["total"] == check["counts"]["wrong_answer"]
        if not body["items"]:
            break
        for item in body["items"]:
            k = item["index"] - 1
            assert item["verdict"] == "wrong_answer" and item["got"] == f"Case {k + 1}: nonsense"
            assert item["expected"] == lines[k].decode() and item["column"] is not None
            assert item["replay_url"] == f"/jobs/{job['id']}/cases/{k + 1}"
            assert item["case_id"] == job["id"] * 1_000_000_000 + k + 1
        seen += [item["index"] for item in body["items"]]
        page += 1
    assert seen == sorted(k + 1 for k in wrong)
    spaced_page = client.get(f"/api/checks/{check['id']}/cases?verdict=presentation_error&per_page=5&page=3").get_json()
    assert [i["index"] - 1 for i in spaced_page["items"]] == sorted(spaced)[10:15]
    assert all(i["got"] == i["expected"].replace(": ", ":  ") for i in spaced_page["items"])
    accepted = client.get(f"/api/checks/{check['id']}/cases?verdict=accepted&per_page=4&page=2").get_json()
    assert all(i["got"] == i["expected"] == lines[i["index"] - 1].decode() for i in accepted["items"])
    tail = client.get(f"/api/checks/{check['id']}/cases?per_page=3&page={(2001 + 2) // 3}").get_json()
    assert [(i["index"], i["verdict"], i["got"]) for i in tail["items"]][-1] == (2001, "extra", "extra one")
    short = checked(client, job["id"], b"\n".join(lines[:-5]))
    assert short["verdict"] == "wrong_answer" and short["counts"]["missing"] == 5
    missing = client.get(f"/api/checks/{short['id']}/cases?verdict=missing").get_json()["items"]
    assert [(i["index"], i["got"], i["expected"]) for i in missing] == [
        (k + 1, None, lines[k].decode()) for k in range(1995, 2000)]


def test_deleting_a_job_deletes_its_checks_and_their_outputs(client: Any, dispatcher: Any, db: Database, settings: Any) -> None:
    dispatcher.immediate = False
    job = post_file(client, judge("10-20-30", "sample"), "10-20-30").get_json()
    pending = post_check(client, job["id"], b"Win : 1\n").get_json()
    client.post(f"/api/jobs/{job['id']}/cancel")
    assert client.get(f"/api/checks/{pending['id']}").get_json()["status"] == "failed"
    assert client.delete(f"/api/jobs/{job['id']}").status_code == 204
    assert client.get(f"/api/checks/{pending['id']}").status_code == 404
    assert stored_uploads(db) == []


def test_a_judged_check_keeps_no_copy_of_its_output(client: Any, job: dict[str, Any], db: Database, settings: Any) -> None:
    before = stored_uploads(db)
    checked(client, job["id"], OUT.replace(b"Win", b"Lose"))
    assert stored_uploads(db) == before


def test_the_check_page_shows_the_verdict_and_marks_the_difference(client: Any, job: dict[str, Any]) -> None:
    check = checked(client, job["id"], OUT.replace(b"Loss: 82", b"Loss: 83"))
    page = client.get(f"/checks/{check['id']}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Wrong answer" in html and "verdict-banner verdict-wrong_answer" in html
    assert "<code>Loss: 8<mark>2</mark></code>" in html and "<code>Loss: 8<mark>3</mark></code>" in html
    assert f'href="/jobs/{job["id"]}/cases/2"' in html
    only = client.get(f"/checks/{check['id']}?verdict=accepted").get_data(as_text=True)
    assert "Win : 66" in only and "Loss: 83" not in only
    assert f"/checks/{check['id']}" in client.get(f"/jobs/{job['id']}").get_data(as_text=True)


def test_the_pages_name_a_difference_as_the_command_line_does(client: Any, job: dict[str, Any]) -> None:
    """One wording (``worker.checks.wording``): the verdict as "Wrong answer", the place as line and column."""
    check = checked(client, job["id"], OUT.replace(b"Loss: 82", b"Loss: 83"))
    first = check["first_difference"]
    assert (first["verdict"], first["line"], first["column"]) == ("wrong_answer", 2, 8)  # the API's names
    html = " ".join(client.get(f"/checks/{check['id']}").get_data(as_text=True).split())
    assert "Line 2, column 8 of the output." in html and "character" not in html
    job_page = " ".join(client.get(f"/jobs/{job['id']}").get_data(as_text=True).split())
    assert "Wrong answer" in job_page and "first difference on line 2, column 8" in job_page


def test_the_job_page_takes_another_output(client: Any, job: dict[str, Any]) -> None:
    response = client.post(f"/jobs/{job['id']}/checks", data={"file": (io.BytesIO(OUT), "again.out")},
                           content_type="multipart/form-data")
    assert response.status_code == 303
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Accepted" in page and "again.out" in page


def test_answers_match_their_documented_schemas(client: Any, job: dict[str, Any], dispatcher: Any) -> None:
    doc = client.get("/api/openapi.json").get_json()
    done = checked(client, job["id"], OUT + b"x\n")
    requests = [("post", "/api/jobs/{job_id}/checks", f"/api/jobs/{job['id']}/checks", OUT),
                ("post", "/api/jobs/{job_id}/checks", f"/api/jobs/{job['id']}/checks", b"\x00"),
                ("post", "/api/jobs/{job_id}/checks", "/api/jobs/999999/checks", OUT),
                ("get", "/api/jobs/{job_id}/checks", f"/api/jobs/{job['id']}/checks", None),
                ("get", "/api/jobs/{job_id}/checks", "/api/jobs/999999/checks", None),
                ("get", "/api/checks/{check_id}", f"/api/checks/{done['id']}", None),
                ("get", "/api/checks/{check_id}", "/api/checks/999999", None),
                ("get", "/api/checks/{check_id}/cases", f"/api/checks/{done['id']}/cases?verdict=extra", None),
                ("get", "/api/checks/{check_id}/cases", f"/api/checks/{done['id']}/cases", None),
                ("get", "/api/checks/{check_id}/cases", f"/api/checks/{done['id']}/cases?verdict=x", None)]
    dispatcher.immediate = False
    pending_job = post_file(client, judge("mahjong", "sample"), "mahjong").get_json()
    requests.append(("post", "/api/jobs/{job_id}/checks", f"/api/jobs/{pending_job['id']}/checks", b""))
    for method, documented, path, body in requests:
        if method == "post":
            response = client.post(path, data={"file": (io.BytesIO(body), "o.out")}, content_type="multipart/form-data")
        else:
            response = client.get(path)
        responses = doc["paths"][documented][method]["responses"]
        status = str(response.status_code)
        assert status in responses, f"{method.upper()} {path} answered {status}, not documented"
        _validate(doc, responses[status]["content"]["application/json"]["schema"], response.get_json(),
                  f"{method.upper()} {path} → {status}")
