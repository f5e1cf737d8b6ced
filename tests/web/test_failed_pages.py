"""A failed job's page as the server renders it: the failure, each fault of its file with the lines around it,
how many more, the partial output, and nothing from before the failure (no slowest case, no form for an output
to check), on SQLite and on PostgreSQL. (The same page watched while the job fails: tests/browser.)"""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest

from tests.support.http import post_file
from tests.support.paths import failing
from worker.jobs.views import JobView

#: What the job view says of a file's faults (the first of them and their count), where the service lists them.
FAULTS = [{"line": 4, "column": 9, "message": 'line 4, column 9: "X" is not a card value (1-10)',
           "context": [{"line": 3, "text": "1 2 3 4"}, {"line": 4, "text": "5 6 7 8 X 9 <10>"},
                       {"line": 5, "text": "10 10"}]},
          {"line": 9, "column": 1, "message": "line 9, column 1: a deck ends early", "context": [{"line": 9, "text": "0 0"}]}]


@pytest.fixture
def failed(client: Any) -> dict[str, Any]:
    data, _ = failing("10-20-30")
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
