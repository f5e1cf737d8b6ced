"""``POST /api/generate`` and the upload page's Generate form: a judge file made to order, stored as an
upload and solved as one; on SQLite and PostgreSQL (the ``client`` fixture)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.inline import InlineDispatcher
from tests.support.jobs import stored_uploads
from tests.web.test_access import CI, bearer, csrf_of, job_count, keyed_app, login
from worker.cli import main
from worker.config import Settings
from worker.jobs import generated
from worker.store.database import Database


def dealer(*arguments: str) -> bytes:
    """What ``dealer ARGUMENTS`` prints (status 0)."""
    result = CliRunner().invoke(main, list(arguments))
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


def made(client: Any, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """The job ``body`` made, as it is now (the inline dispatcher has solved it)."""
    response = client.post("/api/generate", json=body, **kwargs)
    assert response.status_code == 201, response.get_json()
    job = response.get_json()
    assert response.headers["Location"] == f"/api/jobs/{job['id']}"
    return client.get(f"/api/jobs/{job['id']}", headers=kwargs.get("headers")).get_json()  # reads are private


def small_app(db: Database, settings: Settings, **limits: Any) -> Any:
    from webui.app import create_app

    settings = replace(settings, **limits)
    return create_app(settings, InlineDispatcher(db, settings), config={"TESTING": True}, db=db).test_client()


@pytest.mark.parametrize("game, mix, layout", [
    ("10-20-30", "win=1,loss=1,draw=1", "per-line=13,crlf"),
    ("accordion", "1=1,2-5=2,6+=1", None),
    ("mahjong", "ready=3,not-ready=1", "sorted"),
])
def test_the_job_solves_the_file_dealer_generate_makes_to_what_dealer_solve_says(
        client: Any, tmp_path: Path, game: str, mix: str, layout: str | None) -> None:
    body = {"game": game, "cases": 60, "seed": 2026, "mix": mix, **({"layout": layout} if layout else {})}
    job = made(client, body)
    options = ["--cases", "60", "--seed", "2026", "--mix", mix, *(["--layout", layout] if layout else [])]
    file = tmp_path / "made.in"
    file.write_bytes(dealer("generate", game, *options))
    assert job["status"] == "succeeded" and job["done"] == job["total"] == 60
    assert (job["sha256"], job["size"]) == (hashlib.sha256(file.read_bytes()).hexdigest(), file.stat().st_size)
    assert client.get(f"/api/jobs/{job['id']}/output").data == dealer("solve", game, str(file))
    suffix = f"-layout-{layout}.in" if layout else ".in"
    assert job["filename"] == f"generated-{game}-60-seed-2026-mix-{mix}{suffix}"


def test_a_seed_left_out_is_chosen_and_named_so_the_same_file_can_be_asked_for_again(client: Any) -> None:
    first = made(client, {"game": "accordion", "cases": 20, "honours": True})
    seed = re.fullmatch(r"generated-accordion-20-seed-(\d+)\.in", first["filename"])
    assert seed is not None
    again = made(client, {"game": "accordion", "cases": 20, "seed": int(seed.group(1))})
    assert again["sha256"] == first["sha256"] and again["filename"] == first["filename"]


def test_mahjong_hands_without_honours_say_so(client: Any) -> None:
    job = made(client, {"game": "mahjong", "cases": 10, "seed": 1, "honours": False})
    assert job["filename"] == "generated-mahjong-10-seed-1-no-honours.in"
    assert job["status"] == "succeeded"


@pytest.mark.parametrize("body, message", [
    ({"game": "10-20-30", "cases": 10, "mix": "win=1,tie=1"},
     'mix: 10-20-30 has no outcome "tie" (expected win, loss, draw)'),
    ({"game": "accordion", "cases": 10, "mix": "53=1"}, "mix: no deck leaves 53 piles: a deck leaves 1 to 52 piles"),
    ({"game": "10-20-30", "cases": 10, "mix": "draw=0"}, "mix: the weight of draw is 0: leave draw out to have none"),
    ({"game": "mahjong", "cases": 10, "layout": "per-line=13"}, "layout: "),
    ({"game": "accordion", "cases": 10, "honours": False}, "honours: only mahjong hands have honours to leave out"),
    ({"game": "10-20-30", "cases": 0}, "cases: a file holds 1 to 100,000,000 cases, not 0"),
    ({"game": "10-20-30", "cases": 10_000_001}, "cases: a job holds at most 10,000,000 cases on this service"),
    ({"game": "10-20-30", "cases": 10, "seed": -1}, "seed: a seed is a number from 0 to 2**64 - 1"),
    ({"game": "poker", "cases": 10}, "game: unknown game 'poker'"),
    ({"game": "10-20-30"}, "cases: missing"),
    ({"game": "10-20-30", "cases": "10"}, "cases: must be a whole number, not '10'"),
    ({"game": "10-20-30", "cases": True}, "cases: must be a whole number"),
    ({"game": "mahjong", "cases": 10, "honours": "no"}, "honours: must be true or false"),
    ({"game": "10-20-30", "cases": 10, "jobs": 2}, "jobs: no such field"),
])
def test_what_cannot_be_made_is_a_400_naming_the_field_and_nothing_is_stored(
        client: Any, db: Database, settings: Settings, body: dict[str, Any], message: str) -> None:
    response = client.post("/api/generate", json=body)
    assert response.status_code == 400
    assert response.get_json()["error"].startswith(message)
    assert stored_uploads(db) == [] and job_count(db) == 0


def test_a_game_the_engines_solve_but_no_generator_makes_is_a_400_naming_it(client: Any, coins: Any) -> None:
    response = client.post("/api/generate", json={"game": "coins", "cases": 3})
    assert response.status_code == 400 and response.get_json() == {"error": "game: no generator makes coins files yet"}


@pytest.mark.parametrize("body", ["[1, 2]", "not json", '"a string"'])
def test_a_body_that_is_no_json_object_is_a_400(client: Any, body: str) -> None:
    response = client.post("/api/generate", data=body, content_type="application/json")
    assert response.status_code == 400 and response.get_json()["error"].startswith("the body must be a JSON object")


def test_a_body_larger_than_a_request_needs_is_refused_unread(client: Any, db: Database, settings: Settings) -> None:
    body = '{"game": "10-20-30", "cases": 10, "mix": "' + "win=1," * 20_000 + 'loss=1"}'
    response = client.post("/api/generate", data=body, content_type="application/json")
    assert response.status_code == 413
    assert response.get_json() == {"error": "the body is larger than 64 KiB: a request to generate is a few fields"}
    assert stored_uploads(db) == [] and job_count(db) == 0


def test_cases_are_bounded_by_the_per_job_limit_of_the_settings(db: Database, settings: Settings) -> None:
    client = small_app(db, settings, max_cases_per_job=50)
    response = client.post("/api/generate", json={"game": "mahjong", "cases": 51})
    assert response.status_code == 400
    assert response.get_json() == {"error": "cases: a job holds at most 50 cases on this service, not 51"}
    assert made(client, {"game": "mahjong", "cases": 50})["total"] == 50


def test_a_file_over_the_upload_limit_is_refused_like_an_upload_and_nothing_is_kept(db: Database, settings: Settings) -> None:
    client = small_app(db, settings, max_upload_bytes=1000)  # 100 decks take about 15 kB
    response = client.post("/api/generate", json={"game": "10-20-30", "cases": 100, "seed": 1})
    assert response.status_code == 413
    assert response.get_json()["error"].startswith("the upload is larger than the limit of")
    assert stored_uploads(db) == [] and job_count(db) == 0


def test_a_file_that_would_take_longer_than_a_request_may_is_refused_and_nothing_is_kept(db: Database, settings: Settings) -> None:
    # A budget no search round fits in: the first round of 1,024 tries finds fewer than the 3,000 draws.
    client = small_app(db, settings, generate_seconds=1e-9)
    response = client.post("/api/generate", json={"game": "10-20-30", "cases": 3000, "mix": "draw=1"})
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error.startswith("cases: ") and "dealer generate" in error and "at most 1e-09 s a request" in error
    assert stored_uploads(db) == [] and job_count(db) == 0


def test_a_client_over_its_job_limit_is_refused_before_the_file_is_made(db: Database, settings: Settings) -> None:
    client = small_app(db, settings, max_jobs_per_minute_per_client=1)
    made(client, {"game": "mahjong", "cases": 3})
    response = client.post("/api/generate", json={"game": "mahjong", "cases": 3})
    assert response.status_code == 429 and "Retry-After" in response.headers
    assert job_count(db) == 1


def test_with_keys_a_request_needs_one_as_any_write(db: Database, settings: Settings, dispatcher: Any) -> None:
    client = keyed_app(db, settings, dispatcher).test_client()
    body = {"game": "accordion", "cases": 5, "seed": 3}
    assert client.post("/api/generate", json=body).status_code == 401
    assert made(client, body, headers=bearer(CI))["status"] == "succeeded"


# --- the upload page's Generate form ---------------------------------------------------------


def test_the_upload_page_generates_and_goes_to_the_new_job(client: Any) -> None:
    page = client.get("/upload").get_data(as_text=True)
    assert 'id="generate-form"' in page and 'action="/generate"' in page
    response = client.post("/generate", data={"game": "10-20-30", "cases": "30", "seed": "9",
                                              "mix": "win=1,loss=1,draw=1", "layout": ""})
    assert response.status_code == 303
    job_id = int(re.fullmatch(r"/jobs/(\d+)", response.headers["Location"]).group(1))
    job = client.get(f"/api/jobs/{job_id}").get_json()
    assert job["filename"] == "generated-10-20-30-30-seed-9-mix-win=1,loss=1,draw=1.in"
    assert job["counts"] == {"win": 10, "loss": 10, "draw": 10}


def test_the_form_says_what_cannot_be_made_and_keeps_what_was_typed(client: Any, db: Database, settings: Settings) -> None:
    response = client.post("/generate", data={"game": "mahjong", "cases": "12", "mix": "ready=1,bingo=2"})
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "mix: mahjong has no outcome &#34;bingo&#34;" in page
    assert 'value="ready=1,bingo=2"' in page and '<option value="mahjong" selected>' in page
    assert stored_uploads(db) == [] and job_count(db) == 0


def test_with_keys_the_form_needs_a_login_and_its_csrf_token(db: Database, settings: Settings, dispatcher: Any) -> None:
    client = keyed_app(db, settings, dispatcher).test_client()
    form = {"game": "accordion", "cases": "4"}
    assert client.post("/generate", data=form).status_code == 401
    assert login(client, CI).status_code == 303
    assert client.post("/generate", data=form).status_code == 403
    token = csrf_of(client.get("/upload").get_data(as_text=True))
    assert client.post("/generate", data={**form, "csrf_token": token}).status_code == 303


# --- the time budget, on a clock the test moves ----------------------------------------------


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [100.0]
    monkeypatch.setattr(generated.time, "monotonic", lambda: now[0])
    return now


def test_the_budget_refuses_once_the_cases_made_say_the_whole_would_take_twice_as_long(clock: list[float]) -> None:
    progress = generated.budget(10)
    assert progress is not None
    clock[0] += 1.9  # too early to judge: within the first fifth of the budget
    progress(10, 10_000)
    clock[0] += 0.2
    progress(2_000, 10_000)  # 2.1 s for a fifth: the whole in about 10.5 s
    with pytest.raises(generated.TooLong, match=r"^10,000 cases would take about 21 s to make$"):
        progress(1_000, 10_000)  # 2.1 s for a tenth: about 21 s, over twice the budget


def test_the_budget_refuses_past_its_seconds_but_never_a_finished_file(clock: list[float]) -> None:
    progress = generated.budget(10)
    assert progress is not None
    clock[0] += 10.5
    progress(10_000, 10_000)
    with pytest.raises(generated.TooLong, match=r"^9,999 of 10,000 cases were made in 10 s$"):
        progress(9_999, 10_000)
    assert generated.budget(0) is None
