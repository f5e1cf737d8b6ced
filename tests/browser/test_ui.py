"""The web UI in a real browser, against a real web + worker, embedded and on Redis + PostgreSQL.

The session's live service of each mode serves every test of this module, in order: the first
tests upload the files the later ones look at. Other modules share the service, so the tests
count only what this module did.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import JUDGE_DATA
from worker.testing.live import LiveService

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Job ids of what this module uploaded, by mode and file.
JOBS: dict[tuple[str, str], int] = {}


def _counts(out: Path) -> dict[str, int]:
    """Outcome counts of a 10-20-30 judge output."""
    counts = {"win": 0, "loss": 0, "draw": 0}
    for line in out.read_text().splitlines():
        counts[line.split(":")[0].strip().lower()] += 1
    return counts


def _job_id(href: str) -> int:
    return int(re.search(r"/jobs/(\d+)", href).group(1))


def test_upload_on_the_dashboard_and_watch_it_finish_live(page: Any, live: LiveService, screenshot: Any) -> None:
    # The service is shared: other modules' jobs may have succeeded on it before this one (none is running).
    succeeded_before = live.get("/api/overview")["jobs_by_status"].get("succeeded", 0)
    page.goto("/")
    page.wait_for_selector("#service-pill[data-state=ok]")
    page.evaluate("window.__sameDocument = true")
    page.set_input_files("#quick-file", str(JUDGE_DATA / "10-20-30" / "random-2000.in"))
    page.wait_for_selector("#quick-status a")
    job_id = _job_id(page.get_attribute("#quick-status a", "href"))
    row = page.locator(f'tr[data-job="{job_id}"]')
    assert row.locator(".fname").inner_text() == "random-2000.in"
    # The row reaches 100 % and "succeeded" by the live stream, the page never reloaded. Whether a reading
    # shows it unfinished first depends on how fast the job runs (on a quiet machine it may end first).
    page.wait_for_function(
        f"""() => {{
            const row = document.querySelector('tr[data-job="{job_id}"]');
            const value = Number(row.querySelector('[role=progressbar]').getAttribute('aria-valuenow'));
            return value === 100 && row.dataset.status === 'succeeded';
        }}""", polling=50, timeout=60_000)
    assert page.evaluate("window.__sameDocument") is True, "the page was reloaded"
    assert row.locator("[data-f=status]").inner_text().lower() == "succeeded"
    assert re.search(r"2,000 / 2,000 · [\d,]+ cases/s", row.locator("[data-f=progress-text]").inner_text())
    counts = _counts(JUDGE_DATA / "10-20-30" / "random-2000.out")
    legend = row.locator(".strip-legend").inner_text()
    assert f"{counts['win']:,} win" in legend and f"{counts['loss']:,} loss" in legend
    assert page.locator("[data-s=workers]").inner_text() == "1"
    JOBS[live.mode, "random-2000"] = job_id
    page.wait_for_function(f"() => document.querySelector('[data-s=succeeded]').textContent === "
                           f"'{succeeded_before + 1:,}'")
    # The bars' widths ease in: shot once every transition has ended.
    page.wait_for_function("() => document.getAnimations().every((a) => !(a instanceof CSSTransition)"
                           " || a.playState === 'finished')")
    screenshot(page, "dashboard")


def test_upload_page_shows_a_parse_error_with_its_line(page: Any, live: LiveService, screenshot: Any,
                                                         tmp_path: Path) -> None:
    deck = (JUDGE_DATA / "10-20-30" / "sample.in").read_text().split()[:52]
    deck[13] = "11"
    bad = tmp_path / "bad-deck.in"
    bad.write_text(" ".join(deck[:20]) + "\n" + " ".join(deck[20:]) + "\n0\n")
    page.goto("/upload")
    page.set_input_files("#file", str(bad))
    page.select_option("#game", "10-20-30")
    page.click("#upload-button")
    error = page.locator("#upload-error")
    error.wait_for(state="visible")
    assert 'line 1, column 33: "11" is not a card value (1-10)' in error.inner_text()
    assert page.locator("#upload-snippet mark.bad").inner_text() == "11"
    assert page.url.endswith("/upload")
    screenshot(page, "upload-error")


def test_upload_page_sends_a_file_and_opens_its_job(page: Any, live: LiveService) -> None:
    page.goto("/upload")
    page.set_input_files("#file", str(JUDGE_DATA / "10-20-30" / "draws.in"))
    page.click("#upload-button")
    page.wait_for_url(re.compile(r"/jobs/\d+$"))
    JOBS[live.mode, "draws"] = _job_id(page.url)
    page.wait_for_selector("#job[data-status=succeeded]", timeout=60_000)


def test_job_page_counts_chart_results_and_downloads(page: Any, live: LiveService, screenshot: Any,
                                                      tmp_path: Path) -> None:
    job_id = JOBS[live.mode, "random-2000"]
    page.goto("/")
    page.click(f'tr[data-job="{job_id}"] a.fname')
    page.wait_for_url(f"**/jobs/{job_id}")
    counts = _counts(JUDGE_DATA / "10-20-30" / "random-2000.out")
    for outcome, n in counts.items():
        assert page.locator(f'[data-c="{outcome}"]').inner_text() == f"{n:,}"
    # The charts: one bar per outcome, and the deals distribution with a column per bin.
    assert page.locator("#chart-outcomes svg g.o-win rect.bar").count() == 1
    page.wait_for_selector("#chart-distribution svg rect.seg")
    drawn = page.evaluate("""() => Array.from(document.querySelectorAll('#chart-distribution g.col title'))
        .map(t => t.textContent)""")
    assert sum(int(n.replace(",", "")) for t in set(drawn) for n in re.findall(r"([\d,]+) (?:win|loss|draw)", t)) == 2000
    # The results table: paged, sortable, filterable.
    page.wait_for_selector("#results-table tbody tr[data-case]")
    assert page.locator("#results-table tbody tr").count() == 25
    assert page.locator("#results-count").inner_text() == "2,000 results"
    page.click("#results-table th[data-key=number] button")
    page.click("#results-table th[data-key=number] button")
    page.wait_for_selector("#results-table th[data-key=number][aria-sort=descending]")
    page.wait_for_function("() => !document.querySelector('#results-table tr.loading')")
    lines = (JUDGE_DATA / "10-20-30" / "random-2000.out").read_text().splitlines()
    longest = max(int(line.split(":")[1]) for line in lines)
    assert page.locator("#results-table tbody tr").first.locator("td.num").nth(1).inner_text() == str(longest)
    page.select_option("#f-outcome", "draw")
    page.wait_for_function(f"() => document.querySelector('#results-count').textContent === '{counts['draw']} results'")
    assert set(page.locator("#results-table tbody .badge").all_text_contents()) == {"Draw"}
    screenshot(page, "job")
    # Downloads: the judge output byte for byte, and every result as CSV and NDJSON.
    with page.expect_download() as download:
        page.click("#download-output")
    path = tmp_path / "output.out"
    download.value.save_as(path)
    assert path.read_bytes() == (JUDGE_DATA / "10-20-30" / "random-2000.out").read_bytes()
    with page.expect_download() as download:
        page.click("#export-csv")
    download.value.save_as(tmp_path / "results.csv")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "results.csv").read_text())))
    assert [r["line"] for r in rows] == lines
    # The export counted its results as they came in (a large one shows how far it is).
    assert page.text_content("#export-status") == "Exported 2,000 results."
    with page.expect_download() as download:
        page.click("#export-ndjson")
    download.value.save_as(tmp_path / "results.ndjson")
    records = [json.loads(line) for line in (tmp_path / "results.ndjson").read_text().splitlines()]
    assert [r["index"] for r in records] == list(range(1, 2001))


def test_replay_of_a_draw_steps_to_the_end(page: Any, live: LiveService, screenshot: Any) -> None:
    job_id = JOBS[live.mode, "draws"]
    page.goto(f"/jobs/{job_id}")
    page.click("#results-table tbody tr[data-case] >> nth=0")
    page.wait_for_url(re.compile(r"/cases/\d+$"))
    page.wait_for_selector("#player[data-step='0']")
    player = page.locator("#player")
    first_line = (JUDGE_DATA / "10-20-30" / "draws.out").read_text().splitlines()[0]
    assert page.locator(".judge-line").inner_text() == first_line
    # Step with the keyboard and the buttons.
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert player.get_attribute("data-step") == "2"
    assert "Deal 2" in page.locator("#step-note").text_content()
    assert page.locator("#stage .pile").count() == 7 and page.locator("#stage .deck .pcard").count() == 50
    page.click("[data-act=back]")
    assert player.get_attribute("data-step") == "1"
    # Jump to the first pick-up: its three cards are highlighted and the combination named.
    picks = page.evaluate("""() => { const r = window.dealerReplay; const hits = [];
        for (let i = 0; i <= r.last && hits.length < 1; i++) { r.show(i);
          if (document.querySelector('#step-note .tag-hl')) hits.push(i); } return hits; }""")
    assert picks, "the replay has no pick-up"
    assert page.locator("#stage .pile.current .pcard.hl").count() == 3
    assert re.search(r"(first two \+ last|first \+ last two|last three) of pile \d: \d+ \+ \d+ \+ \d+ = (10|20|30)",
                     page.locator("#step-note").text_content())
    screenshot(page, "replay-pickup")
    # Play at full speed to the end: the draw, and the step whose state repeated.
    page.select_option("#speed", "100")
    page.click("[data-act=play]")
    page.wait_for_selector("#player[data-at-end=true]", timeout=30_000)
    note = page.locator("#step-note").text_content()
    seen = re.search(r"first seen after deal (\d+) \(step (\d+)\)", note)
    assert "Draw" in note and seen, note
    assert page.locator("#scrubber-marks i").count() == 1
    screenshot(page, "replay-draw")
    page.fill("#step-input", seen.group(2))
    page.keyboard.press("Enter")
    page.wait_for_selector(".state-seen")
    assert "comes back after deal" in page.locator(".state-seen").inner_text()
    page.click("#stage")  # leave the step box: the keys are the player's again
    page.keyboard.press("End")
    assert page.locator("#player").get_attribute("data-at-end") == "true"


def test_every_trace_of_a_job_replays_in_the_browser(page: Any, live: LiveService, screenshot: Any) -> None:
    """The page's replay code plays every stored trace of each game to the judge's answer."""
    jobs = {"10-20-30": JOBS[live.mode, "draws"]}
    for game, name in (("accordion", "sample"), ("mahjong", "many-waits")):
        jobs[game] = live.submit(JUDGE_DATA / game / f"{name}.in", game)["id"]
        assert live.wait(jobs[game])["status"] == "succeeded"
    page.goto("/")
    checked = page.evaluate("""async (jobs) => {
        const counts = {};
        for (const [game, id] of Object.entries(jobs)) {
            const mod = await import(`/static/js/games/${game}.js`);
            const page = await (await fetch(`/api/jobs/${id}/cases?per_page=500`)).json();
            counts[game] = 0;
            for (const item of page.items) {
                const c = await (await fetch(`/api/cases/${item.id}`)).json();
                const { frames } = mod.frames(c);
                const end = frames[frames.length - 1];
                if (game === "10-20-30" && frames.filter(f => f.kind === "deal").length !== c.number) throw new Error(`case ${c.id}`);
                if (game === "accordion" && end.piles.map(p => p.length).join(" ") !== c.detail.join(" ")) throw new Error(`case ${c.id}`);
                if (game === "mahjong" && frames.length - 1 !== c.number) throw new Error(`case ${c.id}`);
                counts[game] += 1;
            }
        }
        return counts;
    }""", jobs)
    assert checked == {"10-20-30": 300, "accordion": 2, "mahjong": 200}
    for game in ("accordion", "mahjong"):
        page.goto(f"/jobs/{jobs[game]}/cases/1")
        page.wait_for_selector("#player[data-step='0']")
        page.keyboard.press("End")
        page.keyboard.press("ArrowLeft") if game == "accordion" else None
        screenshot(page, f"replay-{game}")
    page.goto(f"/jobs/{jobs['mahjong']}")
    page.wait_for_selector("#chart-distribution svg rect.seg")
    screenshot(page, "job-mahjong")


def _decks(path: Path) -> list[list[str]]:
    """The decks of a 10-20-30 judge file, as lists of card values (the terminator left out)."""
    cards = path.read_text().split()
    return [cards[at:at + 52] for at in range(0, len(cards) - 51, 52)]


def test_history_finds_a_deck_in_every_job(page: Any, live: LiveService, screenshot: Any) -> None:
    # A deck of draws.in that no other judge file holds: other modules' jobs on the shared service
    # (repeated-decks.in holds the first one) are not to be found too.
    elsewhere = {tuple(deck) for other in (JUDGE_DATA / "10-20-30").glob("*.in") if other.name != "draws.in"
                 for deck in _decks(other)}
    draws = _decks(JUDGE_DATA / "10-20-30" / "draws.in")
    cards = next(deck for deck in draws if tuple(deck) not in elsewhere)
    deck = " ".join(cards[:30]) + "\n  " + "  ".join(cards[30:])  # spaced differently
    live.wait(live.submit(JUDGE_DATA / "10-20-30" / "draws.in", "10-20-30")["id"])  # a second copy of it
    page.goto("/history")
    page.select_option("#f-game", "10-20-30")
    page.fill("#f-input", deck)
    page.click("#history-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#results-count').textContent === '2 results'")
    jobs = page.locator("#results-table tbody tr td:first-child").all_inner_texts()
    assert f"#{JOBS[live.mode, 'draws']}" in jobs and len(set(jobs)) == 2
    assert "game=10-20-30" in page.url and "input=" in page.url
    href = page.get_attribute("#export-csv", "href")
    assert "format=csv" in href and "input=" in href
    screenshot(page, "history")
    # With no game chosen, the pasted deck says which game it is.
    page.select_option("#f-game", "")
    page.click("#history-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#results-count').textContent === '2 results'")
    # A bad search says what is wrong, on the page.
    page.fill("#f-input", "AC")
    page.click("#history-form button[type=submit]")
    page.wait_for_selector("#results-error:not([hidden])")
    assert "it is no case of any game" in page.locator("#results-error").inner_text()


def test_error_page_and_a_phone(page: Any, live: LiveService, screenshot: Any) -> None:
    # /docs is tests/browser/test_api_reference.py's: every operation, axe, both widths, its screenshots.
    response = page.goto("/jobs/999999")
    assert response.status == 404 and "Not found" in page.inner_text("main")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/")
    page.wait_for_selector("tr[data-job]")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "the dashboard scrolls sideways on a phone"
    screenshot(page, "dashboard-phone")
    page.goto(f"/jobs/{JOBS[live.mode, 'draws']}/cases/1")
    page.wait_for_selector("#player[data-step='0']")
    page.keyboard.press("End")
    screenshot(page, "replay-phone")
