"""The statuses of the service's three state machines (jobs and their chunks, checks, uploads), and the
sets of them the rest of the code asks about.

The ground floor: this module is the vocabulary only (no database, cheap to import: the store's
tables, the HTTP client and the pages use it too). Each machine is moved only by its own
lifecycle code: :mod:`worker.jobs.lifecycle` (a job, its chunks), :mod:`worker.checks.lifecycle`
(a check), :mod:`worker.store.uploads` (an upload).

A job goes ``queued → splitting → solving → succeeded``; from ``splitting`` or
``solving`` it may end ``failed`` (with a reason) and from any unfinished status
``cancelled``::

    queued ──► splitting ──► solving ──► succeeded
       │           │            │
       └───────────┴────────────┴──► cancelled   (splitting, solving ──► failed)

A chunk goes ``pending → running → done``, back to ``pending`` when its worker is lost, and
``cancelled`` with its job. A check is ``pending`` until its job's judge output exists, then
``done`` (judged) or ``failed`` (its output could not be judged). An upload is ``receiving``
while its bytes arrive, then ``stored``; ``deleting`` once no job needs it (refused, abandoned,
read by every job, expired), while the purge removes its blocks a few at a time.

>>> JobStatus.SOLVING in ACTIVE, JobStatus.QUEUED in UNFINISHED, JobStatus.FAILED in FINISHED
(True, True, True)
>>> sorted(map(str, NO_OUTPUT))
['cancelled', 'failed']
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


class CheckStatus(enum.StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class NotifyState(enum.StrEnum):
    """A job's or a check's callback (``notify_url``): ``waiting`` for its end, ``due`` to be sent (again
    at ``notify_next_at``), then ``delivered`` or, its retries spent, ``failed``."""

    WAITING = "waiting"
    DUE = "due"
    DELIVERED = "delivered"
    FAILED = "failed"


class UploadState(enum.StrEnum):
    RECEIVING = "receiving"
    STORED = "stored"
    DELETING = "deleting"


#: A job whose upload is being read or whose cases are being solved: work is out for it.
ACTIVE = frozenset({JobStatus.SPLITTING, JobStatus.SOLVING})
#: A job that has not ended yet (it counts towards a client's limit of jobs at once).
UNFINISHED = frozenset({JobStatus.QUEUED, *ACTIVE})
#: A job that has ended; it never changes status again.
FINISHED = frozenset(JobStatus) - UNFINISHED
#: A job that ended without a judge output: its checks can never be judged.
NO_OUTPUT = FINISHED - {JobStatus.SUCCEEDED}
#: A chunk that still has to be solved (or is being solved).
OPEN_CHUNKS = frozenset({ChunkStatus.PENDING, ChunkStatus.RUNNING})
