"""The malformed-file corpus (tests/badinput/corpus/, described in its README) through the Flask client.

Every file gives either a ``400`` at upload with a clear message (nothing is stored) or a
failed job whose error names the line and column, and the service takes a good file
right after. Which of the two, and the message, do not depend on whether the game was chosen or
recognised: a file whose start does not read as its game is refused, one that goes wrong further
on fails its job. Files that only lack a terminator, or repeat it, are read as the engines
document: the job succeeds with a warning that says so.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from tests.support.http import assert_healthy, finished
from tests.support.http import post_file as post
from tests.support.jobs import stored_uploads
from tests.support.paths import JUDGE_DATA
from worker import engines
from worker.jobs.intake import with_article
from worker.store.database import Database
from worker.store.models import Job

GAMES = engines.names()

#: (game, file) -> (line, column, a phrase of the message) of the refusal or the failed job.
FAILS: dict[tuple[str, str], tuple[int, int, str]] = {
    ("10-20-30", "bad-token.in"): (2, 17, '"J" is not a card value (1-10)'),
    ("10-20-30", "signed-number.in"): (1, 33, '"+5" is not a card value (1-10)'),
    ("10-20-30", "wrong-count.in"): (2, 1, "this is card 52 of deck 1"),
    ("10-20-30", "not-a-standard-deck.in"): (1, 1, "deck 1 is not a standard deck: 6 cards of value 3"),
    ("10-20-30", "truncated.in"): (3, 1, "deck 2 ends at end of file after 37 of 52 cards"),
    ("10-20-30", "terminator-only.in"): (1, 1, "the file has no decks"),
    ("10-20-30", "zero-inside-a-deck.in"): (1, 48, "a 0 ends the input only where a deck would start"),
    ("10-20-30", "invalid-utf8.in"): (2, 7, "byte 0xff is not text"),
    ("10-20-30", "long-token.in"): (1, 7, "a token longer than 64 characters"),
    ("accordion", "bad-token.in"): (1, 19, '"10C" is not a card (rank A23456789TJQK, suit CDHS)'),
    ("accordion", "lower-case.in"): (1, 37, "cards are written in upper case"),
    ("accordion", "wrong-count.in"): (1, 1, 'deck 1 is cut short by "#" after 51 of 52 cards'),
    ("accordion", "card-twice.in"): (2, 43, "5S appears twice in deck 1"),
    ("accordion", "truncated.in"): (3, 1, "deck 2 ends at end of file after 26 of 52 cards"),
    ("accordion", "terminator-only.in"): (1, 1, "the file has no decks"),
    ("accordion", "invalid-utf8.in"): (2, 11, "byte 0xe9 is not text"),
    ("accordion", "long-token.in"): (1, 7, "a token longer than 64 characters"),
    ("mahjong", "bad-token.in"): (1, 31, 'unknown tile "10S"'),
    ("mahjong", "lower-case.in"): (1, 37, "tiles are written in upper case"),
    ("mahjong", "wrong-count.in"): (1, 1, "hand has 12 tiles, expected 13"),
    ("mahjong", "five-copies.in"): (1, 13, "5 copies of 1S in one hand (at most 4)"),
    ("mahjong", "truncated.in"): (2, 1, "hand has 7 tiles, expected 13"),
    ("mahjong", "terminator-only.in"): (1, 1, "the file has no hands"),
    ("mahjong", "invalid-utf8.in"): (2, 14, "byte 0xc3 is not text"),
    ("mahjong", "long-token.in"): (1, 4, "a token longer than 64 characters"),
}
#: (game, file) -> the warning of the job, which succeeds with every case of the file.
WARNS: dict[tuple[str, str], tuple[int, str]] = {
    ("10-20-30", "missing-terminator.in"): (3, 'no terminating "0" at end of file'),
    ("10-20-30", "repeated-terminator.in"): (3, 'line 8, column 1: text after the terminating "0" is ignored'),
    ("accordion", "missing-terminator.in"): (2, 'no terminating "#" at end of file'),
    ("accordion", "repeated-terminator.in"): (2, 'line 6, column 1: text after the terminating "#" is ignored'),
    ("mahjong", "missing-terminator.in"): (2, 'no terminating "0" at end of file'),
    ("mahjong", "repeated-terminator.in"): (2, 'line 4, column 1: text after the terminating "0" is ignored'),
}
#: (game, file) -> the start of the message of its refusal at upload: a NUL byte is found while the file
#: arrives, past what the game's recognition reads.
REFUSED_IN_GAME: dict[tuple[str, str], str] = {
    (game, "late-nul.in"): "this looks like a binary file (byte 0x00 at line " for game in GAMES}
#: corpus/any files refused at upload, whatever the game: file -> the message.
REFUSED: dict[str, str] = {
    "empty.in": "the file is empty",
    "whitespace.in": "the file is empty: it holds only whitespace",
    "sample.in.gz": "this looks like a gzip file; upload the judge file itself, not a compressed copy",
    "sample.zip": "this looks like a zip file; upload the judge file itself, not a compressed copy",
    "garbage.bin": "this looks like a binary file (byte 0x00 at line 1, column 167), not a judge file",
    "utf16.in": "this looks like UTF-16 text; save it as plain ASCII or UTF-8 text",
    "bom.in": "the file starts with a byte-order mark (U+FEFF",
    "image.png": "this looks like a PNG image",
    "document.pdf": "this looks like a PDF document",
}
#: corpus/any files refused at upload, with or without a game, for a byte that is no text.
ANY_FAILS: dict[str, tuple[int, int, str]] = {
    "garbage-high-bytes.bin": (1, 3, "byte 0x82 is not text"),
}

CORPUS = Path(__file__).parent / "corpus"


def _jobs(db: Database) -> int:
    from sqlalchemy import func, select

    with db.session(write=False) as session:
        return session.scalar(select(func.count()).select_from(Job)) or 0


def test_every_corpus_file_has_an_expectation() -> None:
    for game in GAMES:
        names = {path.name for path in (CORPUS / game).iterdir()}
        assert names == {name for g, name in [*FAILS, *WARNS, *REFUSED_IN_GAME] if g == game}, game
    assert {path.name for path in (CORPUS / "any").iterdir()} == set(REFUSED) | set(ANY_FAILS)
    assert all(path.stat().st_size < 16 << 10 for path in CORPUS.rglob("*") if path.is_file())


def taken(client: Any, db: Database, data: bytes, game: str | None, name: str = "judge.in") -> tuple[str, str]:
    """How the service takes a bad file: ``("refused", message)`` at upload, with nothing stored, or
    ``("failed", error)``, a job that failed having stored every good case it read (none, at a fault no
    reading goes on past)."""
    before = _jobs(db)
    response = post(client, data, game, name)
    if response.status_code == 400:
        assert _jobs(db) == before and stored_uploads(db) == [], "a refused upload is not kept"
        return "refused", response.get_json()["error"]
    job = finished(client, response)
    assert job["status"] == "failed" and job["done"] == job["total"] == (job["total"] if job["fault_count"] else 0)
    assert client.get(f"/api/jobs/{job['id']}/cases").get_json()["total"] == job["done"], job
    return "failed", job["error"]


@pytest.mark.parametrize("game, name", sorted(FAILS))
def test_a_malformed_file_is_refused_or_fails_naming_line_and_column_chosen_or_recognised(
        client: Any, db: Database, settings: Any, game: str, name: str) -> None:
    line, column, phrase = FAILS[(game, name)]
    data = (CORPUS / game / name).read_bytes()
    decision, error = taken(client, db, data, game, name)
    assert error.startswith(f"line {line}, column {column}: "), error
    assert phrase in error and len(error) < 300
    # The game recognised from the content: the same decision and message; or, where the start of the
    # file does not say which game it is, a refusal naming the closest game's reader and where it stopped.
    recognised, message = taken(client, db, data, None, name)
    if message.startswith("cannot tell which game"):
        assert recognised == "refused" and decision == "refused", (error, message)
    else:  # the same but for the job's id (in the partial output's address)
        def anyone(said: str) -> str:
            return re.sub(r"/jobs/\d+/", "/jobs/N/", said)
        assert (recognised, anyone(message)) == (decision, anyone(error))
    assert_healthy(client)


def test_a_bad_tile_at_the_very_start_names_the_closest_game_its_line_and_column(client: Any,
                                                                                db: Database, settings: Any) -> None:
    data = b"1X 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\n0\n"
    decision, message = taken(client, db, data, None)
    assert decision == "refused"
    assert message.startswith('cannot tell which game this file is for: read as a mahjong file (the closest), '
                              'line 1, column 1: unknown tile "1X"'), message
    assert taken(client, db, data, "mahjong") == ("refused", message.split("(the closest), ")[1]
                                                        .split("; choose one of")[0])


def test_an_error_past_the_start_of_the_file_fails_its_job_chosen_or_recognised(client: Any,
                                                                                 db: Database, settings: Any) -> None:
    hand = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes().splitlines(keepends=True)[0]
    good = hand * (2 * 8192 // len(hand))
    data = good + hand.replace(b"FA", b"FX", 1) + b"0\n"
    line = good.count(b"\n") + 1
    for game in ("mahjong", None):
        decision, error = taken(client, db, data, game)
        assert decision == "failed" and error.startswith(f"line {line}, column "), error
        assert 'unknown tile "FX"' in error


@pytest.mark.parametrize("game, name", sorted(REFUSED_IN_GAME))
def test_a_nul_byte_in_the_first_mib_is_refused_at_upload(client: Any, db: Database, settings: Any, game: str, name: str) -> None:
    response = post(client, (CORPUS / game / name).read_bytes(), game, name)
    assert response.status_code == 400
    assert response.get_json()["error"].startswith(REFUSED_IN_GAME[(game, name)]), response.get_json()
    assert _jobs(db) == 0 and stored_uploads(db) == []


@pytest.mark.parametrize("game, name", sorted(WARNS))
def test_a_missing_or_repeated_terminator_is_read_with_a_warning(client: Any, game: str, name: str) -> None:
    cases, warning = WARNS[(game, name)]
    job = finished(client, post(client, (CORPUS / game / name).read_bytes(), game, name))
    assert job["status"] == "succeeded" and job["done"] == job["total"] == cases
    assert [w["text"] for w in job["warnings"]] == [warning]
    assert str(escape(warning)) in client.get(f"/jobs/{job['id']}").get_data(as_text=True)


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("game", [*GAMES, None])
def test_what_is_no_judge_file_is_refused_at_upload(client: Any, db: Database, settings: Any, game: str | None,
                                                   name: str) -> None:
    before = _jobs(db)
    response = post(client, (CORPUS / "any" / name).read_bytes(), game, name)
    assert response.status_code == 400
    assert response.get_json()["error"].startswith(REFUSED[name])
    assert _jobs(db) == before
    assert stored_uploads(db) == [], "a refused upload is not kept"
    assert_healthy(client)


@pytest.mark.parametrize("game", GAMES)
def test_binary_garbage_without_nul_is_refused_with_its_position(client: Any, db: Database, settings: Any, game: str) -> None:
    for name, (line, column, phrase) in ANY_FAILS.items():
        decision, error = taken(client, db, (CORPUS / "any" / name).read_bytes(), game, name)
        assert decision == "refused"
        assert error.startswith(f"line {line}, column {column}: {phrase}")
        assert taken(client, db, (CORPUS / "any" / name).read_bytes(), None, name) == (decision, error)
    assert_healthy(client)


@pytest.mark.parametrize("game, other", [(g, o) for g in GAMES for o in GAMES if g != o])
def test_a_file_for_another_game_is_refused_and_says_which_game_it_looks_like(client: Any, db: Database, settings: Any,
                                                                              game: str, other: str) -> None:
    data = (JUDGE_DATA / other / "sample.in").read_bytes()
    decision, error = taken(client, db, data, game, f"{other}.in")
    assert decision == "refused"
    assert re.match(r"line \d+, column \d+: ", error), error
    assert error.endswith(f"(this looks like {with_article(other)} file, not {with_article(game)} file)")
    assert_healthy(client)


def test_the_upload_page_shows_a_refusal_without_javascript(client: Any) -> None:
    import io

    data = {"file": (io.BytesIO((CORPUS / "any" / "sample.in.gz").read_bytes()), "decks.in.gz")}
    response = client.post("/upload", data=data, content_type="multipart/form-data")
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert "this looks like a gzip file; upload the judge file itself" in response.get_data(as_text=True)


def test_a_failed_job_shows_its_error_on_its_page(client: Any) -> None:
    hand = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes().splitlines(keepends=True)[0]
    good = hand * (2 * 8192 // len(hand))
    job = finished(client, post(client, good + hand.replace(b"FA FA", b"FA 10S") + b"0\n", "mahjong"))
    html = client.get(f"/jobs/{job['id']}").get_data(as_text=True)
    line = good.count(b"\n") + 1
    assert "This job failed" in html and f"line {line}, column 37: unknown tile &#34;10S&#34;" in html


def test_a_parser_crash_fails_the_job_with_a_reason(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a reader raises besides its own InputError, the job fails; it is not retried for ever."""
    engine = engines.get("mahjong")

    class Broken:
        cases = bytes_read = 0

        def take(self, *sizes: Any) -> Any:
            raise ZeroDivisionError("a bug")

    monkeypatch.setattr(engine, "read_inputs", lambda *args, **kwargs: Broken())  # what the split reads with
    job = finished(client, post(client, (JUDGE_DATA / "mahjong" / "sample.in").read_bytes(), "mahjong"))
    assert job["status"] == "failed"
    assert job["error"] == ("the mahjong reader failed on this file (ZeroDivisionError); this is a bug in "
                            "Dealer: please report it with the file")
    monkeypatch.undo()
    assert_healthy(client)


