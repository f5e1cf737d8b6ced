"""Every 404 names what it could not find, and every 400 the parameter and the value it could not read: each
route with an id in its path (found in the app's own map, so that a new one is covered as it comes), in
JSON for the API and on the error page for a browser, on SQLite and on PostgreSQL."""

from __future__ import annotations

import io
import re
from html import unescape
from typing import Any

import pytest

from tests.support.http import post_file
from tests.support.paths import FEW_CASES, failing, first_cases, judge
from webui.converters import IdConverter

#: What each name of an id in a path names.
THINGS = {"job_id": "job", "check_id": "check", "case_id": "case"}


def _routes(app: Any) -> list[tuple[str, str, str]]:
    """(method, rule, the rule's first id) of every route that takes an id in its path."""
    found = []
    for rule in app.url_map.iter_rules():
        ids = [name for name, converter in rule._converters.items() if isinstance(converter, IdConverter)]
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            if ids:
                found.append((method, rule.rule, ids[0]))
    return found


def _answer(client: Any, method: str, path: str) -> tuple[int, str]:
    """The status and the error's words, from JSON or from the error page."""
    response = client.open(path, method=method)
    if response.is_json:
        return response.status_code, response.get_json()["error"]
    page = response.get_data(as_text=True)
    return response.status_code, unescape(re.search(r"<h1>.*?</h1>\s*<p>(.*?)</p>", page, re.S).group(1))


def _path(rule: str, name: str, value: str, job_id: int) -> str:
    """The rule's path with ``value`` for the id ``name`` and a real job (its first case) for any other."""
    path = re.sub(r"<[a-z_]+:" + name + ">", value, rule, count=1)
    return re.sub(r"<[a-z_]+:([a-z_]+)>", lambda m: str(job_id) if m.group(1) == "job_id" else "1", path)


def test_every_route_with_an_id_names_an_id_that_is_no_number(app: Any, client: Any, submit: Any) -> None:
    job = submit("10-20-30/sample")
    routes = _routes(app)
    assert len(routes) >= 20  # the map was read: every route of the API and the pages with an id
    for method, rule, name in routes:
        thing = THINGS[name]
        for value, words in (("abc", f'no {thing} "abc": {thing} ids are whole numbers'),
                             ("1.5", f'no {thing} "1.5": {thing} ids are whole numbers'),
                             ("-1", f"no {thing} -1: {thing} ids run from 1 to "),
                             ("0", f"no {thing} 0: {thing} ids run from 1 to ")):
            status, message = _answer(client, method, _path(rule, name, value, job["id"]))
            assert status == 404, (method, rule, value, message)
            # The page says it as a sentence: capitalised, with a full stop.
            assert message.lower().startswith(words.lower()), (method, rule, value, message)


def test_a_case_number_is_weighed_against_its_jobs_cases(client: Any) -> None:
    job = post_file(client, first_cases("10-20-30", 1000), "10-20-30").get_json()  # a count of thousands
    for path in (f"/api/jobs/{job['id']}/cases/{{}}", f"/jobs/{job['id']}/cases/{{}}"):
        words = f"job {job['id']} has 1,000 cases: 0 is not one of them"
        page = not path.startswith("/api/")  # a page says it as a sentence
        assert _answer(client, "GET", path.format(0)) == (404, f"J{words[1:]}." if page else words)
        status, message = _answer(client, "GET", path.format("x"))
        assert status == 404 and message.lower().startswith(f'job {job["id"]} has 1,000 cases: "x" is not one')
    # A job that does not exist is named as such, before any of its cases.
    assert _answer(client, "GET", "/api/jobs/999999/cases/0") == (404, "no job 999999")


def test_the_job_in_the_issue(client: Any, submit: Any) -> None:
    submit("10-20-30/sample")
    assert _answer(client, "GET", "/api/jobs/abc") == (404, 'no job "abc": job ids are whole numbers')
    assert _answer(client, "DELETE", "/api/jobs/abc") == (404, 'no job "abc": job ids are whole numbers')
    assert _answer(client, "GET", "/api/jobs/-1") == (404, "no job -1: job ids run from 1 to 2,147,483,647")
    assert _answer(client, "GET", "/jobs/abc") == (404, 'No job "abc": job ids are whole numbers.')
    assert _answer(client, "GET", "/api/cases/abc") == (404, 'no case "abc": case ids are whole numbers')
    assert _answer(client, "GET", "/api/checks/0") == (404, "no check 0: check ids run from 1 to 2,147,483,647")


@pytest.mark.parametrize("path, words", [
    ("/api/nothing/here", "no API endpoint at /api/nothing/here: the API's paths are listed at /api/openapi.json"),
    ("/api/jobs/1/nothing", "no API endpoint at /api/jobs/1/nothing: the API's paths are listed at /api/openapi.json"),
    ("/nothing-here", "No page at /nothing-here."),
])
def test_any_other_unknown_path_is_named(client: Any, path: str, words: str) -> None:
    assert _answer(client, "GET", path) == (404, words)


def test_a_page_answers_json_when_asked(client: Any) -> None:
    response = client.get("/jobs/abc", headers={"Accept": "application/json"})
    assert response.status_code == 404
    assert response.get_json() == {"error": 'no job "abc": job ids are whole numbers'}


@pytest.mark.parametrize("path, words", [
    ("/api/jobs?page=0", "page must be at least 1, not 0"),
    ("/api/jobs?per_page=9999", "per_page must be at most 500, not 9999"),
    ("/api/jobs?page=two", "page must be a whole number, not 'two'"),
    ("/api/results?job_id=0", "job_id must be at least 1, not 0"),
    ("/api/jobs/{job}/cases?number_max=-1", "number_max must be at least 0, not -1"),
    ("/api/jobs/{job}/cases?sort=deck", "cannot sort by 'deck'"),
    ("/api/jobs/{job}/output?partial=maybe", "partial must be 1, true or yes (or 0, false or no), not 'maybe'"),
])
def test_a_bad_parameter_is_named_with_its_value(client: Any, submit: Any, path: str, words: str) -> None:
    job = submit("10-20-30/sample")
    status, message = _answer(client, "GET", path.format(job=job["id"]))
    assert status == 400 and message.startswith(words), message


def test_a_failed_jobs_output_says_it_failed_and_where_its_partial_output_is(client: Any) -> None:
    data, _ = failing("10-20-30", FEW_CASES)
    job_id = post_file(client, data, "10-20-30").get_json()["id"]
    assert client.get(f"/api/jobs/{job_id}").get_json()["status"] == "failed"
    response = client.get(f"/api/jobs/{job_id}/output")
    assert response.status_code == 409
    assert response.get_json() == {"error": f"job {job_id} failed, so it has no complete output: the answers to "
                                            "its cases before its first fault are its partial output, at "
                                            f"/api/jobs/{job_id}/output?partial=1"}


def test_a_check_of_a_job_that_is_gone_names_the_job(client: Any, submit: Any) -> None:
    job = submit("10-20-30/sample")
    out = judge("10-20-30", "sample").with_suffix(".out").read_bytes()
    made = client.post(f"/api/jobs/{job['id']}/checks", data={"file": (io.BytesIO(out), "mine.out")},
                       content_type="multipart/form-data").get_json()
    assert _answer(client, "GET", f"/api/checks/{made['id'] + 1000}") == (404, f"no check {made['id'] + 1000}")
    assert _answer(client, "GET", f"/api/checks/{made['id']}/cases?verdict=nice")[0] == 400
