"""Read models of checks: a check, a job's checks, and pages of a check's cases filtered by verdict, as
typed views (:mod:`worker.checks.views`); what the pages and the API ask, as
:class:`worker.jobs.queries.JobQueries` answers for jobs.

A page never reads in proportion to the output: the parts' counts (a few dozen rows for a
million lines) say which parts hold the page, and only those are decompressed; the judge's
lines come from the chunks holding the page's cases (:func:`worker.store.chunks.judge_lines`).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from worker.checks.compare import ACCEPTED, EXTRA, KEEPS_GOT, VERDICTS, first_column
from worker.checks.views import (
    CheckCasePage,
    CheckCaseView,
    CheckCounts,
    CheckView,
    DifferenceView,
    StandingsPage,
    StandingView,
)
from worker.jobs.errors import Invalid, NotFound
from worker.jobs.filters import MAX_PER_PAGE
from worker.jobs.queries import notify_view
from worker.states import NO_OUTPUT, CheckStatus
from worker.store.chunks import judge_lines
from worker.store.codecs import decompress
from worker.store.database import Database
from worker.store.models import Check, CheckPart, Job, case_id
from worker.store.owners import EVERYTHING, Viewer

#: A check's cases per page when the client does not say.
DEFAULT_CHECK_CASES = 50
#: Rows of a job's standings per page when the client does not say.
DEFAULT_STANDINGS = 50

_CODES = {name: code.to_bytes(1, "big") for code, name in enumerate(VERDICTS)}
#: The filter of every line that is not accepted (what the check page opens on when there are any).
NOT_ACCEPTED = "not_accepted"
FILTERS = (*VERDICTS, NOT_ACCEPTED)


class CheckQueries:
    """The reads of checks as ``viewer`` may make them: a check is seen by whoever sees its job."""

    def __init__(self, db: Database, viewer: Viewer = EVERYTHING) -> None:
        self.db = db
        self.viewer = viewer

    def seen_by(self, viewer: Viewer) -> CheckQueries:
        found = object.__new__(CheckQueries)
        found.db, found.viewer = self.db, viewer
        return found

    def check(self, check_id: int) -> CheckView:
        with self.db.session(write=False) as session:
            return get_check(session, check_id, self.viewer)

    def job_checks(self, job_id: int) -> list[CheckView]:
        """A job's checks, oldest first."""
        with self.db.session(write=False) as session:
            return _job_checks(session, job_id, self.viewer)

    def standings(self, job_id: int, page: int | None = 1, per_page: int = DEFAULT_STANDINGS) -> StandingsPage:
        """The job's standings (its owner's and admins', as its answers are): one row per user who checked an
        output against it, with its latest check; every row when ``page`` is ``None``."""
        with self.db.session(write=False) as session:
            return _standings(session, job_id, self.viewer, None if page is None else max(1, page),
                              max(1, min(per_page, MAX_PER_PAGE)))

    def check_cases(self, check_id: int, verdict: str | None = None, page: int = 1,
                    per_page: int = DEFAULT_CHECK_CASES) -> CheckCasePage:
        """A page of a check's cases (and extra lines), only those with ``verdict`` when given."""
        verdict = _verdict(verdict)
        with self.db.session(write=False) as session:
            return _check_cases(session, check_id, verdict, max(1, page), max(1, min(per_page, MAX_PER_PAGE)),
                                self.viewer)


def check_view(check: Check, job_status: str, answers: bool = True) -> CheckView:
    """A check as the API shows it; a pending check of a job that ended without an output has failed.
    Without ``answers`` (a check of a shared job whose owner did not reveal them), its first difference
    says where, not the judge's line."""
    status, error = check.status, check.error
    if status == CheckStatus.PENDING and job_status in NO_OUTPUT:
        status, error = CheckStatus.FAILED, f"job {check.job_id} {job_status}: there is no judge output to check against"
    counts = {name: int(check.counts.get(name, 0)) for name in VERDICTS}
    first = check.first_difference
    if first and not answers:
        first = {**first, "expected": None}
    return CheckView(id=check.id, job_id=check.job_id, status=status, verdict=check.verdict,
                     counts=CheckCounts(**counts), first_difference=DifferenceView(**first) if first else None,
                     error=error, filename=check.filename, size=check.size, sha256=check.sha256, owner=check.owner,
                     cases=sum(counts.values()) - counts["extra"], lines=check.lines, created_at=check.created_at,
                     finished_at=check.finished_at, notify=notify_view(check),
                     answers_shown=answers)