def test_a_token_of_5000_digits_fails_the_job_either_way(client: Any) -> None:
    """The 10-20-30 reader raises ValueError on it (see test_fuzz.py); the job still fails with a reason."""
    response = post(client, b"2 " + b"1" * 5000 + b"\n0\n", "10-20-30")
    error = (response.get_json()["error"] if response.status_code == 400 else finished(client, response)["error"])
    assert error.startswith(("line 1, column 3: ", "the 10-20-30 reader failed on this file")), error
    assert_healthy(client)


def _raw_upload(client: Any, filename: bytes, data: bytes) -> Any:
    body = (b'--B\r\nContent-Disposition: form-data; name="file"; filename="' + filename + b'"\r\n'
            b"Content-Type: application/octet-stream\r\n\r\n" + data + b"\r\n--B--\r\n")
    return client.post("/api/jobs", data=body, content_type="multipart/form-data; boundary=B")


def test_hostile_bytes_in_a_file_name_are_stored_cleaned(client: Any) -> None:
    """A NUL or an escape in a file name neither breaks the database (PostgreSQL refuses NUL) nor shows."""
    data = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()
    job = finished(client, _raw_upload(client, b"a\x00b\x1bc\xc3\xa9.in", data))
    assert job["status"] == "succeeded"
    assert job["filename"] == "a\ufffdb\ufffdc\u00e9.in"
    long = finished(client, post(client, data, "mahjong", "x" * 1000 + ".in"))
    assert len(long["filename"]) == 255
    assert "a\ufffdb\ufffdc\u00e9.in" in client.get("/").get_data(as_text=True)
    # A name that is not UTF-8 at all: Werkzeug drops the part, so it is a plain 400.
    assert _raw_upload(client, b"c\xff.in", data).status_code == 400
    assert_healthy(client)
