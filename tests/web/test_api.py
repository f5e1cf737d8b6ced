"""Every JSON API route, and every way a request to it can be refused."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from tests.support.http import post_file as upload
from tests.support.jobs import stored_uploads
from tests.support.paths import JUDGE_DATA, failing, judge
from worker import engines
from worker.store.database import Database
from worker.store.models import SOLVE_BUCKETS_US

# --- uploads -------------------------------------------------------------------------------


def test_upload_creates_a_job_and_solves_it(client: Any) -> None:
    response = upload(client, judge("10-20-30", "sample"), "10-20-30", "sample.in")
    assert response.status_code == 201
    job = response.get_json()
    assert response.headers["Location"] == f"/api/jobs/{job['id']}"
    assert {"id", "game", "status", "total", "done", "created_at"} <= job.keys()
    assert job["game"] == "10-20-30" and job["filename"] == "sample.in"
    done = client.get(f"/api/jobs/{job['id']}").get_json()
    assert done["status"] == "succeeded" and done["done"] == done["total"] == 3
    assert list(done["counts"]) == ["win", "loss", "draw"]  # the game's order, not sorted
    assert done["counts"] == {"win": 1, "loss": 1, "draw": 1}


def test_upload_recognises_the_game(client: Any) -> None:
    for game in ("10-20-30", "accordion", "mahjong"):
        assert upload(client, judge(game, "sample")).get_json()["game"] == game


@pytest.mark.parametrize("form, message", [
    ({}, "no file in the request"),
    ({"game": "poker"}, "unknown game 'poker'"),
])
def test_upload_refuses_a_bad_request(client: Any, form: dict[str, str], message: str) -> None:
    if "game" in form:
        form = {**form, "file": (io.BytesIO(b"1 2 3"), "x.in")}
    response = client.post("/api/jobs", data=form, content_type="multipart/form-data")
    assert response.status_code == 400
    assert message in response.get_json()["error"]


def test_upload_of_an_empty_file_is_refused(client: Any) -> None:
    response = upload(client, b"", "accordion")
    assert response.status_code == 400 and response.get_json() == {"error": "the file is empty"}


def test_upload_whose_game_cannot_be_told_is_refused(client: Any) -> None:
    response = upload(client, b"hello world\n")
    assert response.status_code == 400
    assert response.get_json()["error"].startswith("cannot tell which game this file is for; choose one of")


def bad_deck() -> bytes:
    """The sample's first deck over two lines, with its 14th card (line 1, column 33) made an 11."""
    deck = judge("10-20-30", "sample").read_text().split()[:52]
    deck[13] = "11"
    return (" ".join(deck[:20]) + "\n" + " ".join(deck[20:]) + "\n0\n").encode()


def test_a_malformed_file_is_refused_naming_line_and_column_or_fails_its_job_past_its_start(client: Any) -> None:
    response = upload(client, bad_deck(), "10-20-30")
    assert response.status_code == 400
    assert response.get_json()["error"] == 'line 1, column 33: "11" is not a card value (1-10)'
    data, line = failing("10-20-30", 1000)  # a count of thousands, as the message writes them
    job = client.get(f"/api/jobs/{upload(client, data, '10-20-30').get_json()['id']}").get_json()
    assert job["status"] == "failed"
    assert job["error"].startswith(f'line {line}, column 1: "X" is not a card value (1-10): the file is no valid '
                                   "judge file; its 1,000 good decks are kept")


def _small_app(settings: Any, dispatcher: Any, limit: int) -> Any:
    from dataclasses import replace

    from webui.app import create_app

    return create_app(replace(settings, max_upload_bytes=limit), dispatcher, config={"TESTING": True}, db=dispatcher.db)


