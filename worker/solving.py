"""Solving a judge file on this machine, without the service: what ``dealer solve`` runs.

The file is parsed as a stream in this process; cases are solved here (one process)
or in batches on a pool of processes whose answers are put back in file order. A file with
bad cases is answered up to its first, then read to its end for the others (:class:`Faults`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import IO

from worker import engines
from worker.engines.engine import Engine
from worker.engines.reading import Case, Diagnostic, Faults

#: Cases a pool process solves at a time: large enough that handing a batch to it and
#: back costs little next to solving it, small enough to keep every process busy.
BATCH = 2000
#: Cases solved at a time in this process: a batch's trace records (about 1 KiB a case)
#: then stay below the size from which every allocation is fresh memory, a page fault
#: every 4 KiB (glibc's mmap threshold, 128 KiB).
LOCAL_BATCH = 100
#: The buffer ``dealer solve`` writes its trace records through: a batch's records are about
#: 14 KiB, and the kernel takes a new file written a MiB at a time for a third of the CPU
#: (14 MB: 5 ms against 16 ms on ext4, which then keeps it in large folios, not page by page).
TRACE_BUFFER = 1 << 20

#: What solving a batch gives: its judge lines and its trace records, each one line
#: ending in a newline (:meth:`.engines.engine.Engine.solve_batch`), and how many cases it held.
Answer = tuple[str, bytes, int]


def _solve_batch(engine: Engine, batch: list[Case], traces: bool) -> Answer:
    # Cases are numbered from 1 in file order: a batch's indexes follow on from its first.
    lines, records = engine.solve_batch([case.text for case in batch], batch[0].index, traces)
    return lines, records, len(batch)


def _solve_texts(work: tuple[str, int, str, bool]) -> Answer:
    """A pool process's batch: the cases' canonical texts, one a line, numbered from ``first``.

    The batch travels as one string, which pickles for next to nothing, where a list of
    :class:`Case` objects costs more to pickle and unpickle than the native core takes
    to solve them; the answer comes back as one string and one bytes for the same reason.
    """
    slug, first, texts, traces = work
    split = texts.split("\n")
    lines, records = engines.get(slug).solve_batch(split, first, traces)
    return lines, records, len(split)


def _batches(cases: Iterable[Case], size: int) -> Iterator[list[Case]]:
    iterator = iter(cases)
    while batch := list(islice(iterator, size)):
        yield batch


def solve_file(
    engine: Engine,
    stream: IO[bytes],
    out: IO[str],
    *,
    jobs: int = 1,
    traces: IO[bytes] | None = None,
    warnings: list[Diagnostic] | None = None,
    faults: Faults | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Write the judge output for ``stream`` to ``out``; return how many cases were solved.

    Raises :class:`~worker.engines.InputError` on bad input (what was solved before
    the bad spot has been written). Given ``faults``, a bad case is noted there instead: the
    cases before the first are answered, and the file is read to its end for the others.
    What the reading cannot go on past (bytes that are not text) is still raised. ``on_batch``
    is told how many cases each batch held.
    """
    # The file is read here, also with --jobs: errors and warnings then say what and where
    # exactly as in one process, and the native reader takes about a tenth of the solving.
    cases = engine.parse(stream, warnings, faults)
    good = cases if faults is None else _before(cases, faults)
    want = traces is not None
    if jobs <= 1:
        solved = _write((_solve_batch(engine, batch, want) for batch in _batches(good, LOCAL_BATCH)), out, traces,
                        on_batch)
    else:
        import multiprocessing  # only --jobs needs it; importing it costs start-up time

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            # A canonical text is its tokens joined by single spaces: it holds no newline.
            work = ((engine.slug, batch[0].index, "\n".join([case.text for case in batch]), want)
                    for batch in _batches(good, BATCH))
            solved = _write(pool.imap(_solve_texts, work), out, traces, on_batch)
    deque(cases, maxlen=0)  # the rest of a file with faults: read for the faults it holds
    return solved


def _before(cases: Iterator[Case], faults: Faults) -> Iterator[Case]:
    """The cases before the first fault (the reader notes a fault before it gives the case after it)."""
    for case in cases:
        if faults:
            return
        yield case


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
