"""Where the tests find the project and its judge data (``tests/data/judge``, kept in the repository)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JUDGE_DATA = ROOT / "tests" / "data" / "judge"


def judge_files(game: str) -> list[Path]:
    """The ``.in`` files of one game's judge data (each has a matching ``.out``)."""
    return sorted((JUDGE_DATA / game).glob("*.in"))


def judge(game: str, name: str) -> Path:
    """One judge file, e.g. ``judge("accordion", "sample")``."""
    return JUDGE_DATA / game / f"{name}.in"


def failing(game: str) -> tuple[bytes, int]:
    """A judge file of ``game`` whose start reads well and whose line ``N`` (returned) is the bad token ``X``:
    a job of it fails there (a file whose start does not read as its game is refused at upload instead)."""
    lines = judge(game, "random-2000").read_bytes().splitlines(keepends=True)
    return b"".join(lines[:-1]) + b"X\n" + lines[-1], len(lines)


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
