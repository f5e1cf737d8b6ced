"""Solving chunks: take one (a transaction), solve it in one call to the engine, store what that gave with
the job's progress and take the job's next pending chunk (a second transaction), and so on for a
moment (``DEALER_SOLVE_RUN_SECONDS``): a solve message starts a run of its job's chunks, taken straight from the
database, rather than carrying one chunk through the broker.

A plain function of (database, settings, chunk id): :mod:`worker.work` runs it (for the Celery task and
the tests' dispatcher alike), and wakes what the chunk's end of its job made ready. A chunk
delivered twice, or to two workers at once, stores its cases once: the first to finish it
wins (:func:`lifecycle.finish_chunk`).

The chunk is solved the way ``dealer solve`` solves a batch (``engine.solve_chunk``): its
stored inputs go to the engine as they are, and the judge lines, packed traces, outcome
codes, numbers, solve times and input hashes come back as a few buffers, which the store
keeps nearly as they are (:func:`worker.store.chunks.pack`). No Python object is made per
case, but for the few the native core leaves to Python (and every case on the pure-Python
engines), which solve under the per-case time budget.
"""

from __future__ import annotations

import contextlib
import time
from bisect import bisect_left
from collections import Counter
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from worker import engines
from worker.config import Settings
from worker.engines.chunks import NOT_SOLVED, ChunkSolution, Entry, joined
from worker.jobs import lifecycle
from worker.jobs.dispatch import process_name
from worker.jobs.lifecycle import Progress
from worker.jobs.timeouts import CaseBudget, CaseTimeout
from worker.states import ACTIVE, JobStatus
from worker.store.chunks import (
    Numbered,
    Solved,
    Span,
    Tally,
    case_number,
    case_numbers,
    inputs_text,
    pack,
    runs,
)
from worker.store.database import Database
from worker.store.models import SOLVE_BUCKETS_US, utcnow


class Stored(NamedTuple):
    """What storing a run's last chunk left its job in."""

    job_id: int
    #: ``succeeded`` (or ``failed``) when this chunk was the job's last.
    status: JobStatus
    #: The chunk: a message naming it takes its job's next pending chunk.
    chunk_id: int
    #: The run stopped at its time, not for want of chunks: its job may have more, which no message names.
    cut_short: bool = False


def solve_chunk(db: Database, settings: Settings, chunk_id: int) -> Stored | None:
    """Solve the chunk a message named (or, when another task took it, its job's next pending one) and
    store its cases with its job's progress; then, for up to ``solve_run_seconds``, take the job's next
    pending chunk in the transaction that stores each, and do the same. What the last chunk stored left
    its job in (``cut_short`` when the run's time ran out first: the caller sends a message to go on), or
    ``None`` when nothing was stored (no chunk to take, another delivery stored it first, or the job
    stopped).

    A chunk whose solving or storing fails is given back (pending again) where the database allows,
    and the error raised: the task's retry, or any message of the job, takes it again.
    """
    me = process_name()
    ends = time.monotonic() + settings.solve_run_seconds
    with db.transaction() as connection:
        claimed = lifecycle.claim_chunk(connection, chunk_id, me, _lease(settings))
    stored = None
    while claimed is not None:
        chunk_id, job_id, first, gaps, inputs, game, status = claimed
        if status not in ACTIVE:
            with db.transaction() as connection:
                lifecycle.cancel_chunk(connection, chunk_id)
            break
        try:
            solved, progress, tally = solve_inputs(settings, engines.get(game), first, inputs, gaps)
            more = _lease(settings) if time.monotonic() < ends else None
            status, claimed = store_results(db, chunk_id, job_id, me, solved, progress, tally, more)
        except Exception:
            with contextlib.suppress(Exception), db.transaction() as connection:
                lifecycle.give_back(connection, [chunk_id], me, utcnow())
            raise
        if status is None:
            break
        stored = Stored(job_id, status, chunk_id, cut_short=more is None and status in ACTIVE)
    return stored


def _lease(settings: Settings) -> datetime:
    return utcnow() + timedelta(seconds=settings.lease_seconds)


