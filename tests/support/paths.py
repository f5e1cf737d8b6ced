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
