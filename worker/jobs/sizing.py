"""How many cases go into one solve task: sized for the whole trip, not for the solving alone.

A chunk costs milliseconds whatever its size and its cases a few microseconds each to solve and
store; and the pages move a chunk at a time. So a job is cut into about :data:`CHUNKS_PER_JOB`
chunks — its progress moves in steps of a few per cent, and the tasks' own cost stays a small part
of the job's — within :data:`CHUNK_BOUNDS`: a small file is one chunk (solved in one step),
and a huge one's chunks stay small enough to keep a worker's memory and a cancel's delay small. The
split starts with smaller chunks still (``worker.jobs.split.chunk_sizes``), so that the first
results show at once.

The floor is a chunk's fixed cost against its cases' (measured on 2 busy CPUs, 2026-12-06, with
``bench/job_sizes.py`` and each job's timings):
inside the task a chunk costs about 1 ms on SQLite and 2 ms on PostgreSQL (its claim, its store with
the job's figures), and through Celery about 10 ms in all (the message, the pool's hand-off, the late
acknowledgement; a run's later chunks now skip it, ``worker.jobs.solve``), when a case costs a few
microseconds. With a floor of 250 a job of 10,000 decks was 43 tasks and took 0.30 to 0.50 s from its
split to its end, 0.18 to 0.22 s with 1,000; and one of 100,000 decks cut in chunks of 1,000 took 0.82
to 1.01 s on PostgreSQL, 0.56 to 0.64 s in chunks of 2,000 (0.49 to 0.58 s in chunks of 4,000). So a
job is cut into forty chunks rather than a hundred: a job that short needs no hundred steps of progress,
and one of 400,000 cases and more is in chunks of the most a chunk holds.
"""

from __future__ import annotations

import math

from worker import engines
from worker.config import Settings

CHUNKS_PER_JOB = 40
CHUNK_BOUNDS = (1_000, 10_000)


def chunk_size(settings: Settings, game: str, size: int) -> int:
    """Cases per solve task for a new job of ``game`` whose upload is ``size`` bytes:
    ``DEALER_CHUNK_SIZE`` when set, else the file's cases (estimated from the bytes a case of the
    game takes, ``Engine.case_bytes``) over :data:`CHUNKS_PER_JOB`, within :data:`CHUNK_BOUNDS`.

    >>> from worker.config import Settings
    >>> settings = Settings.from_env({})
    >>> [chunk_size(settings, "10-20-30", decks * 120) for decks in (3, 200_000, 1_000_000, 10_000_000)]
    [1000, 5000, 10000, 10000]
    """
    if settings.chunk_size:
        return settings.chunk_size
    cases = size / engines.get(game).case_bytes
    low, high = CHUNK_BOUNDS
    return max(low, min(high, math.ceil(cases / CHUNKS_PER_JOB)))
