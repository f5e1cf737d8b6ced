"""The job service: the one layer the web app, the CLI and the tasks call.

It creates, cancels, re-runs and deletes jobs, and answers every question the
pages and the API ask, from the database alone.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import accumulate
from pathlib import Path
from typing import Any

from sqlalchemy import Select, delete, func, select, update

from worker import engines
from worker.config import Settings
from worker.db import session_scope
from worker.engines.base import TraceError
from worker.guards import clean_filename, sniff_upload
from worker.models import SOLVE_BUCKETS_US, CaseRow, Chunk, ChunkStatus, Job, JobStatus, WorkerRow, utcnow
from worker.pipeline import ACTIVE, JOB_LOCK, Dispatcher, input_hash, load_trace, lock_job_with_chunks
from worker.uploads import StoredUpload

#: How many bytes of an upload game detection looks at.
SNIFF_BYTES = 8192
#: A worker whose heartbeat is older than this is counted as gone.
WORKER_TIMEOUT = timedelta(seconds=30)
MAX_PER_PAGE = 500


class ServiceError(Exception):
    """A request the service refuses; ``status`` is the HTTP status that fits."""

    status = 400

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class NotFound(ServiceError):
    status = 404


class Conflict(ServiceError):
    status = 409


class TooManyJobs(ServiceError):
    """A client has as many unfinished jobs as it may have at once."""

    status = 429


@dataclass
class Page:
    items: list[dict[str, Any]]
    total: int
    page: int
    per_page: int

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.per_page))

    def to_dict(self) -> dict[str, Any]:
        return {"items": self.items, "total": self.total, "page": self.page, "per_page": self.per_page,
                "pages": self.pages}


@dataclass
class ResultFilter:
    """Filters for results, from query parameters; every value is checked and bound as a parameter."""

    game: str | None = None
    outcome: str | None = None
    number_min: int | None = None
    number_max: int | None = None
    job_id: int | None = None
    since: datetime | None = None
    until: datetime | None = None
    input_text: str | None = None
    sort: str = "index"
    descending: bool = False
    page: int = 1
    per_page: int = 50
    #: Derived from ``input_text`` once the game is known.
    canonical: str | None = field(default=None, init=False)

    SORTS = ("index", "number", "outcome", "solve_us", "solved_at", "job_id")

    @classmethod
    def from_args(cls, args: Mapping[str, str], **fixed: Any) -> ResultFilter:
        values: dict[str, Any] = {}
        text = {k: v.strip() for k, v in args.items() if isinstance(v, str) and v.strip() != ""}
        if "game" in text:
            if text["game"] not in engines.names():
                raise ServiceError(f"unknown game {text['game']!r}; expected one of {', '.join(engines.names())}")
            values["game"] = text["game"]
        for name in ("number_min", "number_max", "job_id"):
            if name in text:
                values[name] = whole_number(name, text[name], 0)
        values["page"] = whole_number("page", text.get("page", "1"), 1)
        values["per_page"] = min(whole_number("per_page", text.get("per_page", "50"), 1), MAX_PER_PAGE)
        for name in ("since", "until"):
            if name in text:
                values[name] = _moment(name, text[name])
        if "outcome" in text:
            values["outcome"] = text["outcome"]
        if "input" in text:
            values["input_text"] = text["input"]
        sort = text.get("sort", "index")
        descending = sort.startswith("-")
        sort = sort.lstrip("-")
        if sort not in cls.SORTS:
            raise ServiceError(f"cannot sort by {sort!r}; expected one of {', '.join(cls.SORTS)}")
        values.update(sort=sort, descending=descending)
        values.update(fixed)
        result = cls(**values)
        result._check()
        return result

    def _check(self) -> None:
        if self.outcome is not None:
            allowed = (engines.get(self.game).outcomes if self.game
                       else sorted({o for e in engines.all_engines() for o in e.outcomes}))
            if self.outcome not in allowed:
                raise ServiceError(f"unknown outcome {self.outcome!r}; expected one of {', '.join(allowed)}")
        if self.input_text is not None:
            if self.game is None:
                raise ServiceError("searching by input needs a game")
            try:
                self.canonical = engines.get(self.game).canonical(self.input_text)
            except engines.InputError as error:
                raise ServiceError(f"input: {error}") from None

    def apply(self, query: Select[Any]) -> Select[Any]:
        conditions = []
        if self.game is not None:
            conditions.append(CaseRow.game == self.game)
        if self.outcome is not None:
            conditions.append(CaseRow.outcome == self.outcome)
        if self.number_min is not None:
            conditions.append(CaseRow.number >= self.number_min)
        if self.number_max is not None:
            conditions.append(CaseRow.number <= self.number_max)
        if self.job_id is not None:
            conditions.append(CaseRow.job_id == self.job_id)
        if self.since is not None:
            conditions.append(CaseRow.solved_at >= self.since)
        if self.until is not None:
            conditions.append(CaseRow.solved_at < self.until)
        if self.canonical is not None and self.game is not None:
            conditions.append(CaseRow.input_hash == input_hash(self.game, self.canonical))
            conditions.append(CaseRow.input == self.canonical)
        return query.where(*conditions)

    def order(self, query: Select[Any]) -> Select[Any]:
        column = getattr(CaseRow, self.sort)
        first = column.desc() if self.descending else column.asc()
        return query.order_by(first, CaseRow.id.desc() if self.descending else CaseRow.id)


def whole_number(name: str, raw: str, minimum: int) -> int:
    """A query parameter as a whole number of at least ``minimum``, or a ServiceError saying why not."""
    try:
        value = int(raw)
    except ValueError:
        raise ServiceError(f"{name} must be a whole number, not {raw!r}") from None
    if value < minimum:
        raise ServiceError(f"{name} must be at least {minimum}")
    return value


def _moment(name: str, raw: str) -> datetime:
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise ServiceError(f"{name} must be a date or time like 2026-11-30 or 2026-11-30T12:00, not {raw!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=utcnow().tzinfo)
    return moment


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def job_to_dict(job: Job, now: datetime | None = None) -> dict[str, Any]:
    now = now or utcnow()
    end = job.finished_at or now
    elapsed = (end - job.started_at).total_seconds() if job.started_at else 0.0
    rate = job.done / elapsed if elapsed > 0 and job.done else 0.0
    remaining = max(job.total - job.done - job.failed_cases, 0)
    finished = JobStatus(job.status).finished
    return {
        "id": job.id, "game": job.game, "filename": job.filename, "size": job.size, "sha256": job.sha256,
        "status": job.status, "error": job.error, "warnings": job.warnings,
        "total": job.total, "done": job.done, "failed_cases": job.failed_cases, "cache_hits": job.cache_hits,
        "counts": {o: job.counts.get(o, 0) for o in engines.get(job.game).outcomes},
        "progress": 1.0 if job.status == JobStatus.SUCCEEDED else (
            (job.done + job.failed_cases) / job.total if job.total else 0.0),
        "rate": round(rate, 1),
        "eta_seconds": None if finished or not rate or job.status != JobStatus.SOLVING else round(remaining / rate, 1),
        "elapsed_seconds": round(elapsed, 3),
        "chunk_size": job.chunk_size, "rerun_of": job.rerun_of,
        "created_at": _iso(job.created_at), "started_at": _iso(job.started_at), "split_at": _iso(job.split_at),
        "finished_at": _iso(job.finished_at),
    }


def case_to_dict(row: CaseRow, with_trace: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": row.id, "job_id": row.job_id, "index": row.index, "game": row.game, "input": row.input,
        "outcome": row.outcome, "number": row.number, "detail": row.detail, "line": row.line,
        "error": row.error, "cached": row.cached, "solve_us": row.solve_us, "worker": row.worker,
        "solved_at": _iso(row.solved_at),
    }
    if with_trace:
        try:
            data["trace"] = load_trace(row.game, row.trace)
        except TraceError as error:  # shown on the case, not a failed request
            data["trace"], data["trace_error"] = None, str(error)
    return data


#: What a solve task aims to spend solving (see ``JobService.chunk_size``), and the bounds of its size.
CHUNK_TARGET_US = 50_000
CHUNK_BOUNDS = (100, 5_000)


class JobService:
    def __init__(self, settings: Settings, dispatcher: Dispatcher) -> None:
        self.settings = settings
        self.dispatcher = dispatcher
        self.url = settings.database_url

    # --- writes ---

    def create_job(self, upload: StoredUpload, filename: str, game: str | None = None,
                   client: str | None = None, rerun_of: int | None = None) -> dict[str, Any]:
        """A new job for a stored upload; the game is recognised from the content when not given.

        ``client`` (an API key's name, else an address) is held to ``max_active_jobs_per_client``.
        """
        if game is not None and game not in engines.names():
            raise ServiceError(f"unknown game {game!r}; expected one of {', '.join(engines.names())}")
        self.check_upload(upload)
        if game is None:
            game = self.detect_game(upload)
        with session_scope(self.url) as session:
            self._check_active_jobs(session, client)
            job = Job(game=game, filename=clean_filename(filename), upload_path=str(upload.path),
                      sha256=upload.sha256, size=upload.size, status=JobStatus.QUEUED,
                      chunk_size=self.chunk_size(session, game), client=client, rerun_of=rerun_of,
                      warnings=[], counts={}, progress_at=utcnow())
            session.add(job)
            session.flush()
            data = job_to_dict(job)
        try:
            self.dispatcher.split(data["id"])
        except Exception:  # noqa: BLE001 - the sweep sends queued jobs again once the broker is back
            pass
        return data

    def chunk_size(self, session: Any, game: str) -> int:
        """Cases per solve task for a new job: ``DEALER_CHUNK_SIZE`` when set, else as many as
        take about :data:`CHUNK_TARGET_US` to solve, by the game's last finished job (or the
        engine's typical time before it has one). A task costs a few milliseconds of
        transactions and messaging, small next to that, and is short enough for steady
        progress and a prompt cancel: hundreds of decks, thousands of mahjong hands.
        """
        if self.settings.chunk_size:
            return self.settings.chunk_size
        per_case: float = engines.get(game).typical_solve_us
        last = session.execute(
            select(Job.solve_us, Job.done - Job.cache_hits)
            .where(Job.game == game, Job.status == JobStatus.SUCCEEDED, Job.done - Job.cache_hits >= 1000)
            .order_by(Job.id.desc()).limit(1)).first()
        if last is not None:
            per_case = last[0] / last[1]
        low, high = CHUNK_BOUNDS
        return max(low, min(high, round(CHUNK_TARGET_US / max(per_case, 1.0))))

    def check_upload(self, upload: StoredUpload) -> None:
        """Refuse an upload that is empty or plainly no judge file (compressed, binary, UTF-16)."""
        if upload.size == 0:
            raise ServiceError("the file is empty")
        with open(upload.path, "rb") as stream:
            head = stream.read(SNIFF_BYTES)
        problem = sniff_upload(head, upload.size)
        if problem is not None:
            raise ServiceError(problem)

    def _check_active_jobs(self, session: Any, client: str | None) -> None:
        """429 when ``client`` already has as many unfinished jobs as it may (counted under a lock)."""
        limit = self.settings.max_active_jobs_per_client
        if not limit or client is None:
            return
        if session.get_bind().dialect.name == "postgresql":  # SQLite writers are serialised already
            session.execute(select(func.pg_advisory_xact_lock(input_hash("client", client))))
        active = session.scalar(select(func.count()).select_from(Job).where(
            Job.client == client, Job.status.in_([JobStatus.QUEUED, *ACTIVE]))) or 0
        if active >= limit:
            jobs = "1 job" if active == 1 else f"{active} jobs"
            raise TooManyJobs(f"you already have {jobs} queued or running, the limit per client; "
                              "wait for one to finish (or cancel one), then try again")

    def detect_game(self, upload: StoredUpload) -> str:
        with open(upload.path, "rb") as stream:
            head = stream.read(SNIFF_BYTES)
        game = engines.detect(head)
        if game is None:
            raise ServiceError("cannot tell which game this file is for; choose one of "
                               + ", ".join(engines.names()))
        return game

    def cancel(self, job_id: int) -> dict[str, Any]:
        with session_scope(self.url) as session:
            job = self._job(session, job_id, lock=True, chunks=True)
            if JobStatus(job.status).finished:
                raise Conflict(f"job {job_id} has already {job.status}")
            job.status = JobStatus.CANCELLED
            job.finished_at = utcnow()
            job.lease_until = None
            session.execute(update(Chunk).where(Chunk.job_id == job_id,
                                                Chunk.status.in_([ChunkStatus.PENDING, ChunkStatus.RUNNING]))
                            .values(status=ChunkStatus.CANCELLED, inputs=None))
            return job_to_dict(job)

    def rerun(self, job_id: int, client: str | None = None) -> dict[str, Any]:
        with session_scope(self.url) as session:
            job = self._job(session, job_id)
            upload = StoredUpload(path=Path(job.upload_path), sha256=job.sha256, size=job.size)
            filename, game = job.filename, job.game
        try:
            open(upload.path, "rb").close()
        except OSError:
            raise Conflict(f"the upload of job {job_id} is no longer stored") from None
        return self.create_job(upload, filename, game, client=client, rerun_of=job_id)

    def delete(self, job_id: int) -> None:
        """Delete a finished job, its cases, and its upload unless another job uses it."""
        with session_scope(self.url) as session:
            job = self._job(session, job_id, lock=True, chunks=True)
            if not JobStatus(job.status).finished:
                raise Conflict(f"job {job_id} is still {job.status}; cancel it first")
            path = job.upload_path
            session.execute(delete(CaseRow).where(CaseRow.job_id == job_id))
            session.delete(job)
            session.flush()
            shared = session.scalar(select(func.count()).select_from(Job).where(Job.upload_path == path))
        if not shared:
            Path(path).unlink(missing_ok=True)

    def forget_upload(self, upload: StoredUpload) -> None:
        """Remove a stored upload that no job refers to (after a refused upload)."""
        with session_scope(self.url, write=False) as session:
            used = session.scalar(select(func.count()).select_from(Job).where(Job.upload_path == str(upload.path)))
        if not used:
            upload.path.unlink(missing_ok=True)

    # --- reads ---

    def _job(self, session: Any, job_id: int, lock: bool = False, chunks: bool = False) -> Job:
        """The job, locked with ``lock``; ``chunks`` locks its chunks first (to change them)."""
        if chunks:
            job = lock_job_with_chunks(session, job_id)
        else:
            job = session.get(Job, job_id, with_for_update=JOB_LOCK if lock else None)
        if job is None:
            raise NotFound(f"no job {job_id}")
        return job

    def job(self, job_id: int) -> dict[str, Any]:
        with session_scope(self.url, write=False) as session:
            return job_to_dict(self._job(session, job_id))

    def jobs(self, page: int = 1, per_page: int = 20, status: str | None = None,
             game: str | None = None) -> Page:
        per_page = max(1, min(per_page, MAX_PER_PAGE))
        page = max(1, page)
        query = select(Job)
        if status is not None:
            if status not in [s.value for s in JobStatus]:
                raise ServiceError(f"unknown status {status!r}; expected one of "
                                   + ", ".join(s.value for s in JobStatus))
            query = query.where(Job.status == status)
        if game is not None:
            query = query.where(Job.game == game)
        with session_scope(self.url, write=False) as session:
            total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
            rows = session.scalars(query.order_by(Job.id.desc()).offset((page - 1) * per_page).limit(per_page))
            now = utcnow()
            return Page([job_to_dict(job, now) for job in rows], total, page, per_page)

    def results(self, flt: ResultFilter) -> Page:
        """Cases matching a filter (one job's results, or the history across jobs)."""
        with session_scope(self.url, write=False) as session:
            if flt.job_id is not None:
                self._job(session, flt.job_id)
            base = flt.apply(select(CaseRow))
            total = session.scalar(select(func.count()).select_from(base.subquery())) or 0
            rows = session.scalars(flt.order(base).offset((flt.page - 1) * flt.per_page).limit(flt.per_page))
            return Page([case_to_dict(row) for row in rows], total, flt.page, flt.per_page)

    def iter_results(self, flt: ResultFilter) -> Iterator[dict[str, Any]]:
        """Every case matching a filter, streamed (for exports)."""
        with session_scope(self.url, write=False) as session:
            query = flt.order(flt.apply(select(CaseRow))).execution_options(yield_per=2000)
            for row in session.scalars(query):
                yield case_to_dict(row)

    def case(self, case_id: int) -> dict[str, Any]:
        with session_scope(self.url, write=False) as session:
            row = session.get(CaseRow, case_id)
            if row is None:
                raise NotFound(f"no case {case_id}")
            return case_to_dict(row, with_trace=True)

    def case_by_index(self, job_id: int, index: int) -> dict[str, Any]:
        with session_scope(self.url, write=False) as session:
            row = session.scalar(select(CaseRow).where(CaseRow.job_id == job_id, CaseRow.index == index))
            if row is None:
                raise NotFound(f"job {job_id} has no case {index}")
            return case_to_dict(row, with_trace=True)

    def output(self, job_id: int, partial: bool = False) -> Iterator[str]:
        """The judge output, line by line with newlines, exactly as the reference solutions print it."""
        with session_scope(self.url, write=False) as session:
            job = self._job(session, job_id)
            if job.status != JobStatus.SUCCEEDED and not partial:
                raise Conflict(f"job {job_id} is {job.status}; its output is complete once it has succeeded")
        return self._output_lines(job_id)

    def _output_lines(self, job_id: int) -> Iterator[str]:
        with session_scope(self.url, write=False) as session:
            query = (select(CaseRow.line).where(CaseRow.job_id == job_id, CaseRow.line.is_not(None))
                     .order_by(CaseRow.index).execution_options(yield_per=5000))
            batch: list[str] = []
            for line in session.scalars(query):
                batch.append(line)
                if len(batch) == 5000:
                    yield "\n".join(batch) + "\n"
                    batch = []
            if batch:
                yield "\n".join(batch) + "\n"

    def distribution(self, job_id: int) -> dict[str, Any]:
        """Counts of (outcome, number) for a job: what the job page's charts draw."""
        with session_scope(self.url, write=False) as session:
            job = self._job(session, job_id)
            query = (select(CaseRow.outcome, CaseRow.number, func.count())
                     .where(CaseRow.job_id == job_id, CaseRow.outcome.is_not(None))
                     .group_by(CaseRow.outcome, CaseRow.number))
            rows = [{"outcome": o, "number": n, "count": c} for o, n, c in session.execute(query)]
            engine = engines.get(job.game)
            return {"game": job.game, "number_name": engine.number_name, "outcomes": list(engine.outcomes),
                    "counts": job_to_dict(job)["counts"], "by_number": sorted(rows, key=lambda r: (r["number"],
                                                                                                 r["outcome"]))}

    def overview(self) -> dict[str, Any]:
        """Workers seen, work waiting, jobs by status: the dashboard's header and /healthz."""
        now = utcnow()
        with session_scope(self.url, write=False) as session:
            workers = session.scalars(select(WorkerRow).where(WorkerRow.seen_at >= now - WORKER_TIMEOUT)).all()
            by_status = dict(session.execute(select(Job.status, func.count()).group_by(Job.status)).all())
            queued_cases = session.scalar(
                select(func.coalesce(func.sum(Job.total - Job.done - Job.failed_cases), 0))
                .where(Job.status.in_([JobStatus.SPLITTING, JobStatus.SOLVING]))) or 0
            pending_chunks = session.scalar(select(func.count()).select_from(Chunk).where(
                Chunk.status.in_([ChunkStatus.PENDING, ChunkStatus.RUNNING]))) or 0
            return {
                "workers": [{"name": w.name, "concurrency": w.concurrency, "processed": w.processed,
                             "seen_at": _iso(w.seen_at), "started_at": _iso(w.started_at)} for w in workers],
                "jobs_by_status": {s.value: by_status.get(s.value, 0) for s in JobStatus},
                "queued_cases": int(queued_cases),
                "pending_chunks": int(pending_chunks),
            }

    # --- health, metrics and timings (read-only; for /healthz, /metrics and the job page) ---

    def health(self) -> dict[str, Any]:
        """Whether the database and the broker answer and a worker has been seen lately.

        Never raises: a part that cannot be reached is reported with the reason.
        """
        report: dict[str, Any] = {}
        try:
            with session_scope(self.url, write=False) as session:
                session.execute(select(1))
                workers = session.scalars(select(WorkerRow.name).where(
                    WorkerRow.seen_at >= utcnow() - WORKER_TIMEOUT)).all()
            report["database"] = {"ok": True}
            report["workers"] = {"ok": bool(workers), "seen": len(workers), "names": sorted(workers)}
        except Exception as error:  # noqa: BLE001 - any database trouble is "not reachable"
            report["database"] = {"ok": False, "error": _reason(error)}
            report["workers"] = {"ok": False, "seen": 0, "names": [], "error": "unknown: the database is down"}
        try:
            depth = self.dispatcher.queue_depth()
        except Exception:  # noqa: BLE001 - queue_depth should not raise, but a health check must not either
            depth = None
        report["broker"] = ({"ok": True, "queue_depth": depth} if depth is not None
                            else {"ok": False, "error": "the broker cannot be reached"})
        report["ok"] = all(part["ok"] for part in report.values())
        return report

    def metrics(self) -> dict[str, Any]:
        """The figures ``/metrics`` exposes, from the job rows (so it costs the same at a billion cases).

        ``solve_histograms`` counts solved (not cached) cases per game whose solve time is at
        most each bound of :data:`SOLVE_BUCKETS_US`, cumulatively, as Prometheus histograms want.
        """
        with session_scope(self.url, write=False) as session:
            by_status = dict(session.execute(select(Job.status, func.count()).group_by(Job.status)).all())
            solved: Counter[tuple[str, str]] = Counter()
            histograms: dict[str, dict[str, Any]] = {}
            for game, counts, hist, solve_us in session.execute(
                    select(Job.game, Job.counts, Job.solve_hist, Job.solve_us)):
                solved.update({(game, outcome): n for outcome, n in counts.items()})
                if hist:
                    figures = histograms.setdefault(game, {"count": 0, "sum_us": 0,
                                                           "per_bucket": [0] * (len(SOLVE_BUCKETS_US) + 1)})
                    figures["count"] += sum(hist)
                    figures["sum_us"] += solve_us
                    figures["per_bucket"] = [a + b for a, b in zip(figures["per_bucket"], hist, strict=True)]
            for figures in histograms.values():
                figures["buckets"] = list(accumulate(figures.pop("per_bucket")))[:-1]
            workers = session.scalar(select(func.count()).select_from(WorkerRow).where(
                WorkerRow.seen_at >= utcnow() - WORKER_TIMEOUT)) or 0
            pending_chunks = session.scalar(select(func.count()).select_from(Chunk).where(
                Chunk.status.in_([ChunkStatus.PENDING, ChunkStatus.RUNNING]))) or 0
        return {
            "jobs_by_status": {s.value: int(by_status.get(s.value, 0)) for s in JobStatus},
            "cases_solved": [{"game": g, "outcome": o, "count": c} for (g, o), c in sorted(solved.items()) if c],
            "solve_histograms": dict(sorted(histograms.items())),
            "workers": int(workers),
            "pending_chunks": int(pending_chunks),
            "queue_depth": self.dispatcher.queue_depth(),
        }

    def timings(self, job_id: int) -> dict[str, Any]:
        """How long a job's phases and its cases took: the job page's timings panel."""
        with session_scope(self.url, write=False) as session:
            job = self._job(session, job_id)
            data = job_to_dict(job)
            count, total_us, mean_us, max_us = session.execute(
                select(func.count(), func.coalesce(func.sum(CaseRow.solve_us), 0), func.avg(CaseRow.solve_us),
                       func.max(CaseRow.solve_us))
                .where(CaseRow.job_id == job_id, CaseRow.cached.is_(False), CaseRow.outcome.is_not(None))).one()
            slowest = session.execute(
                select(CaseRow.id, CaseRow.index, CaseRow.solve_us)
                .where(CaseRow.job_id == job_id, CaseRow.cached.is_(False), CaseRow.outcome.is_not(None))
                .order_by(CaseRow.solve_us.desc(), CaseRow.index).limit(1)).first()

        def between(start: datetime | None, end: datetime | None) -> float | None:
            return round((end - start).total_seconds(), 3) if start and end else None

        return {
            "job_id": job_id,
            "queued_seconds": between(job.created_at, job.started_at),
            "split_seconds": between(job.started_at, job.split_at),
            "elapsed_seconds": data["elapsed_seconds"],
            "rate": data["rate"],
            "solved": int(count), "cached": data["cache_hits"],
            "solve_us_total": int(total_us),
            "solve_us_mean": round(float(mean_us), 1) if mean_us is not None else None,
            "solve_us_max": int(max_us) if max_us is not None else None,
            "slowest_case": ({"id": slowest[0], "index": slowest[1], "solve_us": slowest[2]}
                             if slowest is not None else None),
        }


def _reason(error: BaseException) -> str:
    """An exception in one line, without a driver's multi-line detail."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:300]
