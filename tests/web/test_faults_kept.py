"""A judge file with bad cases: read to its end, every good case solved and kept under its place in the
file, every fault listed, the job failed, and the judge output before the first fault served as partial;
``dealer solve`` answers the same cases and names the same faults. On SQLite and PostgreSQL.

The files are made here from the judge data's decks and hands, written as the problems write them (a
deck of 10-20-30 or accordion on two lines of 26, a hand on a line), a bad case's first token of its
second line (of its line, for a hand) replaced by ``X``. The intake refuses a file whose first 8 KiB hold
no good case (``intake.recognise``: another game's file, or none's); a fault among good cases there is
kept like any other.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.http import post_file
from tests.support.paths import judge
from worker import engines
from worker.cli import main
from worker.store.chunks import case_numbers, stored_cases
from worker.store.database import Database

CASES = 600
#: Bad cases past the intake's head, in the middle, and the file's last.
BAD = (250, 400, 600)
BAD_TOKEN = {"10-20-30": '"X" is not a card value (1-10)', "accordion": '"X" is not a card (rank',
             "mahjong": 'unknown tile "X" (tiles are'}


def _texts(game: str, count: int = CASES) -> list[str]:
    with judge(game, "random-2000").open("rb") as stream:
        return [case.text for case, _ in zip(engines.get(game).parse(stream, []), range(count), strict=False)]


def _lines_of(game: str, text: str, bad: bool) -> list[str]:
    tokens = text.split()
    if game == "mahjong":
        return [" ".join(["X", *tokens[1:]] if bad else tokens)]
    second = ["X", *tokens[27:]] if bad else tokens[26:]
    return [" ".join(tokens[:26]), " ".join(second)]


def judge_file(game: str, bad: set[int], count: int = CASES) -> tuple[bytes, dict[int, int]]:
    """A file of ``count`` cases whose places ``bad`` are bad: its bytes, and the line of each bad one's ``X``."""
    lines: list[str] = []
    where: dict[int, int] = {}
    for place, text in enumerate(_texts(game, count), 1):
        lines += _lines_of(game, text, place in bad)
        if place in bad:
            where[place] = len(lines)
    return ("\n".join(lines) + f"\n{engines.get(game).terminator}\n").encode(), where


def solved(game: str, data: bytes, tmp_path: Path) -> tuple[int, bytes, str]:
    """``dealer solve`` of a file: its exit status, output and messages."""
    path = tmp_path / "file.in"
    path.write_bytes(data)
    result = CliRunner().invoke(main, ["solve", game, str(path)])
    return result.exit_code, result.stdout_bytes, result.stderr


def stored(db: Database, job_id: int) -> dict[int, tuple[str, str]]:
    """Every case a job stored: its place in the file → (its input, its judge line)."""
    return {number: (data.inputs[k], data.lines[k])
            for chunk, data in stored_cases(db, job_id) for k, number in enumerate(case_numbers(chunk))}


def upload(client: Any, data: bytes, game: str) -> dict[str, Any]:
    response = post_file(client, data, game)
    assert response.status_code == 201, response.get_json()
    return client.get(f"/api/jobs/{response.get_json()['id']}").get_json()


