"""A file that is plainly not what its form field holds is refused from its first MiB, while it is still
arriving: nothing of it is stored, and the rest of the body is not even read."""

from __future__ import annotations

import io
import os
import random
from typing import Any

import pytest

from tests.support.http import assert_healthy
from tests.support.jobs import stored_uploads
from tests.support.paths import judge
from worker.store.database import Database
from worker.store.models import Job, UploadBlock
from worker.store.uploads import BLOCK_BYTES

BOUNDARY = "dealer-test-boundary"
#: The file each test streams: far more than what may be read of it before it is refused.
FILE_BYTES = 64 << 20


class CountingBody(io.RawIOBase):
    """A multipart body around ``size`` bytes made by ``fill``, made as it is read; counts what was read."""

    def __init__(self, field: str, size: int, fill: Any, extra: bytes = b"") -> None:
        self.head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"big.in\"\r\n"
                     "Content-Type: application/octet-stream\r\n\r\n").encode()
        self.tail = f"\r\n--{BOUNDARY}--\r\n".encode()
        self.extra = extra
        self.size, self.fill, self.read_bytes, self.at = size, fill, 0, 0
        self.length = len(extra) + len(self.head) + size + len(self.tail)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:  # the test client asks where the body starts, and where it ends
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.at = offset if whence == 0 else self.length + offset if whence == 2 else self.at + offset
        return self.at

    def tell(self) -> int:
        return self.at

    def readinto(self, buffer: Any) -> int:
        wanted = min(len(buffer), self.length - self.at)
        data = self._bytes(self.at, wanted)
        buffer[:len(data)] = data
        self.at += len(data)
        self.read_bytes = max(self.read_bytes, self.at)
        return len(data)

    def _bytes(self, at: int, count: int) -> bytes:
        pieces, end = [], at + count
        for start, part in ((0, self.extra), (len(self.extra), self.head)):
            if at < start + len(part) and end > start:
                pieces.append(part[max(at - start, 0):end - start])
        body = len(self.extra) + len(self.head)
        if at < body + self.size and end > body:
            pieces.append(self.fill(max(at, body) - body, min(end, body + self.size) - max(at, body)))
        tail = body + self.size
        if end > tail:
            pieces.append(self.tail[max(at - tail, 0):end - tail])
        return b"".join(pieces)


def post_body(client: Any, path: str, body: CountingBody) -> Any:
    return client.post(path, input_stream=body, content_length=body.length,
                       content_type=f"multipart/form-data; boundary={BOUNDARY}")


def nothing_kept(db: Database, settings: Any) -> None:
    with db.session(write=False) as session:
        assert session.query(Job).count() == 0
        assert session.query(UploadBlock).count() == 0
    assert stored_uploads(db) == []


def random_bytes(_: int, count: int) -> bytes:
    return os.urandom(count)


def prose(at: int, count: int) -> bytes:
    """Text without a NUL byte, of no game: a letter."""
    line = b"Dear class, the exam is on Monday at nine; bring a pencil.\n"
    start = at % len(line)
    return (line * (count // len(line) + 2))[start:start + count]


def high_bytes(at: int, count: int) -> bytes:
    """Bytes 0x80-0xff, without a newline: no NUL, no text, no line."""
    return random.Random(at).randbytes(count).translate(bytes(range(128, 256)) * 2)


@pytest.mark.slow
@pytest.mark.parametrize("fill, message", [
    (random_bytes, "this looks like a binary file (byte 0x00 at line "),
    (prose, "this is no judge file of any game: every game's reader stops at line 1, column 1 (\"Dear\")"),
    (high_bytes, "line 1, column "),
])
def test_a_big_file_of_no_game_is_refused_from_its_first_mib(client: Any, db: Database, settings: Any, fill: Any,
                                                              message: str) -> None:
    body = CountingBody("file", FILE_BYTES, fill)
    response = post_body(client, "/api/jobs", body)
    assert response.status_code == 400
    assert response.get_json()["error"].startswith(message), response.get_json()
    assert body.read_bytes < 2 * BLOCK_BYTES, "refused from the first MiB, the rest never read"
    nothing_kept(db, settings)
    assert_healthy(client)


def test_the_upload_page_refuses_it_too(client: Any, db: Database, settings: Any) -> None:
    body = CountingBody("file", FILE_BYTES, random_bytes)
    response = post_body(client, "/upload", body)
    assert response.status_code == 400 and response.mimetype == "text/html"
    assert "this looks like a binary file" in response.get_data(as_text=True)
    assert body.read_bytes < 2 * BLOCK_BYTES
    nothing_kept(db, settings)


def test_an_output_to_check_that_is_no_text_is_refused_from_its_first_mib(client: Any, db: Database, settings: Any,
                                                                          submit: Any) -> None:
    job = submit("mahjong/sample", "mahjong")
    with db.session(write=False) as session:
        blocks = session.query(UploadBlock).count()
    body = CountingBody("file", FILE_BYTES, high_bytes)
    response = post_body(client, f"/api/jobs/{job['id']}/checks", body)
    assert response.status_code == 415
    assert response.get_json()["error"].startswith("the output cannot be checked: line 1, column "), \
        response.get_json()
    assert body.read_bytes < 2 * BLOCK_BYTES
    with db.session(write=False) as session:
        assert session.query(UploadBlock).count() == blocks


def test_a_big_judge_file_still_streams_in_whole(client: Any, db: Database, settings: Any, dispatcher: Any) -> None:
    dispatcher.immediate = False  # what is tested is the upload; solving 75,000 hands inline adds nothing
    sample = judge("mahjong", "sample").read_bytes()
    hand = sample.splitlines(keepends=True)[0]
    copies = (3 * BLOCK_BYTES) // len(hand)
    data = hand * copies + b"0\n"
    response = client.post("/api/jobs", data={"file": (io.BytesIO(data), "big.in"), "game": "mahjong"},
                           content_type="multipart/form-data")
    assert response.status_code == 201, response.get_json()
    job = client.get(f"/api/jobs/{response.get_json()['id']}").get_json()
    assert job["status"] == "queued" and job["size"] == len(data)
    with db.session(write=False) as session:
        assert session.query(UploadBlock).count() == -(-len(data) // BLOCK_BYTES)
