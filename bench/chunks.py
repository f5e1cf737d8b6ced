"""A stored chunk solved in one call, beside the other ways of solving (``python -m bench.chunks``).

For each game, the 100,000 random cases of ``make bench`` (``--cases``, ``--seed``: the same
file, from ``bench.engines.judge_file``), cut into chunks of ``--chunk`` cases, are solved in
this process by:

- ``chunk``: ``engine.solve_chunk`` with traces (judge lines, packed traces, outcomes, numbers,
  solve times and input hashes: what a worker stores), and ``chunk plain`` without;
- ``batch``: ``engine.solve_batch`` with traces (``dealer solve --traces``'s records), and
  ``batch plain`` without (``dealer solve``);
- ``per case``: ``Engine.solve_packed`` of a ``Case`` a case (the service's path before
  ``solve_chunk``: what it solves with, without its storing);
- ``floor``: ``solve_chunk`` past its deadline (no case started: the texts split and hashed,
  the arrays made).

It also says which case ``solve_chunk`` took longest over (its own ``solve_us``, wall time: on a
busy machine, a case the process was preempted in).

Each figure is CPU seconds (``time.process_time``) for all the cases, the best and the median
of ``--rounds`` rounds, the ways taken in a different order each round so that a busy moment
of a shared machine weighs on all alike. Before timing, the chunk's lines are checked against
the batch's and its traces against ``solve_packed``'s, byte for byte.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

from bench import figures
from bench.engines import judge_file
from worker import engines
from worker.engines import native
from worker.engines.engine import Engine
from worker.engines.reading import Case


def ways(engine: Engine, texts: list[str], size: int) -> dict[str, Callable[[], object]]:
    """What is timed: each way of solving every case of ``texts``, ``size`` cases a call."""
    starts = range(0, len(texts), size)
    batches = [(start + 1, texts[start : start + size]) for start in starts]
    chunks = [(first, "\n".join(batch).encode()) for first, batch in batches]
    cases = [Case(index, text) for index, text in enumerate(texts, 1)]
    solve_packed = engine.solve_packed
    return {
        "chunk": lambda: [engine.solve_chunk(data, first, True) for first, data in chunks],
        "chunk plain": lambda: [engine.solve_chunk(data, first, False) for first, data in chunks],
        "batch": lambda: [engine.solve_batch(batch, first, True) for first, batch in batches],
        "batch plain": lambda: [engine.solve_batch(batch, first, False) for first, batch in batches],
        "per case": lambda: [solve_packed(case) for case in cases],
        "floor": lambda: [engine.solve_chunk(data, first, True, deadline=0.0) for first, data in chunks],
    }


def check(engine: Engine, texts: list[str], size: int) -> tuple[int, int]:
    """The chunk's lines are the batch's, its traces ``solve_packed``'s (raises AssertionError);
    the longest solve time of a case it measured (µs), and that case's number."""
    slowest = (0, 0)
    for start in range(0, len(texts), size):
        batch = texts[start : start + size]
        solution = engine.solve_chunk("\n".join(batch).encode(), start + 1, True)
        assert solution.lines == engine.solve_batch(batch, start + 1, False)[0].encode(), "lines differ"
        for k, text in enumerate(batch):
            assert solution.trace(k) == engine.solve_packed(Case(start + 1 + k, text))[1], "traces differ"
        slowest = max(slowest, max((us, start + 1 + k) for k, us in enumerate(solution.solve_us)))
    return slowest


def measure(run: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """CPU seconds of each way, ``rounds`` times, the order turned by one each round. A way that
    returns a ``float`` gives its own seconds (another process's, say)."""
    names = list(run)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(rounds):
        for name in names[round_ % len(names):] + names[: round_ % len(names)]:
            start = time.process_time()
            took = run[name]()
            times[name].append(took if isinstance(took, float) else time.process_time() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=246127)
    parser.add_argument("--chunk", type=int, default=2000, help="cases a call")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("games", nargs="*", default=engines.names())
    args = parser.parse_args()
    print(native.summary())
    print(f"\n{args.cases:,} cases a game, {args.chunk:,} a call, CPU seconds in this process, "
          f"best (median) of {args.rounds} rounds; ratios to the traced batch")
    for slug in args.games:
        engine = engines.get(slug)
        with open(judge_file(slug, args.cases, args.seed), "rb") as source:
            texts = [case.text for case in engine.parse(source, [])]
        slowest, index = check(engine, texts, args.chunk)
        times = measure(ways(engine, texts, args.chunk), args.rounds)
        base = min(times["batch"])
        print(f"\n{slug} ({engine.core_name} core; slowest in solve_chunk: case {index:,}, {slowest:,} µs)")
        for name, seconds in times.items():
            best = min(seconds)
            print(f"  {name:<12} {best:>8.3f} s ({statistics.median(seconds):.3f})  {best / base:>5.2f}x"
                  f"  {best / len(texts) * 1e6:>6.2f} µs a case")
    return 0


if __name__ == "__main__":
    sys.exit(figures.record("chunks", main))
