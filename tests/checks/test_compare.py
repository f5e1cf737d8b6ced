"""The judge itself (``worker.checks.compare``) and the text check (``worker.checks.text``): every verdict,
line endings, the fast path against the line-by-line one, where a bad output is bad."""

from __future__ import annotations

import io
import random

import pytest

from worker.checks.compare import (
    EXTRA,
    MISSING,
    VERDICTS,
    Judge,
    LineTooLong,
    OutputError,
    OutputLines,
    Part,
    blocks,
    judge_text,
    line_verdict,
    marks,
)
from worker.checks.text import check_text

EXPECTED = ["Win : 66", "Loss: 82", "Draw: 73"]
RIGHT = b"Win : 66\nLoss: 82\nDraw: 73\n"


def counts(**given: int) -> dict[str, int]:
    return {name: given.get(name, 0) for name in VERDICTS}


def test_identical_output_is_accepted() -> None:
    report = judge_text(EXPECTED, RIGHT)
    assert report.verdict == "accepted" and report.counts == counts(accepted=3)
    assert report.differences == [] and report.cases == 3 and report.lines == 3


@pytest.mark.parametrize("output", [RIGHT.replace(b"\n", b"\r\n"), RIGHT[:-1], RIGHT.replace(b"\n", b"\r\n")[:-2],
                                    b"Win : 66\r\nLoss: 82\nDraw: 73"])
def test_line_endings_and_a_missing_final_newline_do_not_matter(output: bytes) -> None:
    report = judge_text(EXPECTED, output)
    assert report.verdict == "accepted", report.differences
    assert report.counts == counts(accepted=3)


def test_whitespace_inside_a_line_is_a_presentation_error() -> None:
    report = judge_text(EXPECTED, b"Win :  66\nLoss:82\n Draw: 73\t\n")
    assert report.verdict == "presentation_error"
    assert report.counts == counts(presentation_error=3)
    first = report.differences[0]
    assert (first.index, first.line, first.verdict, first.column) == (1, 1, "presentation_error", 7)


@pytest.mark.parametrize("line", ["Win :\u00a066", "Win :\u300066", "Win :\x1c66", "Win\t:\x0b66"])
def test_any_whitespace_counts_as_whitespace(line: str) -> None:
    assert judge_text(["Win : 66"], (line + "\n").encode()).verdict == "presentation_error"


def test_an_output_that_is_not_ascii_is_judged_as_text() -> None:
    report = judge_text(["Win : 66", "Loss: 82"], "Wín : 66\nLoss: 82\n".encode())
    assert report.counts == counts(accepted=1, wrong_answer=1) and report.differences[0].got == "Wín : 66"


def test_another_answer_is_wrong_even_when_only_spacing_differs_elsewhere() -> None:
    # Removing whitespace must make the lines equal for a PE: splitting a number is not spacing.
    report = judge_text(EXPECTED, b"Win : 6 6\nLoss: 83\nDraw: 73\n", keep=5)
    assert [d.verdict for d in report.differences] == ["presentation_error", "wrong_answer"]
    assert report.verdict == "wrong_answer" and report.counts == counts(accepted=1, presentation_error=1,
                                                                         wrong_answer=1)
    assert report.differences[1].column == 8 and report.differences[1].got == "Loss: 83"


def test_a_short_output_has_missing_cases() -> None:
    report = judge_text(EXPECTED, b"Win : 66\n", keep=5)
    assert report.verdict == "wrong_answer" and report.counts == counts(accepted=1, missing=2)
    assert [(d.index, d.line, d.expected, d.got, d.column) for d in report.differences] == [
        (2, 2, "Loss: 82", None, None), (3, 3, "Draw: 73", None, None)]


def test_lines_after_the_last_case_are_extra() -> None:
    report = judge_text(EXPECTED, RIGHT + b"Win : 1\n\n", keep=5)
    assert report.verdict == "wrong_answer" and report.counts == counts(accepted=3, extra=2)
    assert [(d.index, d.line, d.got) for d in report.differences] == [(None, 4, "Win : 1"), (None, 5, "")]


def test_an_empty_output_has_every_case_missing() -> None:
    report = judge_text(EXPECTED, b"")
    assert report.verdict == "wrong_answer" and report.counts == counts(missing=3) and report.lines == 0
    assert report.differences[0].index == 1


def test_an_empty_line_is_an_answer_not_a_missing_case() -> None:
    report = judge_text(EXPECTED, b"\n")
    assert report.counts == counts(wrong_answer=1, missing=2)


