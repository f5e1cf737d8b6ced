"""Where the tests find the project and its judge data (``tests/data/judge``, kept in the repository)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JUDGE_DATA = ROOT / "tests" / "data" / "judge"
#: Cases enough for a failed job of several chunks (of the tests' seven cases) before its fault.
FEW_CASES = 50


def judge_files(game: str) -> list[Path]:
    """The ``.in`` files of one game's judge data (each has a matching ``.out``)."""
    return sorted((JUDGE_DATA / game).glob("*.in"))


def judge(game: str, name: str) -> Path:
    """One judge file, e.g. ``judge("accordion", "sample")``."""
    return JUDGE_DATA / game / f"{name}.in"


def _random_2000(game: str, cases: int) -> tuple[list[bytes], bytes]:
    """The lines of the first ``cases`` cases of ``game``'s random-2000 file, and its terminator's line."""
    lines = judge(game, "random-2000").read_bytes().splitlines(keepends=True)
    return lines[:(len(lines) - 1) // 2000 * cases], lines[-1]  # the file's cases are each on as many lines


def first_cases(game: str, cases: int) -> bytes:
    """A judge file of the first ``cases`` cases of ``game``'s random-2000 file: for a test that needs a job
    of many chunks, not the whole file's 286 (of the tests' seven cases), each of which costs it a solve."""
    head, terminator = _random_2000(game, cases)
    return b"".join(head) + terminator


def failing(game: str, cases: int = 2000) -> tuple[bytes, int]:
    """A judge file of ``game``: the first ``cases`` cases of its random-2000 file, then a line ``N``
    (returned) of the bad token ``X``: a job of it fails there (a file whose start does not read as its
    game is refused at upload instead). Where a test needs only a failed job, a few chunks of cases make
    one (:data:`FEW_CASES`): the whole file is 286 chunks of the tests' seven cases, each solved."""
    head, terminator = _random_2000(game, cases)
    return b"".join(head) + b"X\n" + terminator, len(head) + 1


def failing_midway(game: str, cases: int) -> tuple[bytes, list[str]]:
    """A judge file of the first ``cases`` cases of ``game``'s random-2000 file, a case a line (one layout all
    through), whose middle case has its first token made ``X``: a job of it fails on that case alone and
    keeps the others. Returns its bytes and the judge lines of its cases (the bad one's too: the line it
    would have)."""
    from worker import engines

    engine = engines.get(game)
    with judge(game, "random-2000").open("rb") as stream:
        texts = [case.text for case, _ in zip(engine.parse(stream, []), range(cases), strict=False)]
    bad = cases // 2
    texts[bad] = " ".join(["X", *texts[bad].split()[1:]])
    lines = JUDGE_DATA.joinpath(game, "random-2000.out").read_text().splitlines()[:cases]
    return ("\n".join(texts) + f"\n{engine.terminator}\n").encode(), lines
