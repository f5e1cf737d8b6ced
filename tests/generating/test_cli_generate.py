"""``dealer generate`` as a user runs it: the file on standard output, the seed and the report
on standard error, and a one-line error with exit status 2 for what cannot be made."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from worker.cli import main
from worker.generating import generate, plan
from worker.generating.cover import cover_text

DEALER = [sys.executable, "-m", "worker.cli"]


def invoke(*arguments: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(main, ["generate", *arguments])
    return result.exit_code, result.stdout_bytes, result.stderr


def test_the_file_is_the_plans_and_nothing_else_is_said() -> None:
    status, out, err = invoke("10-20-30", "--cases", "40", "--seed", "3", "--mix", "win=1,draw=1",
                              "--layout", "per-line=13")
    made = io.BytesIO()
    generate(plan("10-20-30", 40, 3, "win=1,draw=1", "per-line=13"), made)
    assert (status, out, err) == (0, made.getvalue(), "")


def test_a_seed_left_out_is_chosen_and_said_so_the_file_can_be_made_again() -> None:
    status, out, err = invoke("accordion", "--cases", "5")
    seed = re.fullmatch(r"dealer: seed (\d+) \(--seed \1 makes this file again\)\n", err)
    assert status == 0 and seed is not None
    assert invoke("accordion", "--cases", "5", "--seed", seed.group(1))[1] == out


def test_the_report_says_what_the_file_holds(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    status, _, _ = invoke("mahjong", "--cases", "8", "--seed", "1", "--mix", "ready=3,not-ready=1", "--no-honours",
                          "--report", str(report))
    assert status == 0
    assert report.read_text() == ("mahjong: 8 hands, seed 1, mix ready=3,not-ready=1, no honours\n"
                                  "  ready: 6\n  not-ready: 2\n")


@pytest.mark.parametrize(("arguments", "message"), [
    (["10-20-30", "--cases", "0"], "--cases: a file holds 1 to 100,000,000 cases, not 0"),
    (["10-20-30", "--cases", "100000001"], "--cases: a file holds 1 to 100,000,000 cases, not 100,000,001"),
    (["10-20-30"], "--cases: say how many cases the file holds (or ask for --cover)"),
    (["10-20-30", "-n", "5", "--mix", "tie=1"], '--mix: 10-20-30 has no outcome "tie" (expected win, loss, draw)'),
    (["accordion", "-n", "5", "--mix", "53=1"], "--mix: no deck leaves 53 piles: a deck leaves 1 to 52 piles"),
    (["mahjong", "-n", "5", "--mix", "ready=0"], "--mix: the weight of ready is 0: leave ready out to have none"),
    (["accordion", "-n", "5", "--layout", "per-line=60"],
     '--layout: per-line takes a number of cards from 1 to 52, not "60"'),
    (["accordion", "-n", "5", "--no-honours"],
     "--no-honours: only mahjong hands have honours to leave out, not accordion's"),
    (["accordion", "-n", "5", "--seed", "-4"], "--seed: a seed is a number from 0 to 2**64 - 1, not -4"),
    (["accordion", "--cover", "--mix", "win=1"], "--cover makes one fixed file: leave out --mix"),
])
def test_what_cannot_be_made_is_one_line_and_status_2(arguments: list[str], message: str) -> None:
    status, out, err = invoke(*arguments)
    assert (status, out, err) == (2, b"", f"dealer: error: {message}\n")


def test_cover_writes_the_file_and_its_report(tmp_path: Path) -> None:
    status, out, err = invoke("accordion", "--cover")
    assert status == 0 and out == cover_text("accordion")
    assert err.startswith("accordion cover file: 9 decks") and "What it covers:" in err
    assert invoke("accordion", "--cover", "--report", str(tmp_path / "r.txt"))[2] == ""
    assert (tmp_path / "r.txt").read_text() == err
    assert invoke("accordion", "--cover", "--report", str(tmp_path / "no" / "r.txt"))[0] == 2


def test_a_reader_that_stops_early_is_no_error() -> None:
    command = " ".join([*DEALER, "generate", "10-20-30", "--cases", "300000", "--seed", "1"])
    done = subprocess.run(["bash", "-c", f"set -o pipefail; {command} | head -c 100 > /dev/null"],
                          capture_output=True)
    assert done.returncode == 0 and done.stderr == b""


def test_a_generated_file_solves(tmp_path: Path) -> None:
    path = tmp_path / "decks.in"
    path.write_bytes(invoke("10-20-30", "-n", "30", "--seed", "2", "--mix", "draw=1", "--layout", "ragged,crlf")[1])
    done = subprocess.run([*DEALER, "solve", "10-20-30", str(path)], capture_output=True, check=True)
    assert done.stdout.decode().count("Draw: ") == 30 and done.stderr == b""
