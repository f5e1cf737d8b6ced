"""Judge files of random cases, for the tests and the benchmarks."""

from __future__ import annotations

from pathlib import Path

from worker.generating import generate, plan


def random_judge_file(path: Path, game: str, count: int, seed: int) -> Path:
    """Write ``count`` random cases of ``game`` (from ``seed``) as a judge file at ``path``, terminated:
    what ``dealer generate GAME --cases COUNT --seed SEED`` writes, by its compiled core where built
    (a hundred times the speed of drawing them in Python; tests make files of 100,000 decks)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    with open(partial, "wb") as out:
        generate(plan(game, count, seed), out)
    partial.rename(path)
    return path
