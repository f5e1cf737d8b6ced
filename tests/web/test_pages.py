"""The pages render from the service, link to each other, and fail as pages (not JSON)."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from tests.support.paths import FEW_CASES, ROOT, failing, judge
from worker import engines
from worker.store.database import Database


def test_dashboard_lists_jobs_with_progress_and_service(client: Any, three_jobs: dict[str, Any]) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    for job in three_jobs.values():
        assert f'data-job="{job["id"]}"' in html
    assert html.index(f'data-job="{three_jobs["mahjong"]["id"]}"') < html.index(f'data-job="{three_jobs["10-20-30"]["id"]}"')
    assert 'aria-valuenow="100.0"' in html and "3 / 3" in html
    assert "none heard from lately" in html  # no worker heartbeat in these tests
    assert 'id="job-row-template"' in html and "js/dashboard.js" in html


def test_dashboard_is_paged(client: Any, submit: Any) -> None:
    for _ in range(21):
        submit(b"1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T\n0\n", "mahjong")
    rows = re.compile(r'<tr data-job="[1-9]')
    first = client.get("/").get_data(as_text=True)
    assert len(rows.findall(first)) == 20 and "Page 1 of 2" in first and 'href="/?page=2"' in first
    second = client.get("/?page=2").get_data(as_text=True)
    assert len(rows.findall(second)) == 1 and 'data-job="1"' in second


def test_dashboard_refuses_a_bad_page_as_a_page(client: Any) -> None:
    response = client.get("/?page=x")
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert "Page must be a whole number" in response.get_data(as_text=True)


def test_upload_page_has_the_form(client: Any) -> None:
    html = client.get("/upload").get_data(as_text=True)
    assert 'enctype="multipart/form-data"' in html and 'name="file"' in html and 'name="game"' in html
    assert 'data-max="4294967296"' in html and "4 GiB" in html
    assert all(f'value="{g}"' in html for g in ("10-20-30", "accordion", "mahjong"))


def test_the_pages_say_what_each_game_is_from_its_engine(client: Any, three_jobs: dict[str, Any]) -> None:
    """The texts that differ by game are attributes of its engine (GET /api/games serves them to the scripts)."""
    upload = client.get("/upload").get_data(as_text=True)
    assert ('<p class="muted">52 card values 1–10 per deck, any spacing; a <code>0</code> ends the file.</p>' in upload
            and "52 cards like <code>QD AD 8H</code> per deck; a line <code>#</code> ends the file." in upload
            and "13 tiles like <code>1T 2T DONG</code> per line; a <code>0</code> ends the file." in upload)
    helps = {"10-20-30": "How many cards were dealt before the game was won, lost or drawn.",
             "accordion": "How many piles were left at the end of each deck.",
             "mahjong": "How many different tiles each hand waits for."}
    details = {"10-20-30": ("draw", "The repeated state was first seen", "after deal {}"),
               "accordion": ("loss", "Pile sizes, left to right", "<code>{}</code>"),
               "mahjong": ("ready", "Waiting tiles", "<code>{}</code>")}
    for game, job in three_jobs.items():
        assert f'<p class="muted dist-help">{helps[game]}</p>' in client.get(f"/jobs/{job['id']}").get_data(as_text=True)
        outcome, label, shown = details[game]
        case = client.get(f"/api/jobs/{job['id']}/cases?outcome={outcome}").get_json()["items"][0]
        html = client.get(f"/cases/{case['id']}").get_data(as_text=True)
        value = shown.format(" ".join(map(str, case["detail"])))
        assert f'<div class="wide"><dt>{label}</dt><dd>{value}</dd></div>' in html, game
    history = client.get("/history").get_data(as_text=True)
    assert 'Number of <span data-number-name data-any="deals, piles or waits">deals, piles or waits</span>' in history
    assert "Deck or hand as text" in history and "A deck or hand given as text is found" in history
    assert 'placeholder="paste a deck or hand (choose its game): finds it in every job"' in history


def test_upload_without_javascript_redirects_to_the_job(client: Any) -> None:
    data = {"file": (io.BytesIO(judge("mahjong", "sample").read_bytes()), "hands.in"), "game": ""}
    response = client.post("/upload", data=data, content_type="multipart/form-data")
    assert response.status_code == 303
    assert re.fullmatch(r"/jobs/\d+", response.headers["Location"])
    assert "hands.in" in client.get(response.headers["Location"]).get_data(as_text=True)


def test_upload_without_javascript_shows_the_error_on_the_page(client: Any) -> None:
    response = client.post("/upload", data={"file": (io.BytesIO(b"what is this"), "x.in")},
                           content_type="multipart/form-data")
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert "cannot tell which game this file is for" in response.get_data(as_text=True)


def test_job_page_shows_progress_counts_charts_and_actions(client: Any, submit: Any) -> None:
    job = submit("10-20-30/sample")
    html = client.get(f"/jobs/{job['id']}").get_data(as_text=True)
    assert "sample.in" in html and "status-succeeded" in html
    assert re.search(r'data-c="win">1<', html) and re.search(r'data-c="draw">1<', html)
    for needle in ('id="chart-outcomes"', 'id="chart-distribution"', 'id="results-table"', "Deals by outcome",
                   f'href="/api/jobs/{job["id"]}/output"', f"/api/results/export?job_id={job['id']}&amp;format=csv",
                   f"/api/results/export?job_id={job['id']}&amp;format=ndjson", 'id="rerun"', 'id="cancel"'):
        assert needle in html, needle
    assert re.search(r'<button[^>]*id="cancel"[^>]*hidden', html), "a finished job cannot be cancelled"


def test_job_page_shows_the_parser_error(client: Any, submit: Any) -> None:
    data, line = failing("accordion", FEW_CASES)
    job = submit(data, "accordion")
    html = client.get(f"/jobs/{job['id']}").get_data(as_text=True)
    assert "This job failed" in html and f"line {line}, column 1: &#34;X&#34; is not a card" in html


def test_case_pages_show_input_result_and_replay(client: Any, three_jobs: dict[str, Any]) -> None:
    for game, job in three_jobs.items():
        html = client.get(f"/jobs/{job['id']}/cases/1").get_data(as_text=True)
        case = client.get(f"/api/jobs/{job['id']}/cases/1").get_json()
        assert case["line"] in html and 'id="player"' in html and f'data-game="{game}"' in html
        assert 'id="case-data"' in html and "js/case.js" in html
        assert 'rel="next"' in html and 'rel="prev"' not in html
        assert client.get(f"/cases/{case['id']}").get_data(as_text=True) == html


def test_a_case_whose_stored_trace_is_damaged_says_so(client: Any, db: Database, settings: Any,
                                                    three_jobs: dict[str, Any]) -> None:
    from tests.support.jobs import replace_trace

    job = three_jobs["10-20-30"]
    replace_trace(db, job["id"], 1, b"\x01 cut")
    page = client.get(f"/jobs/{job['id']}/cases/1")
    assert page.status_code == 200 and "Win : 66" in page.get_data(as_text=True)
    assert "The stored trace of this deck cannot be read: a stored 10-20-30 trace is" in page.get_data(as_text=True)
    assert client.get(f"/api/jobs/{job['id']}/cases/1").get_json()["trace_error"].startswith("a stored 10-20-30")


def test_history_page_keeps_the_search_in_its_form(client: Any) -> None:
    html = client.get("/history?game=accordion&outcome=win&number_min=2").get_data(as_text=True)
    assert '<option value="accordion" selected>' in html and '<option value="win" selected>' in html
    assert 'name="number_min" type="number" min="0" inputmode="numeric" placeholder="min" value="2"' in html
    assert "format=csv" in html and "game=accordion" in html


def test_docs_page_is_the_reference_of_the_document_with_assets_of_its_own(client: Any) -> None:
    response = client.get("/docs")
    html = response.get_data(as_text=True)
    assert 'data-spec="/api/openapi.json"' in html
    assert "/static/vendor/swagger-ui/swagger-ui-bundle.js" in html and "/static/js/api-reference.js" in html
    assert "://" not in "".join(re.findall(r'(?:src|href)="([^"]*)"', html))
    # Swagger UI's icons are data: images; nothing else is loosened.
    assert "img-src 'self' data:;" in response.headers["Content-Security-Policy"]
    assert "script-src 'self';" in response.headers["Content-Security-Policy"]


@pytest.mark.parametrize("path", ["/jobs/99", "/cases/99", "/jobs/99/cases/1", "/nowhere"])
def test_missing_pages_are_html_404s(client: Any, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404 and response.mimetype == "text/html"
    assert "Not found" in response.get_data(as_text=True)


def test_a_page_asked_for_json_answers_json(client: Any) -> None:
    response = client.get("/jobs/99", headers={"Accept": "application/json"})
    assert response.status_code == 404 and response.get_json() == {"error": "no job 99"}


@pytest.mark.parametrize("asset", ["dealer.css", "favicon.svg", "js/util.js", "js/app.js", "js/dashboard.js",
                                   "js/upload.js", "js/upload-page.js", "js/job.js", "js/charts.js", "js/results.js",
                                   "js/history.js", "js/case.js", "js/replay.js", "js/cards.js", "js/notice.js",
                                   # each game's player (case.js loads it by the game's slug)
                                   *(f"js/games/{slug}.js" for slug in engines.names())])
def test_assets_are_served_by_the_app(client: Any, asset: str) -> None:
    response = client.get(f"/static/{asset}")
    assert response.status_code == 200
    text = response.get_data(as_text=True)
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text), f"{asset} refers to another site"
    response.close()


def test_pages_refer_to_no_other_site(client: Any, three_jobs: dict[str, Any]) -> None:
    job = three_jobs["accordion"]
    for path in ["/", "/upload", f"/jobs/{job['id']}", f"/jobs/{job['id']}/cases/1", "/history", "/docs"]:
        html = client.get(path).get_data(as_text=True)
        assert not re.search(r"(src|href)=\"https?://", html), path


def test_job_page_shows_reading_warnings(client: Any, submit: Any) -> None:
    data = judge("mahjong", "sample").read_bytes().rsplit(b"0", 1)[0]  # no terminating "0"
    job = submit(data, "mahjong")
    assert job["status"] == "succeeded" and job["warnings"]
    html = client.get(f"/jobs/{job['id']}").get_data(as_text=True)
    assert "Warnings while reading the file" in html
    assert "no terminating &#34;0&#34; at end of file" in html


def test_upload_page_over_the_limit_is_a_413_page(db: Database, settings: Any, dispatcher: Any) -> None:
    from dataclasses import replace

    from webui.app import create_app

    client = create_app(replace(settings, max_upload_bytes=100), dispatcher, config={"TESTING": True}, db=db).test_client()
    response = client.post("/upload", data={"file": (io.BytesIO(b"1 " * 200), "big.in")},
                           content_type="multipart/form-data")
    assert response.status_code == 413 and response.mimetype == "text/html"
    assert "The upload is larger than the limit of 100 bytes." in response.get_data(as_text=True)


#: What an animation that runs for as long as work does may change: what the browser composes without
#: painting the page again. A box shadow or a background position changed at every frame had a page that
#: followed a running job painted anew 60 times a second (webui/static/dealer.css says what it cost).
COMPOSED = {"opacity", "transform"}


@pytest.mark.parametrize("sheet", ["dealer.css", "check.css"])
def test_what_moves_for_as_long_as_work_runs_is_only_composed(sheet: str) -> None:
    css = (ROOT / "webui" / "static" / sheet).read_text()
    frames = {name: set(re.findall(r"([a-z-]+)\s*:", body))
              for name, body in re.findall(r"@keyframes\s+([\w-]+)\s*\{((?:[^{}]*\{[^{}]*\})*)[^{}]*\}", css)}
    endless = set(re.findall(r"animation:\s*([\w-]+)[^;}]*\binfinite\b", css))
    assert endless, f"{sheet}: no endless animation found (has the pattern of a declaration changed?)"
    for name in endless:
        changed = frames.get(name)
        assert changed and changed <= COMPOSED, f"{sheet}: @keyframes {name} changes {changed}"
