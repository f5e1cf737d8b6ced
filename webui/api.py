"""The JSON API (DESIGN.md's table): everything the pages do, for scripts."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import Any

import orjson
from flask import Blueprint, Response, current_app, jsonify, request, stream_with_context

from webui.auth import client_id
from webui.context import dealer, queries, service
from webui.params import flag, given, paging, result_filter
from webui.uploads import receive_upload
from worker import engines
from worker.jobs.errors import Invalid
from worker.jobs.queries import ExportBatch
from worker.jobs.views import GameView, iso
from worker.store.models import CASE_ID_BASE

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
    args = given(request.args)
    page, per_page = paging(args, JOBS_PER_PAGE)
    return jsonify(queries().jobs(page, per_page, args.get("status"), args.get("game"),
                                  args.get("filename")).to_dict())


@api.get("/jobs/<id:job_id>")
def get_job(job_id: int) -> Any:
    return jsonify(queries().job(job_id).to_dict())


@api.delete("/jobs/<id:job_id>")
def delete_job(job_id: int) -> Any:
    service().delete(job_id)
    return "", 204


@api.post("/jobs/<id:job_id>/cancel")
def cancel_job(job_id: int) -> Any:
    return jsonify(service().cancel(job_id).to_dict())


@api.post("/jobs/<id:job_id>/rerun")
def rerun_job(job_id: int) -> Any:
    job = service().rerun(job_id, client=client_id())
    return jsonify(job.to_dict()), 201, {"Location": f"/api/jobs/{job.id}"}


@api.get("/jobs/<id:job_id>/output")
def job_output(job_id: int) -> Response:
    partial = given(request.args).get("partial")
    lines = queries().output(job_id, partial=flag("partial", partial) if partial is not None else False)
    name = f"job-{job_id}-{queries().job(job_id).game}.out"
    return Response(streamed(lines), mimetype="text/plain",
                    headers={"Content-Disposition": f'inline; filename="{name}"'})


def streamed(pieces: Iterator[Any]) -> Iterator[Any]:
    """A streamed body whose first piece is made now, so that an error there is still an error
    answer; an error later (the headers are sent) is logged and ends the body early."""
    first = next(pieces, None)

    def rest() -> Iterator[Any]:
        if first is None:
            return
        yield first
        try:
            yield from pieces
        except Exception:  # noqa: BLE001 - nothing else can be said to the client any more
            current_app.logger.exception("a streamed answer failed half-way: it was cut short")

    return stream_with_context(rest())


@api.get("/jobs/<id:job_id>/cases")
def job_cases(job_id: int) -> Any:
    flt = result_filter(given(request.args), job_id=job_id, game=queries().job(job_id).game)
    return jsonify(queries().results(flt).to_dict())


@api.get("/jobs/<id:job_id>/cases/<id:index>")
def job_case(job_id: int, index: int) -> Any:
    return jsonify(queries().case_by_index(job_id, index).to_dict())


@api.get("/jobs/<id:job_id>/distribution")
def job_distribution(job_id: int) -> Any:
    return jsonify(queries().distribution(job_id).to_dict())


@api.get("/jobs/<id:job_id>/timings")
def job_timings(job_id: int) -> Any:
    return jsonify(queries().timings(job_id).to_dict())


@api.get("/cases/<case_id:case_id>")
def get_case(case_id: int) -> Any:
    return jsonify(queries().case(case_id).to_dict())


@api.get("/results")
def search_results() -> Any:
    return jsonify(queries().results(result_filter(given(request.args))).to_dict())


@api.get("/results/export")
def export_results() -> Response:
    """Every matching result as NDJSON (``format=ndjson``, the default) or CSV (``format=csv``)."""
    args = given(request.args)
    flt = result_filter(args)
    kind = args.get("format", "ndjson")
    if kind not in EXPORT_FORMATS:
        raise Invalid(f"unknown export format {kind!r}; expected {' or '.join(EXPORT_FORMATS)}")
    name = "results"
    if flt.job_id is not None:
        queries().job(flt.job_id)  # 404 for a job that does not exist, before the download starts
        name = f"job-{flt.job_id}-results"
    rows = queries().iter_results(flt)
    body = _csv(rows) if kind == "csv" else _ndjson(rows)
    mimetype = "text/csv" if kind == "csv" else "application/x-ndjson"
    return Response(streamed(body), mimetype=mimetype,
                    headers={"Content-Disposition": f'attachment; filename="{name}.{kind}"'})


#: What the CSV formatter below writes, in order; tests/web/test_openapi.py checks it against the views.
CSV_WRITTEN = ("id", "job_id", "index", "game", "input", "outcome", "number", "detail", "line", "cached", "solve_us",
               "solved_at")


def _csv(batches: Iterator[ExportBatch]) -> Iterator[str]:
    """CSV of the exported cases. Every field Dealer stores is a number or a canonical token string, so
    a row is written by formatting it; a batch with a field that would need quoting goes through
    the csv module instead."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    yield ",".join(CSV_WRITTEN) + "\n"
    for batch in batches:
        if not batch.indexes:
            continue
        job, game, when = batch.job_id, batch.game, iso(batch.solved_at) or ""
        base = job * CASE_ID_BASE
        rows = [(base + index, job, index, game, text, outcome or "", "" if number is None else number,
                 " ".join(map(str, detail)) if detail else "", line, cached, solve_us, when)
                for index, text, (outcome, number, detail, solve_us, cached, _error), line
                in zip(batch.indexes, batch.inputs, batch.results, batch.lines, strict=True)]
        if _NEEDS_QUOTES.search("\x1f".join(batch.inputs)) or _NEEDS_QUOTES.search("\x1f".join(batch.lines)):
            writer.writerows(rows)
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
        else:
            yield "".join("%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n" % row for row in rows)


_NEEDS_QUOTES = re.compile(r'[",\r\n]')


def _ndjson(batches: Iterator[ExportBatch]) -> Iterator[bytes]:
    dumps, option = orjson.dumps, orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z | orjson.OPT_APPEND_NEWLINE
    for batch in batches:
        job, game, worker, when = batch.job_id, batch.game, batch.worker, batch.solved_at
        base = job * CASE_ID_BASE
        yield b"".join(dumps({"id": base + index, "job_id": job, "index": index, "game": game, "input": text,
                              "outcome": outcome, "number": number, "detail": detail, "line": line or None,
                              "error": error, "cached": cached, "solve_us": solve_us, "worker": worker,
                              "solved_at": when}, option=option)
                       for index, text, (outcome, number, detail, solve_us, cached, error), line
                       in zip(batch.indexes, batch.inputs, batch.results, batch.lines, strict=True))


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
