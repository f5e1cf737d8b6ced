"""`dealer check`, run as a user runs it: the verdict, the counts, the differences and the exit status."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.paths import JUDGE_DATA
from tests.test_cli import DEALER

INPUT = JUDGE_DATA / "mahjong" / "random-2000.in"
OUTPUT = INPUT.with_suffix(".out").read_bytes()


def check(tmp_path: Path, output: bytes, *extra: str, game: str = "mahjong",
          source: Path = INPUT) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "mine.out"
    path.write_bytes(output)
    return subprocess.run([*DEALER, "check", game, str(source), str(path), *extra], capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize("output", [OUTPUT, OUTPUT.replace(b"\n", b"\r\n"), OUTPUT[:-1]])
def test_a_right_output_exits_0(tmp_path: Path, output: bytes) -> None:
    done = check(tmp_path, output)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "accepted: 2,000 of 2,000 cases accepted"


def test_a_wrong_output_exits_1_and_shows_the_first_differences(tmp_path: Path) -> None:
    lines = OUTPUT.split(b"\n")
    lines[9] = lines[9].replace(b": ", b":  ")
    lines[41] = b"Case 42: 1S"
    done = check(tmp_path, b"\n".join(lines[:1998]), "--show", "2")
    assert done.returncode == 1
    out = done.stdout.splitlines()
    assert out[0] == "wrong_answer: 1,996 of 2,000 cases accepted"
    assert out[1] == "  accepted 1,996 · presentation_error 1 · wrong_answer 1 · missing 2 · extra 0"
    assert out[2] == "case 10 (line 10): presentation_error, from column 10"
    assert out[3] == f"  expected: {lines[9].decode().replace(':  ', ': ')}"
    assert out[5].startswith("case 42 (line 42): wrong_answer, from column ")
    assert out[7] == "  got:      Case 42: 1S" and len(out) == 8


def test_an_empty_output_has_every_case_missing(tmp_path: Path) -> None:
    done = check(tmp_path, b"", "--show", "1")
    assert done.returncode == 1
    assert done.stdout.splitlines()[:3] == ["wrong_answer: 0 of 2,000 cases accepted",
                                            ("  accepted 0 · presentation_error 0 · wrong_answer 0 · missing 2,000 · "
                                             "extra 0"),
                                            "case 1 (line 1): missing"]
    assert done.stdout.splitlines()[4] == "  got:      (the output ended)"


def test_bad_input_exits_2(tmp_path: Path) -> None:
    head = OUTPUT[:100]
    line, column = head.count(b"\n") + 1, len(head) - head.rfind(b"\n")
    done = check(tmp_path, head + b"\xff\n")
    assert done.returncode == 2
    assert done.stderr == (f"dealer: error: {tmp_path / 'mine.out'}: line {line}, column {column}: "
                           "not UTF-8 text (byte 0xff)\n")
    bad = tmp_path / "bad.in"
    bad.write_bytes(b"QD AD 8H\n5S XX\n#\n")
    done = check(tmp_path, b"", game="accordion", source=bad)
    assert done.returncode == 2
    assert done.stderr == (f"dealer: error: {bad}: line 2, column 4: "
                           '"XX" is not a card (rank A23456789TJQK, suit CDHS)\n')
