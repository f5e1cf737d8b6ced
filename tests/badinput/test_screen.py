"""Every structural limit is checked while an upload streams in, its game chosen or not, on both
databases: a NUL byte, a byte that is no UTF-8, a line over ``DEALER_MAX_LINE_BYTES``, a token longer than
any game's, a first MiB with no line break, and (no game chosen) a first MiB of no game. The upload stops
being read where the fault shows, nothing of a file refused in its first MiB is stored, and the answer is a
``400`` naming the line and column. Files are made as they are read (never held in memory)."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st
from sqlalchemy import func, select

from tests.support.http import assert_healthy
from tests.support.inline import InlineDispatcher
from tests.support.jobs import stored_uploads
from tests.support.paths import judge
from tests.web.test_refused_early import BOUNDARY, CountingBody, post_body
from worker import work
from worker.config import Settings
from worker.jobs.errors import Invalid
from worker.jobs.screen import HEAD_BYTES, JudgeFileScreen, Screened
from worker.store.database import Database
from worker.store.models import Job, Upload, UploadBlock

#: What each refused file streams: far more than may be read of it.
FILE_BYTES = 256 << 20
#: What the server may read past the place that shows a fault: the form parser reads 64 KiB at a time.
SLACK = 1 << 18
HAND = judge("mahjong", "sample").read_bytes().splitlines(keepends=True)[0]
DECK = b" ".join(judge("10-20-30", "sample").read_bytes().split()[:52]) + b" "


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Chunks sized as the service sizes them: a file refused past its first MiB has a job made of it while it
    arrives, which the inline dispatcher splits and solves in the upload, 7 cases a chunk otherwise."""
    return replace(settings, chunk_size=0)


def game_field(game: str) -> bytes:
    return f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"game\"\r\n\r\n{game}\r\n".encode()


