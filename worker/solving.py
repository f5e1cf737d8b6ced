"""Solving a judge file on this machine, without the service: what ``dealer solve`` runs.

The file is parsed as a stream in this process; cases are solved here (one process)
or in batches on a pool of processes whose answers are put back in file order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import IO

import orjson

from worker import engines
from worker.engines.base import Case, Diagnostic, Engine, Result

#: Cases solved at a time: large enough that handing a batch to a pool process and back
#: costs little next to solving it, small enough to keep every process busy.
BATCH = 2000

#: What solving a batch gives: its judge lines and its trace records, each one line
#: ending in a newline, and how many cases it held.
Answer = tuple[str, bytes, int]


def trace_records(engine: Engine) -> Callable[[Case, Result, bytes], bytes]:
    """What makes the lines of a ``--traces`` file from a case, its result and its trace
    as JSON (:meth:`Engine.solve_json`): the bytes of ``orjson.dumps`` of the record's dict.

    A dict per case, and the trace's own, would cost more than the native core takes to
    solve: the record's fixed keys and the engine's words are laid out once, the trace
    comes as bytes, and only the input and the detail go through orjson.
    """
    dumps = orjson.dumps
    template = b'{"game":' + dumps(engine.slug) + b',"index":%d,"input":%s,"outcome":%s,"number":%d,"detail":%s,"trace":%s}'
    outcomes = {outcome: dumps(outcome) for outcome in engine.outcomes}

    def record(case: Case, result: Result, trace: bytes) -> bytes:
        return template % (case.index, dumps(case.text), outcomes[result.outcome], result.number,
                           dumps(result.detail), trace)

    return record


def _solve_batch(engine: Engine, batch: list[Case], traces: bool) -> Answer:
    lines: list[str] = []
    if not traces:
        solve = engine.solve
        for case in batch:
            lines.append(solve(case, False).line)
        return "\n".join(lines) + "\n", b"", len(batch)
    solve_json, record = engine.solve_json, trace_records(engine)
    records: list[bytes] = []
    for case in batch:
        result, trace = solve_json(case)
        lines.append(result.line)
        records.append(record(case, result, trace))
    return "\n".join(lines) + "\n", b"\n".join(records) + b"\n", len(batch)


def _solve_texts(work: tuple[str, int, str, bool]) -> Answer:
    """A pool process's batch: the cases' canonical texts, one a line, numbered from ``first``.

    The batch travels as one string, which pickles for next to nothing, where a list of
    :class:`Case` objects costs more to pickle and unpickle than the native core takes
    to solve them; the answer comes back as one string and one bytes for the same reason.
    """
    slug, first, texts, traces = work
    cases = [Case(index, text) for index, text in enumerate(texts.split("\n"), first)]
    return _solve_batch(engines.get(slug), cases, traces)


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
    # The file is read here, also with --jobs: errors and warnings then say what and where
    # exactly as in one process, and the native reader takes about a tenth of the solving.
    batches = _batches(engine.parse(stream, warnings))
    want = traces is not None
    if jobs <= 1:
        return _write((_solve_batch(engine, batch, want) for batch in batches), out, traces, on_batch)
    import multiprocessing  # only --jobs needs it; importing it costs start-up time

    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        # A canonical text is its tokens joined by single spaces: it holds no newline.
        work = ((engine.slug, batch[0].index, "\n".join([case.text for case in batch]), want) for batch in batches)
        return _write(pool.imap(_solve_texts, work), out, traces, on_batch)


def _write(answers: Iterable[Answer], out: IO[str], traces: IO[bytes] | None,
           on_batch: Callable[[int], None] | None) -> int:
    total = 0
    for lines, records, count in answers:
        out.write(lines)
        if traces is not None:
            traces.write(records)
        total += count
        if on_batch is not None:
            on_batch(count)
    return total
