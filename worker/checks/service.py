"""The check service's commands: check an output against a job's judge output, now or once the job has
succeeded, and make a job together with a check of an output.

The web app changes checks only through this class; reads go through
:class:`worker.checks.queries.CheckQueries`. Errors are :mod:`worker.jobs.errors`, as the jobs'.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.orm import Session

from worker.checks import lifecycle
from worker.checks.compare import LineTooLong, OutputError
from worker.checks.queries import get_check
from worker.checks.text import TextScreen, check_text
from worker.checks.views import CheckView
from worker.config import Settings
from worker.jobs import lifecycle as job_lifecycle
from worker.jobs.arriving import ArrivingJob
from worker.jobs.dispatch import Dispatcher, send_quietly
from worker.jobs.errors import Conflict, TooLarge, Unsupported
from worker.jobs.service import JobService
from worker.jobs.views import JobView
from worker.states import NO_OUTPUT, JobStatus
from worker.store.database import Database
from worker.store.models import Job
from worker.store.owners import EVERYTHING, Viewer
from worker.store.uploads import Screen, StoredUpload, UploadReader, hold


class CheckService:
    def __init__(self, db: Database, settings: Settings, dispatcher: Dispatcher, jobs: JobService | None = None) -> None:
        self.settings = settings
        self.dispatcher = dispatcher
        self.db = db
        self.jobs = jobs or JobService(db, settings, dispatcher)
        self.viewer = EVERYTHING

    def seen_by(self, viewer: Viewer) -> CheckService:
        """This service acting for ``viewer``: its checks are its own, and only on jobs it manages."""
        found = object.__new__(CheckService)
        found.settings, found.dispatcher, found.db = self.settings, self.dispatcher, self.db
        found.jobs, found.viewer = self.jobs.seen_by(viewer), viewer
        return found

    def create_job(self, upload: StoredUpload, filename: str, game: str | None = None, client: str | None = None,
                   expected: tuple[StoredUpload, str] | None = None) -> JobView:
        """A new job (:meth:`JobService.create_job`); with ``expected``, an output to check against the job's
        (the stored upload and its file name), the job is made with that check, judged once the job has
        succeeded, and refused when that output is no text."""
        attachment = None if expected is None else _Expected(self, *expected)
        return self.jobs.create_job(upload, filename, game, client=client, attachment=attachment)

    def create_check(self, job_id: int, upload: StoredUpload, filename: str) -> CheckView:
        """Check a stored output against a job's judge output: judged on a worker at once when the job has
        succeeded, else when it does. Refused for a job that failed or was cancelled, for a job the viewer
        does not manage, and for an output that is no text (nothing is stored then but the upload, which
        the caller forgets)."""
        check_id = self._add_check(job_id, upload, filename, refuse_ended=True)
        with self.db.session(write=False) as session:
            return get_check(session, check_id, self.viewer)

    def job_arrived(self, arriving: ArrivingJob, expected: tuple[StoredUpload, str] | None = None) -> JobView:
        """A job made while its file arrived (:mod:`worker.jobs.arriving`), its file now stored: with
        ``expected``, the output to check against it, as :meth:`create_job` makes it (refused when no
        text; the caller then withdraws the job)."""
        assert arriving.job is not None
        if expected is not None:
            self._add_check(arriving.job.id, *expected, refuse_ended=False)
        return arriving.arrived()

    def _add_check(self, job_id: int, upload: StoredUpload, filename: str, refuse_ended: bool) -> int:
        """A new check's id (:meth:`create_check`); a job that ended with no output refused only when
        ``refuse_ended`` (a check made with its job shows failed with it)."""
        self.check_output(upload)
        with self.db.session() as session:
            # The lock every transaction that ends a job takes: the job cannot end unseen meanwhile.
            job = job_lifecycle.lock_job(session, job_id)
            self.jobs.may_check(job, job_id)
            assert job is not None
            if refuse_ended and job.status in NO_OUTPUT:
                why = f" ({job.error})" if job.error else ""
                raise Conflict(f"job {job_id} {job.status}{why}: it has no judge output to check against")
            if not hold(session, upload.id):
                raise Conflict("the upload was removed meanwhile; send the file again")
            check_id = lifecycle.new_check(session, job, upload, filename, self.viewer.name).id
            ready = job.status == JobStatus.SUCCEEDED
        if ready:
            send_quietly(lambda: self.dispatcher.check(check_id))
        return check_id

    def check_output(self, upload: StoredUpload) -> None:
        """Refuse an output that is no text (415) or has a line over the limit (413), saying where."""
        with UploadReader(self.db, upload.id) as stream:
            self._refuse_unless(lambda: check_text(stream, self.settings.max_line_bytes))

    def output_screen(self) -> Screen:
        """:meth:`check_output` on an output while it arrives (an upload's screen), so that one that is no
        text is refused where that shows, before the rest is read."""
        return _OutputScreen(self, TextScreen(self.settings.max_line_bytes))

    @staticmethod
    def _refuse_unless(check: Callable[[], None]) -> None:
        try:
            check()
        except LineTooLong as error:
            raise TooLarge(f"the output cannot be checked: {error}") from None
        except OutputError as error:
            raise Unsupported(f"the output cannot be checked: {error}") from None


class _OutputScreen:
    """A :class:`TextScreen` whose refusals are the service's (``_refuse_unless``)."""

    def __init__(self, service: CheckService, screen: TextScreen) -> None:
        self.service, self.screen = service, screen

    def feed(self, data: bytes) -> None:
        self.service._refuse_unless(lambda: self.screen.feed(data))

    def end(self) -> None:
        self.service._refuse_unless(self.screen.end)


class _Expected:
    """An output to check, made with a new job (a :class:`worker.jobs.service.Attachment`)."""

    def __init__(self, service: CheckService, upload: StoredUpload, filename: str) -> None:
        self.service, self.upload, self.filename = service, upload, filename

    def refuse(self) -> None:
        self.service.check_output(self.upload)

    def attach(self, session: Session, job: Job) -> None:
        if not hold(session, self.upload.id):
            raise Conflict("the output to check was removed meanwhile; send it again")
        lifecycle.new_check(session, job, self.upload, self.filename, self.service.viewer.name)
