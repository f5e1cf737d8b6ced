"""Checks over HTTP: the JSON API (``/api/jobs/<id>/checks``, ``/api/checks/<id>``, its cases), each route with
its OpenAPI description, and the pages (a job page's form for another output, the check page with its verdict
and differences)."""

from __future__ import annotations

import csv
import io
from dataclasses import fields
from typing import Any

from flask import Blueprint, Response, g, jsonify, redirect, render_template, request, url_for

from webui import notices
from webui.context import check_queries, checks, queries, service, viewer
from webui.notices import asked, watch
from webui.params import given, paging, present, whole_number
from webui.spec import BAD_REQUEST, Operations, error, json_body, paging_parameters, query, ref
from webui.uploads import program_output, stored_file, takes_files
from worker.checks import wording
from worker.checks.compare import VERDICTS, marks
from worker.checks.queries import DEFAULT_CHECK_CASES, DEFAULT_STANDINGS, FILTERS, NOT_ACCEPTED
from worker.checks.views import CheckCasePage, CheckView, StandingsPage, StandingView
from worker.jobs.errors import Invalid
from worker.jobs.filters import MAX_PER_PAGE
from worker.store.models import MAX_INT
from worker.store.uploads import UploadTooLarge, UploadWriter

check_api = Blueprint("check_api", __name__, url_prefix="/api")
operations = Operations(check_api)
check_pages = Blueprint("check_pages", __name__)

#: A check's cases per page on the check page.
CASES_PER_PAGE = 50
#: The check page's filter of every line (without one, it shows those not accepted when there are any).
ALL_LINES = "all"

NO_JOB = error("No such job.")
#: The standings' formats, the default first.
STANDINGS_FORMATS = ("json", "csv")
STANDING_COLUMNS = tuple(item.name for item in fields(StandingView))
NO_CHECK = error("No such check.")
CHECK = json_body(ref(CheckView), "The check.")
OUTPUT_FILE = {"type": "string", "contentMediaType": "text/plain",
               "description": "A program's output for the job's file: one line per case, LF or CRLF, UTF-8."}


def receive_check(job_id: int) -> CheckView:
    """A check of the request's ``file`` (stored while the form was read) against a job."""
    service().limits.check_quota(new_job=False)  # before the body is read
    request.files  # noqa: B018 - parsing the form streams its files into the database
    writers: list[UploadWriter] = g.get("upload_writers", [])
    if any(writer.size > writer.limit for writer in writers):  # see receive_upload
        raise UploadTooLarge(writers[0].limit)
    found = stored_file("file")
    if found is None:
        raise Invalid("no output in the request: send it as the multipart field 'file'")
    try:
        asked()
        return checks().create_check(job_id, *found)
    except BaseException:
        service().forget_upload(found[0])
        raise


@check_pages.app_template_filter("verdict_label")
def verdict_label(name: str) -> str:
    """A verdict, or a check's status, as every page writes it (and the command line): "Wrong answer"."""
    return wording.verdict_label(name)


@check_pages.app_template_global("place")
def place(line: int, column: int | None = None) -> str:
    """Where in an output, as every page writes it (and the command line): "line 17, column 3"."""
    return wording.place(line, column)


@check_pages.app_template_global("checks_of")
def checks_of(job_id: int) -> list[dict[str, Any]]:
    """A job's checks, for its page."""
    return [check.to_dict() for check in check_queries().job_checks(job_id)]


@operations.get("/jobs/<id:job_id>/checks", "jobChecks", "A job's checks, oldest first", tag="checks",
                responses={"200": json_body({"type": "array", "items": ref(CheckView)}, "The checks."),
                           "400": BAD_REQUEST, "404": NO_JOB})
def job_checks(job_id: int) -> Any:
    return jsonify([check.to_dict() for check in check_queries().job_checks(job_id)])


@operations.post("/jobs/<id:job_id>/checks", "createCheck",
                 "Check an output against the job's judge output, case by case", tag="checks",
                 description="The check is pending until the job has succeeded, then judged on a worker (status "
                             "done). Several outputs can be checked against one job.",
                 request_body={"required": True, "content": {"multipart/form-data": {"schema": {
                     "type": "object", "required": ["file"], "properties": {"file": OUTPUT_FILE,
                                                                            **notices.FIELDS}}}}},
                 responses={
                     "201": {**CHECK, "headers": {"Location": {"schema": {"type": "string"},
                                                               "description": "/api/checks/{id}"}}},
                     "400": error("No file in the request, or a parameter is not valid (a notify_url the rules "
                                  "refuse: the message names the rule)."),
                     "404": NO_JOB,
                     "409": error("The job failed or was cancelled: it has no judge output to check against."),
                     "413": error("The output is over the upload limit, or one of its lines over the line limit "
                                  "(the message says which line), or its owner over its quota of bytes kept."),
                     "415": error("The output is no text: compressed, binary, a NUL byte, not UTF-8 (the message "
                                  "says the line and column).")})
