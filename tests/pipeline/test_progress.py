"""What a solved chunk adds to its job's figures (``worker.jobs.solve.progress_of``)."""

from __future__ import annotations

import io
from array import array

from tests.support.paths import JUDGE_DATA
from worker import engines
from worker.jobs.solve import progress_of
from worker.store.chunks import Span, Tally


def test_cases_of_different_outcomes_solved_in_the_same_microsecond_all_count_in_the_histogram() -> None:
    engine = engines.get("10-20-30")
    blocks = engine.read_inputs(io.BytesIO((JUDGE_DATA / "10-20-30" / "sample.in").read_bytes()))
    texts, count = next(iter(blocks))
    solution = engine.solve_chunk(texts[:-1], 1, False)
    assert len(set(solution.outcomes)) == count == 3  # a win, a loss and a draw
    solution.solve_us[:] = array("I", [5] * count)  # as a quick machine may time all three
    progress = progress_of(engine, solution, Tally.of(solution.outcomes, solution.numbers, solution.solve_us),
                           Span(1, count))
    assert sum(progress.histogram) == progress.solved == 3
    assert progress.solve_us == 15 and progress.slowest == (5, 1)
