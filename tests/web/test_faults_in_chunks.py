"""A file's faults cost it no chunks: a chunk runs on past a bad case, whose number it skips (``chunks.gaps``),
and every read that shows a case gives it its place in the file all the same. On SQLite and PostgreSQL.

Each case kept is held to what the engine answers for it at its place, and each read to what ``dealer
solve`` prints of the same bytes: the number a case shows is its place in the file, whatever chunk holds it.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from tests.web.test_faults_kept import CASES, _texts, judge_file, solved, stored, upload
from worker import engines
from worker.store.database import Database
from worker.store.models import Chunk

#: Bad cases spread over the whole file: every chunk holds some between its cases.
SPREAD = set(range(7, CASES, 9))


def chunks_of(db: Database, job_id: int) -> tuple[int, int]:
    """``(chunks, chunks that skip numbers)`` of a job."""
    with db.session(write=False) as session:
        rows = session.execute(select(Chunk.gaps).where(Chunk.job_id == job_id)).scalars().all()
        assert session.scalar(select(func.count()).select_from(Chunk).where(Chunk.job_id == job_id)) == len(rows)
    return len(rows), sum(1 for gaps in rows if gaps)


def test_the_chunks_of_a_file_do_not_grow_with_its_faults(client: Any, db: Database, settings: Any) -> None:
    counts = {}
    for bad in (set(), {300}, set(range(5, CASES, 20)), SPREAD):
        data, _ = judge_file("mahjong", bad)
        job = upload(client, data, "mahjong")
        assert (job["done"], job["fault_count"]) == (CASES - len(bad), len(bad))
        counts[len(bad)], skipping = chunks_of(db, job["id"])
        assert skipping or len(bad) < 2  # the faults fell inside chunks (one may fall between two)
    assert max(counts.values()) == counts[0], counts


@pytest.mark.parametrize("game", engines.names())
def test_every_read_numbers_the_cases_of_chunks_with_gaps_by_their_place(client: Any, db: Database, settings: Any,
                                                                          tmp_path: Path, game: str) -> None:
    data, _ = judge_file(game, SPREAD)
    job = upload(client, data, game)
    ident, engine, texts = job["id"], engines.get(game), _texts(game)
    good = [place for place in range(1, CASES + 1) if place not in SPREAD]
    assert job["status"] == "failed" and (job["done"], job["fault_count"]) == (len(good), len(SPREAD))
    assert chunks_of(db, ident)[1] > 1
    answers = {place: engine.solve_batch([texts[place - 1]], place, False)[0].rstrip("\n") for place in good}
    assert stored(db, ident) == {place: (texts[place - 1], answers[place]) for place in good}

    # Both exports, in file order and reversed.
    rows = [json.loads(line) for line in client.get(f"/api/results/export?job_id={ident}").data.splitlines()]
    assert [(row["index"], row["input"], row["line"]) for row in rows] == [
        (place, texts[place - 1], answers[place]) for place in good]
    assert [row["id"] for row in rows] == [ident * 1_000_000_000 + place for place in good]
    table = list(csv.DictReader(io.StringIO(client.get(f"/api/results/export?job_id={ident}&format=csv"
                                                       "&sort=-index").data.decode())))
    assert [(int(row["index"]), row["line"]) for row in table] == [(place, answers[place]) for place in good[::-1]]

    # Pages in file order, reversed, and by the keyset cursor, across the gaps.
    pages = [client.get(f"/api/jobs/{ident}/cases?per_page=50&page={page}").get_json() for page in range(1, 14)]
    assert [case["index"] for page in pages for case in page["items"]] == good
    backwards = client.get(f"/api/jobs/{ident}/cases?per_page=50&page=3&sort=-index").get_json()
    assert [case["index"] for case in backwards["items"]] == good[::-1][100:150]
    walked, cursor = [], ""
    while True:
        page = client.get(f"/api/jobs/{ident}/cases?per_page=70{cursor}").get_json()
        walked += [case["index"] for case in page["items"]]
        if not page["next"]:
            break
        cursor = f"&after={page['next']}"
    assert walked == good

    # Each case by its number, with its trace; a bad case's number is no case; a search by input finds it.
    for place in (good[0], 8, 9, 10, 17, 500, good[-1]):
        case = client.get(f"/api/jobs/{ident}/cases/{place}").get_json()
        assert (case["index"], case["input"], case["line"]) == (place, texts[place - 1], answers[place]), place
        assert case["trace"] is not None and client.get(f"/jobs/{ident}/cases/{place}").status_code == 200
    for place in (7, 16, max(SPREAD)):
        assert client.get(f"/api/jobs/{ident}/cases/{place}").status_code == 404
    found = client.get("/api/results", query_string={"game": game, "input": texts[500 - 1]}).get_json()
    assert (job["id"], 500) in [(case["job_id"], case["index"]) for case in found["items"]]
    few = client.get(f"/api/jobs/{ident}/cases", query_string={"per_page": 5, "sort": "number"}).get_json()
    for case in few["items"]:
        assert (case["input"], case["line"]) == (texts[case["index"] - 1], answers[case["index"]])

    # The judge lines of every kept case, and the partial output: dealer solve's.
    kept = client.get(f"/api/jobs/{ident}/lines").data
    assert kept == b"".join(answers[place].encode() + b"\n" for place in good if answers[place])
    status, expected, _ = solved(game, data, tmp_path)
    assert status == 2 and client.get(job["partial_output"]).data == expected
    assert expected == b"".join(answers[place].encode() + b"\n" for place in range(1, min(SPREAD)))
