"""Solving one chunk: claim it (one transaction), solve its cases (or copy known results), store them
with the job's progress (a second transaction).

A plain function of (settings, chunk id): :mod:`worker.work` runs it (for the Celery task and
the tests' dispatcher alike), and wakes what the chunk's end of its job made ready. A chunk delivered twice, or to two workers at once,
stores its cases once: the first to finish it wins (:func:`lifecycle.finish_chunk`).
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable
from datetime import timedelta
from typing import Any, NamedTuple

from worker import engines
from worker.config import Settings
from worker.engines.base import Case, Result
from worker.jobs import lifecycle
from worker.jobs.dispatch import process_name
from worker.jobs.lifecycle import Progress
from worker.jobs.outcomes import code
from worker.jobs.timeouts import CaseBudget, CaseTimeout
from worker.states import ACTIVE, JobStatus
from worker.store.cases import Known, insert_cases, known_results
from worker.store.chunks import Solved, pack_results, unpack_inputs
from worker.store.codecs import input_hash
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
        job_id, first, inputs = claimed
        job = lifecycle.job_state(connection, job_id)
        if job is None or job.status not in ACTIVE:
            lifecycle.cancel_chunk(connection, chunk_id)
            return None
        game, texts = job.game, unpack_inputs(inputs)
        hashes = [input_hash(game, text) for text in texts]
        known: dict[str, Known] = (known_results(connection, hashes, texts, settings.store_traces)
                                   if settings.result_cache else {})

    engine = engines.get(game)
    solved: list[Solved] = []
    progress = Progress()
    timings: list[int] = []
    solve = _solver(engine, settings.store_traces)
    judge_line = engine.judge_line
    clock = time.perf_counter
    cpu_started = time.process_time()
    deadline = clock() + settings.chunk_seconds if settings.chunk_seconds else float("inf")
    next_check = clock() + settings.cancel_check_seconds
    with CaseBudget(settings.case_seconds) as budget:
        for index, text in zip(range(first, first + len(texts)), texts, strict=True):
            start = clock()
            if start > next_check:
                if not _still_active(db, job_id):
                    return None
                next_check = clock() + settings.cancel_check_seconds
            previous = known.get(text)
            if previous is not None:
                outcome, number, detail, trace = previous
                solved.append(Solved(outcome, number, detail, judge_line(index, outcome, number, detail or []), 0,
                                     True, None, trace))
                progress.cache_hits += 1
                continue
            if start > deadline:
                solved.append(_unsolved(f"not solved: the chunk used up its time budget of {settings.chunk_seconds:g} s"))
                continue
            budget.started = start
            try:
                result, trace = solve(Case(index, text))
            except CaseTimeout:
                solved.append(_unsolved(f"took longer than its time budget of {settings.case_seconds:g} s"))
                continue
            finally:
                budget.started = None
            elapsed = int((clock() - start) * 1e6)
            timings.append(elapsed)
            if progress.slowest is None or elapsed > progress.slowest[0]:
                progress.slowest = (elapsed, index)
            solved.append(Solved(result.outcome, result.number, result.detail, result.line, elapsed, False, None,
                                 trace))
            known[text] = (result.outcome, result.number, result.detail, trace)
    progress.cpu_us = int((time.process_time() - cpu_started) * 1e6)
    progress.histogram = histogram(timings)
    progress.solve_us = sum(timings)
    rows = []
    for index, case, digest in zip(range(first, first + len(solved)), solved, hashes, strict=True):
        if case.outcome is None:
            progress.failed += 1
            rows.append((job_id, index, None, None, digest, 0, False))
        else:
            progress.solved += 1
            progress.numbers[case.outcome, case.number] += 1
            rows.append((job_id, index, code(case.outcome), case.number, digest, case.solve_us, case.cached))
    status = store_results(db, chunk_id, job_id, me, solved, rows, progress)
    return None if status is None else Stored(job_id, status)


def store_results(db: Database, chunk_id: int, job_id: int, worker: str, solved: list[Solved],
                  rows: list[tuple[Any, ...]], progress: Progress) -> JobStatus | None:
    """Store a solved chunk (its blobs and its cases' index rows) and add it to its job's progress,
    in one transaction; the job's status after it. Nothing (``None``) when another delivery stored
    the chunk first or the job stopped meanwhile."""
    blobs = pack_results(solved)
    now = utcnow()
    with db.transaction() as connection:
        if not lifecycle.finish_chunk(connection, chunk_id, now, worker, blobs):
            return None
        insert_cases(connection, rows)
        status = lifecycle.add_progress(connection, job_id, progress, now)
        if status is None:
            connection.rollback()
    return status


def _unsolved(reason: str) -> Solved:
    return Solved(None, None, None, None, 0, False, reason, None)


def _solver(engine: engines.Engine, traces: bool) -> Callable[[Case], tuple[Result, bytes | None]]:
    """``case -> (result, packed trace or None)``."""
    if traces:
        return engine.solve_packed
    return lambda case: (engine.solve(case, False), None)


def _still_active(db: Database, job_id: int) -> bool:
    with db.transaction(write=False) as connection:
        state = lifecycle.job_state(connection, job_id)
        return state is not None and state.status in ACTIVE


def histogram(timings: list[int]) -> list[int]:
    """Solve times counted into the buckets of :data:`SOLVE_BUCKETS_US` (and one for the rest).

    >>> histogram([10, 60, 5_000_001])[:3], histogram([10, 60, 5_000_001])[-1]
    ([1, 1, 0], 1)
    """
    counts = [0] * (len(SOLVE_BUCKETS_US) + 1)
    for elapsed in timings:
        counts[bisect_left(SOLVE_BUCKETS_US, elapsed)] += 1
    return counts
