"""A game is its engine package, one line in the registry and its replay script: the toy game of
``tests/web/toy.py``, given its line of the registry for these tests only, is recognised, uploaded,
solved through the pipeline, listed, searched, checked and shown by every page, with no other change."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest

from tests.support.http import finished, post_file
from worker.engines import Engine

FILE = b"H T H\nT  T\n\nH H H H T\n#\n"
OUTPUT = "2 heads, 1 tails\n0 heads, 2 tails\n4 heads, 1 tails\n"


@pytest.fixture
def job(client: Any, coins: Engine) -> dict[str, Any]:
    """A job of the toy game, its game recognised from the file."""
    found = finished(client, post_file(client, FILE, None, "tosses.in"))
    assert (found["game"], found["status"], found["total"], found["done"]) == ("coins", "succeeded", 3, 3), found
    return found


def test_it_is_listed_with_its_texts(client: Any, coins: Engine) -> None:
    games = {game["slug"]: game for game in client.get("/api/games").get_json()}
    assert list(games) == ["10-20-30", "accordion", "mahjong", "coins"]
    assert games["coins"] == {"slug": "coins", "title": "Coin tosses (a toy)", "summary": coins.summary, "unit": "throw",
                              "number_name": "heads", "outcomes": ["win", "loss"], "input_help": coins.input_help,
                              "number_help": coins.number_help, "detail_label": "Heads and tails",
                              "detail_text": "`{}`"}
    upload = client.get("/upload").get_data(as_text=True)
    assert '<option value="coins">Coin tosses (a toy)</option>' in upload
    assert "Up to 9 tosses like <code>H T T</code> per line; a line <code>#</code> ends the file." in upload
    history = client.get("/history").get_data(as_text=True)
    assert '<option value="coins">coins</option>' in history
    assert "deals, piles, waits or heads" in history and "deck, hand or throw" in history


def test_it_is_solved_and_its_results_judge_output_and_search_answer(client: Any, job: dict[str, Any]) -> None:
    ident = job["id"]
    assert job["counts"] == {"win": 2, "loss": 1}
    assert client.get(f"/api/jobs/{ident}/output").get_data(as_text=True) == OUTPUT
    cases = client.get(f"/api/jobs/{ident}/cases?sort=-number").get_json()["items"]
    assert [(c["index"], c["input"], c["outcome"], c["number"], c["detail"], c["line"]) for c in cases] == [
        (3, "H H H H T", "win", 4, [4, 1], "4 heads, 1 tails"), (1, "H T H", "win", 2, [2, 1], "2 heads, 1 tails"),
        (2, "T T", "loss", 0, [0, 2], "0 heads, 2 tails")]
    assert [c["index"] for c in client.get(f"/api/jobs/{ident}/cases?outcome=loss").get_json()["items"]] == [2]
    one = client.get(f"/api/jobs/{ident}/cases/1").get_json()
    assert one["trace"] == {"version": 1, "tosses": "HTH"} and one["trace_error"] is None
    found = client.get("/api/results", query_string={"game": "coins", "input": "H  T H"}).get_json()["items"]
    assert [(c["job_id"], c["index"]) for c in found] == [(ident, 1)]
    assert client.get(f"/api/jobs/{ident}/distribution").status_code == 200
    rows = list(csv.DictReader(io.StringIO(client.get(f"/api/results/export?format=csv&job_id={ident}")
                                           .get_data(as_text=True))))
    assert [row["line"] for row in rows] == OUTPUT.splitlines()
    assert 'dealer_solve_seconds_count{game="coins"} 3' in client.get("/metrics").get_data(as_text=True)


def test_an_output_of_it_is_checked(client: Any, job: dict[str, Any]) -> None:
    wrong = OUTPUT.replace("0 heads", "1 heads")
    check = client.post(f"/api/jobs/{job['id']}/checks", data={"file": (io.BytesIO(wrong.encode()), "mine.out")},
                        content_type="multipart/form-data").get_json()
    check = client.get(f"/api/checks/{check['id']}").get_json()
    assert check["verdict"] == "wrong_answer" and check["counts"]["accepted"] == 2, check


def test_its_pages_show_it(client: Any, job: dict[str, Any]) -> None:
    ident = job["id"]
    page = client.get(f"/jobs/{ident}")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "Heads by outcome" in html and "How many tosses came up heads." in html
    assert "3 throws" in html
    page = client.get(f"/jobs/{ident}/cases/3")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "Throw 3" in html and "Find this throw in other jobs" in html
    assert re.search(r"<dt>Heads and tails</dt><dd><code>4 1</code></dd>", html)
    assert '"tosses": "HHHHT"' in html  # the replay's data, for the game's player (static/js/games/coins.js)
    dashboard = client.get("/").get_data(as_text=True)
    assert "tosses.in" in dashboard and '<span class="chip game-coins">coins</span>' in dashboard