def test_upload_over_the_limit_gets_413_naming_the_limit(db: Database, settings: Any, dispatcher: Any) -> None:
    client = _small_app(settings, dispatcher, 1024).test_client()
    data = judge("accordion", "many-piles").read_bytes()[:4000]
    response = upload(client, data, "accordion")
    assert response.status_code == 413
    assert response.get_json() == {"error": "the upload is larger than the limit of 1 KiB"}
    assert client.get("/api/jobs").get_json()["total"] == 0
    assert stored_uploads(db) == [], "the partial upload was not removed"


def test_upload_far_over_the_limit_is_refused_before_reading(settings: Any, dispatcher: Any) -> None:
    client = _small_app(settings, dispatcher, 1024).test_client()
    response = upload(client, b"1 " * (1 << 20) + b"0\n", "10-20-30")  # beyond the form's allowance too
    assert response.status_code == 413
    assert "limit of 1 KiB" in response.get_json()["error"]


# --- jobs ----------------------------------------------------------------------------------


def test_jobs_are_listed_newest_first_and_paged(client: Any, submit: Any) -> None:
    ids = [submit("mahjong/sample")["id"] for _ in range(3)]
    page = client.get("/api/jobs?per_page=2").get_json()
    assert [j["id"] for j in page["items"]] == ids[::-1][:2]
    assert (page["total"], page["pages"], page["page"], page["per_page"]) == (3, 2, 1, 2)
    assert [j["id"] for j in client.get("/api/jobs?per_page=2&page=2").get_json()["items"]] == ids[:1]
    assert client.get("/api/jobs?status=succeeded&game=mahjong").get_json()["total"] == 3
    assert client.get("/api/jobs?status=failed").get_json()["total"] == 0
    assert client.get("/api/jobs?game=accordion").get_json()["total"] == 0


@pytest.mark.parametrize("query, message", [
    ("status=done", "unknown status 'done'"),
    ("game=chess", "unknown game 'chess'"),
    ("page=two", "page must be a whole number, not 'two'"),
    ("page=0", "page must be at least 1"),
    ("per_page=-5", "per_page must be at least 1"),
])
def test_job_list_refuses_bad_parameters(client: Any, query: str, message: str) -> None:
    response = client.get(f"/api/jobs?{query}")
    assert response.status_code == 400
    assert message in response.get_json()["error"]


def test_missing_job_is_404_everywhere(client: Any) -> None:
    for method, path in [("get", "/api/jobs/99"), ("delete", "/api/jobs/99"), ("post", "/api/jobs/99/cancel"),
                         ("post", "/api/jobs/99/rerun"), ("get", "/api/jobs/99/output"),
                         ("get", "/api/jobs/99/cases"), ("get", "/api/jobs/99/cases/1"),
                         ("get", "/api/jobs/99/distribution"), ("get", "/api/jobs/99/timings"),
                         ("get", "/api/cases/99"), ("get", "/api/results/export?job_id=99")]:
        response = getattr(client, method)(path)
        assert response.status_code == 404, path
        assert "99" in response.get_json()["error"], path


def test_cancel_a_running_job_then_it_cannot_be_cancelled_again(client: Any, dispatcher: Any) -> None:
    dispatcher.immediate = False
    job = upload(client, judge("accordion", "sample"), "accordion").get_json()
    assert job["status"] == "queued"
    delete = client.delete(f"/api/jobs/{job['id']}")
    assert delete.status_code == 409 and "cancel it first" in delete.get_json()["error"]
    response = client.post(f"/api/jobs/{job['id']}/cancel")
    assert response.status_code == 200 and response.get_json()["status"] == "cancelled"
    again = client.post(f"/api/jobs/{job['id']}/cancel")
    assert again.status_code == 409
    assert again.get_json() == {"error": f"job {job['id']} has already cancelled"}


def test_cancel_of_a_finished_job_is_409(client: Any, submit: Any) -> None:
    job = submit("mahjong/sample")
    response = client.post(f"/api/jobs/{job['id']}/cancel")
    assert response.status_code == 409 and "already succeeded" in response.get_json()["error"]


