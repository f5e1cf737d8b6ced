"""Every row of the exit-status table (``worker/exits.py``), command by command: ``dealer submit`` against
the service served over HTTP in this process (and a stand-in that answers every request with one
status), ``dealer solve`` and ``dealer check`` on files of their own."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from werkzeug.serving import make_server

from tests.support.inline import InlineDispatcher
from tests.support.paths import judge
from worker.cli import main
from worker.config import Settings
from worker.exits import HELP, Exit
from worker.store.database import Database
from worker.testing.servers import free_port

HANDS = judge("mahjong", "sample")
TOKEN = "exits-" + "k" * 32


def dealer(*arguments: str) -> Any:
    return CliRunner().invoke(main, list(arguments))


@contextlib.contextmanager
def running(server: Any) -> Iterator[str]:
    """``server`` (a werkzeug or http.server one, on a free port of this machine) serving: its URL."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@pytest.fixture
def url(app: Any) -> Iterator[str]:
    """The service (its jobs run as they are made), over HTTP."""
    with running(make_server("127.0.0.1", 0, app, threaded=True)) as served:
        yield served


@pytest.fixture
def keyed_url(db: Database, settings: Settings) -> Iterator[str]:
    """The service with an API key."""
    from webui.app import create_app

    keyed = replace(settings, api_keys=f"exits:{TOKEN}")
    app = create_app(keyed, InlineDispatcher(db, keyed), config={"TESTING": True}, db=db)
    with running(make_server("127.0.0.1", 0, app, threaded=True)) as served:
        yield served


class _OneStatus(BaseHTTPRequestHandler):
    status = 503

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"error": "a stand-in's answer"}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: Any) -> None:
        """Quiet."""


def test_the_table_is_in_the_help() -> None:
    result = dealer("--help")
    assert result.exit_code == Exit.DONE
    assert all(line.strip() in result.stdout for line in HELP.splitlines()[1:])
    assert [int(code) for code in Exit] == [0, 1, 2, 3]


# --- dealer submit ---------------------------------------------------------------------------------


def test_submit_accepted_and_done_exit_0(url: str, tmp_path: Path) -> None:
    waited = dealer("submit", str(HANDS), "--game", "mahjong", "--url", url, "--wait")
    assert waited.exit_code == Exit.DONE, waited.stderr
    assert waited.stdout_bytes == HANDS.with_suffix(".out").read_bytes()
    checked = dealer("submit", str(HANDS), "--url", url, "--wait", "--expected", str(HANDS.with_suffix(".out")))
    assert checked.exit_code == Exit.DONE, checked.stderr
    assert checked.stdout.startswith("Accepted: 2 of 2 cases accepted")


