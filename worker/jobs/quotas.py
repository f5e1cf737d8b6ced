"""Per-owner quotas: the bytes an owner keeps and the jobs it keeps, each held to a limit per role.

What an owner keeps, in bytes: the files of its jobs not deleted, the outputs of its checks,
its uploads still arriving (their size so far, written with each block) and the bytes of its
uploads refused or abandoned in the last hour (``refused_bytes``), so that a file refused
again and again is held to the quota as well. ``DEALER_QUOTA_BYTES`` and ``DEALER_QUOTA_JOBS``
give the limits per role (:class:`worker.config.PerRole`); an admin has none unless its role is
named, and without keys (open mode: no owner) nothing is counted. Over the bytes is ``413``
(:class:`~worker.jobs.errors.TooLarge`), over the jobs ``429``
(:class:`~worker.jobs.errors.TooManyJobs`), each naming the limit and what is used. :class:`Limits` checks
them against the database for the job service, with the jobs a client may have unfinished and make a
minute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from worker.config import PerRole, Settings
from worker.jobs.errors import TooLarge, TooManyJobs
from worker.states import UNFINISHED, UploadState
from worker.store.codecs import lock_key
from worker.store.database import Database
from worker.store.models import ARRIVING, Check, Job, RefusedBytes, Upload, utcnow
from worker.store.owners import Viewer
from worker.units import format_size

#: How long the bytes of a refused upload count against its owner.
REFUSED_FOR = timedelta(hours=1)


@dataclass(frozen=True)
class Usage:
    """What an owner keeps: bytes (``refused`` of them those of the last hour's refused uploads) and jobs."""

    bytes: int
    refused: int
    jobs: int


def usage(session: Session, owner: str) -> Usage:
    kept = Job.owner == owner, Job.deleted_at.is_(None)
    # A job's file still arriving counts as its upload does (``arriving``): its size is an estimate until then.
    files = session.scalar(select(func.coalesce(func.sum(Job.size), 0)).where(*kept, Job.sha256 != ARRIVING)) or 0
    jobs = session.scalar(select(func.count()).select_from(Job).where(*kept)) or 0
    outputs = session.scalar(select(func.coalesce(func.sum(Check.size), 0)).join(Job, Job.id == Check.job_id)
                             .where(Check.owner == owner, Job.deleted_at.is_(None))) or 0
    arriving = session.scalar(select(func.coalesce(func.sum(Upload.size), 0)).where(
        Upload.owner == owner, Upload.state == UploadState.RECEIVING)) or 0
    refused = session.scalar(select(func.coalesce(func.sum(RefusedBytes.bytes), 0)).where(
        RefusedBytes.owner == owner, RefusedBytes.hour >= utcnow() - REFUSED_FOR)) or 0
    return Usage(int(files + outputs + arriving + refused), int(refused), int(jobs))


def limit(limits: PerRole, admin: bool) -> int | None:
    """An owner's limit: its role's, an admin's only when named.

    >>> days = PerRole.parse("X", "user=10,5")
    >>> limit(days, admin=False), limit(days, admin=True), limit(PerRole.parse("X", "admin=7"), admin=True)
    (10, None, 7)
    """
    if admin and not limits.named("admin"):
        return None
    found = limits.of("admin" if admin else "user")
    return None if found is None else int(found)


class Quotas:
    """The quotas of one owner (``None``: open mode, none), for the services to check."""

    def __init__(self, settings: Settings, owner: str | None, admin: bool) -> None:
        self.owner = owner
        self.max_bytes = limit(settings.quota_bytes, admin) if owner else None
        self.max_jobs = limit(settings.quota_jobs, admin) if owner else None
        self.role = "an admin" if admin else "a user"

    def check(self, session: Session, incoming: int = 0, new_job: bool = False) -> None:
        """Refuse when the owner keeps more bytes than it may (with ``incoming`` more, arriving and not yet
        in the database), or, for a ``new_job``, as many jobs as it may."""
        if self.owner is None or (self.max_bytes is None and (self.max_jobs is None or not new_job)):
            return
        used = usage(session, self.owner)
        if new_job and self.max_jobs is not None and used.jobs >= self.max_jobs:
            raise TooManyJobs(f"you keep {used.jobs:,} jobs, and {self.role} may keep {self.max_jobs:,} "
                              "(DEALER_QUOTA_JOBS): delete some of your jobs to make new ones", retry_after=60)
        # Nothing incoming yet (before a file is read): a file of one byte more would be over.
        if self.max_bytes is not None and used.bytes + max(incoming, 1) > self.max_bytes:
            refused = f", {format_size(used.refused)} of them refused in the last hour" if used.refused else ""
            raise TooLarge(f"you keep {format_size(used.bytes + incoming)} of files{refused}, and {self.role} may "
                           f"keep {format_size(self.max_bytes)} (DEALER_QUOTA_BYTES): delete some of your jobs "
                           "to send more")


class Limits:
    """What ``viewer`` may still make and keep, checked against the database: its quotas, and the jobs a
    client (an API key's name, else an address) may have unfinished and make a minute."""

    def __init__(self, db: Database, settings: Settings, viewer: Viewer) -> None:
        self.db = db
        self.settings = settings
        self.quotas = Quotas(settings, viewer.name, viewer.admin)

    def check_quota(self, new_job: bool) -> None:
        """Refuse, before an upload is read, a viewer that keeps as many bytes as it may (or, for a
        ``new_job``, as many jobs): ``413``/``429`` naming the limit and what is used."""
        with self.db.session(write=False) as session:
            self.quotas.check(session, new_job=new_job)

    def upload_quota(self) -> Callable[[int], None] | None:
        """What an upload's writer calls before each block it stores (:attr:`UploadWriter.quota`), with the
        bytes received that the database does not count yet: refuses it once it is over the viewer's
        quota of bytes; ``None`` when the viewer has none."""
        quotas = self.quotas
        if quotas.max_bytes is None:
            return None

        def check(incoming: int) -> None:
            with self.db.session(write=False) as session:
                quotas.check(session, incoming=incoming)

        return check

    def check_client(self, client: str | None) -> None:
        """:class:`TooManyJobs` when ``client`` may not create a job now: checked before an upload is read,
        so that a refused client does not send its whole file first (a job's making checks again)."""
        with self.db.session(write=False) as session:
            self._check_client(session, client)

    def check_new_job(self, session: Session, client: str | None, incoming: int) -> None:
        """Refuse a new job of ``incoming`` bytes, in the transaction that makes it: the client's limits
        (counted under a lock) and the viewer's quotas."""
        self._check_client(session, client, locked=True)
        self.quotas.check(session, incoming=incoming, new_job=True)

    def _check_client(self, session: Session, client: str | None, locked: bool = False) -> None:
        """Refuse when ``client`` has as many unfinished jobs as it may, or created as many as it may in the
        last minute (counted under a lock when ``locked``)."""
        if client is None:
            return
        if locked and self.db.postgres:  # SQLite writers are serialised already
            session.execute(select(func.pg_advisory_xact_lock(lock_key("client", client))))
        limit = self.settings.max_active_jobs_per_client
        if limit:
            active = session.scalar(select(func.count()).select_from(Job).where(
                Job.client == client, Job.status.in_(UNFINISHED))) or 0
            if active >= limit:
                jobs = "1 job" if active == 1 else f"{active} jobs"
                raise TooManyJobs(f"you already have {jobs} queued or running, the limit per client; "
                                  "wait for one to finish (or cancel one), then try again")
        per_minute = self.settings.max_jobs_per_minute_per_client
        if per_minute:
            now = utcnow()
            recent = session.scalars(select(Job.created_at).where(
                Job.client == client, Job.created_at > now - timedelta(minutes=1))
                .order_by(Job.created_at.desc()).limit(per_minute)).all()
            if len(recent) >= per_minute:
                wait = max(1.0, 60.0 - (now - recent[-1]).total_seconds())
                raise TooManyJobs(f"you have created {per_minute} jobs in the last minute, the limit per client; "
                                  f"try again in {wait:.0f} s", retry_after=wait)