def test_rerun_makes_a_new_job_from_the_same_upload(client: Any, submit: Any) -> None:
    first = submit("accordion/sample")
    response = client.post(f"/api/jobs/{first['id']}/rerun")
    assert response.status_code == 201
    again = response.get_json()
    assert again["rerun_of"] == first["id"] and again["sha256"] == first["sha256"]
    assert response.headers["Location"] == f"/api/jobs/{again['id']}"
    assert client.get(f"/api/jobs/{again['id']}").get_json()["status"] == "succeeded"


def test_rerun_of_a_split_job_solves_its_chunks_again(client: Any, submit: Any, db: Database, settings: Any) -> None:
    job = submit("accordion/sample")
    assert stored_uploads(db) == []  # the upload went once the job was split
    response = client.post(f"/api/jobs/{job['id']}/rerun")
    assert response.status_code == 201
    again = client.get(f"/api/jobs/{response.get_json()['id']}").get_json()
    assert again["status"] == "succeeded" and again["total"] == job["total"] == 2
    assert client.get(f"/api/jobs/{again['id']}/output").data == client.get(f"/api/jobs/{job['id']}/output").data


def _failed_in_its_split(db: Database, settings: Any) -> tuple[Any, dict[str, Any]]:
    """A client of an app whose jobs hold at most 100 cases, and a job whose split failed on holding more:
    a fault no reading goes on past, which leaves no case stored."""
    from dataclasses import replace

    from tests.support.inline import InlineDispatcher
    from webui.app import create_app

    small = replace(settings, max_cases_per_job=100)
    client = create_app(small, InlineDispatcher(db, small), config={"TESTING": True}, db=db).test_client()
    response = upload(client, judge("accordion", "random-2000"), "accordion")
    return client, client.get(f"/api/jobs/{response.get_json()['id']}").get_json()


def test_rerun_of_a_failed_job_reads_its_upload_again(db: Database, settings: Any) -> None:
    client, job = _failed_in_its_split(db, settings)
    assert job["status"] == "failed" and len(stored_uploads(db)) == 1  # kept: it was never split
    response = client.post(f"/api/jobs/{job['id']}/rerun")
    assert response.status_code == 201
    assert client.get(f"/api/jobs/{response.get_json()['id']}").get_json()["error"] == job["error"]


def test_rerun_without_the_upload_or_the_cases_is_409(db: Database, settings: Any) -> None:
    from worker.store.models import Upload

    client, job = _failed_in_its_split(db, settings)
    with db.session() as session:
        session.query(Upload).delete()
    response = client.post(f"/api/jobs/{job['id']}/rerun")
    assert response.status_code == 409 and "no longer stored" in response.get_json()["error"]


def test_delete_removes_the_job_and_its_results(client: Any, submit: Any) -> None:
    job = submit("mahjong/sample")
    assert client.delete(f"/api/jobs/{job['id']}").status_code == 204
    assert client.get(f"/api/jobs/{job['id']}").status_code == 404
    assert client.get(f"/api/results?job_id={job['id']}").status_code == 404
    assert client.get("/api/results?game=mahjong").get_json()["total"] == 0


@pytest.mark.parametrize("game, name", [("10-20-30", "draws"), ("accordion", "sample"), ("mahjong", "many-waits")])
def test_output_is_the_judge_output_byte_for_byte(client: Any, submit: Any, game: str, name: str) -> None:
    job = submit(f"{game}/{name}")
    response = client.get(f"/api/jobs/{job['id']}/output")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    assert response.data == (JUDGE_DATA / game / f"{name}.out").read_bytes()
    assert f'filename="job-{job["id"]}-{game}.out"' in response.headers["Content-Disposition"]


