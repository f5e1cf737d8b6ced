"""The JSON API (DESIGN.md's table): everything the pages do, for scripts."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import Any

import orjson
from flask import Blueprint, Response, jsonify, request, stream_with_context

from webui.auth import client_id
from webui.context import dealer, queries, service
from webui.params import flag, paging, present, result_filter
from webui.uploads import receive_upload
from worker import engines
from worker.jobs.errors import Invalid
from worker.jobs.queries import EXPORT_FIELDS
from worker.jobs.views import CSV_COLUMNS, GameView, iso

api = Blueprint("api", __name__, url_prefix="/api")

#: Jobs per page when the client does not say.
JOBS_PER_PAGE = 20
EXPORT_FORMATS = ("ndjson", "csv")


@api.post("/jobs")
def create_job() -> Any:
    job = receive_upload()
    return jsonify(job.to_dict()), 201, {"Location": f"/api/jobs/{job.id}"}


@api.get("/jobs")
def list_jobs() -> Any:
    page, per_page = paging(request.args, JOBS_PER_PAGE)
    args = present(request.args)
    return jsonify(queries().jobs(page, per_page, args.get("status"), args.get("game")).to_dict())


@api.get("/jobs/<int:job_id>")
def get_job(job_id: int) -> Any:
    return jsonify(queries().job(job_id).to_dict())


@api.delete("/jobs/<int:job_id>")
def delete_job(job_id: int) -> Any:
    service().delete(job_id)
    return "", 204


@api.post("/jobs/<int:job_id>/cancel")
def cancel_job(job_id: int) -> Any:
    return jsonify(service().cancel(job_id).to_dict())


@api.post("/jobs/<int:job_id>/rerun")
def rerun_job(job_id: int) -> Any:
    job = service().rerun(job_id, client=client_id())
    return jsonify(job.to_dict()), 201, {"Location": f"/api/jobs/{job.id}"}


@api.get("/jobs/<int:job_id>/output")
def job_output(job_id: int) -> Response:
    partial = present(request.args).get("partial")
    lines = queries().output(job_id, partial=flag("partial", partial) if partial is not None else False)
    name = f"job-{job_id}-{queries().job(job_id).game}.out"
    return Response(stream_with_context(lines), mimetype="text/plain",
                    headers={"Content-Disposition": f'inline; filename="{name}"'})


@api.get("/jobs/<int:job_id>/cases")
def job_cases(job_id: int) -> Any:
    flt = result_filter(request.args, job_id=job_id, game=queries().job(job_id).game)
    return jsonify(queries().results(flt).to_dict())


@api.get("/jobs/<int:job_id>/cases/<int:index>")
def job_case(job_id: int, index: int) -> Any:
    return jsonify(queries().case_by_index(job_id, index).to_dict())


@api.get("/jobs/<int:job_id>/distribution")
def job_distribution(job_id: int) -> Any:
    return jsonify(queries().distribution(job_id).to_dict())


@api.get("/jobs/<int:job_id>/timings")
def job_timings(job_id: int) -> Any:
    return jsonify(queries().timings(job_id).to_dict())


@api.get("/cases/<int:case_id>")
def get_case(case_id: int) -> Any:
    return jsonify(queries().case(case_id).to_dict())


@api.get("/results")
def search_results() -> Any:
    return jsonify(queries().results(result_filter(request.args)).to_dict())


@api.get("/results/export")
def export_results() -> Response:
    """Every matching result as NDJSON (``format=ndjson``, the default) or CSV (``format=csv``)."""
    flt = result_filter(request.args)
    kind = request.args.get("format", "ndjson")
    if kind not in EXPORT_FORMATS:
        raise Invalid(f"unknown export format {kind!r}; expected {' or '.join(EXPORT_FORMATS)}")
    name = "results"
    if flt.job_id is not None:
        queries().job(flt.job_id)  # 404 for a job that does not exist, before the download starts
        name = f"job-{flt.job_id}-results"
    rows = queries().iter_results(flt)
    body = _csv(rows) if kind == "csv" else _ndjson(rows)
    mimetype = "text/csv" if kind == "csv" else "application/x-ndjson"
    return Response(stream_with_context(body), mimetype=mimetype,
                    headers={"Content-Disposition": f'attachment; filename="{name}.{kind}"'})


def _csv(batches: Iterator[list[tuple[Any, ...]]]) -> Iterator[str]:
    """CSV of the export's rows. Every field Dealer stores is a number or a canonical token string, so
    a row is written by joining; a batch with a field that would need quoting goes through the
    csv module instead."""
    places = [EXPORT_FIELDS.index(column) for column in CSV_COLUMNS]
    texts = [EXPORT_FIELDS.index(name) for name in ("input", "line")]
    detail, moment = places.index(EXPORT_FIELDS.index("detail")), places.index(EXPORT_FIELDS.index("solved_at"))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    yield ",".join(CSV_COLUMNS) + "\n"
    for batch in batches:
        if not batch:
            continue
        times: dict[Any, str] = {}
        rows = []
        for row in batch:
            out = ["" if value is None else value for value in map(row.__getitem__, places)]
            if out[detail] != "":
                out[detail] = " ".join(map(str, out[detail]))
            when = out[moment]
            out[moment] = times[when] if when in times else times.setdefault(when, iso(when) or "")
            rows.append(out)
        if _NEEDS_QUOTES.search("\x1f".join(str(row[place] or "") for row in batch for place in texts)):
            writer.writerows(rows)
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
        else:
            yield "\n".join(",".join(map(str, out)) for out in rows) + "\n"


_NEEDS_QUOTES = re.compile(r'[",\r\n]')


def _ndjson(batches: Iterator[list[tuple[Any, ...]]]) -> Iterator[bytes]:
    dumps, option = orjson.dumps, orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z | orjson.OPT_APPEND_NEWLINE
    for batch in batches:
        yield b"".join(dumps(dict(zip(EXPORT_FIELDS, row, strict=True)), option=option) for row in batch)


@api.get("/overview")
def overview() -> Any:
    """The service's state for the dashboard: workers seen, work waiting, and the broker's queue depth."""
    return jsonify(queries().overview(dealer().dispatcher.queue_depth()).to_dict())


def game_views() -> list[GameView]:
    return [GameView(slug=e.slug, title=e.title, summary=e.summary, unit=e.unit, number_name=e.number_name,
                     outcomes=list(e.outcomes)) for e in engines.all_engines()]


@api.get("/games")
def games() -> Any:
    return jsonify([game.to_dict() for game in game_views()])


@api.get("/openapi.json")
def openapi_document() -> Any:
    from webui.openapi import document

    return jsonify(document())