def get_check(session: Session, check_id: int, viewer: Viewer = EVERYTHING) -> CheckView:
    check, job = _check(session, check_id, viewer)
    return check_view(check, job.status, viewer.sees_answers(job.owner, job.reveal_answers))


def _check(session: Session, check_id: int, viewer: Viewer) -> tuple[Check, Any]:
    """A check the viewer sees (:meth:`Viewer.checks`), with its job's status, owner and whether it reveals
    its answers."""
    found = session.execute(select(Check, Job.status, Job.owner, Job.reveal_answers).join(Job, Job.id == Check.job_id)
                            .where(Check.id == check_id, viewer.checks(Check.owner, Job.owner, Job.shared),
                                   Job.deleted_at.is_(None))).one_or_none()
    if found is None:
        raise NotFound(f"no check {check_id}")
    return found[0], found


def _job_checks(session: Session, job_id: int, viewer: Viewer) -> list[CheckView]:
    job = session.execute(select(Job.status, Job.owner, Job.shared, Job.reveal_answers)
                          .where(Job.id == job_id, viewer.reads_shared(Job.owner, Job.shared),
                                 Job.deleted_at.is_(None))).one_or_none()
    if job is None:
        raise NotFound(f"no job {job_id}")
    answers = viewer.sees_answers(job.owner, job.reveal_answers)
    return [check_view(check, job.status, answers)
            for check in session.scalars(select(Check).join(Job, Job.id == Check.job_id).where(
                Check.job_id == job_id, viewer.checks(Check.owner, Job.owner, Job.shared)).order_by(Check.id))]


def _standings(session: Session, job_id: int, viewer: Viewer, page: int | None, per_page: int) -> StandingsPage:
    """One row per user who checked an output against a job whose answers the viewer reads (its owner, an
    admin; anyone with public reads), by name; every row when ``page`` is ``None``."""
    status = session.scalar(select(Job.status).where(Job.id == job_id, viewer.reads(Job.owner),
                                                     Job.deleted_at.is_(None)))
    if status is None:
        raise NotFound(f"no job {job_id}")
    users = (select(Check.owner.label("name"), func.count().label("made"), func.max(Check.id).label("latest"))
             .where(Check.job_id == job_id).group_by(Check.owner).subquery())
    total = session.scalar(select(func.count()).select_from(users)) or 0
    query = (select(users.c.name, users.c.made, Check).join(Check, Check.id == users.c.latest)
             .order_by(users.c.name.is_(None), users.c.name))
    if page is not None:
        query = query.offset((page - 1) * per_page).limit(per_page)
    rows = []
    for name, made, check in session.execute(query):
        view = check_view(check, status)
        rows.append(StandingView(name=name, checks=made, check_id=check.id, checked_at=check.created_at,
                                 status=view.status, verdict=view.verdict, **view.counts.to_dict()))
    return StandingsPage(job_id=job_id, page=page or 1, per_page=per_page if page is not None else max(total, 1),
                         total=total, items=rows)


def _verdict(raw: str | None) -> str | None:
    """A verdict filter, or :class:`Invalid` naming the verdicts."""
    if raw is None or raw in FILTERS:
        return raw
    raise Invalid(f"unknown verdict {raw[:40]!r}; expected one of " + ", ".join(FILTERS))


def _codes(verdict: str | None) -> frozenset[int] | None:
    """The verdict codes a filter takes (``None``: every line)."""
    if verdict is None:
        return None
    if verdict == NOT_ACCEPTED:
        return frozenset(range(len(VERDICTS))) - {ACCEPTED}
    return frozenset({VERDICTS.index(verdict)})