def test_submit_not_accepted_exits_1(url: str, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.out"
    wrong.write_bytes(HANDS.with_suffix(".out").read_bytes().replace(b"Case 2", b"Case 3"))
    result = dealer("submit", str(HANDS), "--url", url, "--wait", "--expected", str(wrong))
    assert result.exit_code == Exit.NOT_ACCEPTED, result.stderr
    assert result.stdout.startswith("Wrong answer: 1 of 2 cases accepted")


def test_submit_of_a_job_that_fails_exits_1(url: str, tmp_path: Path) -> None:
    hand = HANDS.read_bytes().splitlines(keepends=True)[0]
    bad = tmp_path / "bad.in"  # its fault past what is read before the job is made: the job fails
    bad.write_bytes(hand * 400 + hand.replace(b"FA", b"FX", 1) + b"0\n")
    result = dealer("submit", str(bad), "--game", "mahjong", "--url", url, "--wait")
    assert result.exit_code == Exit.NOT_ACCEPTED, result.stderr
    assert "failed: line 401, column " in result.stderr


def test_submit_of_a_refused_file_exits_2(url: str) -> None:
    result = dealer("submit", str(Path(__file__).parent / "badinput" / "corpus" / "any" / "sample.in.gz"), "--url", url)
    assert result.exit_code == Exit.BAD_INPUT
    assert "400 this looks like a gzip file" in result.stderr


def test_submit_without_a_key_to_a_service_with_keys_exits_3(keyed_url: str) -> None:
    result = dealer("submit", str(HANDS), "--url", keyed_url)
    assert result.exit_code == Exit.UNREACHABLE
    assert "401 " in result.stderr and "(set DEALER_API_KEY to your key)" in result.stderr
    assert dealer("submit", str(HANDS), "--url", keyed_url, "--api-key", TOKEN).exit_code == Exit.DONE


def test_submit_to_a_service_that_is_down_exits_3() -> None:
    result = dealer("submit", str(HANDS), "--url", f"http://127.0.0.1:{free_port()}")
    assert result.exit_code == Exit.UNREACHABLE
    assert "cannot reach" in result.stderr


@pytest.mark.parametrize("status, code", [(403, Exit.UNREACHABLE), (429, Exit.UNREACHABLE), (500, Exit.UNREACHABLE),
                                          (503, Exit.UNREACHABLE), (404, Exit.BAD_INPUT), (413, Exit.BAD_INPUT)])
def test_submit_exits_by_the_status_of_the_answer(status: int, code: Exit) -> None:
    handler = type("Handler", (_OneStatus,), {"status": status})
    with running(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as url:
        result = dealer("submit", str(HANDS), "--url", url)
    assert result.exit_code == code, result.stderr
    assert f"POST /api/jobs: {status} a stand-in's answer" in result.stderr


class _RefusingEarly(_OneStatus):
    """Reads a MiB of the body, answers 400 and closes the connection with the rest unread (the kernel then
    resets it), as a service that refuses an upload as it arrives does."""

    def _answer(self) -> None:
        self.rfile.read(1 << 20)
        body = json.dumps({"error": "line 1: the line is longer than the limit of 1 MiB"}).encode()
        self.send_response(400)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    do_POST = _answer


def test_submit_of_a_file_refused_as_it_arrives_exits_2_with_the_answer(tmp_path: Path) -> None:
    big = tmp_path / "big.in"
    with big.open("wb") as out:
        for _ in range(32):
            out.write(b"7 " * (1 << 19))
    with running(ThreadingHTTPServer(("127.0.0.1", 0), _RefusingEarly)) as url:
        result = dealer("submit", str(big), "--url", url)
    assert result.exit_code == Exit.BAD_INPUT, result.stderr
    assert result.stderr == "dealer: error: POST /api/jobs: 400 line 1: the line is longer than the limit of 1 MiB\n"


def test_submit_to_no_http_url_exits_2() -> None:
    result = dealer("submit", str(HANDS), "--url", "ftp://example.org")
    assert result.exit_code == Exit.BAD_INPUT and "not an http(s) URL" in result.stderr


# --- dealer solve and dealer check -----------------------------------------------------------------


def test_solve_exits_0_when_done_and_2_on_bad_input_or_usage(tmp_path: Path) -> None:
    assert dealer("solve", "mahjong", str(HANDS)).exit_code == Exit.DONE
    bad = tmp_path / "bad.in"
    bad.write_bytes(b"\x1f\x8b\x08\x00")
    assert dealer("solve", "mahjong", str(bad)).exit_code == Exit.BAD_INPUT
    assert dealer("solve", "chess", str(HANDS)).exit_code == Exit.BAD_INPUT


def test_check_exits_0_1_and_2(tmp_path: Path) -> None:
    right = HANDS.with_suffix(".out")
    assert dealer("check", "mahjong", str(HANDS), str(right)).exit_code == Exit.DONE
    wrong = tmp_path / "wrong.out"
    wrong.write_bytes(right.read_bytes().replace(b"Case 2", b"Case 3"))
    assert dealer("check", "mahjong", str(HANDS), str(wrong)).exit_code == Exit.NOT_ACCEPTED
    empty = tmp_path / "empty.in"
    empty.write_bytes(b"  \n")
    result = dealer("check", "mahjong", str(empty), str(right))
    assert result.exit_code == Exit.BAD_INPUT
    assert result.stderr == f"dealer: error: {empty}: the file is empty: it holds only whitespace (1 line)\n"