def repeated(unit: bytes, fault: bytes = b"", at: int = -1) -> Callable[[int, int], bytes]:
    """A file of ``unit`` over and over, with ``fault`` in place of the unit that starts at or after byte
    ``at`` (``at`` < 0: none), as :class:`CountingBody` asks for it: ``count`` bytes from ``start``."""
    units = -(-at // len(unit)) if at >= 0 else -1
    where = units * len(unit)

    def fill(start: int, count: int) -> bytes:
        pieces = []
        end = start + count
        if start < where or where < 0:
            stop = end if where < 0 else min(end, where)
            first = start - start % len(unit)
            pieces.append((unit * (-(-(stop - first) // len(unit)) + 1))[start - first:stop - first])
        if where >= 0 and end > where:
            tail = fault + unit * (-(-(end - where) // len(unit)) + 1)
            pieces.append(tail[max(start - where, 0):end - where])
        return b"".join(pieces)

    return fill


def stored(db: Database) -> tuple[int, int]:
    """How many upload blocks the database holds, and their bytes."""
    with db.session(write=False) as session:
        count, size = session.execute(select(func.count(), func.coalesce(func.sum(func.length(UploadBlock.data)), 0))
                                      .select_from(UploadBlock)).one()
    return count, size


def nothing_kept(db: Database, settings: Settings) -> None:
    assert stored(db) == (0, 0)
    assert stored_uploads(db) == []
    with db.session(write=False) as session:
        assert session.scalar(select(func.count()).select_from(Job)) == 0


def refused(client: Any, fill: Callable[[int, int], bytes], game: str | None, path: str = "/api/jobs") -> \
        tuple[int, str, int]:
    """Stream a file of ``fill`` (its game chosen, or not): the status, the error, the bytes the server read."""
    body = CountingBody("file", FILE_BYTES, fill, extra=game_field(game) if game else b"")
    response = post_body(client, path, body)
    return response.status_code, response.get_json()["error"], body.read_bytes


# --- what is refused in the first MiB: read no further, nothing stored --------------------------------

#: (the file, the game it is for, the message of its refusal).
IN_THE_FIRST_MIB = {
    "one line of decks": (repeated(DECK), "10-20-30", "line 1: the line is longer than the limit of 1 MiB"),
    "one endless token": (repeated(b"7"), "10-20-30", "line 1, column 1: a token longer than 64 characters"),
    "a NUL in the first MiB": (repeated(HAND, b"FA\x00\n", 500_000), "mahjong",
                               f"this looks like a binary file (byte 0x00 at line {-(-500_000 // len(HAND)) + 1}, "
                               "column 3), not a judge file"),
    "a byte of no text": (repeated(HAND, b"1S \xe9\n", 700_000), "mahjong",
                          f"line {-(-700_000 // len(HAND)) + 1}, column 4: byte 0xe9 is not text"),
    "a token of 65 characters": (repeated(HAND, b"1S " + b"9" * 65 + b"\n", 10_000), "mahjong",
                                 f"line {-(-10_000 // len(HAND)) + 1}, column 4: a token longer than 64 characters"),
}


@pytest.mark.slow
@pytest.mark.parametrize("chosen", [True, False], ids=["game chosen", "no game"])
@pytest.mark.parametrize("name", sorted(IN_THE_FIRST_MIB))
def test_a_file_refused_in_its_first_mib_is_read_no_further_and_nothing_is_kept(
        client: Any, db: Database, settings: Settings, name: str, chosen: bool) -> None:
    fill, game, message = IN_THE_FIRST_MIB[name]
    status, error, read = refused(client, fill, game if chosen else None)
    assert status == 400 and error.startswith(message), error
    assert read < HEAD_BYTES + SLACK, f"{read:,} bytes read"
    nothing_kept(db, settings)
    assert_healthy(client)


def test_a_first_mib_without_a_line_break_is_refused_without_a_line_limit(db: Database, settings: Settings) -> None:
    """``DEALER_MAX_LINE_BYTES=0`` lifts the limit on lines, not on the first: a file's game is read from
    whole lines of its first MiB."""
    from webui.app import create_app

    unlimited = replace(settings, max_line_bytes=0)
    client = create_app(unlimited, InlineDispatcher(db, unlimited), config={"TESTING": True}, db=db).test_client()
    for game in ("10-20-30", None):
        status, error, read = refused(client, repeated(DECK), game)
        assert (status, error) == (400, "line 1: the line is longer than the limit of 1 MiB")
        assert read < HEAD_BYTES + SLACK
    nothing_kept(db, settings)


def test_a_first_mib_of_no_game_is_refused_then_with_no_game_chosen(client: Any, db: Database, settings: Settings) -> None:
    letter = b"Dear class, the exam is on Monday at nine; bring a pencil.\n"
    for game in ("mahjong", None):
        status, error, read = refused(client, repeated(letter), game)
        assert status == 400
        assert error == "this is no judge file of any game: every game's reader stops at line 1, column 1 (\"Dear\")"
        assert read < HEAD_BYTES + SLACK
    nothing_kept(db, settings)


# --- what shows later: read up to it, what was stored of the file dropped ----------------------------

LATER = 5 << 20
LINE = -(-LATER // len(HAND)) + 1  # the line of the fault


@pytest.mark.slow
@pytest.mark.parametrize("fault, message", [
    (b"FA\x00\n", f"this looks like a binary file (byte 0x00 at line {LINE}, column 3), not a judge file"),
    (b"1S \xff\n", f"line {LINE}, column 4: byte 0xff is not text"),
    (b"1S " + b"9" * 100 + b"\n", f"line {LINE}, column 4: a token longer than 64 characters"),
    (b"1S " * 400_000 + b"\n", f"line {LINE}: the line is longer than the limit of 1 MiB"),
], ids=["NUL", "no text", "long token", "long line"])
@pytest.mark.parametrize("chosen", [True, False], ids=["game chosen", "no game"])
def test_a_fault_past_the_first_mib_stops_the_upload_where_it_shows(
        client: Any, db: Database, settings: Settings, fault: bytes, message: str, chosen: bool) -> None:
    status, error, read = refused(client, repeated(HAND, fault, LATER), "mahjong" if chosen else None)
    assert status == 400 and error.startswith(message), error
    shows = LATER + (1 << 20 if len(fault) > 1 << 20 else len(fault))
    assert LATER < read < shows + SLACK, f"{read:,} bytes read"
    # What was stored of it is dropped at once for every reader, and so is the job made of it while it
    # arrived (worker.jobs.arriving); the purge removes their rows.
    assert stored_uploads(db) == []
    assert client.get("/api/jobs").get_json()["total"] == 0
    with db.session(write=False) as session:
        assert session.scalar(select(func.count()).select_from(Upload)) == 1
    work.purge(db, settings)
    nothing_kept(db, settings)
    assert_healthy(client)


def test_an_output_to_check_with_a_nul_past_its_first_mib_is_refused_as_it_arrives(
        client: Any, db: Database, settings: Settings) -> None:
    job = client.post("/api/jobs", data={"file": (judge("mahjong", "sample").open("rb"), "hands.in")},
                      content_type="multipart/form-data").get_json()
    work.purge(db, settings)  # the job's file, released once it was split
    before = stored(db)
    body = CountingBody("file", FILE_BYTES, repeated(b"Case 1: Not ready\n", b"Case \x00\n", LATER))
    response = post_body(client, f"/api/jobs/{job['id']}/checks", body)
    assert response.status_code == 415
    assert response.get_json()["error"].startswith("the output cannot be checked: line "), response.get_json()
    assert "a NUL byte: this is no text file" in response.get_json()["error"]
    assert body.read_bytes < LATER + SLACK
    work.purge(db, settings)
    assert stored(db) == before


def test_a_good_file_of_many_mib_streams_in_whole(client: Any, db: Database, settings: Settings, dispatcher: Any) -> None:
    dispatcher.immediate = False  # what is tested is the upload
    copies = (3 * HEAD_BYTES) // len(HAND)
    data = HAND * copies + b"0\n"
    response = client.post("/api/jobs", data={"file": (io.BytesIO(data), "big.in")},
                           content_type="multipart/form-data")
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["game"] == "mahjong" and response.get_json()["size"] == len(data)
    assert stored(db)[0] == -(-len(data) // HEAD_BYTES)


# --- the screen alone: one verdict however the file is cut -------------------------------------------


def verdict(data: bytes, cuts: list[int], limit: int = 1 << 20) -> str | None:
    screen = JudgeFileScreen(limit)
    try:
        at = 0
        for cut in [*sorted(cuts), len(data)]:
            screen.feed(data[at:cut])
            at = max(at, cut)
        screen.end()
    except Invalid as error:
        return error.message
    return None


def screened(data: bytes, size: int, limit: int = 1 << 20) -> str | None:
    """The verdict of :class:`Screened` read ``size`` bytes at a time, as a reader reads."""
    stream = Screened(io.BytesIO(data), JudgeFileScreen(limit)).reading()
    try:
        while stream.read(size):
            pass
    except Invalid as error:
        return error.message
    return None


PIECES = [b"1S ", b"9" * 30, b"\n", b"\r\n", b" ", b"\t", b"\x00", b"\xc3", b"\xa9", b"\xff", b"FA", b"0"]
#: A good first MiB and a line more, after which the pieces come (what is met past the head).
HEAD = HAND * (HEAD_BYTES // len(HAND) + 1)
HEAD_LINES = HEAD.count(b"\n")


@pytest.mark.slow
@examples(max_examples=60, deadline=None, database=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=40), cuts=st.lists(st.integers(-600, 1200), max_size=6),
       limit=st.sampled_from([0, 40, 1 << 20]), past=st.booleans())
def test_the_verdict_does_not_depend_on_how_the_file_is_cut(pieces: list[bytes], cuts: list[int], limit: int,
                                                           past: bool) -> None:
    """Within the first MiB (judged whole) and past it (held to the limits a piece at a time)."""
    start = HEAD if past else b""
    data = start + b"".join(pieces)
    whole = verdict(data, [], limit)
    assert verdict(data, [len(start) + cut for cut in cuts if len(start) + cut >= 0], limit) == whole
    assert screened(data, 7, limit) == whole


@pytest.mark.parametrize("tail, line, column, message", [
    (b"1S 1S \xc3", 1, 7, "byte 0xc3 is not text"),
    (b"1S 1S \xc3\xa9 1S \xc3", 1, 13, "byte 0xc3 is not text"),  # a character cut short by the end
    (b"1S " + b"9" * 40 + b"9" * 40, 1, 4, "a token longer than 64 characters"),
    (b"1S\n\n 1S \x00", 3, 5, "NUL"),
])
def test_past_the_first_mib_a_fault_is_named_where_it_is(tail: bytes, line: int, column: int, message: str) -> None:
    data = HEAD + tail
    answers = {verdict(data, cuts) for cuts in ([], [HEAD_BYTES], [len(data) - 1], [len(HEAD) + 5],
                                                 list(range(HEAD_BYTES - 3, len(data), 37)))}
    answers |= {screened(data, size) for size in (1 << 16, 1000, 3)}
    if message == "NUL":
        assert answers == {f"this looks like a binary file (byte 0x00 at line {HEAD_LINES + line}, column {column}), "
                           "not a judge file; upload the judge file itself (plain text)"}
    else:
        assert answers == {f"line {HEAD_LINES + line}, column {column}: {message}"}
    assert verdict(HEAD + HAND * 3, list(range(0, len(HEAD), 1001))) is None