@pytest.mark.parametrize("game", engines.names())
def test_every_good_case_is_kept_and_every_fault_listed(client: Any, db: Database, settings: Any, tmp_path: Path,
                                                        game: str) -> None:
    data, where = judge_file(game, set(BAD))
    job = upload(client, data, game)
    engine = engines.get(game)
    good = [place for place in range(1, CASES + 1) if place not in BAD]
    assert job["status"] == "failed", job
    assert (job["total"], job["done"], job["fault_count"]) == (len(good), len(good), len(BAD))
    assert sum(job["counts"].values()) == len(good)

    # Each good case under its place in the file, as dealer solve answers it there.
    texts = _texts(game)
    cases = stored(db, job["id"])
    assert sorted(cases) == good
    for place in good:
        line = engine.solve_batch([texts[place - 1]], place, False)[0].rstrip("\n")
        assert cases[place] == (texts[place - 1], line), place
    last = client.get(f"/api/jobs/{job['id']}/cases/{good[-1]}").get_json()
    assert (last["index"], last["input"]) == (good[-1], texts[good[-1] - 1])
    assert client.get(f"/api/jobs/{job['id']}/cases/{BAD[1]}").status_code == 404
    pages = [client.get(f"/api/jobs/{job['id']}/cases?per_page=100&page={page}").get_json() for page in range(1, 7)]
    assert [case["index"] for page in pages for case in page["items"]] == good and pages[0]["total"] == len(good)
    backwards = client.get(f"/api/jobs/{job['id']}/cases?per_page=100&page=2&sort=-index").get_json()
    assert [case["index"] for case in backwards["items"]] == good[::-1][100:200]
    found = client.get("/api/results", query_string={"game": game, "input": texts[good[-1] - 1]}).get_json()
    assert [(case["job_id"], case["index"]) for case in found["items"]][:1] == [(job["id"], good[-1])]

    # The faults, in file order, each with the lines around it.
    lines = data.decode().split("\n")
    assert [(fault["line"], fault["column"]) for fault in job["faults"]] == [(where[place], 1) for place in BAD]
    for fault in job["faults"]:
        assert fault["message"].startswith(f"line {fault['line']}, column 1: {BAD_TOKEN[game]}"), fault
        near = range(max(fault["line"] - 2, 1), min(fault["line"] + 2, len(lines) - 1) + 1)
        assert fault["context"] == [{"line": n, "text": lines[n - 1]} for n in near]
    assert job["error"].startswith(job["faults"][0]["message"] + " (and 2 more faults): ")
    # A whole sentence, as the job page shows it: where the partial output is served is a field, not prose.
    assert job["error"].endswith(f"and the judge output of the {BAD[0] - 1:,} {engine.unit}s before the first fault "
                                 "is kept as the job's partial output") and "/api/" not in job["error"]

    # The judge output before the first fault: dealer solve's of the file cut there.
    prefix, _ = judge_file(game, set(), BAD[0] - 1)
    status, expected, _ = solved(game, prefix, tmp_path)
    assert status == 0 and expected.count(b"\n") == BAD[0] - 1
    assert job["partial_output"] == f"/api/jobs/{job['id']}/output?partial=1"
    partial = client.get(job["partial_output"])
    assert partial.status_code == 200 and partial.data == expected
    whole = client.get(f"/api/jobs/{job['id']}/output")
    assert whole.status_code == 409
    assert whole.get_json()["error"] == (f"job {job['id']} failed, so it has no complete output: the answers to "
                                         f"its cases before its first fault are its partial output, at "
                                         f"/api/jobs/{job['id']}/output?partial=1")

    # dealer solve of the whole file: the same answers, then every fault, exit 2.
    status, output, messages = solved(game, data, tmp_path)
    assert (status, output) == (2, expected)
    named = [line.removeprefix("dealer: error: ").split(": ", 1)[1] for line in messages.splitlines()]
    assert named[0] == f"the judge output printed is that of the {BAD[0] - 1:,} {engine.unit}s before the first fault"
    assert named[1:] == [fault["message"] for fault in job["faults"]]


@pytest.mark.parametrize("game", engines.names())
def test_a_fault_at_the_start_keeps_the_good_cases_after_it(client: Any, db: Database, settings: Any, tmp_path: Path,
                                                             game: str) -> None:
    data, where = judge_file(game, {1, 3}, 50)
    job = upload(client, data, game)
    assert job["status"] == "failed" and (job["total"], job["done"], job["fault_count"]) == (48, 48, 2)
    assert [fault["line"] for fault in job["faults"]] == [where[1], where[3]]
    assert sorted(stored(db, job["id"])) == [2, *range(4, 51)]
    assert job["partial_output"] is None  # no case comes before the first fault
    # dealer solve says the same of the same bytes: no answer, both faults, exit 2.
    status, output, messages = solved(game, data, tmp_path)
    assert (status, output) == (2, b"")
    named = [line.removeprefix("dealer: error: ").split(": ", 1)[1] for line in messages.splitlines()[1:]]
    assert named == [fault["message"] for fault in job["faults"]]


