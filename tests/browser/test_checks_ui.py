"""Checks in a real browser, against a real web + worker (embedded and on Redis + PostgreSQL): the upload
form with an output to check, the check page's verdict, counts, filter and marked differences, the replay
link, and another output added on the job page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_ui_live import axe_problems
from tests.support.paths import JUDGE_DATA
from worker.testing.live import LiveService

pytestmark = [pytest.mark.browser, pytest.mark.slow]

INPUT = JUDGE_DATA / "accordion" / "random-2000.in"
#: The accordion judge lines of the output with three mistakes and a line missing at the end.
WRONG_AT = {17: "presentation_error", 250: "wrong_answer", 1999: "wrong_answer"}


def _wrong_output(tmp_path: Path) -> Path:
    lines = INPUT.with_suffix(".out").read_text().splitlines()
    lines[16] = lines[16].replace(" ", "  ", 1)  # case 17: spacing only
    lines[249] = "1 pile remaining: 52" if lines[249] != "1 pile remaining: 52" else "2 piles remaining: 50 2"
    lines[1998] = lines[1998][:-1] + ("7" if lines[1998][-1] != "7" else "8")
    path = tmp_path / "my-program.out"
    path.write_text("\r\n".join(lines[:1999]) + "\r\n")  # CRLF, and case 2000 missing
    return path


def test_upload_with_an_output_to_check_shows_its_verdict(page: Any, live: LiveService, screenshot: Any,
                                                          tmp_path: Path) -> None:
    page.goto("/upload")
    page.set_input_files("#file", str(INPUT))
    page.set_input_files("#expected", str(_wrong_output(tmp_path)))
    page.click("#upload-button")
    page.wait_for_url(re.compile(r"/checks/\d+$"), timeout=60_000)
    page.wait_for_selector("#check[data-status=done]", timeout=60_000)  # pending, then reloaded once judged
    assert page.locator("#verdict").inner_text() == "Wrong answer"
    counts = {tile.get_attribute("data-verdict"): tile.locator(".count-value").inner_text()
              for tile in page.locator("#check-counts .count-tile").all()}
    assert counts == {"accepted": "1,996", "presentation_error": "1", "wrong_answer": "2", "missing": "1",
                      "extra": "0"}
    first = page.locator("#first-difference")
    assert "case 17" in first.inner_text() and "presentation error" in first.inner_text().lower()
    # Its place as dealer check writes it: line and column, from 1 (the column past the line's first space).
    column = INPUT.with_suffix(".out").read_text().splitlines()[16].index(" ") + 2
    assert f"Line 17, column {column} of the output." in first.inner_text()
    # It opens on what the user came for, the lines not accepted; every line is one click away.
    rows = page.locator("#check-cases tbody tr")
    assert [row.get_attribute("data-line") for row in rows.all()] == ["17", "250", "1999", "2000"]
    assert page.locator(".verdict-tab[aria-current=true]").inner_text().startswith("Not accepted")
    assert axe_problems(page) == []
    screenshot(page, "check")
    page.click(".verdict-tab.v-all")
    page.wait_for_url(re.compile(r"verdict=all"))
    assert rows.count() == 50 and rows.first.get_attribute("data-line") == "1"

    page.click(".verdict-tab.v-wrong_answer")
    page.wait_for_url(re.compile(r"verdict=wrong_answer"))
    assert [row.get_attribute("data-line") for row in rows.all()] == ["250", "1999"]
    row = page.locator('#check-cases tr[data-line="250"]')
    expected, got = row.locator("td.expected code"), row.locator("td.got code")
    assert expected.locator("mark").count() >= 1 and got.locator("mark").count() >= 1
    right = INPUT.with_suffix(".out").read_text().splitlines()[249]
    assert expected.inner_text() == right and got.inner_text() == "1 pile remaining: 52"
    # What is not marked is what the two lines share.
    assert got.evaluate("c => Array.from(c.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join('')") \
        == expected.evaluate("c => Array.from(c.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join('')")
    assert axe_problems(page) == []
    screenshot(page, "check-wrong-answers")

    page.click(".verdict-tab.v-missing")
    assert page.locator("#check-cases tbody tr").get_attribute("data-line") == "2000"
    assert "the output ended" in page.locator("#check-cases tbody").inner_text()

    page.click(".verdict-tab.v-presentation_error")
    spaced = page.locator('#check-cases tr[data-line="17"] td.got mark')
    assert spaced.inner_text() == " "  # the extra space is what is marked
    page.click('#check-cases tr[data-line="17"] a:has-text("Replay")')
    page.wait_for_url(re.compile(r"/jobs/\d+/cases/17$"))
    assert page.locator("h1").inner_text().startswith("Deck 17")


def test_the_job_page_takes_another_output(page: Any, live: LiveService, tmp_path: Path) -> None:
    job = live.submit(INPUT, "accordion")
    assert live.wait(job["id"])["status"] == "succeeded"
    right = tmp_path / "right.out"
    right.write_bytes(INPUT.with_suffix(".out").read_bytes())
    page.goto(f"/jobs/{job['id']}")
    page.set_input_files("#check-file", str(right))
    page.click("#check-submit")
    page.wait_for_url(re.compile(r"/checks/\d+$"))
    page.wait_for_selector("#check[data-status=done]", timeout=60_000)
    assert page.locator("#verdict").inner_text() == "Accepted"
    page.goto(f"/jobs/{job['id']}")
    listed = page.locator("#job-checks li")
    assert listed.count() == 1 and "2,000 of 2,000 accepted" in listed.inner_text()
    assert axe_problems(page) == []
