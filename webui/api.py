"""The JSON API of jobs and of the service (the guide's API page lists them: docs/api.md), each route with its OpenAPI description.

A job's results are in :mod:`webui.results`, its checks in :mod:`webui.checks`.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request

from webui import notices
from webui.auth import client_id
from webui.context import dealer, queries, service
from webui.export import streamed
from webui.games import game_views
from webui.notices import watch
from webui.params import JOBS_PER_PAGE, flag, given, job_filters, paging
from webui.spec import (
    BAD_REQUEST,
    FLAG,
    NOT_FOUND,
    TEXT,
    TOO_MANY,
    Operations,
    error,
    json_body,
    paging_parameters,
    query,
    ref,
)
from webui.uploads import judge_file, program_output, receive_upload, takes_files
from worker import engines
from worker.jobs.errors import Invalid
from worker.jobs.queries import MAX_FILENAME_FILTER
from worker.states import JobStatus
from worker.jobs.views import (
    GameView,
    JobPage,
    JobView,
    OverviewView,
    ThroughputView,
    TimingsView,
    WorkersView,
)
from worker.store.models import OWNER_LENGTH

api = Blueprint("api", __name__, url_prefix="/api")
operations = Operations(api)

JOB = ref(JobView)
JOB_CREATED = {"201": json_body(JOB, "The new job."), "400": BAD_REQUEST}


@operations.get("/jobs", "listJobs", "Jobs, newest first, paged", tag="jobs", parameters=[
    query("status", "Only jobs in this status.", {"type": "string", "enum": [s.value for s in JobStatus]}),
    query("game", "Only jobs of this game.", {"type": "string", "enum": engines.names()}),
    query("filename", "Only jobs whose file name contains this text (any case).",
          {**TEXT, "maxLength": MAX_FILENAME_FILTER}),
    query("owner", "Only jobs made with the API key of this name (of those the key may see: an admin's filter).",
          {**TEXT, "maxLength": OWNER_LENGTH}),
    query("shared", "1: only the jobs shared with every user (yours and those others shared with you); 0: only "
          "those not shared.", FLAG),
    *paging_parameters(JOBS_PER_PAGE)],
    responses={"200": json_body(ref(JobPage), "A page of jobs."), "400": BAD_REQUEST})
def list_jobs() -> Any:
    args = given(request.args)
    page, per_page = paging(args, JOBS_PER_PAGE)
    return jsonify(queries().jobs(page, per_page, **job_filters(args)).to_dict())


@operations.post("/jobs", "createJob", "Upload a judge file and start a job", tag="jobs", request_body={
    "required": True, "content": {"multipart/form-data": {"schema": {"type": "object", "required": ["file"], "properties": {
        "file": {"type": "string", "contentMediaType": "application/octet-stream", "description":
                 "The judge file. One over 1 MiB is solved while it arrives: its job is made from its first MiB "
                 "on (listed meanwhile, its sha256 null), and goes with it if the rest is refused."},
        "game": {"type": "string", "enum": engines.names(),
                 "description": "Optional when the game can be recognised from the content."},
        "expected": {"type": "string", "contentMediaType": "text/plain",
                     "description": "Optional: a program's output for this file, checked against the job's once it "
                                    "has succeeded (its check's id is in the job's checks)."},
        **notices.FIELDS,
        "shared": {**FLAG, "description": "Optional: 1 to share the job with every user of the service at once "
                                          "(as PATCH /api/jobs/{id} does)."},
    }}}}},
    responses={**JOB_CREATED, "400": error(
        "The file is refused at once, nothing stored: it is empty, compressed (gzip, zip, …) or binary, or its game "
        "cannot be told; or a parameter is not valid (a notify_url the rules refuse: the message names the rule)."),
        "413": error("The file is over the upload limit, or its owner over its quota of bytes kept (the message "
                     "says the limit and what is used)."), "429": TOO_MANY,
        "415": error("The expected output is no text (the message says the line and column).")})
@takes_files(job_from="file", file=judge_file, expected=program_output)
def create_job() -> Any:
    job = receive_upload()
    if watch("job", job.id):
        job = queries().job(job.id)
    return jsonify(job.to_dict()), 201, {"Location": f"/api/jobs/{job.id}"}


@operations.get("/jobs/<id:job_id>", "getJob", "One job with its progress and outcome counts", tag="jobs",
                responses={"200": json_body(JOB, "The job."), "404": NOT_FOUND})
def get_job(job_id: int) -> Any:
    return jsonify(queries().job(job_id).to_dict())


SHARING = {"type": "object", "additionalProperties": False, "minProperties": 1, "properties": {
    "shared": {"type": "boolean", "description": "true shares the job with every user of the service: they see its "
                                                 "figures and its input and check their outputs against it, each "
                                                 "seeing only their own checks; false withdraws it."},
    "reveal_answers": {"type": "boolean", "description": "true lets the checks others make against it show the "
                                                         "judge's lines where theirs differ; false (the default) "
                                                         "shows only which cases differ and where."}}}


@operations.patch("/jobs/<id:job_id>", "shareJob", "Share a job with every user, or withdraw it", tag="jobs",
                  description="Its owner's or an admin's: the fields given change, the others stay.",
                  request_body={"required": True, "content": {"application/json": {"schema": SHARING}}},
                  responses={"200": json_body(JOB, "The job."),
                             "400": error("The body is not a JSON object of the fields shared and reveal_answers, "
                                          "each true or false."), "404": NOT_FOUND})
def share_job(job_id: int) -> Any:
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or not body:
        raise Invalid('the body must be a JSON object, e.g. {"shared": true}')
    for name, value in body.items():
        if name not in SHARING["properties"]:
            raise Invalid(f"{str(name)[:40]}: no such field (shared, reveal_answers)")
        if not isinstance(value, bool):
            raise Invalid(f"{name}: must be true or false, not {value!r:.40}")
    return jsonify(service().share(job_id, body.get("shared"), body.get("reveal_answers")).to_dict())


@operations.delete("/jobs/<id:job_id>", "deleteJob", "Delete a finished job and its results", tag="jobs",
                   responses={"204": {"description": "Deleted."}, "404": NOT_FOUND,
                              "409": error("The job is still running.")})
def delete_job(job_id: int) -> Any:
    service().delete(job_id)
    return "", 204


@operations.post("/jobs/<id:job_id>/cancel", "cancelJob", "Cancel a job", tag="jobs",
                 responses={"200": json_body(JOB, "The cancelled job."), "404": NOT_FOUND,
                            "409": error("The job has already finished.")})
def cancel_job(job_id: int) -> Any:
    cancelled = service().cancel(job_id)
    notices.send_due(job_id)
    return jsonify(cancelled.to_dict())


@operations.post("/jobs/<id:job_id>/rerun", "rerunJob", "Run a job's upload again as a new job", tag="jobs",
                 responses={**JOB_CREATED, "404": NOT_FOUND, "409": error("The upload is no longer stored."),
                            "413": error("The owner keeps as many bytes as its quota allows (the message says "
                                         "the limit and what is used)."),
                            "429": TOO_MANY})
def rerun_job(job_id: int) -> Any:
    job = service().rerun(job_id, client=client_id())
    return jsonify(job.to_dict()), 201, {"Location": f"/api/jobs/{job.id}"}


@operations.get("/jobs/<id:job_id>/output", "jobOutput",
                "The judge output, byte for byte as the reference solutions print it", tag="jobs",
                parameters=[query("partial", "1 to get the lines solved so far of an unfinished (or a failed) job; "
                                  "of a file with faults, those of the cases before its first fault (the job's "
                                  "partial_output).", FLAG)],
                responses={"200": {"description": "The output.", "content": {"text/plain": {"schema": {"type": "string"}}}},
                           "400": BAD_REQUEST, "404": NOT_FOUND,
                           "409": error("The job has not succeeded (yet); of a failed job, where its partial output "
                                        "is.")})
def job_output(job_id: int) -> Response:
    partial = given(request.args).get("partial")
    lines = queries().output(job_id, partial=flag("partial", partial) if partial is not None else False)
    name = f"job-{job_id}-{queries().job(job_id).game}.out"
    return Response(streamed(lines), mimetype="text/plain",
                    headers={"Content-Disposition": f'inline; filename="{name}"'})


@operations.get("/jobs/<id:job_id>/lines", "jobKeptLines",
                "The judge line of every case the job keeps, in file order", tag="jobs",
                responses={"200": {"description": "Of a failed job, every good case's line, those after its first "
                                                  "fault too: a bad case has none, and mahjong's lines keep their "
                                                  "case numbers in the file (its results and exports say which "
                                                  "line is which case's). Of a job under way, the lines solved so "
                                                  "far; of one that succeeded, its output.",
                                   "content": {"text/plain": {"schema": {"type": "string"}}}},
                           "404": NOT_FOUND})
def job_kept_lines(job_id: int) -> Response:
    lines = queries().kept_lines(job_id)
    name = f"job-{job_id}-{queries().job(job_id).game}.kept.out"
    return Response(streamed(lines), mimetype="text/plain",
                    headers={"Content-Disposition": f'inline; filename="{name}"'})


@operations.get("/jobs/<id:job_id>/input", "jobInput",
                "The judge file as the split read it: each case's canonical input on a line, then the terminator",
                tag="jobs",
                responses={"200": {"description": "A judge file that reads back to the job's cases (the upload "
                                                  "itself is kept only until its split ends).",
                                   "content": {"text/plain": {"schema": {"type": "string"}}}},
                           "404": NOT_FOUND, "409": error("The job's file has not been read whole (yet).")})
def job_input(job_id: int) -> Response:
    texts = queries().input(job_id)
    name = f"job-{job_id}-{queries().job(job_id).game}.in"
    return Response(streamed(texts), mimetype="text/plain",
                    headers={"Content-Disposition": f'inline; filename="{name}"'})


@operations.get("/jobs/<id:job_id>/timings", "jobTimings", "How long the job's phases and cases took", tag="jobs",
                responses={"200": json_body(ref(TimingsView), "The timings."), "404": NOT_FOUND})
def job_timings(job_id: int) -> Any:
    return jsonify(queries().timings(job_id).to_dict())


@operations.get("/jobs/<id:job_id>/throughput", "jobThroughput", "Cases the job stored over its run, per interval",
                tag="jobs", responses={"200": json_body(ref(ThroughputView), "The throughput."), "404": NOT_FOUND})
def job_throughput(job_id: int) -> Any:
    return jsonify(queries().job_throughput(job_id).to_dict())


@operations.get("/overview", "overview", "Workers seen, work waiting, jobs by status", tag="service",
                responses={"200": json_body(ref(OverviewView), "The overview.")})
def overview() -> Any:
    """The service's state for the dashboard: workers seen, work waiting, and the broker's queue depth."""
    return jsonify(queries().overview(dealer().dispatcher.queue_depth()).to_dict())


@operations.get("/workers", "workers", "Every worker, its processes busy now and its throughput over the last hour",
                tag="service", responses={"200": json_body(ref(WorkersView), "The workers.")})
def workers() -> Any:
    return jsonify(queries().workers().to_dict())


@operations.get("/games", "games", "The games Dealer solves", tag="service", database=False,
                responses={"200": json_body({"type": "array", "items": ref(GameView)}, "The games.")})
def games() -> Any:
    """Each game with the texts the pages show of it (what its judge file holds, its number, its detail)."""
    return jsonify([game.to_dict() for game in game_views()])