def solve_inputs(settings: Settings, engine: engines.Engine, first: int, inputs: bytes,
                 gaps: list[Any] | None = None) -> tuple[Solved, Progress, Tally]:
    """A chunk's cases solved in one call to the engine (a call a run of consecutive numbers, when they
    skip ``gaps``): what its row keeps, what it adds to its job."""
    late: dict[int, str] = {}  # by case number
    cpu_started = time.process_time()
    deadline = time.monotonic() + settings.chunk_seconds if settings.chunk_seconds else None
    with CaseBudget(settings.case_seconds) as budget:

        def in_python(index: int, text: str, traced: bool) -> Entry:
            """A case the native core leaves to Python (every case, on the pure-Python engines), solved
            under its time budget (a signal cannot stop the native core, whose cases are all short)."""
            budget.started = time.perf_counter()
            try:
                return engine.chunk_case(index, text, traced)
            except CaseTimeout:
                late[index] = f"took longer than its time budget of {settings.case_seconds:g} s"
                return NOT_SOLVED
            finally:
                budget.started = None

        text = inputs_text(inputs)
        if gaps:
            texts = text.split(b"\n")
            solution = joined([engine.solve_chunk(b"\n".join(texts[k : k + count]), number, settings.store_traces,
                                                  deadline, in_python)
                               for k, number, count in runs(Span(first, len(texts), gaps))])
        else:
            solution = engine.solve_chunk(text, first, settings.store_traces, deadline, in_python)
    span = Span(first, solution.count, gaps)
    errors = {k: late[number] for k, number in enumerate(case_numbers(span)) if number in late} if late else {}
    for k in range(solution.started, solution.count):
        errors[k] = f"not solved: the chunk used up its time budget of {settings.chunk_seconds:g} s"
    tally = Tally.of(solution.outcomes, solution.numbers, solution.solve_us)
    progress = progress_of(engine, solution, tally, span)
    progress.cpu_us = int((time.process_time() - cpu_started) * 1e6)
    solved = Solved(solution.count, solution.lines, solution.offsets if settings.store_traces else None,
                    solution.traces if settings.store_traces else None, solution.outcomes, solution.numbers,
                    solution.extras, solution.solve_us, solution.hashes, errors or None)
    return solved, progress, tally


def store_results(db: Database, chunk_id: int, job_id: int, worker: str, solved: Solved, progress: Progress,
                  tally: Tally | None = None, lease_next: datetime | None = None) -> tuple[JobStatus | None, Any]:
    """Store a solved chunk in its row and add it to its job's progress, in one transaction; the job's
    status after it (``None`` when another delivery stored the chunk first or the job stopped meanwhile:
    then nothing is stored), and, given ``lease_next``, the job's next pending chunk taken in the same
    transaction (:func:`lifecycle.claim_next_chunk`), else ``None``."""
    blobs = pack(solved, tally)
    now = utcnow()
    claimed = None
    with db.transaction() as connection:
        if not lifecycle.finish_chunk(connection, chunk_id, now, worker, blobs):
            return None, None
        # Taken before the job row is locked, as every chunk is (the lock order); skipped if locked.
        if lease_next is not None:
            claimed = lifecycle.claim_next_chunk(connection, job_id, worker, lease_next)
        status = lifecycle.add_progress(connection, job_id, progress, now)
        if status is None:
            connection.rollback()
            return None, None
    return status, claimed


def progress_of(engine: engines.Engine, solution: ChunkSolution, tally: Tally, span: Numbered) -> Progress:
    """What a solved chunk (its cases numbered as ``span``) adds to its job's figures, from its cases
    counted (``tally``)."""
    progress = Progress()
    names = engine.outcomes
    for (code, number), count in tally.by_number.items():
        progress.numbers[names[code - 1], number] += count
        progress.solved += count
    progress.failed = solution.count - progress.solved
    timings: Counter[int] = Counter()
    for (code, us), count in tally.by_time.items():
        if code:  # cases of two outcomes solved in the same microsecond add up
            timings[us] += count
    progress.histogram = histogram(timings)
    progress.solve_us = sum(us * count for us, count in timings.items())
    if timings:
        slowest = max(timings)
        k = next(k for k in range(solution.count) if solution.solve_us[k] == slowest and solution.outcomes[k])
        progress.slowest = (slowest, case_number(span, k))
    return progress


def histogram(timings: Counter[int]) -> list[int]:
    """Solve times (counted by microseconds) into the buckets of :data:`SOLVE_BUCKETS_US` (and one for the rest).

    >>> histogram(Counter([10, 60, 5_000_001]))[:3], histogram(Counter([10, 60, 5_000_001]))[-1]
    ([1, 1, 0], 1)
    """
    counts = [0] * (len(SOLVE_BUCKETS_US) + 1)
    for elapsed, count in timings.items():
        counts[bisect_left(SOLVE_BUCKETS_US, elapsed)] += count
    return counts
