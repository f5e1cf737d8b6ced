"""The statuses a job and a chunk can be in, and the sets of them the rest of the code asks about.

This module is the vocabulary only (no database, cheap to import: the HTTP client uses
it too); :mod:`worker.jobs.lifecycle` is the only code that moves a job or a chunk from
one status to another.

A job goes ``queued → splitting → solving → succeeded``; from ``splitting`` or
``solving`` it may end ``failed`` (with a reason) and from any unfinished status
``cancelled``::

    queued ──► splitting ──► solving ──► succeeded
       │           │            │
       └───────────┴────────────┴──► cancelled   (splitting, solving ──► failed)

>>> JobStatus.SOLVING in ACTIVE, JobStatus.QUEUED in UNFINISHED, JobStatus.FAILED in FINISHED
(True, True, True)
"""

from __future__ import annotations

import enum


class JobStatus(enum.StrEnum):
    QUEUED = "queued"
    SPLITTING = "splitting"
    SOLVING = "solving"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class ChunkStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"


#: A job whose upload is being read or whose cases are being solved: work is out for it.
ACTIVE = frozenset({JobStatus.SPLITTING, JobStatus.SOLVING})
#: A job that has not ended yet (it counts towards a client's limit of jobs at once).
UNFINISHED = frozenset({JobStatus.QUEUED, *ACTIVE})
#: A job that has ended; it never changes status again.
FINISHED = frozenset(JobStatus) - UNFINISHED
#: A chunk that still has to be solved (or is being solved).
OPEN_CHUNKS = frozenset({ChunkStatus.PENDING, ChunkStatus.RUNNING})
