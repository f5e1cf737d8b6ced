"""What the service answers: typed views of jobs, cases and the service's state.

Each view is a frozen dataclass whose fields carry their documentation. The JSON API
sends ``view.to_dict()``; the OpenAPI document's schemas (``webui/spec.py``) and the
CSV export's columns are made from the same fields, so the three cannot disagree.

>>> JobPage(items=[], total=0, page=1, per_page=20).to_dict()
{'total': 0, 'per_page': 20, 'page': 1, 'items': [], 'pages': 1}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, ClassVar

from worker import engines
from worker.states import JobStatus, NotifyState


def doc(description: str, **schema: Any) -> Any:
    """A view field's documentation (and any JSON Schema keywords beyond its type), for ``field(metadata=...)``."""
    return field(metadata={"description": description, "schema": schema})


def iso(moment: datetime | None) -> str | None:
    """A moment as the API writes it: ISO 8601 in UTC with a ``Z``."""
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def _json(value: Any) -> Any:
    if isinstance(value, View):
        return value.to_dict()
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, list):
        return [_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    return value


class View:
    """A dataclass the API answers with (see the module's docstring)."""

    #: Properties computed from the fields that the JSON carries too: name → (type, description).
    derived: ClassVar[dict[str, tuple[type, str]]] = {}

    def to_dict(self) -> dict[str, Any]:
        data = {item.name: _json(getattr(self, item.name)) for item in fields(self)}  # type: ignore[arg-type]
        for name in self.derived:
            data[name] = getattr(self, name)
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class DiagnosticView(View):
    message: str = doc("What is wrong.")
    line: int | None = doc("The line it is on, from 1.")
    column: int | None = doc("The column (bytes from the start of the line), from 1.")
    text: str = doc("The message with its place, as shown.")


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextLineView(View):
    line: int = doc("Its number, from 1.")
    text: str = doc("The line as the file has it (its first 200 characters).")


@dataclass(frozen=True, slots=True, kw_only=True)
class FaultView(View):
    line: int = doc("The line the bad case is wrong on, from 1.")
    column: int = doc("The column (bytes from the start of the line), from 1.")
    message: str = doc("What is wrong, with its place, as an upload's error says it.")
    context: list[ContextLineView] = doc("The lines around it: up to two before and two after, and its own.")


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyView(View):
    url: str = doc("The URL POSTed to when the job or check ends (notify_url).")
    signed: bool = doc("Whether the body is signed (a notify_secret was given): X-Dealer-Signature.")
    state: str = doc("waiting for the end; due (sent, or to be sent again at next_at); delivered (answered "
                     "2xx); failed (its retries spent).", enum=[s.value for s in NotifyState])
    attempts: int = doc("Requests made so far.", minimum=0)
    last_status: int | None = doc("The HTTP status of the last answer; null before one, or when the last "
                                  "attempt got none.")
    last_error: str | None = doc("Why the last attempt failed (no connection, refused address, a status not "
                                 "2xx); null when it did not.")
    next_at: datetime | None = doc("When it is sent (again) while due.", format="date-time")
    delivered_at: datetime | None = doc("When it was answered 2xx.", format="date-time")


@dataclass(frozen=True, slots=True, kw_only=True)
class JobView(View):
    id: int = doc("The job's id.")
    game: str = doc("The game's slug.", enum=engines.names())
    filename: str = doc("The uploaded file's name, as sent (never used as a path).")
    size: int = doc("The upload's size in bytes; while the file arrives (a job is made from its first MiB, "
                    "sha256 null), the request's length: an estimate.")
    sha256: str | None = doc("The upload's SHA-256, in hex; null while the file arrives.")
    status: str = doc("Where the job is in its life.", enum=[s.value for s in JobStatus])
    error: str | None = doc("Why the job failed, e.g. the parser's message with line and column.")
    warnings: list[DiagnosticView] = doc("What the reader noticed without failing (a missing terminator, "
                                         "text after it).")
    faults: list[FaultView] = doc("The file's bad cases, read past (the job then ends failed, its good cases "
                                  "kept): the first 100, in file order.")
    fault_count: int = doc("All of the file's bad cases, those beyond the ones listed included.", minimum=0)
    partial_output: str | None = doc("Where the judge output of the cases before the first fault is (of the "
                                     "cases solved, for a job whose cases could not all be solved); null when "
                                     "there is none.")
    partial_cases: int = doc("The cases the partial output is of: those before the first fault (of a job "
                             "whose cases could not all be solved, those solved); 0 without a partial "
                             "output.", minimum=0)
    total: int = doc("Good cases in the file: those read so far while the split runs, all of them once "
                     "total_known.")
    total_known: bool = doc("Whether the split has read the whole file (total is final).")
    expected: int = doc("The cases the file holds: its total once read, estimated from the bytes read until "
                        "then (what progress is a share of).")
    bytes_read: int = doc("Bytes of the upload the split has read (size once it is done).")
    done: int = doc("Cases solved so far (including those copied from an earlier job of the same file).")
    failed_cases: int = doc("Cases that could not be solved within their time budget.")
    cache_hits: int = doc("Cases copied from an earlier job of the same file (the result cache): all of them, or none.")
    counts: dict[str, int] = doc("Solved cases by outcome, in the game's order of outcomes.")
    progress: float = doc("The share of the cases answered, 0 to 1 (while the file is read, of the cases the "
                          "whole file is expected to hold); 1 once the job has succeeded. Of a failed job, "
                          "the share of its file solved, below 1: its cases solved over its good cases and "
                          "its faults (each a case it has no answer to).", minimum=0, maximum=1)
    rate: float = doc("Cases answered per second lately, as of the last chunk stored: the last seconds weigh "
                      "most (a case answered 5 s before weighs 1/e of one answered then); over the whole run "
                      "once the job has ended.")
    eta_seconds: float | None = doc("Seconds the job is expected to take still: the work left over the rate when "
                                    "the last chunk was stored, counting down since; null when it is not running "
                                    "or stalled.")
    stalled: bool = doc("Whether a running job has answered no case for a while (15 s): its time left is "
                        "then unknown.")
    elapsed_seconds: float = doc("Seconds since the job started (to its end once finished).")
    chunk_size: int = doc("Cases per solve task.")
    rerun_of: int | None = doc("The job this one re-runs.")
    owner: str | None = doc("Who made it: the name of the API key it came with (a page's login stands for its key); "
                            "null for a job made in open mode (no keys).")
    shared: bool = doc("Whether its owner shared it with every user of the service: they see its figures and "
                       "its input and check their outputs against it (PATCH /api/jobs/{id}); its answers stay "
                       "its owner's.")
    reveal_answers: bool = doc("Whether the checks others make against it show the judge's lines where they differ.")
    checks: list[int] = doc("The ids of the job's checks (outputs judged against its judge output, "
                            "GET /api/checks/{id}), oldest first; of a job shared with you, your own.")
    created_at: datetime | None = doc("When the job was made.", format="date-time")
    started_at: datetime | None = doc("When its split began.", format="date-time")
    split_at: datetime | None = doc("When its split ended.", format="date-time")
    finished_at: datetime | None = doc("When it ended.", format="date-time")
    notify: NotifyView | None = doc("The callback asked for with notify_url, and its last outcome; null "
                                    "without one.")


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseView(View):
    id: int = doc("The case's id.", csv=True)
    job_id: int = doc("The job it belongs to.", csv=True)
    index: int = doc("Its number in the file, from 1.", csv=True)
    game: str = doc("The game's slug.", csv=True)
    input: str = doc("The canonical input: tokens joined by single spaces.", csv=True)
    outcome: str | None = doc("The outcome (one of the game's outcomes); null when not solved.", csv=True)
    number: int | None = doc("The figure the game is judged by: deals, piles or waits.", csv=True)
    detail: list[Any] | None = doc("The rest of the answer: pile sizes, waited tiles, a draw's first "
                                   "repeated deal.", csv=True)
    line: str | None = doc("The judge output line.", csv=True)
    error: str | None = doc("Why the case was not solved (its time budget ran out).")
    cached: bool = doc("Copied from an earlier job of the same file (the result cache).", csv=True)
    solve_us: int = doc("Microseconds its solving took (in the earlier job, when cached).", csv=True)
    worker: str | None = doc("The worker process that solved it (host:pid).")
    solved_at: datetime | None = doc("When it was stored.", format="date-time", csv=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseDetail(CaseView):
    trace: dict[str, Any] | None = doc("The engine's versioned trace (see each engine's documentation).")
    trace_error: str | None = doc("Why the stored trace cannot be shown (it is damaged); trace is then null.")


#: The CSV export's columns: the case fields marked for it, in the view's order.
CSV_COLUMNS = tuple(item.name for item in fields(CaseView) if item.metadata["schema"].get("csv"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Page(View):
    total: int = doc("Items matching, on every page (see total_exact for results).")
    per_page: int = doc("Items per page.")

    derived = {"pages": (int, "Pages in all (at least 1).")}

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.per_page))


@dataclass(frozen=True, slots=True, kw_only=True)
class JobPage(Page):
    page: int = doc("This page's number, from 1.")
    items: list[JobView] = doc("The jobs, newest first.")


@dataclass(frozen=True, slots=True, kw_only=True)
class CasePage(Page):
    total_exact: bool = doc("Whether total is exact; otherwise at least that many match (filters by time "
                            "or input are counted only so far).")
    page: int | None = doc("This page's number when asked for by number; null when reached by a cursor.")
    next: str | None = doc("The cursor of the next page (pass it as after=); null on the last page.")
    prev: str | None = doc("The cursor of the page before (pass it as before=); null on the first page.")
    items: list[CaseView] = doc("The cases, in the order asked for.")


@dataclass(frozen=True, slots=True, kw_only=True)
class NumberCount(View):
    outcome: str = doc("An outcome.")
    number: int = doc("A number (deals, piles or waits).")
    count: int = doc("Cases with that outcome and number.")


@dataclass(frozen=True, slots=True, kw_only=True)
class DistributionView(View):
    game: str = doc("The game's slug.", enum=engines.names())
    number_name: str = doc("What the numbers count: deals, piles or waits.")
    outcomes: list[str] = doc("The game's outcomes, in order.")
    counts: dict[str, int] = doc("Solved cases by outcome.")
    by_number: list[NumberCount] = doc("Solved cases by outcome and number, by number.")


@dataclass(frozen=True, slots=True, kw_only=True)
class SlowestCase(View):
    id: int = doc("The case's id.")
    index: int = doc("Its number in the file.")
    solve_us: int = doc("Microseconds its solving took.")


@dataclass(frozen=True, slots=True, kw_only=True)
class TimingsView(View):
    job_id: int = doc("The job's id.")
    queued_seconds: float | None = doc("Seconds between upload and the split's start.")
    split_seconds: float | None = doc("Seconds the split took.")
    elapsed_seconds: float = doc("Seconds since the job started (to its end once finished).")
    rate: float = doc("Cases solved per second.")
    solved: int = doc("Cases solved (not cached).")
    cached: int = doc("Cases copied from an earlier job of the same file.")
    solve_us_total: int = doc("Microseconds of solving in all.")
    solve_us_mean: float | None = doc("Mean microseconds per solved case.")
    solve_us_max: int | None = doc("The slowest case's microseconds.")
    solve_us_p99: int | None = doc("Microseconds within which 99 % of the solved cases were solved: the upper "
                                   "edge of the solve-time bucket that holds the 99th percentile; null when none "
                                   "was solved or it lies past the last bucket.")
    slowest_case: SlowestCase | None = doc("The slowest case.")


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerView(View):
    name: str = doc("host:pid of the worker's main process.")
    concurrency: int = doc("Its solving processes.")
    processed: int = doc("Tasks it has run; for a user who sees only its own jobs, the tasks of its jobs it "
                         "ran in the last hour.")
    seen_at: datetime | None = doc("Its last heartbeat.", format="date-time")
    started_at: datetime | None = doc("When it started.", format="date-time")


@dataclass(frozen=True, slots=True, kw_only=True)
class ThroughputPoint(View):
    at: datetime = doc("The interval's start.", format="date-time")
    cases: int = doc("Cases stored in the interval.")
    rate: float = doc("Cases per second over the interval.")


@dataclass(frozen=True, slots=True, kw_only=True)
class ThroughputView(View):
    interval_seconds: int = doc("Seconds per point.")
    cases: int = doc("Cases in all the points.")
    points: list[ThroughputPoint] = doc("Cases per interval, oldest first, with the empty intervals between "
                                        "the first and the last.")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessView(View):
    name: str = doc("host:worker:pid of the process.")
    pid: int = doc("Its process id.")
    job_id: int = doc("The job of the chunk it is solving.")
    chunk_id: int = doc("The chunk it is solving.")
    first_index: int = doc("The chunk's first case, from 1.")
    last_index: int = doc("The chunk's last case (more than first_index + cases - 1 when bad cases of the file "
                          "come between its cases).")
    cases: int = doc("Cases in the chunk.")
    started_at: datetime | None = doc("When it took the chunk.", format="date-time")


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerDetail(View):
    name: str = doc("host:pid of the worker's main process.")
    host: str = doc("The host it runs on.")
    pid: int = doc("Its main process id.")
    alive: bool = doc("Whether its heartbeat is recent (within DEALER_WORKER_TIMEOUT).")
    concurrency: int | None = doc("Its solving processes; null for a worker that has stopped.")
    processed: int = doc("Tasks it has run; for a user who sees only its own jobs, the tasks of its jobs it "
                         "ran in the last hour.")
    started_at: datetime | None = doc("When it started.", format="date-time")
    seen_at: datetime | None = doc("Its last heartbeat.", format="date-time")
    heartbeat_age_seconds: float | None = doc("Seconds since its last heartbeat; null for a worker that has "
                                              "stopped.", minimum=0)
    busy: list[ProcessView] = doc("Its processes that are solving a chunk now.")
    solved_last_minute: int = doc("Cases its processes stored in the last minute.")
    throughput: ThroughputView = doc("Cases it stored over the last hour: for a user who sees only its own "
                                     "jobs, as every figure of a worker, of its jobs alone.")


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkersView(View):
    workers: list[WorkerDetail] = doc("Workers with a heartbeat row or work in the last hour, alive first.")
    solved_last_minute: int = doc("Cases stored by every worker in the last minute (for a user who sees only "
                                  "its own jobs, of its jobs).")
    total: ThroughputView = doc("Cases stored by every worker over the last hour (likewise).")


@dataclass(frozen=True, slots=True, kw_only=True)
class StuckJobView(View):
    id: int = doc("The job's id.")
    status: str = doc("Its status (queued, splitting or solving).")
    filename: str = doc("Its file's name, as sent.")
    still_since: datetime = doc("When it last moved: made, a case answered, its split begun or reading on.",
                                format="date-time")
    still_seconds: float = doc("Seconds since.")


@dataclass(frozen=True, slots=True, kw_only=True)
class OverviewView(View):
    workers: list[WorkerView] = doc("Workers whose heartbeat is recent (within DEALER_WORKER_TIMEOUT, 10 s by default).")
    jobs_by_status: dict[str, int] = doc("Jobs by status.")
    queued_cases: int = doc("Cases of unfinished jobs not answered yet.")
    pending_chunks: int = doc("Chunks waiting for or being solved.")
    queue_depth: int | None = doc("Messages in the broker's queue; null when the broker cannot be reached, or for a user "
                                  "who sees only its own jobs (the queue holds everyone's work).")
    broker_up: bool = doc("Whether the broker answers (what a user who sees only its own jobs is told of "
                          "it).")
    stuck_jobs: list[StuckJobView] = doc("Unfinished jobs that have not moved for several stall periods "
                                         "(DEALER_STALL_SECONDS), oldest first: the recovery sweep sends their "
                                         "work again every period, so one staying here wants an operator.")


@dataclass(frozen=True, slots=True, kw_only=True)
class GameView(View):
    slug: str = doc("The game's slug.")
    title: str = doc("Its name and UVa problem.")
    summary: str = doc("One line on the game.")
    unit: str = doc("What one case is: deck or hand.")
    number_name: str = doc("What a result's number counts.")
    outcomes: list[str] = doc("Its outcomes, in order.")
    input_help: str = doc("What its judge file holds, in a sentence (text between backticks is code).")
    number_help: str = doc("What a result's number counts, in a sentence.")
    detail_label: str = doc("What a result's detail holds.")
    detail_text: str = doc("How a result's detail is shown: {} stands for its values joined by spaces "
                           "(text between backticks is code).")


@dataclass(frozen=True, slots=True, kw_only=True)
class PartHealth(View):
    ok: bool = doc("Whether this part answers.")
    error: str | None = doc("Why not.")


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerHealth(PartHealth):
    queue_depth: int | None = doc("Messages waiting in the queue.")


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkersHealth(PartHealth):
    seen: int = doc("Workers whose heartbeat is recent.")
    names: list[str] = doc("Their names.")


@dataclass(frozen=True, slots=True, kw_only=True)
class HealthView(View):
    ok: bool = doc("Whether everything answers.")
    status: str = doc("ok, degraded (everything answers, but some job has not moved for several stall "
                      "periods: see stuck_jobs) or unavailable.", enum=["ok", "degraded", "unavailable"])
    database: PartHealth = doc("The database.")
    broker: BrokerHealth = doc("The broker.")
    workers: WorkersHealth = doc("The workers.")
    stuck_jobs: list[StuckJobView] = doc("Unfinished jobs that have not moved for several stall periods, oldest "
                                         "first (empty when the database cannot be reached, and where reads are "
                                         "private: the status still says degraded).")