def test_output_of_an_unfinished_job_is_409_unless_partial(client: Any, dispatcher: Any) -> None:
    dispatcher.immediate = False
    job = upload(client, judge("mahjong", "sample"), "mahjong").get_json()
    response = client.get(f"/api/jobs/{job['id']}/output")
    assert response.status_code == 409
    assert response.get_json() == {"error": f"job {job['id']} is queued; its output is complete once it has succeeded"}
    partial = client.get(f"/api/jobs/{job['id']}/output?partial=1")
    assert partial.status_code == 200 and partial.data == b""


@pytest.mark.parametrize("game, name", [("10-20-30", "draws"), ("accordion", "sample"), ("mahjong", "many-waits")])
def test_input_is_a_judge_file_of_the_same_cases(client: Any, submit: Any, game: str, name: str) -> None:
    job = submit(f"{game}/{name}")
    response = client.get(f"/api/jobs/{job['id']}/input")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    assert f'filename="job-{job["id"]}-{game}.in"' in response.headers["Content-Disposition"]
    lines = response.data.decode().splitlines()
    assert len(lines) == job["total"] + 1 and lines[-1] == engines.get(game).terminator
    # The upload is gone once split; what the job gives back is a judge file of the same cases.
    again = submit(response.data, game, "again.in")
    assert again["status"] == "succeeded" and again["total"] == job["total"]
    assert client.get(f"/api/jobs/{again['id']}/output").data == (JUDGE_DATA / game / f"{name}.out").read_bytes()


def test_input_of_a_job_not_yet_split_is_409(client: Any, dispatcher: Any) -> None:
    dispatcher.immediate = False
    job = upload(client, judge("mahjong", "sample"), "mahjong").get_json()
    response = client.get(f"/api/jobs/{job['id']}/input")
    assert response.status_code == 409
    assert response.get_json() == {"error": f"job {job['id']} is queued: its input is whole once its file has been read"}


# --- results -------------------------------------------------------------------------------


def test_job_cases_are_paged_sorted_and_filtered(client: Any, submit: Any) -> None:
    job = submit("10-20-30/draws")
    base = f"/api/jobs/{job['id']}/cases"
    page = client.get(f"{base}?per_page=10&page=2").get_json()
    assert page["total"] == 300 and page["pages"] == 30
    assert [c["index"] for c in page["items"]] == list(range(11, 21))
    numbers = [c["number"] for c in client.get(f"{base}?sort=-number&per_page=500").get_json()["items"]]
    assert numbers == sorted(numbers, reverse=True)
    low = client.get(f"{base}?number_max=100&outcome=draw").get_json()
    assert low["total"] == sum(1 for n in numbers if n <= 100)
    assert all(c["number"] <= 100 and c["outcome"] == "draw" for c in low["items"])
    first = client.get(f"{base}/1").get_json()
    found = client.get(f"{base}?input=" + first["input"].replace(" ", "%0A")).get_json()
    assert [c["index"] for c in found["items"]] == [1]


@pytest.mark.parametrize("query, message", [
    ("outcome=sideways", "unknown outcome 'sideways'; expected one of draw, loss, not-ready, ready, win"),
    ("outcome=", "outcome is empty: leave it out or give it a value"),
    ("per_page=501", "per_page must be at most 500"),
    ("sort=deck", "cannot sort by 'deck'"),
    ("number_min=few", "number_min must be a whole number, not 'few'"),
    ("number_max=-1", "number_max must be at least 0"),
    ("page=0", "page must be at least 1"),
    ("input=1 2 3", "input: "),
    ("since=yesterday", "since must be a date or time like 2026-11-30"),
])
def test_job_cases_refuse_bad_filters(client: Any, submit: Any, query: str, message: str) -> None:
    job = submit("10-20-30/sample")
    response = client.get(f"/api/jobs/{job['id']}/cases?{query}")
    assert response.status_code == 400
    assert message in response.get_json()["error"]


def test_an_outcome_of_another_game_matches_nothing(client: Any, submit: Any) -> None:
    job = submit("10-20-30/sample")
    page = client.get(f"/api/jobs/{job['id']}/cases?outcome=ready").get_json()
    assert page["total"] == 0 and page["items"] == []


