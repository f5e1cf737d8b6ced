"""A failed job's page as the server renders it: the failure, each fault of its file with the lines around it,
how many more, what it keeps (its partial output and its kept cases, said apart, each with its downloads), a
progress that never reads as done, and nothing from before the failure (no slowest case, no form for an output
to check), on SQLite and on PostgreSQL; the JSON's figures and downloads of the same. (The same pages in a
browser: tests/browser/test_failed_job_ui.py; watched while the job fails: tests/browser/test_ui_live.py.)"""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest

from tests.support.http import post_file
from tests.support.paths import FEW_CASES, failing, failing_midway
from worker.jobs.views import JobView

#: What the job view says of a file's faults (the first of them and their count), where the service lists them.
FAULTS = [{"line": 4, "column": 9, "message": 'line 4, column 9: "X" is not a card value (1-10)',
           "context": [{"line": 3, "text": "1 2 3 4"}, {"line": 4, "text": "5 6 7 8 X 9 <10>"},
                       {"line": 5, "text": "10 10"}]},
          {"line": 9, "column": 1, "message": "line 9, column 1: a deck ends early", "context": [{"line": 9, "text": "0 0"}]}]


@pytest.fixture
def failed(client: Any) -> dict[str, Any]:
    data, _ = failing("10-20-30", FEW_CASES)
    job = client.get(f"/api/jobs/{post_file(client, data, '10-20-30').get_json()['id']}").get_json()
    assert job["status"] == "failed"
    return job


def _with_faults(monkeypatch: pytest.MonkeyPatch, more: int) -> None:
    plain = JobView.to_dict

    def to_dict(view: JobView) -> dict[str, Any]:
        data = plain(view)
        if data["status"] == "failed":
            data |= {"faults": FAULTS, "fault_count": len(FAULTS) + more,
                     "partial_output": f"/api/jobs/{data['id']}/output?partial=1"}
        return data

    monkeypatch.setattr(JobView, "to_dict", to_dict)


def _shown(page: str, element: str) -> str | None:
    """The inner markup of the element with id ``element``, or None when it is hidden."""
    found = re.search(rf'<(\w+) [^>]*id="{element}"([^>]*)>(.*?)</\1>', page, re.S)
    assert found, element
    return None if " hidden" in found[2] else found[3]