@takes_files(file=program_output)
def create_check(job_id: int) -> Any:
    check = receive_check(job_id)
    if watch("check", check.id):
        check = check_queries().check(check.id)
    return jsonify(check.to_dict()), 201, {"Location": f"/api/checks/{check.id}"}


@operations.get("/jobs/<id:job_id>/standings", "jobStandings",
                "Who checked an output against the job: one row per user, with its latest check", tag="checks",
                description="The job's owner's and admins', as its answers are (a teacher's table of a shared job): each user who checked, "
                            "by name, with the checks it made and its latest one's verdict and counts. "
                            "format=csv gives every row as CSV (the same columns), unpaged.",
                parameters=[query("format", "json (the default): a page of rows; csv: every row.",
                                  {"type": "string", "enum": list(STANDINGS_FORMATS)}),
                            *paging_parameters(DEFAULT_STANDINGS)],
                responses={"200": {"description": "The standings.", "content": {
                    "application/json": {"schema": ref(StandingsPage)},
                    "text/csv": {"schema": {"type": "string"}}}},
                    "400": BAD_REQUEST, "404": NO_JOB})
def job_standings(job_id: int) -> Any:
    args = given(request.args)
    kind = args.get("format", STANDINGS_FORMATS[0])
    if kind not in STANDINGS_FORMATS:
        raise Invalid(f"unknown format {kind[:40]!r}; expected {' or '.join(STANDINGS_FORMATS)}")
    page, per_page = paging(args, DEFAULT_STANDINGS)
    if kind == "json":
        return jsonify(check_queries().standings(job_id, page, per_page).to_dict())
    rows = check_queries().standings(job_id, None).items
    return Response(standings_csv(rows), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="job-{job_id}-standings.csv"'})


def standings_csv(rows: list[StandingView]) -> str:
    """The standings as CSV: a header of the row's fields, then a line per user."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(STANDING_COLUMNS)
    for row in rows:
        data = row.to_dict()
        writer.writerow(["" if data[name] is None else data[name] for name in STANDING_COLUMNS])
    return out.getvalue()


@operations.get("/checks/<id:check_id>", "getCheck", "One check: status, verdict, counts, first difference",
                tag="checks", responses={"200": CHECK, "400": BAD_REQUEST, "404": NO_CHECK})
def get_check(check_id: int) -> Any:
    return jsonify(check_queries().check(check_id).to_dict())


@operations.get("/checks/<id:check_id>/cases", "checkCases",
                "A check's cases (and extra lines) in the output's order, filterable by verdict", tag="checks",
                parameters=[
                    query("verdict", "Only the lines with this verdict (not_accepted: every line that is not "
                          "accepted).", {"type": "string", "enum": list(FILTERS)}),
                    query("page", "Page number, from 1 (past the last page: no items).",
                          {"type": "integer", "minimum": 1, "maximum": MAX_INT, "default": 1}),
                    query("per_page", f"Items per page (at most {MAX_PER_PAGE}).",
                          {"type": "integer", "minimum": 1, "maximum": MAX_PER_PAGE, "default": DEFAULT_CHECK_CASES})],
                responses={"200": json_body(ref(CheckCasePage), "A page of the check's cases."), "400": BAD_REQUEST,
                           "404": NO_CHECK})
def check_cases(check_id: int) -> Any:
    args = given(request.args)
    page, per_page = paging(args, DEFAULT_CHECK_CASES)
    return jsonify(check_queries().check_cases(check_id, args.get("verdict"), page, per_page).to_dict())


@check_pages.post("/jobs/<id:job_id>/checks")
@takes_files(file=program_output)
def add_check(job_id: int) -> Any:
    """The job page's form (without JavaScript too): on to the new check's page."""
    check = receive_check(job_id)
    return redirect(url_for("check_pages.check", check_id=check.id), code=303)


@check_pages.get("/checks/<id:check_id>")
def check(check_id: int) -> str:
    args = present(request.args)
    page = whole_number("page", args.get("page", "1"), 1)
    found = check_queries().check(check_id)
    # The page opens on what the user came for: the lines that are not accepted, when there are any;
    # every line is one click away ("all").
    chosen = args.get("verdict")
    if chosen is None:
        verdict = NOT_ACCEPTED if found.status == "done" and found.verdict != "accepted" else None
    else:
        verdict = None if chosen == ALL_LINES else chosen
    cases = check_queries().check_cases(check_id, verdict, page, CASES_PER_PAGE)
    rows = []
    for item in cases.items:
        row = item.to_dict()
        if item.verdict in ("presentation_error", "wrong_answer") and item.expected is not None \
                and item.got is not None:
            row["expected_runs"], row["got_runs"] = marks(item.expected, item.got)
        rows.append(row)
    job = queries().job(found.job_id)
    return render_template("check.html", page_name="check", check=found.to_dict(), job=job.to_dict(),
                           cases=cases.to_dict(), rows=rows, verdict=verdict or ALL_LINES, verdicts=VERDICTS,
                           labels=wording.VERDICT_LABELS, reads_job=viewer().may_read(job.owner))