def test_one_case_carries_its_trace(client: Any, three_jobs: dict[str, Any]) -> None:
    for game, job in three_jobs.items():
        case = client.get(f"/api/jobs/{job['id']}/cases/1").get_json()
        assert case["index"] == 1 and case["game"] == game
        assert case["trace"]["version"] == engines.get(game).traces.version
        assert client.get(f"/api/cases/{case['id']}").get_json() == case
    assert client.get(f"/api/jobs/{three_jobs['mahjong']['id']}/cases/9").status_code == 404


def test_distribution_counts_cases_by_outcome_and_number(client: Any, submit: Any) -> None:
    job = submit("accordion/sample")
    dist = client.get(f"/api/jobs/{job['id']}/distribution").get_json()
    assert dist["game"] == "accordion" and dist["number_name"] == "piles" and dist["outcomes"] == ["win", "loss"]
    assert sum(r["count"] for r in dist["by_number"]) == job["total"]
    lines = (JUDGE_DATA / "accordion" / "sample.out").read_text().splitlines()
    assert sorted(r["number"] for r in dist["by_number"]) == sorted(int(line.split()[0]) for line in lines)


def test_timings_describe_the_job(client: Any, submit: Any) -> None:
    job = submit("10-20-30/draws")
    timings = client.get(f"/api/jobs/{job['id']}/timings").get_json()
    assert timings["job_id"] == job["id"] and timings["solved"] + timings["cached"] == 300
    assert timings["split_seconds"] >= 0 and timings["queued_seconds"] >= 0
    assert timings["solve_us_max"] >= timings["solve_us_mean"] > 0
    slowest = timings["slowest_case"]
    assert client.get(f"/api/cases/{slowest['id']}").get_json()["solve_us"] == timings["solve_us_max"]
    # 99 % of the cases within the edge of a bucket that the slowest case is not past.
    assert timings["solve_us_p99"] in SOLVE_BUCKETS_US
    assert timings["solve_us_p99"] <= min(edge for edge in SOLVE_BUCKETS_US if edge >= timings["solve_us_max"])


def test_history_searches_across_jobs(client: Any, three_jobs: dict[str, Any], submit: Any) -> None:
    again = submit("accordion/sample")
    everything = client.get("/api/results").get_json()
    assert everything["total"] == 3 + 2 + 2 + 2
    deck = judge("accordion", "sample").read_text().splitlines()[:2]
    found = client.get("/api/results", query_string={"game": "accordion", "input": "\n".join(deck)}).get_json()
    assert sorted(c["job_id"] for c in found["items"]) == sorted([three_jobs["accordion"]["id"], again["id"]])
    # No game chosen: the deck says which it is.
    assert client.get("/api/results", query_string={"input": "\n".join(deck)}).get_json()["items"] == found["items"]
    assert client.get("/api/results?game=10-20-30&outcome=draw").get_json()["total"] == 1
    assert client.get(f"/api/results?job_id={again['id']}&sort=-index").get_json()["items"][0]["index"] == 2
    assert client.get("/api/results?since=2000-01-01&until=2000-01-02").get_json()["total"] == 0
    assert client.get("/api/results?since=2000-01-01T00:00").get_json()["total"] == 9


@pytest.mark.parametrize("query, message", [
    ("input=AC", "input: it is no case of any game (as 10-20-30: "),
    ("game=mahjong&input=1T 2T", "input: "),
    ("game=go", "unknown game 'go'"),
    ("outcome=sideways", "unknown outcome 'sideways'"),
    ("until=30/11/2026", "until must be a date or time"),
    ("job_id=x", "job_id must be a whole number"),
    ("per_page=0", "per_page must be at least 1"),
])
def test_history_refuses_bad_filters(client: Any, query: str, message: str) -> None:
    response = client.get(f"/api/results?{query}")
    assert response.status_code == 400
    assert message in response.get_json()["error"]