def test_each_fault_is_shown_with_its_lines_and_the_partial_output_linked(client: Any, failed: dict[str, Any],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _with_faults(monkeypatch, more=5)
    page = client.get(f"/jobs/{failed['id']}").get_data(as_text=True)
    assert 'id="job-error" role="alert">' in page  # not hidden
    assert unescape(re.search(r'data-f="error">(.*?)</div>', page)[1]) == failed["error"]
    faults = _shown(page, "job-faults")
    assert faults is not None
    assert unescape(re.sub(r"<[^>]+>", "", faults.split("</p>")[0])).strip() == 'line 4, column 9: "X" is not a card value (1-10)'
    # The lines around it, the bad token marked and a caret under it, as the upload page draws a refused file's.
    first = faults.split('<li class="fault">')[1]
    assert '<span class="ln">3</span>1 2 3 4\n</span>' in first
    assert ('<span class="bad-line"><span class="ln">4</span>5 6 7 8 <mark class="bad">X</mark> 9 &lt;10&gt;</span>'
            '<span class="caret"><span class="ln"></span>        ^</span>') in first
    assert "line 9, column 1: a deck ends early" in faults
    assert _shown(page, "job-faults-more") == "and 5 more faults"
    assert f'href="/api/jobs/{failed["id"]}/output?partial=1"' in (_shown(page, "partial-output") or "")


def test_a_failed_job_offers_nothing_from_before_its_failure(client: Any, failed: dict[str, Any]) -> None:
    page = client.get(f"/jobs/{failed['id']}").get_data(as_text=True)
    # The faults the service lists, and the partial output where it has one: nothing else of the failure.
    listed = re.findall(r'<p class="fault-where">(.*?)</p>', _shown(page, "job-faults") or "")
    assert [unescape(message) for message in listed] == [fault["message"] for fault in failed["faults"]]
    assert (_shown(page, "partial-output") is None) == (failed["partial_output"] is None)
    assert _shown(page, "check-form") is None
    assert "it has no judge output to check against" in (_shown(page, "checks-closed") or "")
    timings = client.get(f"/api/jobs/{failed['id']}/timings").get_json()
    slowest = re.search(r'data-t="slowest">(.*?)</dd>', page, re.S)
    assert slowest and (slowest[1] == "–" if timings["slowest_case"] is None
                        else f"/jobs/{failed['id']}/cases/{timings['slowest_case']['index']}" in slowest[1])
    assert _shown(page, "download-output") is None


def test_a_running_jobs_page_has_its_form_and_no_fault(client: Any, submit: Any) -> None:
    job = submit("10-20-30/sample")
    page = client.get(f"/jobs/{job['id']}").get_data(as_text=True)
    assert _shown(page, "check-form") is not None and _shown(page, "checks-closed") is None
    assert 'id="job-error" role="alert" hidden>' in page and _shown(page, "job-faults") is None


#: Cases of the file failing midway: its middle one bad, half of the others before it.
CASES = 200


@pytest.fixture
def midway(client: Any) -> tuple[dict[str, Any], list[str]]:
    """A job of a file whose middle case is bad, failed, with the judge lines of the file's cases."""
    data, lines = failing_midway("10-20-30", CASES)
    job = client.get(f"/api/jobs/{post_file(client, data, '10-20-30').get_json()['id']}").get_json()
    assert job["status"] == "failed" and job["fault_count"] == 1, job
    return job, lines


def _text(markup: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", markup))).strip()


def test_a_failed_job_s_figures_say_what_it_solved_and_never_that_it_is_done(
        client: Any, midway: tuple[dict[str, Any], list[str]]) -> None:
    job, lines = midway
    bad = CASES // 2 + 1
    assert (job["total"], job["done"], job["partial_cases"]) == (CASES - 1, CASES - 1, bad - 1)
    # The share of its file solved: its good cases over its good cases and its faults.
    assert job["progress"] == (CASES - 1) / CASES < 1
    listed = client.get("/api/jobs?status=failed").get_json()["items"]
    assert [item["progress"] for item in listed if item["id"] == job["id"]] == [job["progress"]]


def test_the_partial_output_and_the_kept_cases_lines_are_served_apart(
        client: Any, midway: tuple[dict[str, Any], list[str]]) -> None:
    job, lines = midway
    bad = CASES // 2 + 1
    partial = client.get(job["partial_output"])
    assert partial.status_code == 200
    assert partial.get_data(as_text=True) == "".join(f"{line}\n" for line in lines[:bad - 1])
    kept = client.get(f"/api/jobs/{job['id']}/lines")
    assert kept.status_code == 200 and kept.mimetype == "text/plain"
    assert kept.get_data(as_text=True) == "".join(f"{line}\n" for k, line in enumerate(lines, 1) if k != bad)
    assert f'filename="job-{job["id"]}-10-20-30.kept.out"' in kept.headers["Content-Disposition"]
    # The kept cases' results: every good case under its place, as the exports give them.
    export = client.get(f"/api/results/export?job_id={job['id']}&format=csv").get_data(as_text=True)
    export = export.splitlines()
    assert [row.split(",")[2] for row in export[1:]] == [str(k) for k in range(1, CASES + 1) if k != bad]
    assert client.get(f"/api/jobs/{job['id']}/output").status_code == 409


def test_a_succeeded_job_s_kept_lines_are_its_output(client: Any, submit: Any) -> None:
    job = submit("mahjong/sample")
    assert job["progress"] == 1 and job["partial_cases"] == 0
    whole = client.get(f"/api/jobs/{job['id']}/output").data
    assert client.get(f"/api/jobs/{job['id']}/lines").data == whole


def test_the_page_says_apart_what_the_partial_output_and_the_kept_cases_are(
        client: Any, midway: tuple[dict[str, Any], list[str]]) -> None:
    job, _ = midway
    page = client.get(f"/jobs/{job['id']}").get_data(as_text=True)
    # Its progress: failed, the share of its file solved, rounded down: never 100%.
    progress = re.search(r'<div id="job-progress">(.*?)</button>', page, re.S)[1]
    assert 'data-f="pct">failed</span>' in progress and "100%" not in progress
    assert 'aria-valuenow="99.5"' in progress
    assert 'aria-valuetext="failed, 99.5% of its file solved"' in progress
    # Its sentence: what it solved (its error is said above it).
    words = re.search(r'data-f="progress-text" title="([^"]*)">', progress)[1]
    assert re.fullmatch(r"199 cases solved · 1 fault · in .+", unescape(words)), words
    kept = _shown(page, "job-kept")
    assert kept is not None and "What this job keeps" in kept
    partial = _shown(page, "partial-output")
    assert partial is not None and _text(partial).startswith(
        "Partial output The judge output of the 100 decks before the first fault, as a judge would have "
        "printed it for them: the start of the file's output, up to its first fault.")
    assert f'href="{job["partial_output"]}" download="job-{job["id"]}-10-20-30.partial.out"' in partial
    cases = _shown(page, "kept-cases")
    assert cases is not None and _text(cases).startswith(
        "Kept decks All 199 good decks of the file (99 of them after the first fault), each solved and kept "
        "under its place in the file (a bad deck leaves its place empty). They are in the results below, in "
        "the history's search, and in these downloads:")
    assert f'href="/api/jobs/{job["id"]}/lines"' in cases
    for kind in ("csv", "ndjson"):
        assert f'href="/api/results/export?job_id={job["id"]}&amp;format={kind}"' in cases
    # The dashboard's row: failed, not done.
    row = re.search(rf'<tr data-job="{job["id"]}".*?</tr>', client.get("/").get_data(as_text=True), re.S)[0]
    assert 'data-f="pct">failed</span>' in row and "100%" not in row
    # The list's sentence is the error.
    assert unescape(re.search(r'data-f="progress-text" title="([^"]*)"', row)[1]) == job["error"]


def test_a_job_that_succeeded_or_kept_nothing_says_nothing_of_it(client: Any, submit: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    job = submit("10-20-30/sample")
    page = client.get(f"/jobs/{job['id']}").get_data(as_text=True)
    assert _shown(page, "job-kept") is None and 'data-f="pct">100%</span>' in page
    # A file none of whose cases is good (the intake refuses one by its head: let through here).
    monkeypatch.setattr("worker.jobs.service.recognise", lambda head, size, game: game)
    made = post_file(client, b"X 1 2\n0\n", "10-20-30").get_json()
    failed = client.get(f"/api/jobs/{made['id']}").get_json()
    assert failed["status"] == "failed" and (failed["total"], failed["progress"]) == (0, 0)
    assert _shown(client.get(f"/jobs/{failed['id']}").get_data(as_text=True), "job-kept") is None


def test_dealer_submit_names_the_kept_lines_beside_the_partial_output(capsys: pytest.CaptureFixture[str]) -> None:
    from worker.cli import _print_partial

    class Service:
        def output(self, job_id: int, partial: bool = False) -> Any:
            assert partial
            return iter(["Win : 1\n"])

    job = {"id": 7, "faults": [{"message": 'line 3, column 1: "X" is not a card value (1-10)'}], "fault_count": 1,
           "total": 5, "partial_cases": 2, "partial_output": "/api/jobs/7/output?partial=1"}
    _print_partial(Service(), job)
    said = capsys.readouterr()
    assert said.out == "Win : 1\n"
    assert said.err.splitlines()[-1] == (
        "dealer: the output is partial: job 7 failed, and this is the judge output of the cases before its file's "
        "first fault; the judge lines of all its 5 good cases, those after the fault too: GET /api/jobs/7/lines")
    # Every good case before the fault: the partial output is all there is.
    _print_partial(Service(), job | {"partial_cases": 5})
    assert capsys.readouterr().err.splitlines()[-1].endswith("the cases before its file's first fault")
