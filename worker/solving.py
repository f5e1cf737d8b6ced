"""Solving a judge file on this machine, without the service: what ``dealer solve`` runs.

The file is parsed as a stream in this process; cases are solved here (one process)
or in batches on a pool of processes whose answers are put back in file order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import IO, Any

import orjson

from worker import engines
from worker.engines.base import Case, Diagnostic, Engine

#: Cases handed to a pool process at a time: large enough that pickling and
#: scheduling cost little next to solving, small enough to keep every process busy.
BATCH = 500


def trace_record(engine: Engine, case: Case, outcome: str, number: int, detail: list[Any],
                 trace: dict[str, Any] | None) -> bytes:
    """One line of a ``--traces`` file: the case, its result and its trace as JSON."""
    return orjson.dumps(
        {"game": engine.slug, "index": case.index, "input": case.text, "outcome": outcome,
         "number": number, "detail": detail, "trace": trace},
    )


def _solve_batch(slug: str, batch: list[Case], traces: bool) -> tuple[list[str], list[bytes]]:
    engine = engines.get(slug)
    solve = engine.solve
    lines: list[str] = []
    records: list[bytes] = []
    for case in batch:
        result = solve(case, traces)
        lines.append(result.line)
        if traces:
            records.append(trace_record(engine, case, result.outcome, result.number, result.detail, result.trace))
    return lines, records


def _solve_batch_star(args: tuple[str, list[Case], bool]) -> tuple[list[str], list[bytes]]:
    return _solve_batch(*args)


def _batches(cases: Iterable[Case]) -> Iterator[list[Case]]:
    iterator = iter(cases)
    while batch := list(islice(iterator, BATCH)):
        yield batch


def solve_file(
    engine: Engine,
    stream: IO[bytes],
    out: IO[str],
    *,
    jobs: int = 1,
    traces: IO[bytes] | None = None,
    warnings: list[Diagnostic] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Write the judge output for ``stream`` to ``out``; return how many cases were solved.

    Raises :class:`~worker.engines.InputError` on bad input (what was solved before
    the bad spot has been written). ``on_batch`` is told how many cases each batch held.
    """
    batches = _batches(engine.parse(stream, warnings))
    want = traces is not None
    if jobs <= 1:
        answers: Iterable[tuple[list[str], list[bytes]]] = (_solve_batch(engine.slug, b, want) for b in batches)
        return _write(answers, out, traces, on_batch)
    import multiprocessing  # only --jobs needs it; importing it costs start-up time

    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        work = ((engine.slug, batch, want) for batch in batches)
        return _write(pool.imap(_solve_batch_star, work), out, traces, on_batch)


def _write(answers: Iterable[tuple[list[str], list[bytes]]], out: IO[str], traces: IO[bytes] | None,
           on_batch: Callable[[int], None] | None) -> int:
    count = 0
    for lines, records in answers:
        out.write("\n".join(lines) + "\n")
        if traces is not None:
            traces.write(b"\n".join(records) + b"\n")
        count += len(lines)
        if on_batch is not None:
            on_batch(len(lines))
    return count
