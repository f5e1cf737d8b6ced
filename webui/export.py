"""Answers sent as they are made: the results export (CSV, NDJSON) and any streamed body."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import Any

import orjson
from flask import current_app, stream_with_context

from worker.jobs.queries import ExportBatch
from worker.jobs.views import CSV_COLUMNS, iso
from worker.store.models import CASE_ID_BASE

#: The export's formats, the default first.
FORMATS = ("ndjson", "csv")
#: A CSV row of the exported cases, one value a column.
_CSV_ROW = ",".join(["%s"] * len(CSV_COLUMNS)) + "\n"
_NEEDS_QUOTES = re.compile(r'[",\r\n]')


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


def csv_lines(batches: Iterator[ExportBatch]) -> Iterator[str]:
    """CSV of the exported cases, the columns of :data:`worker.jobs.views.CSV_COLUMNS`. Every field Dealer
    stores is a number or a canonical token string, so a row is written by formatting it; a batch with a
    field that would need quoting goes through the csv module instead."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    yield ",".join(CSV_COLUMNS) + "\n"
    for batch in batches:
        if not batch.indexes:
            continue
        job, game, when = batch.job_id, batch.game, iso(batch.solved_at) or ""
        base = job * CASE_ID_BASE
        # In the order of CSV_COLUMNS.
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
            yield "".join(_CSV_ROW % row for row in rows)


def ndjson_lines(batches: Iterator[ExportBatch]) -> Iterator[bytes]:
    """The exported cases, a JSON object a line."""
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
