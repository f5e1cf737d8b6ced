"""Solving one chunk: claim it (one transaction), solve it in one call to the engine, store what that
gave with the job's progress (a second transaction).

A plain function of (settings, chunk id): :mod:`worker.work` runs it (for the Celery task and
the tests' dispatcher alike), and wakes what the chunk's end of its job made ready. A chunk
delivered twice, or to two workers at once, stores its cases once: the first to finish it
wins (:func:`lifecycle.finish_chunk`).

The chunk is solved the way ``dealer solve`` solves a batch (``Engine.solve_chunk``): its
stored inputs go to the engine as they are, and the judge lines, packed traces, outcome
codes, numbers, solve times and input hashes come back as a few buffers, which the store
keeps nearly as they are (:func:`worker.store.chunks.pack`). No Python object is made per
case, but for the few the native core leaves to Python (and every case on the pure-Python
engines), which solve under the per-case time budget.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections import Counter
from datetime import timedelta
from typing import NamedTuple

from worker import engines
from worker.config import Settings
from worker.engines.base import NOT_SOLVED, ChunkSolution, Entry
from worker.jobs import lifecycle
from worker.jobs.dispatch import process_name
from worker.jobs.lifecycle import Progress
from worker.jobs.timeouts import CaseBudget, CaseTimeout
from worker.states import ACTIVE, JobStatus
from worker.store.chunks import Solved, Tally, inputs_text, pack
from worker.store.database import Database
from worker.store.models import SOLVE_BUCKETS_US, utcnow


class Stored(NamedTuple):
    """What storing a chunk left its job in."""

    job_id: int
    #: ``succeeded`` (or ``failed``) when this chunk was the job's last.
    status: JobStatus


def solve_chunk(settings: Settings, chunk_id: int) -> Stored | None:
    """Solve one chunk and store its cases with its job's progress, in one transaction; the job and its
    status after that, or ``None`` when nothing was stored (the chunk was done, cancelled or gone,
    another delivery stored it first, or the job stopped)."""
    db = Database.of(settings)
    me = process_name()
    lease = utcnow() + timedelta(seconds=settings.lease_seconds)
    with db.transaction() as connection:
        claimed = lifecycle.claim_chunk(connection, chunk_id, me, lease)
        if claimed is None:
            return None  # done, cancelled or gone
        job_id, first, inputs, game, status = claimed
        if status not in ACTIVE:
            lifecycle.cancel_chunk(connection, chunk_id)
            return None

    engine = engines.get(game)
    errors: dict[int, str] = {}
    cpu_started = time.process_time()
    deadline = time.monotonic() + settings.chunk_seconds if settings.chunk_seconds else None
    with CaseBudget(settings.case_seconds) as budget:

        def in_python(index: int, text: str, traced: bool) -> Entry:
            """A case the native core leaves to Python (every case, on the pure-Python engines), solved
            under its time budget (a signal cannot stop the native core, whose cases are all short)."""
            budget.started = time.perf_counter()
            try:
                return engine.solve_entry(index, text, traced)
            except CaseTimeout:
                errors[index - first] = f"took longer than its time budget of {settings.case_seconds:g} s"
                return NOT_SOLVED
            finally:
                budget.started = None

        solution = engine.solve_chunk(inputs_text(inputs), first, settings.store_traces, deadline, in_python)
    for k in range(solution.started, solution.count):
        errors[k] = f"not solved: the chunk used up its time budget of {settings.chunk_seconds:g} s"
    progress_cpu = time.process_time() - cpu_started
    tally = Tally.of(solution.outcomes, solution.numbers, solution.solve_us)
    progress = progress_of(engine, solution, tally, first)
    progress.cpu_us = int(progress_cpu * 1e6)
    solved = Solved(solution.count, solution.lines, solution.offsets if settings.store_traces else None,
                    solution.traces if settings.store_traces else None, solution.outcomes, solution.numbers,
                    solution.extras, solution.solve_us, solution.hashes, errors or None)
    status = store_results(db, chunk_id, job_id, me, solved, progress, tally)
    return None if status is None else Stored(job_id, status)


def store_results(db: Database, chunk_id: int, job_id: int, worker: str, solved: Solved,
                  progress: Progress, tally: Tally | None = None) -> JobStatus | None:
    """Store a solved chunk in its row and add it to its job's progress, in one transaction; the job's
    status after it. Nothing (``None``) when another delivery stored the chunk first or the job
    stopped meanwhile."""
    blobs = pack(solved, tally)
    now = utcnow()
    with db.transaction() as connection:
        if not lifecycle.finish_chunk(connection, chunk_id, now, worker, blobs):
            return None
        status = lifecycle.add_progress(connection, job_id, progress, now)
        if status is None:
            connection.rollback()
    return status


def progress_of(engine: engines.Engine, solution: ChunkSolution, tally: Tally, first: int) -> Progress:
    """What a solved chunk adds to its job's figures, from its cases counted (``tally``)."""
    progress = Progress()
    names = engine.outcomes
    for (code, number), count in tally.by_number.items():
        progress.numbers[names[code - 1], number] += count
        progress.solved += count
    progress.failed = solution.count - progress.solved
    timings = Counter({us: count for (code, us), count in tally.by_time.items() if code})
    progress.histogram = histogram(timings)
    progress.solve_us = sum(us * count for us, count in timings.items())
    if timings:
        slowest = max(timings)
        k = next(k for k in range(solution.count) if solution.solve_us[k] == slowest and solution.outcomes[k])
        progress.slowest = (slowest, first + k)
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