def test_a_job_without_cases_accepts_only_an_empty_output() -> None:
    assert judge_text([], b"").verdict == "accepted"
    assert judge_text([], b"\n").counts == counts(extra=1)


def test_blocks_taken_whole_come_to_what_each_line_alone_does() -> None:
    rng = random.Random(12)
    expected = [f"Case {k}: {rng.choice(['1S 2S', 'Not ready', '3T'])}" for k in range(1, 400)]
    for trial in range(40):
        lines = list(expected)
        for _ in range(rng.randrange(4)):
            at = rng.randrange(len(lines))
            lines[at] = rng.choice([lines[at] + " ", lines[at].replace(" ", "  ", 1), "Case 0: 9Z"])
        cut = rng.choice([len(lines), len(lines) - rng.randrange(30), len(lines) + 3])
        lines = (lines + ["extra"] * 5)[:cut]
        output = "\n".join(lines).encode() + rng.choice([b"", b"\n"])
        if trial % 2:
            output = output.replace(b"\n", b"\r\n")
        parts: list[Part] = []
        judge = Judge(OutputLines(io.BytesIO(output), piece=rng.choice([5, 64, 1 << 20])), parts.append,
                      part_lines=rng.choice([16, 100, 1000]))
        for block, count in blocks(expected, rng.choice([1, 7, 50])):
            judge.expect(block, count)
        report = judge.finish()
        verdicts = b"".join(part.verdicts for part in parts)
        assert len(verdicts) == sum(report.tally)
        assert [part.first for part in parts] == [1 + sum(len(p.verdicts) for p in parts[:k]) for k in range(len(parts))]
        reference_verdicts = [MISSING if k >= len(lines) else line_verdict(expected[k], lines[k])
                              for k in range(len(expected))] + [EXTRA] * max(0, len(lines) - len(expected))
        assert list(verdicts) == reference_verdicts, trial
        kept = [got for part in parts for got in part.got]
        assert len(kept) == report.counts["presentation_error"] + report.counts["wrong_answer"] + report.counts["extra"]


def test_marks_show_the_characters_that_differ() -> None:
    assert marks("Loss: 82", "Loss: 83") == ([("Loss: 8", False), ("2", True)], [("Loss: 8", False), ("3", True)])
    assert marks("Case 3: 1S 2S", "Case 3: 1S") == ([("Case 3: 1S", False), (" 2S", True)], [("Case 3: 1S", False)])
    left, right = marks("a" * 3000, "a" * 2000 + "b" * 1000)
    assert right == [("a" * 2000, False), ("b" * 1000, True)] and left[-1] == ("a" * 1000, True)


@pytest.mark.parametrize(("data", "message"), [
    (b"Win : 66\nLoss: 8\x002\n", "line 2, column 8: a NUL byte"),
    (b"Win : 66\nLoss: \xff\n", "line 2, column 7: not UTF-8 text (byte 0xff)"),
    (b"PK\x03\x04rest", "line 1, column 1: this looks like a zip file"),
    (b"\xff\xfeW\x00", "line 1, column 1: this looks like UTF-16 text"),
])
def test_an_output_that_is_no_text_is_refused_saying_where(data: bytes, message: str) -> None:
    with pytest.raises(OutputError) as refused:
        check_text(io.BytesIO(data), 1000)
    assert str(refused.value).startswith(message)


def test_a_bad_byte_far_into_the_output_is_placed_exactly() -> None:
    good = b"Win : 66\r\n" * 300_000  # several pieces
    with pytest.raises(OutputError) as refused:
        check_text(io.BytesIO(good + b"Loss: \xc3(\n"), 1000)
    assert str(refused.value).startswith("line 300001, column 7: not UTF-8 text (byte 0xc3)")


def test_a_line_over_the_limit_is_refused_naming_it() -> None:
    with pytest.raises(LineTooLong) as refused:
        check_text(io.BytesIO(b"ok\n" + b"x" * 101 + b"\n"), 100)
    assert str(refused.value) == "line 2: the line is longer than the limit of 100 bytes"
    with pytest.raises(LineTooLong):
        OutputLines(io.BytesIO(b"ok\n" + b"x" * 101), max_line=100, piece=16).take_lines(2, 10)


def test_text_is_accepted_as_it_is() -> None:
    check_text(io.BytesIO("Case 1: 1S 2S\r\nDraw: 73 — ok\n".encode()), 100)
    check_text(io.BytesIO(b""), 100)
