"""One intake: ``dealer solve``, ``dealer check`` and the service read a file through the same screen, with
the same limits and the same messages, so that the same bytes get the same verdict wherever they are sent.
One table of bad files, each run down both paths: the service (a ``400`` at upload, or a job that fails,
with its message) and the command line (exit status 2, the same message on stderr)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support.http import finished
from tests.support.http import post_file as post
from tests.support.jobs import stored_uploads
from tests.support.paths import JUDGE_DATA, judge
from worker.cli import main
from worker.exits import Exit
from worker.store.database import Database

CORPUS = Path(__file__).parent / "corpus"
DECKS = b" ".join(judge("10-20-30", "sample").read_bytes().split()[:52])
HANDS = judge("mahjong", "sample").read_bytes().splitlines(keepends=True)[0]


def _files() -> dict[str, tuple[str, bytes, str]]:
    """name -> (its game, its bytes, the start of its message, wherever it is read)."""
    many_hands = HANDS * (20_000 // len(HANDS))
    late = many_hands.count(b"\n") + 1
    return {
        "gzip": ("10-20-30", (CORPUS / "any" / "sample.in.gz").read_bytes(),
                 "this looks like a gzip file; upload the judge file itself, not a compressed copy"),
        "random bytes": ("accordion", (CORPUS / "any" / "garbage.bin").read_bytes(),
                         "this looks like a binary file (byte 0x00 at line 1, column 167), not a judge file"),
        "a NUL past the start": ("mahjong", (CORPUS / "mahjong" / "late-nul.in").read_bytes(),
                                 "this looks like a binary file (byte 0x00 at line "),
        "whitespace only": ("mahjong", (CORPUS / "any" / "whitespace.in").read_bytes(),
                            "the file is empty: it holds only whitespace"),
        # Past the first MiB, which the head's judge takes as the start of a longer file.
        "whitespace past the first MiB": ("mahjong", b"\n" * 2_000_000,
                                          "the file is empty: it holds only whitespace (2,000,000 lines)"),
        "empty": ("accordion", b"", "the file is empty"),
        # 20,000 good decks on one line of 2.4 MB: over DEALER_MAX_LINE_BYTES (1 MiB) in both.
        "a long line": ("10-20-30", b" ".join([DECKS] * 20_000) + b"\n0\n",
                        "line 1: the line is longer than the limit of 1 MiB"),
        "a long token": ("10-20-30", (CORPUS / "10-20-30" / "long-token.in").read_bytes(),
                         "line 1, column 7: a token longer than 64 characters"),
        "a byte of no text": ("accordion", (CORPUS / "accordion" / "invalid-utf8.in").read_bytes(),
                              "line 2, column 11: byte 0xe9 is not text"),
        "a bad card": ("10-20-30", (CORPUS / "10-20-30" / "bad-token.in").read_bytes(),
                       'line 2, column 17: "J" is not a card value (1-10)'),
        "a bad tile past the start": ("mahjong", many_hands + HANDS.replace(b"FA", b"FX", 1) + b"0\n",
                                      f'line {late}, column '),
        "another game's file": ("10-20-30", (JUDGE_DATA / "mahjong" / "sample.in").read_bytes(),
                                "line 1, column 1: "),
    }


FILES = _files()


def by_the_service(client: Any, game: str, data: bytes) -> str:
    """What the service says of the file: the error of its refusal, or the first fault its job lists (the
    job fails; its error says that and what was kept)."""
    response = post(client, data, game)
    if response.status_code == 400:
        return str(response.get_json()["error"])
    job = finished(client, response)
    assert job["status"] == "failed", job
    return str(job["faults"][0]["message"] if job["faults"] else job["error"])


def by_the_command_line(command: str, game: str, path: Path) -> str:
    """What ``dealer solve`` (or ``dealer check``) says of the file: it exits 2 naming it."""
    arguments = ["solve", game, str(path)] if command == "solve" else ["check", game, str(path), str(path)]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == Exit.BAD_INPUT, (result.exit_code, result.stderr)
    prefix = f"dealer: error: {path}: "
    errors = [line[len(prefix):] for line in result.stderr.splitlines() if line.startswith(prefix)]
    assert errors, result.stderr
    return errors[0]


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_service_and_the_command_line_give_one_verdict_and_one_message(
        client: Any, tmp_path: Path, name: str) -> None:
    game, data, start = FILES[name]
    path = tmp_path / "judge.in"
    path.write_bytes(data)
    said = by_the_service(client, game, data)
    assert said.startswith(start), said
    assert by_the_command_line("solve", game, path) == said
    assert by_the_command_line("check", game, path) == said


@pytest.mark.parametrize("game", [None, "mahjong"])
@pytest.mark.parametrize("data, lines", [(b"\n" * 2_000_000, "2,000,000 lines"),
                                         (b" \t \r\n" * 600_000 + b"  ", "600,001 lines")])
def test_a_file_of_whitespace_is_refused_as_it_arrives(client: Any, db: Database, settings: Any, game: str | None, data: bytes,
                                                       lines: str) -> None:
    response = post(client, data, game)
    assert response.status_code == 400
    assert response.get_json() == {"error": f"the file is empty: it holds only whitespace ({lines})"}
    assert client.get("/api/jobs").get_json()["items"] == []
    assert stored_uploads(db) == []


def test_standard_input_is_screened_as_a_file_is() -> None:
    game, data, start = FILES["a long line"]
    done = subprocess.run([sys.executable, "-m", "worker.cli", "solve", game, "-"], input=data, capture_output=True)
    assert done.returncode == Exit.BAD_INPUT
    assert done.stderr.decode() == f"dealer: error: <stdin>: {start}\n"
    assert done.stdout == b""
