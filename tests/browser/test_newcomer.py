"""What a newcomer trips on, in Chromium against the session's live service (issue 26): the check page on a
phone (a check of a 50,000-line output included: 200,000 under ``make bench``) opening on the lines not accepted; the dashboard's
"Finished" and a job's time at 1280 px; a mahjong file with a wrong suit named like any other bad file;
times that stay in UTC after the scripts run, numbers grouped alike, verdicts written alike, the solve
times users can act on; and every page, the check pages included, through axe-core at 1280 and 390 px
without sideways scrolling, each shot (the README's and the guide's screenshots are these: docs/screenshots)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import SCREENSHOTS
from tests.browser.test_ui_live import DESKTOP, PHONE, axe_problems, close, settled
from tests.browser.test_ui_live import tab as open_tab
from tests.support.paths import JUDGE_DATA
from webui.checks import CASES_PER_PAGE
from worker.testing.waiting import until
from worker.testing.data import random_judge_file
from worker.testing.live import LiveService

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: The lines of the big check's output, and those of it that are wrong (by line, from 1). 50,000 reach what
#: 200,000 (issue 26's size, ``make bench``'s: ``DEALER_BIG_CHECK_LINES``) did at a quarter of the solving
#: and judging: the wrong lines pages apart (a page is 50 lines), every number of five digits or more
#: grouped ("page 1 of 1,000", "Hand 23,456 of 50,000"), the job's time whole on the dashboard.
BIG_LINES = int(os.environ.get("DEALER_BIG_CHECK_LINES", "50000"))
BIG_WRONG = (7, 23_457, BIG_LINES - 1)
#: A case far into the big job, whose page's title groups its number.
FAR_CASE = 23_456


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:data:`BIG_LINES` mahjong hands: of the three games, the smallest file of that many cases."""
    return random_judge_file(tmp_path_factory.mktemp("big-check") / "hands.in", "mahjong", BIG_LINES, 26)


@pytest.fixture
def made(live: LiveService, big_file: Path, tmp_path: Path) -> dict[str, int]:
    """A job of the :data:`BIG_LINES` hands, and a check of its output with three lines wrong (one of them longer than
    a phone is wide), by id; made once per service (the module's tests share them)."""
    if live.url in _MADE:
        return _MADE[live.url]
    job = live.wait(live.submit(big_file, "mahjong")["id"], timeout=300)
    assert job["status"] == "succeeded", job
    lines = live.output(job["id"]).decode().split("\n")
    for line in BIG_WRONG:
        lines[line - 1] = lines[line - 1] + " 1S 2S 3S 4S 5S 6S 7S 8S 9S 1T 2T 3T 4T 5T 6T 7T 8T 9T"
    output = tmp_path / "mine.out"
    output.write_text("\n".join(lines))
    check = live.client.check(job["id"], str(output))
    until(lambda: live.client.check_result(check["id"]), lambda found: found["status"] == "done",
          "the big check to be judged", 300)
    _MADE[live.url] = {"job": job["id"], "check": check["id"]}
    return _MADE[live.url]


_MADE: dict[str, dict[str, int]] = {}


@pytest.fixture
def tab(browser: Any, live: LiveService) -> Iterator[Any]:
    """tab(viewport): a fresh tab of that size on the live service (test_ui_live's: it fails the test on a
    script error, and knows when the page's requests are answered)."""
    opened: list[Any] = []

    def make(viewport: dict[str, int]) -> Any:
        opened.append(open_tab(browser, live, viewport))
        return opened[-1]

    yield make
    for page in opened:
        close(page)


def fits(page: Any, width: int) -> None:
    """No sideways scrolling, and every link and button within the width."""
    assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{page.url} scrolls sideways"
    outside = page.evaluate("""(width) => Array.from(document.querySelectorAll('main a, main button'))
        .filter((el) => el.getClientRects().length)
        .map((el) => el.getBoundingClientRect()).filter((r) => r.left < 0 || r.right > width + 0.5).length""", width)
    assert outside == 0, f"{outside} links or buttons of {page.url} are off-screen"


def test_the_check_page_of_a_big_output_fits_a_phone_and_opens_on_what_is_not_accepted(
        tab: Any, live: LiveService, made: dict[str, int]) -> None:
    page = tab(PHONE)
    page.goto(f"/checks/{made['check']}")
    rows = page.locator("#check-cases tbody tr")
    assert [row.get_attribute("data-line") for row in rows.all()] == [str(line) for line in BIG_WRONG]
    assert page.locator(".verdict-tab[aria-current=true]").inner_text().startswith("Not accepted")
    fits(page, PHONE["width"])
    replay = rows.first.locator("a:has-text('Replay')")
    box = replay.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"]
    got = rows.first.locator("td.got")
    assert got.bounding_box()["width"] <= PHONE["width"] and "1S 2S 3S" in got.inner_text()
    # Every line is one click away, and fits too.
    page.click(".verdict-tab.v-all")
    page.wait_for_url(re.compile(r"verdict=all"))
    assert rows.first.get_attribute("data-line") == "1"
    assert f"page 1 of {BIG_LINES // CASES_PER_PAGE:,}" in page.locator("#cases .card-head").inner_text()
    fits(page, PHONE["width"])
    assert axe_problems(page) == []


