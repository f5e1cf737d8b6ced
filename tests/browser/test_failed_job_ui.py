"""A failed job in Chromium, on the session's live service of each mode: a small file with a bad case in its
middle, dropped on the dashboard, shows there as failed (live, then as the server renders it), never as 100%;
its job page says apart what it keeps, the partial output and the kept cases, and both downloads give what the
page says; a page that watches the job fail draws the same (its script). The job page's shot at 1280 px,
``test-output/screenshots/embedded-failed-job-1280.png``, is the guide's (docs/screenshots/failed-job-1280.png)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import SCREENSHOTS
from tests.browser.test_ui_live import PHONE, axe_problems
from tests.support.paths import failing_midway
from worker.testing.live import LiveService

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: The file's decks: its middle one bad.
CASES = 200
BAD = CASES // 2 + 1


def _download(page: Any, selector: str, path: Path) -> bytes:
    with page.expect_download() as download:
        page.click(selector)
    download.value.save_as(path)
    return path.read_bytes()


def _not_done(page: Any, progress: Any, job: dict[str, Any]) -> None:
    """A failed job's progress block as the page shows it: "failed", a bar of the share of its file solved."""
    assert progress.locator("[data-f=pct]").inner_text() == "failed"
    assert "100%" not in progress.inner_text()
    bar = progress.locator("[role=progressbar]")
    assert float(bar.get_attribute("aria-valuenow")) == (CASES - 1) * 1000 // CASES / 10 < 100
    assert bar.get_attribute("aria-valuetext").startswith("failed, ")
    drawn = bar.evaluate("el => el.firstElementChild.getBoundingClientRect().width / el.getBoundingClientRect().width")
    assert drawn < 1, drawn
    assert "status-failed" in progress.get_attribute("class")


def _as_if_running(route: Any) -> None:
    """The job page as it was served while the job ran: its figures say it is solving and it keeps nothing
    yet, so that its script follows the job's stream and draws the failure itself."""
    body = route.fetch().text()
    found = re.search(r'(<script type="application/json" id="job-data">)(.*?)(</script>)', body, re.S)
    data = json.loads(found[2])
    data["job"]["status"] = "solving"
    body = body.replace(found[0], found[1] + json.dumps(data).replace("<", "\\u003c") + found[3])
    body = re.sub(r'<section class="kept" id="job-kept".*?</section>',
                  '<section class="kept" id="job-kept" hidden></section>', body, flags=re.S)
    route.fulfill(response=route.fetch(), body=body)


def test_a_failed_job_shows_as_failed_with_both_downloads_explained(page: Any, live: LiveService,
                                                                    screenshot: Any, tmp_path: Path) -> None:
    data, lines = failing_midway("10-20-30", CASES)
    path = tmp_path / "a-bad-deck-midway.in"
    path.write_bytes(data)
    page.goto("/")
    page.wait_for_selector("#service-pill[data-state=ok]")
    page.set_input_files("#quick-file", str(path))
    page.wait_for_selector("#quick-status a")
    job_id = int(re.search(r"/jobs/(\d+)", page.get_attribute("#quick-status a", "href"))[1])
    # The dashboard, live (its stream) and then as served.
    page.wait_for_selector(f'tr[data-job="{job_id}"][data-status=failed]', timeout=60_000)
    job = live.client.job(job_id)
    assert (job["status"], job["total"], job["fault_count"], job["partial_cases"]) == ("failed", CASES - 1, 1,
                                                                                       BAD - 1)
    _not_done(page, page.locator(f'tr[data-job="{job_id}"] [data-f=progress]'), job)
    page.reload()
    _not_done(page, page.locator(f'tr[data-job="{job_id}"] [data-f=progress]'), job)
    screenshot(page, "failed-job-dashboard")
    assert axe_problems(page) == []

    page.click(f'tr[data-job="{job_id}"] a.fname')
    page.wait_for_url(f"**/jobs/{job_id}")
    assert page.title().startswith("✗ failed")
    _not_done(page, page.locator("#job-progress [data-f=progress]"), job)
    kept = page.locator("#job-kept")
    assert kept.is_visible() and page.locator("#download-output").is_hidden()
    partial = page.inner_text("#partial-output")
    assert f"The judge output of the {BAD - 1} decks before the first fault, as a judge would have printed it" \
        in partial, partial
    cases = page.inner_text("#kept-cases")
    assert f"All {CASES - 1} good decks of the file ({CASES - BAD} of them after the first fault)" in cases, cases
    assert "in the results below, in the history's search, and in these downloads" in cases, cases
    assert re.fullmatch(rf"{CASES - 1} cases solved · 1 fault · in .+",
                        page.inner_text("#job-progress [data-f=progress-text]"))
    page.locator("#results-table tbody tr[data-case]").first.wait_for()
    page.wait_for_function("() => !document.getAnimations().some((a) => a.playState === 'running' "
                           "&& a instanceof CSSTransition)")
    shot = screenshot(page, "failed-job")
    # The guide's: its failure, what it keeps and its progress (docs/screenshots/failed-job-1280.png).
    page.screenshot(path=str(SCREENSHOTS / f"{live.mode}-failed-job-1280.png"), full_page=True,
                    clip={"x": 0, "y": 0, "width": 1280, "height": 1200})
    assert axe_problems(page) == []
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], "the page scrolls sideways"
    page.set_viewport_size({"width": 1280, "height": 900})

    # Each download is what the page says it is.
    assert _download(page, "#download-partial", tmp_path / "partial.out").decode() == \
        "".join(f"{line}\n" for line in lines[:BAD - 1])
    assert _download(page, "#download-kept", tmp_path / "kept.out").decode() == \
        "".join(f"{line}\n" for place, line in enumerate(lines, 1) if place != BAD)
    rows = list(csv.DictReader(io.StringIO(_download(page, "#kept-csv", tmp_path / "kept.csv").decode())))
    assert [(int(row["index"]), row["line"]) for row in rows] == [
        (place, line) for place, line in enumerate(lines, 1) if place != BAD]

    # A page open while the job fails draws the same, from the job's stream.
    told = kept.inner_text()
    page.route(f"**/jobs/{job_id}", _as_if_running, times=1)
    page.goto(f"/jobs/{job_id}")
    page.wait_for_selector("#job-kept:not([hidden])")
    assert page.inner_text("#job-kept") == told
    page.wait_for_function("() => document.querySelector('#job-progress [data-f=progress-text]').textContent"
                           f".startsWith('{CASES - 1} cases solved · 1 fault · in ')")
    _not_done(page, page.locator("#job-progress [data-f=progress]"), job)
    assert shot.exists()
