"""Where the tests find the project and the judge data the project's owner keeps beside it."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("DEALER_SHARED", ROOT.parent / "shared"))
JUDGE_DATA = SHARED / "judge-data"


def judge_files(game: str) -> list[Path]:
    """The ``.in`` files of one game's judge data (each has a matching ``.out``)."""
    return sorted((JUDGE_DATA / game).glob("*.in"))


def judge(game: str, name: str) -> Path:
    """One judge file, e.g. ``judge("accordion", "sample")``."""
    return JUDGE_DATA / game / f"{name}.in"
