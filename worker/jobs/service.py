"""The job service's commands: create, cancel, re-run and delete jobs.

The web app, the CLI and the tasks change jobs only through this class (and the work
functions of :mod:`worker.work`); reads go through :class:`worker.jobs.queries.JobQueries`.
Errors are :mod:`worker.jobs.errors`. Checks of a job's output are the floor above
(:mod:`worker.checks.service`), which makes its checks along with a job through an
:class:`Attachment`.
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from worker import engines
from worker.config import Settings
from worker.jobs import lifecycle
from worker.jobs.dispatch import Dispatcher, send_quietly
from worker.jobs.errors import Conflict, Forbidden, NotFound, UploadGone
from worker.jobs.intake import SNIFF_BYTES, check_upload, clean_filename, recognise
from worker.jobs.queries import job_view
from worker.jobs.quotas import Limits
from worker.jobs.sizing import chunk_size
from worker.jobs.views import JobView
from worker.states import FINISHED, JobStatus
from worker.store.database import Database
from worker.store.models import ARRIVING, Check, Job, Upload
from worker.store.owners import EVERYTHING, Viewer
from worker.store.uploads import BLOCK_BYTES, StoredUpload, count_refused, drop, head, hold, release


class Attachment(Protocol):
    """What a floor above makes along with a new job (:mod:`worker.checks`: an output to check against
    it): refused before the job is made, else stored in the transaction that stores the job."""

    def refuse(self) -> None:
        """Raise a :class:`worker.jobs.errors.ServiceError` when it cannot be made (no job is made then)."""

    def attach(self, session: Session, job: Job) -> None:
        """Store it with ``job``, new in ``session``."""


def mark_deleted(session: Session, job: Job) -> set[int | None]:
    """Delete a finished job (locked with its chunks) for every read (:func:`lifecycle.mark_deleted`); the
    uploads it held (its file, its checks' outputs), for the caller to release once this commits."""
    outputs = session.scalars(select(Check.upload_id).where(Check.job_id == job.id, Check.upload_id.is_not(None))).all()
    session.execute(update(Check).where(Check.job_id == job.id).values(upload_id=None))
    upload_id = job.upload_id
    lifecycle.mark_deleted(job)
    return {upload_id, *outputs}


class JobService:
    """The commands, made for ``viewer``: a new job is its own; it cancels, re-runs, deletes and checks
    only the jobs it manages (:mod:`worker.store.owners`): another's is not found, or forbidden when
    the viewer may read it (public reads)."""

    def __init__(self, db: Database, settings: Settings, dispatcher: Dispatcher, viewer: Viewer = EVERYTHING) -> None:
        self.settings = settings
        self.dispatcher = dispatcher
        self.db = db
        self.viewer = viewer
        #: What the viewer may still make and keep: refused before an upload is read, and again as a job is made.
        self.limits = Limits(db, settings, viewer)

    def seen_by(self, viewer: Viewer) -> JobService:
        return JobService(self.db, self.settings, self.dispatcher, viewer)

    def may_manage(self, job: Job | None, job_id: int) -> None:
        """Refuse ``job`` (read as ``job_id``) unless the viewer manages it: not found when it may not even
        see it (or it was deleted), so that an id says nothing of another's jobs."""
        if job is None or job.deleted_at is not None or not self.viewer.may_read(job.owner):
            raise NotFound(f"no job {job_id}")
        if not self.viewer.may_manage(job.owner):
            raise Forbidden(f"job {job_id} is {job.owner or 'nobody'}'s: only its owner or an admin may change it")

    def may_check(self, job: Job | None, job_id: int) -> None:
        """Refuse ``job`` unless the viewer may check an output against it: one it manages, or one shared with
        every user (:meth:`Viewer.may_check`); as :meth:`may_manage` refuses, else."""
        if job is not None and job.deleted_at is None and self.viewer.may_check(job.owner, job.shared):
            return
        self.may_manage(job, job_id)

    def create_job(self, upload: StoredUpload, filename: str, game: str | None = None,
                   client: str | None = None, rerun_of: int | None = None,
                   attachment: Attachment | None = None) -> JobView:
        """A new job for a stored upload; the game is recognised from the content when not given.

        ``client`` (an API key's name, else an address) is held to ``max_active_jobs_per_client``.
        ``attachment`` is made with the job (in its transaction), or refused before it.
        """
        if game is not None:
            engines.check(game)
        start = head(self.db, upload.id, SNIFF_BYTES)
        check_upload(start, upload.size)
        game = recognise(start, upload.size, game)
        if attachment is not None:
            attachment.refuse()
        return self._new_job(upload.id, filename, game, client, upload.head_sha256, upload,
                             rerun_of=rerun_of, attachment=attachment)

    def open_job(self, upload_id: int, start: bytes, head_sha256: str, filename: str, client: str | None,
                 expected_size: int | None) -> JobView | None:
        """A new job for an upload still arriving, whose first block ``start`` is stored (a MiB, which the
        upload's screen has passed; ``head_sha256`` its hash): its game is the one the content says, its chunks sized for
        ``expected_size`` bytes (the request's length, when known). It is split while the rest arrives
        (:mod:`worker.jobs.arriving`); its hash and size are the file's once it is whole. ``None`` (no job
        made) when an earlier job of the viewer's had a file that started the same: the job is made once
        the file is whole, for the result cache to judge."""
        game = recognise(start[:SNIFF_BYTES], len(start) + 1)
        if self.settings.result_cache:
            with self.db.session(write=False) as session:
                if lifecycle.started_before(session, self.viewer.name, game, head_sha256):
                    return None
        return self._new_job(upload_id, filename, game, client, head_sha256, None, expected_size=expected_size)

    def _new_job(self, upload_id: int, filename: str, game: str, client: str | None, head_sha256: str | None,
                 upload: StoredUpload | None, rerun_of: int | None = None, attachment: Attachment | None = None,
                 expected_size: int | None = None) -> JobView:
        """The job row for ``upload_id`` (whole: ``upload``; else still arriving), held to the client's and
        the viewer's limits, and its split sent."""
        with self.db.session() as session:
            self.limits.check_new_job(session, client, incoming=upload.size if upload else 0)
            if upload is not None and not hold(session, upload.id):
                raise UploadGone("the upload was removed meanwhile; send the file again")
            size = upload.size if upload else max(expected_size or 0, BLOCK_BYTES)
            job = lifecycle.new_job(game=game, filename=clean_filename(filename), upload_id=upload_id,
                                    sha256=upload.sha256 if upload else ARRIVING, head_sha256=head_sha256, size=size,
                                    chunk_size=chunk_size(self.settings, game, size), client=client,
                                    rerun_of=rerun_of, owner=self.viewer.name)
            session.add(job)
            session.flush()
            if attachment is not None:
                attachment.attach(session, job)
            view = job_view(job)
        send_quietly(lambda: self.dispatcher.split(view.id))
        return view

    def file_arrived(self, job_id: int, resend: bool) -> JobView:
        """A job made while its file arrived, once the file is stored: its split sent again when it had
        stopped waiting for the file (``resend``, what :func:`lifecycle.file_arrived` said)."""
        if resend:
            send_quietly(lambda: self.dispatcher.split(job_id))
        with self.db.session(write=False) as session:
            job = session.get(Job, job_id)
            if job is None or job.deleted_at is not None:
                raise UploadGone("the job was removed meanwhile; send the file again")
            return job_view(job)

    def withdraw(self, job_id: int) -> None:
        """Remove a job made while its file arrived, whose file is refused after all (:func:`lifecycle.withdraw`)."""
        with self.db.session() as session:
            lifecycle.withdraw(session, job_id)

    def cancel(self, job_id: int) -> JobView:
        with self.db.session() as session:
            job = self._locked(session, job_id)
            if not lifecycle.cancel(session, job):
                raise Conflict(f"job {job_id} has already {job.status}")
            return job_view(job)

    def rerun(self, job_id: int, client: str | None = None) -> JobView:
        """A new job for the same file: a job that succeeded is solved again from its chunks (its cases, read
        once already: its upload is released once its split ends, which may be after the job has); any
        other is split again from its upload while that is kept, else from its chunks."""
        with self.db.session(write=False) as session:
            job = session.get(Job, job_id)
            self.may_manage(job, job_id)
            assert job is not None
            if job.sha256 == ARRIVING:
                raise Conflict(f"the file of job {job_id} is still arriving")
            if job.upload_id is None and job.split_at is None:
                raise Conflict(f"the upload of job {job_id} is no longer stored")
            kept = job.upload_id is not None and job.status != JobStatus.SUCCEEDED
            upload = StoredUpload(job.upload_id, job.sha256, job.size, job.head_sha256) if kept else None
            filename, game, split = job.filename, job.game, job.split_at is not None
        if upload is not None:
            try:
                return self.create_job(upload, filename, game, client=client, rerun_of=job_id)
            except UploadGone:  # removed since it was read: the chunks hold the cases all the same
                if not split:
                    raise
        return self._rerun_from_chunks(job_id, client)

    def _rerun_from_chunks(self, job_id: int, client: str | None) -> JobView:
        with self.db.session() as session:
            old = session.get(Job, job_id)
            assert old is not None
            self.limits.check_new_job(session, client, incoming=old.size)
            job = lifecycle.new_job(game=old.game, filename=old.filename, upload_id=None, sha256=old.sha256,
                                    head_sha256=old.head_sha256,
                                    size=old.size, chunk_size=old.chunk_size, client=client, rerun_of=job_id,
                                    owner=self.viewer.name)
            session.add(job)
            session.flush()
            chunks: list[int] = []
            # A file solved before: the job's split copies the earlier job's results, as any new job's would.
            if not (self.settings.result_cache
                    and lifecycle.earlier_results(session, job, self.settings.store_traces)):
                try:
                    chunks = lifecycle.copy_chunks(session, old, job)
                except ValueError as error:
                    raise Conflict(f"the upload of job {job_id} is no longer stored, and {error}") from None
            view = job_view(job)
        send_quietly(lambda: self.dispatcher.solve(chunks) if chunks else self.dispatcher.split(view.id))
        return view

    def share(self, job_id: int, shared: bool | None = None, reveal_answers: bool | None = None) -> JobView:
        """Share a job with every user of the service, or withdraw it (``shared``); let the checks others make
        against it show the judge's lines, or not (``reveal_answers``): what is not given stays as it is.
        Only its owner or an admin may (:mod:`worker.store.owners` says what the others may then do)."""
        with self.db.session() as session:
            job = lifecycle.lock_job(session, job_id)
            self.may_manage(job, job_id)
            assert job is not None
            if shared is not None:
                job.shared = shared
            if reveal_answers is not None:
                job.reveal_answers = reveal_answers
            session.flush()
            return job_view(job)

    def delete(self, job_id: int) -> None:
        """Delete a finished job, its cases and checks, and its upload unless another job still needs it: gone
        at once for every read, its rows removed in the background (:mod:`worker.store.purge`)."""
        with self.db.session() as session:
            job = self._locked(session, job_id)
            if job.status not in FINISHED:
                raise Conflict(f"job {job_id} is still {job.status}; cancel it first")
            uploads = mark_deleted(session, job)
        for upload in uploads:
            release(self.db, upload)

    def forget_upload(self, upload: StoredUpload) -> None:
        """Remove a stored upload that no job or check refers to (after a refused upload)."""
        with self.db.session() as session:
            used = session.scalar(select(func.count()).select_from(Job).where(Job.upload_id == upload.id))
            used = used or session.scalar(select(func.count()).select_from(Check).where(Check.upload_id == upload.id))
            if not used:
                owner = session.scalar(select(Upload.owner).where(Upload.id == upload.id))
                drop(session, upload.id)
                count_refused(session, owner, upload.size)

    def _locked(self, session: Session, job_id: int) -> Job:
        """The job with its chunks locked, in the lifecycle's lock order (to change them)."""
        job = lifecycle.lock_job_with_chunks(session, job_id)
        self.may_manage(job, job_id)
        assert job is not None
        return job
