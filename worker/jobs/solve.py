"""Solving one chunk: claim it, solve its cases (or copy known results), store them with the job's
progress in one transaction.

A plain function of (settings, chunk id): ``worker.runner`` wraps it as a Celery task
and the tests call it directly. A chunk delivered twice, or to two workers at once,
stores its cases once: the first to finish it wins (:func:`lifecycle.finish_chunk`).
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from worker import engines
from worker.config import Settings
from worker.engines.base import Case, Result
from worker.jobs import lifecycle
from worker.jobs.dispatch import worker_name
from worker.jobs.states import ACTIVE
from worker.jobs.timeouts import CaseBudget, CaseTimeout
from worker.store.cases import Known, insert_cases, known_results
from worker.store.codecs import input_hash, store_trace, unpack_inputs
from worker.store.database import Database
from worker.store.models import SOLVE_BUCKETS_US, utcnow


def solve_chunk(settings: Settings, chunk_id: int) -> None:
    """Solve one chunk and store its cases, all in one transaction."""
    db = Database.of(settings)
    me = worker_name()
    lease = utcnow() + timedelta(seconds=settings.lease_seconds)
    with db.transaction() as connection:
        claimed = lifecycle.claim_chunk(connection, chunk_id, me, lease)
        if claimed is None:
            return  # done, cancelled or gone
        job_id, first, inputs = claimed
        job = lifecycle.job_state(connection, job_id)
        if job is None or job.status not in ACTIVE:
            lifecycle.cancel_chunk(connection, chunk_id)
            return
        game, texts = job.game, unpack_inputs(inputs)
        hashes = [input_hash(game, text) for text in texts]
        known: dict[str, Known] = (known_results(connection, game, hashes, texts, settings.store_traces)
                                   if settings.result_cache else {})

    engine = engines.get(game)
    # Rows in CASE_COLUMNS order, without solved_at (the store adds it).
    rows: list[tuple[Any, ...]] = []
    counts: Counter[str] = Counter()
    timings: list[int] = []
    hits = failed = 0
    solve = _solver(engine, settings.store_traces)
    clock = time.perf_counter
    deadline = clock() + settings.chunk_seconds if settings.chunk_seconds else float("inf")
    next_check = clock() + settings.cancel_check_seconds
    with CaseBudget(settings.case_seconds) as budget:
        for index, text, digest in zip(range(first, first + len(texts)), texts, hashes, strict=True):
            start = clock()
            if start > next_check:
                if not _still_active(db, job_id):
                    return
                next_check = clock() + settings.cancel_check_seconds
            previous = known.get(text)
            if previous is not None:
                outcome, number, detail, trace = previous
                rows.append((job_id, index, game, text, digest, outcome, number, detail,
                             engine.judge_line(index, outcome, number, detail), trace, None, True, 0, me))
                hits += 1
                counts[outcome] += 1
                continue
            if start > deadline:
                failed += 1
                rows.append((job_id, index, game, text, digest, *_unsolved(
                    f"not solved: the chunk used up its time budget of {settings.chunk_seconds:g} s"), me))
                continue
            budget.started = start
            try:
                result, trace = solve(Case(index, text))
            except CaseTimeout:
                failed += 1
                rows.append((job_id, index, game, text, digest, *_unsolved(
                    f"took longer than its time budget of {settings.case_seconds:g} s"), me))
                continue
            finally:
                budget.started = None
            elapsed = int((clock() - start) * 1e6)
            timings.append(elapsed)
            outcome, number, detail = result.outcome, result.number, result.detail
            rows.append((job_id, index, game, text, digest, outcome, number, detail, result.line, trace, None,
                         False, elapsed, me))
            known[text] = (outcome, number, detail, trace)
            counts[outcome] += 1

    store_results(db, chunk_id, job_id, rows, counts, timings, hits, failed)


def store_results(db: Database, chunk_id: int, job_id: int, rows: list[tuple[Any, ...]], counts: Counter[str],
                  timings: list[int], hits: int, failed: int) -> None:
    """Store a solved chunk's case rows and add them to its job's progress, in one transaction;
    nothing when another delivery stored the chunk first or the job stopped meanwhile."""
    now = utcnow()
    with db.transaction() as connection:
        if not lifecycle.finish_chunk(connection, chunk_id, now):
            return
        insert_cases(connection, rows, now)
        if not lifecycle.add_progress(connection, job_id, len(rows) - failed, failed, hits, counts,
                                      histogram(timings), sum(timings), now):
            connection.rollback()


def _unsolved(reason: str) -> tuple[Any, ...]:
    """A case row's columns from ``outcome`` to ``solve_us`` for a case that was not solved."""
    return None, None, None, None, None, reason, False, 0


def _solver(engine: engines.Engine, traces: bool) -> Callable[[Case], tuple[Result, bytes | None]]:
    """``case -> (result, stored trace or None)``."""
    if not traces:
        return lambda case: (engine.solve(case, False), None)
    solve_packed = engine.solve_packed

    def solve(case: Case) -> tuple[Result, bytes | None]:
        result, packed = solve_packed(case)
        return result, store_trace(packed)

    return solve


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