def test_the_dashboard_counts_every_finished_job_and_shows_a_job_s_time_whole(
        tab: Any, live: LiveService, made: dict[str, int]) -> None:
    live.wait(live.submit(JUDGE_DATA / "mahjong" / "sample.in", "mahjong")["id"])
    page = tab(DESKTOP)

    def shown() -> tuple[dict[str, int], dict[str, int]]:
        page.goto("/")
        settled(page)
        figures = {key: int(page.inner_text(f"[data-s={key}]").replace(",", ""))
                   for key in ("finished", "succeeded", "failed", "cancelled")}
        return figures, live.get("/api/overview")["jobs_by_status"]

    figures, by_status = until(shown, lambda seen: all(seen[0][k] == seen[1][k] for k in
                                                       ("succeeded", "failed", "cancelled")),
                               "the dashboard to show the API's figures")
    assert figures["finished"] == figures["succeeded"] + figures["failed"] + figures["cancelled"]
    sub = page.locator("#stat-finished .stat-sub, .stat:has([data-s=finished]) .stat-sub").first.inner_text()
    assert re.fullmatch(r"[\d,]+ succeeded · [\d,]+ failed · [\d,]+ cancelled", sub), sub
    # The big job's line ends with the time it took, whole, at 1280 px.
    text = page.locator(f'tr[data-job="{made["job"]}"] .progress-text')
    assert " · in " in text.inner_text()
    assert text.evaluate("el => el.scrollWidth <= el.clientWidth"), text.inner_text()


@pytest.mark.parametrize("game", [None, "mahjong"])
def test_a_mahjong_file_with_a_wrong_suit_is_named_like_any_bad_file(tab: Any, live: LiveService, tmp_path: Path,
                                                                     game: str | None) -> None:
    bad = tmp_path / "wrong-suit.in"
    bad.write_text("1X 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\n0\n")
    page = tab(DESKTOP)
    page.goto("/upload")
    page.set_input_files("#file", str(bad))
    if game:
        page.select_option("#game", game)
    page.click("#upload-button")
    page.wait_for_selector("#upload-error:not([hidden])")
    message = page.inner_text("#upload-error-text")
    where = 'line 1, column 1: unknown tile "1X"'
    assert (f"read as a mahjong file (the closest), {where}" if game is None else where) in message, message
    assert page.locator("#upload-snippet .caret").count() == 1


def test_times_numbers_verdicts_and_solve_times_read_alike_everywhere(tab: Any, live: LiveService,
                                                                      made: dict[str, int]) -> None:
    page = tab(DESKTOP)
    job = made["job"]
    served = page.request.get(f"/jobs/{job}").text()
    rendered = re.search(r'<time datetime="[^"]+" data-t="created_at">([^<]+)</time>', served)
    assert rendered and rendered[1].endswith(" UTC")
    page.goto(f"/jobs/{job}")
    settled(page)
    # The scripts leave a time in the zone and the form the server wrote it in.
    assert page.inner_text("[data-t=created_at]") == rendered[1]
    # The solve times users can act on: the typical case, and the slowest with a link to it.
    assert re.fullmatch(r".+ mean · 99 % within .+", page.locator("dd:has([data-t=solve_us_p99])").inner_text())
    slowest = page.locator("[data-t=slowest] a")
    index = int(slowest.inner_text().removeprefix("Case ").replace(",", ""))
    slowest.click()
    page.wait_for_url(re.compile(rf"/jobs/{job}/cases/{index}$"))
    # Numbers grouped alike: the case's title as the rest of the page.
    page.goto(f"/jobs/{job}/cases/{FAR_CASE}")
    assert page.locator("h1").inner_text().startswith(f"Hand {FAR_CASE:,} of {BIG_LINES:,}")
    # A verdict is written the same on the job page as on the check page.
    page.goto(f"/jobs/{job}")
    badge = page.locator(f'#job-checks li:has(a[href="/checks/{made["check"]}"]) .badge').inner_text()
    page.goto(f"/checks/{made['check']}")
    assert badge == page.inner_text("#verdict") == "Wrong answer"


def _pages(live: LiveService, made: dict[str, int]) -> dict[str, str]:
    small = live.wait(live.submit(JUDGE_DATA / "accordion" / "random-2000.in", "accordion")["id"])["id"]
    return {"dashboard": "/", "upload": "/upload", "job": f"/jobs/{small}", "case": f"/jobs/{small}/cases/1",
            "history": "/history", "workers": "/workers", "error": "/jobs/999999",
            "check": f"/checks/{made['check']}", "check-all": f"/checks/{made['check']}?verdict=all",
            "big-job": f"/jobs/{made['job']}"}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_every_page_with_the_check_pages_passes_axe_fits_and_is_shot(tab: Any, live: LiveService,
                                                                    made: dict[str, int],
                                                                    viewport: dict[str, int]) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = tab(viewport)
    problems = {}
    for name, url in _pages(live, made).items():
        page.goto(url)
        settled(page)
        if found := axe_problems(page):
            problems[name] = found
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], f"{name} scrolls sideways"
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / f"{live.mode}-{name}-{viewport['width']}.png"), full_page=True)
    assert not problems, "accessibility problems:\n" + "\n".join(f"{name}: {p}" for name, found in problems.items()
                                                              for p in found)
