"""The upload page's Generate form in a real browser, against a real web + worker (embedded and on Redis +
PostgreSQL): a file made to order becomes a job the page goes to; what cannot be made is said on the
page, which stays usable and accessible on a phone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.browser.test_ui_live import PHONE, axe_problems
from worker.cli import main
from worker.testing.live import LiveService

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_generate_makes_the_file_and_opens_its_job(page: Any, live: LiveService, screenshot: Any,
                                                  tmp_path: Path) -> None:
    page.goto("/upload")
    page.select_option("#generate-game", "10-20-30")
    page.fill("#generate-cases", "300")
    page.fill("#generate-mix", "win=1,loss=1,draw=1")
    page.fill("#generate-seed", "246")
    page.fill("#generate-layout", "per-line=13")
    page.click("#generate-button")
    page.wait_for_url(re.compile(r"/jobs/\d+$"))
    page.wait_for_selector("#job[data-status=succeeded]", timeout=60_000)
    job_id = int(re.search(r"/jobs/(\d+)$", page.url).group(1))
    job = live.get(f"/api/jobs/{job_id}")
    assert job["filename"] == "generated-10-20-30-300-seed-246-mix-win=1,loss=1,draw=1-layout-per-line=13.in"
    assert job["counts"] == {"win": 100, "loss": 100, "draw": 100}
    assert "generated-10-20-30-300-seed-246" in page.inner_text("main")
    file = tmp_path / "made.in"
    made = CliRunner().invoke(main, ["generate", "10-20-30", "--cases", "300", "--seed", "246",
                                     "--mix", "win=1,loss=1,draw=1", "--layout", "per-line=13"])
    file.write_bytes(made.stdout_bytes)
    solved = CliRunner().invoke(main, ["solve", "10-20-30", str(file)])
    assert live.output(job_id) == solved.stdout_bytes
    screenshot(page, "generated-job")


def test_what_cannot_be_made_is_said_on_the_page_which_fits_a_phone(browser: Any, live: LiveService,
                                                                   screenshot: Any) -> None:
    context = browser.new_context(base_url=live.url, viewport=PHONE)
    page = context.new_page()
    try:
        page.goto("/upload")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], "the page scrolls sideways"
        page.select_option("#generate-game", "accordion")
        page.fill("#generate-cases", "50")
        page.fill("#generate-mix", "1=1,60=1")
        page.click("#generate-button")
        error = page.locator("#generate-error")
        error.wait_for()
        assert "mix: no deck leaves 60 piles: a deck leaves 1 to 52 piles" in error.inner_text()
        assert page.input_value("#generate-mix") == "1=1,60=1" and page.input_value("#generate-game") == "accordion"
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], "the error scrolls sideways"
        assert axe_problems(page) == []
        screenshot(page, "generate-error-phone")
    finally:
        context.close()


def test_the_form_and_a_generated_jobs_page_download_its_problem_package(page: Any, live: LiveService,
                                                                        tmp_path: Path) -> None:
    page.goto("/upload")
    page.select_option("#generate-game", "mahjong")
    page.fill("#generate-cases", "20")
    page.fill("#generate-seed", "7")
    page.fill("#generate-mix", "ready=1,not-ready=1")
    with page.expect_download() as download:
        page.click("#package-button")
    assert download.value.suggested_filename == "mahjong.zip"
    expected = tmp_path / "expected.zip"
    made = CliRunner().invoke(main, ["package", "mahjong", "--zip", str(expected),
                                     "--recipe=--cases 20 --seed 7 --mix ready=1,not-ready=1"])
    assert made.exit_code == 0 and Path(download.value.path()).read_bytes() == expected.read_bytes()
    page.click("#generate-button")
    page.wait_for_url(re.compile(r"/jobs/\d+$"))
    with page.expect_download() as again:
        page.click("#download-package")
    assert Path(again.value.path()).read_bytes() == expected.read_bytes()
