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
    assert done.stdout.splitlines()[0] == "Accepted: 2,000 of 2,000 cases accepted"


def test_a_wrong_output_exits_1_and_shows_the_first_differences(tmp_path: Path) -> None:
    lines = OUTPUT.split(b"\n")
    lines[9] = lines[9].replace(b": ", b":  ")
    lines[41] = b"Case 42: 1S"
    done = check(tmp_path, b"\n".join(lines[:1998]), "--show", "2")
    assert done.returncode == 1
    out = done.stdout.splitlines()
    # The verdicts as the check page names them, a place as the readers' errors name one.
    assert out[0] == "Wrong answer: 1,996 of 2,000 cases accepted"
    assert out[1] == "  Accepted 1,996 · Presentation error 1 · Wrong answer 1 · Missing 2 · Extra 0"
    assert out[2] == "case 10, line 10, column 10: Presentation error"
    assert out[3] == f"  expected: {lines[9].decode().replace(':  ', ': ')}"
    column = next(i for i, (a, b) in enumerate(zip(lines[41], OUTPUT.split(b"\n")[41], strict=False)) if a != b) + 1
    assert out[5] == f"case 42, line 42, column {column}: Wrong answer"
    assert out[7] == "  got:      Case 42: 1S" and len(out) == 8


def test_an_empty_output_has_every_case_missing(tmp_path: Path) -> None:
    done = check(tmp_path, b"", "--show", "1")
    assert done.returncode == 1
    assert done.stdout.splitlines()[:3] == ["Wrong answer: 0 of 2,000 cases accepted",
                                            ("  Accepted 0 · Presentation error 0 · Wrong answer 0 · Missing 2,000 · "
                                             "Extra 0"),
                                            "case 1, line 1: Missing"]
    assert done.stdout.splitlines()[4] == "  got:      (the output ended)"


def test_a_line_past_the_last_case_is_named_by_its_place(tmp_path: Path) -> None:
    done = check(tmp_path, OUTPUT + b"one line too many\n", "--show", "1")
    assert done.returncode == 1
    assert done.stdout.splitlines()[2:4] == ["line 2,001, after the last case: Extra", "  got:      one line too many"]


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