def test_a_bad_first_case_past_the_head_leaves_no_partial_output(client: Any, db: Database, settings: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose every case is bad: nothing to keep, nothing partial, every fault listed. The intake
    refuses such a file by its head, so it is let through here: the split meets it all the same."""
    monkeypatch.setattr("worker.jobs.service.recognise", lambda head, size, game: game)
    data, where = judge_file("mahjong", set(range(1, 51)), 50)
    job = upload(client, data, "mahjong")
    assert job["status"] == "failed" and (job["total"], job["done"], job["fault_count"]) == (0, 0, 50)
    assert [fault["line"] for fault in job["faults"]] == list(where.values())
    assert job["partial_output"] is None and stored(db, job["id"]) == {}
    assert job["error"].startswith(job["faults"][0]["message"] + " (and 49 more faults): the file is no valid "
                                   "judge file; no hand of it is good")
    assert client.get(f"/api/jobs/{job['id']}/output?partial=1").data == b""
    assert client.get(f"/api/jobs/{job['id']}/output").get_json()["error"].endswith("it has no partial output")


def test_a_hundred_faults_are_listed_and_all_counted(client: Any, db: Database, settings: Any, tmp_path: Path) -> None:
    bad = set(range(301, 451))
    data, where = judge_file("mahjong", bad)
    job = upload(client, data, "mahjong")
    assert job["status"] == "failed" and job["fault_count"] == 150 and len(job["faults"]) == 100
    assert [fault["line"] for fault in job["faults"]] == [where[place] for place in sorted(bad)][:100]
    assert job["total"] == job["done"] == CASES - 150 and sorted(stored(db, job["id"]))[299:301] == [300, 451]
    assert "(and 149 more faults)" in job["error"]

    status, output, messages = solved("mahjong", data, tmp_path)
    named = messages.splitlines()
    assert status == 2 and output.count(b"\n") == 300 and len(named) == 102
    assert named[0].endswith("(150 faults, named below): the judge output printed is that of the 300 hands before "
                             "the first fault")
    assert named[101] == f"dealer: error: {tmp_path / 'file.in'}: and 50 more faults"


def test_a_rerun_of_a_job_with_faults_keeps_them(client: Any) -> None:
    data, _ = judge_file("mahjong", {300})
    job = upload(client, data, "mahjong")
    response = client.post(f"/api/jobs/{job['id']}/rerun")
    assert response.status_code == 201
    again = client.get(f"/api/jobs/{response.get_json()['id']}").get_json()
    assert again["status"] == "failed" and (again["faults"], again["fault_count"]) == (job["faults"], 1)
    assert client.get(again["partial_output"]).data == client.get(job["partial_output"]).data


def test_dealer_submit_wait_prints_the_faults_and_the_partial_output(app: Any, tmp_path: Path) -> None:
    from werkzeug.serving import make_server

    data, where = judge_file("mahjong", {300, 500})
    path = tmp_path / "bad.in"
    path.write_bytes(data)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        result = CliRunner().invoke(main, ["submit", str(path), "--game", "mahjong", "--wait", "--no-progress",
                                           "--url", f"http://127.0.0.1:{server.server_port}"])
    finally:
        server.shutdown()
        thread.join()
    prefix, _ = judge_file("mahjong", set(), 299)
    assert result.exit_code == 1, result.output
    assert result.stdout_bytes == solved("mahjong", prefix, tmp_path)[1]
    messages = result.stderr.splitlines()
    assert [line.removeprefix("dealer: fault: ").split(": ")[0] for line in messages[1:3]] == [
        f"line {where[300]}, column 1", f"line {where[500]}, column 1"]
    assert messages[3].startswith("dealer: the output is partial: job ")
    assert messages[4].startswith("dealer: error: job ") and "failed: line " in messages[4]