def _check_cases(session: Session, check_id: int, verdict: str | None, page: int, per_page: int,
                 viewer: Viewer) -> CheckCasePage:
    """A page of a check's lines in the output's order, only those with ``verdict`` when given."""
    check, job = _check(session, check_id, viewer)
    answers = viewer.sees_answers(job.owner, job.reveal_answers)
    # The case pages show the job's answers: linked only for whoever reads them.
    links = viewer.may_read(job.owner)
    code = _codes(verdict)
    total = sum(int(n) for name, n in check.counts.items() if code is None or VERDICTS.index(name) in code)
    rows: list[tuple[int, int, str | None]] = []  # (line, verdict code, got line when kept)
    if check.status == CheckStatus.DONE:
        rows = _page_rows(session, check, code, (page - 1) * per_page, per_page)
    cases = sum(int(n) for n in check.counts.values()) - int(check.counts.get("extra", 0))
    expected = judge_lines(session, check.job_id, [line for line, _, _ in rows if line <= cases])
    items = [_case_line(check.job_id, line, verdict_code, got, expected.get(line), answers, links)
             for line, verdict_code, got in rows]
    return CheckCasePage(check_id=check.id, verdict=verdict, page=page, per_page=per_page, total=total, items=items)


def _case_line(job_id: int, line: int, verdict_code: int, got: str | None, judge_line: str | None, answers: bool,
               links: bool) -> CheckCaseView:
    """One line of a check as its page shows it: the judge's line only to who sees the answers, links to the
    job's case only for who reads the job."""
    if verdict_code == ACCEPTED:
        got = judge_line
    is_case = verdict_code != EXTRA
    column = first_column(judge_line, got) if verdict_code in KEEPS_GOT and is_case and judge_line is not None \
        and got is not None else None
    linked = is_case and links
    return CheckCaseView(
        index=line, case=line if is_case else None, verdict=VERDICTS[verdict_code],
        expected=judge_line if answers else None, got=got, column=column,
        case_id=case_id(job_id, line) if linked else None,
        case_url=f"/api/jobs/{job_id}/cases/{line}" if linked else None,
        replay_url=f"/jobs/{job_id}/cases/{line}" if linked else None)


def _page_rows(session: Session, check: Check, code: frozenset[int] | None, skip: int,
               limit: int) -> list[tuple[int, int, str | None]]:
    parts = session.execute(select(CheckPart.seq, CheckPart.count, CheckPart.counts)
                            .where(CheckPart.check_id == check.id, CheckPart.attempt == check.attempt)
                            .order_by(CheckPart.seq)).all()
    rows: list[tuple[int, int, str | None]] = []
    for part in parts:
        matching = part.count if code is None else sum(int(part.counts[c]) for c in code)
        if skip >= matching:
            skip -= matching
            continue
        blobs = session.execute(select(CheckPart.first_line, CheckPart.verdicts, CheckPart.got)
                                .where(CheckPart.check_id == check.id, CheckPart.attempt == check.attempt,
                                       CheckPart.seq == part.seq)).one()
        rows += _part_rows(blobs, code, skip, limit - len(rows))
        skip = 0
        if len(rows) >= limit:
            break
    return rows


def _part_rows(blobs: Any, code: frozenset[int] | None, skip: int,
               limit: int) -> list[tuple[int, int, str | None]]:
    """Up to ``limit`` lines of one part past the first ``skip`` that match."""
    verdicts = decompress(blobs.verdicts)
    if code is None:
        places = list(range(skip, min(skip + limit, len(verdicts))))
    else:
        wanted = re.compile(b"[" + b"".join(re.escape(_CODES[VERDICTS[c]]) for c in sorted(code)) + b"]")
        places = [found.start() for found in itertools.islice(wanted.finditer(verdicts), skip, skip + limit)]
    got: list[str] | None = None
    rows = []
    for k in places:
        verdict = verdicts[k]
        line: str | None = None
        if verdict in KEEPS_GOT:
            if got is None:
                got = decompress(blobs.got).decode().split("\n")
            kept = k - verdicts.count(_CODES["accepted"], 0, k) - verdicts.count(_CODES["missing"], 0, k)
            line = got[kept]
        rows.append((blobs.first_line + k, verdict, line))
    return rows