def test_export_as_csv_and_ndjson(client: Any, submit: Any) -> None:
    job = submit("10-20-30/sample")
    response = client.get(f"/api/results/export?job_id={job['id']}&format=csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert f'filename="job-{job["id"]}-results.csv"' in response.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [r["line"] for r in rows] == (JUDGE_DATA / "10-20-30" / "sample.out").read_text().splitlines()
    ndjson = client.get(f"/api/results/export?job_id={job['id']}")
    assert ndjson.mimetype == "application/x-ndjson"
    records = [json.loads(line) for line in ndjson.get_data(as_text=True).splitlines()]
    assert [r["index"] for r in records] == [1, 2, 3] and "trace" not in records[0]
    draws = client.get("/api/results/export?game=10-20-30&outcome=draw&format=csv").get_data(as_text=True)
    assert len(draws.splitlines()) == 2


@pytest.mark.parametrize("kind", ["csv", "ndjson"])
def test_an_export_leaves_the_cycle_collector_as_it_found_it(client: Any, submit: Any, kind: str) -> None:
    """An export holds Python's collector off while it makes a batch (webui/export.py), never past it:
    not when it ends, not when its client leaves half-way, and not on when it was off."""
    import gc

    job = submit("10-20-30/sample")
    path = f"/api/results/export?job_id={job['id']}&format={kind}"
    assert client.get(path).status_code == 200 and gc.isenabled()
    response = client.get(path, buffered=False)
    next(iter(response.response))  # the first piece, then the client leaves
    response.close()
    assert gc.isenabled()
    gc.disable()
    try:
        assert client.get(path).status_code == 200 and not gc.isenabled()
    finally:
        gc.enable()


def test_export_refuses_bad_requests(client: Any) -> None:
    response = client.get("/api/results/export?format=xlsx")
    assert response.status_code == 400
    assert response.get_json() == {"error": "unknown export format 'xlsx'; expected ndjson or csv"}
    assert client.get("/api/results/export?outcome=nope").status_code == 400


# --- the service --------------------------------------------------------------------------


def test_overview_reports_workers_work_and_queue(client: Any, submit: Any) -> None:
    submit("mahjong/sample")
    overview = client.get("/api/overview").get_json()
    assert overview["jobs_by_status"]["succeeded"] == 1
    assert overview["queued_cases"] == 0 and overview["queue_depth"] == 0 and overview["workers"] == []


def test_games_lists_the_three_games(client: Any) -> None:
    games = client.get("/api/games").get_json()
    assert [g["slug"] for g in games] == ["10-20-30", "accordion", "mahjong"]
    assert games[2]["outcomes"] == ["ready", "not-ready"] and games[0]["number_name"] == "deals"


def test_games_serve_each_engines_texts_for_the_scripts(client: Any) -> None:
    from worker import engines

    for game in client.get("/api/games").get_json():
        engine = engines.get(game["slug"])
        assert {name: game[name] for name in ("title", "unit", "input_help", "number_help", "detail_label",
                                              "detail_text")} == {
            "title": engine.title, "unit": engine.unit, "input_help": engine.input_help,
            "number_help": engine.number_help, "detail_label": engine.detail_label, "detail_text": engine.detail_text}
    assert game["detail_text"] == "`{}`" and game["input_help"].startswith("13 tiles like `1T 2T DONG`")


def test_unknown_api_path_and_wrong_method_answer_in_json(client: Any) -> None:
    missing = client.get("/api/nothing-here")
    assert missing.status_code == 404 and "error" in missing.get_json()
    wrong = client.put("/api/jobs")
    assert wrong.status_code == 405 and "error" in wrong.get_json()


def test_bad_multipart_body_is_400_json(client: Any) -> None:
    response = client.post("/api/jobs", data=b"--x\r\nnot a form", content_type="multipart/form-data; boundary=x")
    assert response.status_code == 400 and "error" in response.get_json()

