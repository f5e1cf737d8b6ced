"""How many cases go into one solve task: sized for the whole trip, not for the solving alone.

A chunk costs a few milliseconds whatever its size (its message, two transactions, its row and
the job's figures) and its cases a few microseconds each to solve and store; and the pages move
a chunk at a time. So a job is cut into about :data:`CHUNKS_PER_JOB` chunks — its progress moves
in steps of about one per cent, and the tasks' own cost stays a small part of the job's — within
:data:`CHUNK_BOUNDS`: a small file is one chunk (solved in one step), and a huge one's chunks stay
small enough to keep a worker's memory and a cancel's delay small. The split starts with smaller
chunks still (``worker.jobs.split.chunk_sizes``), so that the first results show at once.
"""

from __future__ import annotations

import math

from worker import engines
from worker.config import Settings

CHUNKS_PER_JOB = 100
CHUNK_BOUNDS = (250, 10_000)


def chunk_size(settings: Settings, game: str, size: int) -> int:
    """Cases per solve task for a new job of ``game`` whose upload is ``size`` bytes:
    ``DEALER_CHUNK_SIZE`` when set, else the file's cases (estimated from the bytes a case of the
    game takes, ``Engine.case_bytes``) over :data:`CHUNKS_PER_JOB`, within :data:`CHUNK_BOUNDS`.

    >>> from worker.config import Settings
    >>> settings = Settings.from_env({})
    >>> [chunk_size(settings, "10-20-30", decks * 120) for decks in (3, 200_000, 1_000_000, 10_000_000)]
    [250, 2000, 10000, 10000]
    """
    if settings.chunk_size:
        return settings.chunk_size
    cases = size / engines.get(game).case_bytes
    low, high = CHUNK_BOUNDS
    return max(low, min(high, math.ceil(cases / CHUNKS_PER_JOB)))
