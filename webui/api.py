"""The JSON API (DESIGN.md's table): everything the pages do, for scripts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, g, jsonify, request, stream_with_context

from webui import service
from webui.auth import client_id
from worker import engines
from worker.service import ResultFilter, ServiceError, whole_number
from worker.uploads import UploadTooLarge, UploadWriter

api = Blueprint("api", __name__, url_prefix="/api")


def _int_arg(name: str, default: int, minimum: int = 1) -> int:
    return whole_number(name, request.args.get(name) or str(default), minimum)


def _game_arg() -> str | None:
    game = request.args.get("game") or None
    if game is not None and game not in engines.names():
        raise ServiceError(f"unknown game {game!r}; expected one of {', '.join(engines.names())}")
    return game


def receive_upload() -> dict[str, Any]:
    """Create a job from the request's ``file`` (streamed to disk) and optional ``game``."""
    upload = request.files.get("file")
    # Werkzeug's form parser swallows the writer's UploadTooLarge (a ValueError) and drops the
    # field, so an upload over the limit would look like no upload at all: ask the writers.
    writers = g.get("upload_writers", [])
    if any(writer.size > writer.limit for writer in writers):
        raise UploadTooLarge(writers[0].limit)
    if upload is None:
        raise ServiceError("no file in the request: send it as the multipart field 'file'")
    writer = upload.stream
    if not isinstance(writer, UploadWriter):  # pragma: no cover - our request class always does this
        raise ServiceError("the upload was not streamed to disk")
    stored = writer.commit()
    game = request.form.get("game") or None
    try:
        return service().create_job(stored, upload.filename or "upload", game, client=client_id())
    except BaseException:
        service().forget_upload(stored)
        raise


@api.post("/jobs")
def create_job() -> Any:
    job = receive_upload()
    return jsonify(job), 201, {"Location": f"/api/jobs/{job['id']}"}


@api.get("/jobs")
def list_jobs() -> Any:
    page = service().jobs(_int_arg("page", 1), _int_arg("per_page", 20),
                          request.args.get("status") or None, _game_arg())
    return jsonify(page.to_dict())


@api.get("/jobs/<int:job_id>")
def get_job(job_id: int) -> Any:
    return jsonify(service().job(job_id))


@api.delete("/jobs/<int:job_id>")
def delete_job(job_id: int) -> Any:
    service().delete(job_id)
    return "", 204


@api.post("/jobs/<int:job_id>/cancel")
def cancel_job(job_id: int) -> Any:
    return jsonify(service().cancel(job_id))


@api.post("/jobs/<int:job_id>/rerun")
def rerun_job(job_id: int) -> Any:
    job = service().rerun(job_id, client=client_id())
    return jsonify(job), 201, {"Location": f"/api/jobs/{job['id']}"}


@api.get("/jobs/<int:job_id>/output")
def job_output(job_id: int) -> Response:
    lines = service().output(job_id, partial=request.args.get("partial") in ("1", "true", "yes"))
    job = service().job(job_id)
    name = f"job-{job_id}-{job['game']}.out"
    return Response(stream_with_context(lines), mimetype="text/plain",
                    headers={"Content-Disposition": f'inline; filename="{name}"'})


@api.get("/jobs/<int:job_id>/cases")
def job_cases(job_id: int) -> Any:
    flt = ResultFilter.from_args(request.args, job_id=job_id, game=service().job(job_id)["game"])
    return jsonify(service().results(flt).to_dict())


@api.get("/jobs/<int:job_id>/cases/<int:index>")
def job_case(job_id: int, index: int) -> Any:
    return jsonify(service().case_by_index(job_id, index))


@api.get("/jobs/<int:job_id>/distribution")
def job_distribution(job_id: int) -> Any:
    return jsonify(service().distribution(job_id))


@api.get("/jobs/<int:job_id>/timings")
def job_timings(job_id: int) -> Any:
    return jsonify(service().timings(job_id))


@api.get("/cases/<int:case_id>")
def get_case(case_id: int) -> Any:
    return jsonify(service().case(case_id))


@api.get("/results")
def search_results() -> Any:
    return jsonify(service().results(ResultFilter.from_args(request.args)).to_dict())


@api.get("/results/export")
def export_results() -> Response:
    """Every matching result as NDJSON (``format=ndjson``, the default) or CSV (``format=csv``)."""
    flt = ResultFilter.from_args(request.args)
    kind = request.args.get("format", "ndjson")
    if kind not in ("ndjson", "csv"):
        raise ServiceError(f"unknown export format {kind!r}; expected ndjson or csv")
    name = "results"
    if flt.job_id is not None:
        service().job(flt.job_id)  # 404 for a job that does not exist, before the download starts
        name = f"job-{flt.job_id}-results"
    rows = service().iter_results(flt)
    body = _csv(rows) if kind == "csv" else (json.dumps(row) + "\n" for row in rows)
    mimetype = "text/csv" if kind == "csv" else "application/x-ndjson"
    return Response(stream_with_context(body), mimetype=mimetype,
                    headers={"Content-Disposition": f'attachment; filename="{name}.{kind}"'})


CSV_COLUMNS = ("id", "job_id", "index", "game", "input", "outcome", "number", "detail", "line", "cached",
               "solve_us", "solved_at")


def _csv(rows: Iterator[dict[str, Any]]) -> Iterator[str]:
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        row = dict(row, detail=" ".join(map(str, row["detail"] or [])))
        writer.writerow([row[c] for c in CSV_COLUMNS])
        if buffer.tell() > 1 << 16:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


@api.get("/overview")
def overview() -> Any:
    """The service's state for the dashboard: workers seen, work waiting, and the broker's queue depth."""
    return jsonify(dict(service().overview(), queue_depth=service().dispatcher.queue_depth()))


@api.get("/games")
def games() -> Any:
    return jsonify([{"slug": e.slug, "title": e.title, "summary": e.summary, "unit": e.unit,
                     "number_name": e.number_name, "outcomes": list(e.outcomes)} for e in engines.all_engines()])


@api.get("/openapi.json")
def openapi_document() -> Any:
    from webui.openapi import document

    return jsonify(document())
