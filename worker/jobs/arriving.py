"""A job made while its file arrives: the solve starts before the upload ends.

An upload's first MiB is stored once a byte past it has come, and the upload's screen has passed it
(``worker/jobs/screen.py``). From then on a job of it is made (:meth:`JobService.open_job`: its game
recognised from that MiB, its chunks sized for the request's length) and its split sent; the split reads
the upload as it arrives (``store.uploads.UploadReader`` with patience), so that its first chunks are
solved while the client still sends the rest. The job's ``sha256`` is ``ARRIVING`` (null in its view)
and its ``size`` the request's length (an estimate) until the file is whole (the result cache, which goes by the hash, is for files split whole).

:class:`ArrivingJob` is the upload writer's :class:`~worker.store.uploads.Follower`; the upload ends one
of three ways, each in the transaction that writes the upload's row:

- stored whole: the job takes the file's hash and size (:func:`lifecycle.file_arrived`), and its split is
  sent again if it had stopped waiting for the file (a slow client: ``DEALER_SPLIT_PATIENCE_SECONDS``);
- refused (the screen, a limit, a quota) or cut off: the job is withdrawn (:func:`lifecycle.withdraw`),
  gone for every read as if never made;
- abandoned (the web process died): :func:`withdraw_abandoned`, run by the sweep and at the web's start,
  withdraws the jobs of uploads :func:`~worker.store.uploads.discard_stale` dropped.

A file ≤ 1 MiB is stored before any block is, and its job made once it is whole, as are the jobs the
request could not make early (the content's game not told from its first MiB, a limit reached: the job
made at the end then says why) and those of a file that starts as one an earlier job of the same owner
solved (``jobs.head_sha256``): it may be that file again, whose results the result cache copies once
the whole file's hash says so.
"""

from __future__ import annotations

import logging

from sqlalchemy import select
from sqlalchemy.orm import Session

from worker.jobs import lifecycle
from worker.jobs.errors import ServiceError
from worker.jobs.service import JobService
from worker.jobs.views import JobView
from worker.states import UploadState
from worker.store.database import Database
from worker.store.models import ARRIVING, Job, Upload
from worker.store.uploads import StoredUpload, discard_stale

log = logging.getLogger("dealer.web")


class ArrivingJob:
    """The job an upload makes of itself from its first MiB on (a :class:`~worker.store.uploads.Follower`)."""

    def __init__(self, service: JobService, filename: str, client: str | None, expected_size: int | None) -> None:
        self.service = service
        self.filename = filename
        self.client = client
        self.expected_size = expected_size
        #: The job, once made.
        self.job: JobView | None = None
        self._resend = False

    def started(self, upload_id: int, head: bytes, head_sha256: str) -> bool:
        try:
            self.job = self.service.open_job(upload_id, head, head_sha256, self.filename, self.client,
                                             self.expected_size)
        except ServiceError:
            pass  # made at the end instead, which then says why it cannot be (or makes it after all)
        except Exception:  # the upload goes on; the job made at its end meets the fault or not
            log.exception("could not make a job while its file arrives")
        return self.job is not None

    def stored(self, session: Session, upload: StoredUpload) -> None:
        if self.job is not None:
            self._resend = lifecycle.file_arrived(session, self.job.id, upload.sha256, upload.size)

    def dropped(self, session: Session) -> None:
        if self.job is not None:
            lifecycle.withdraw(session, self.job.id)

    @property
    def game(self) -> str | None:
        return self.job.game if self.job is not None else None

    def withdraw(self) -> None:
        """Withdraw the job before the upload ends (the request chose another game than its content's)."""
        if self.job is not None:
            self.service.withdraw(self.job.id)
            self.job = None

    def arrived(self) -> JobView:
        """The job, its file stored (after the writer's commit)."""
        assert self.job is not None
        return self.service.file_arrived(self.job.id, self._resend)


def withdraw_abandoned(db: Database) -> int:
    """Drop the uploads whose web process died mid-upload (:func:`discard_stale`) and withdraw the jobs made
    while they arrived; how many jobs."""
    discard_stale(db)
    with db.session() as session:
        abandoned = session.scalars(select(Job.id).outerjoin(Upload, Upload.id == Job.upload_id).where(
            Job.sha256 == ARRIVING, Job.deleted_at.is_(None),
            Upload.id.is_(None) | (Upload.state != UploadState.RECEIVING)).order_by(Job.id)).all()
        for job_id in abandoned:
            lifecycle.withdraw(session, job_id)
    return len(abandoned)
