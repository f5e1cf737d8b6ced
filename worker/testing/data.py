"""Judge files of random cases, for the tests and the benchmarks."""

from __future__ import annotations

import random
from pathlib import Path

from worker import engines


def random_judge_file(path: Path, game: str, count: int, seed: int) -> Path:
    """Write ``count`` random cases of ``game`` (from ``seed``) as a judge file at ``path``, terminated."""
    engine = engines.get(game)
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    with open(partial, "w") as out:
        for _ in range(count):
            out.write(engine.generate(rng) + "\n")
        out.write(engine.terminator + "\n")
    partial.rename(path)
    return path
