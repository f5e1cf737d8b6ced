"""Answers sent as they are made: the results export (CSV, NDJSON) and any streamed body."""

from __future__ import annotations

import csv
import gc
import io
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import orjson
from flask import current_app, stream_with_context

from worker.jobs.cases import ExportBatch
from worker.jobs.views import CSV_COLUMNS, iso
from worker.store.models import CASE_ID_BASE

#: The export's formats, the default first.
FORMATS = ("ndjson", "csv")
#: A CSV row of the exported cases, one value a column.
_CSV_ROW = ",".join(["%s"] * len(CSV_COLUMNS)) + "\n"
_NEEDS_QUOTES = re.compile(r'[",\r\n]')
_Piece = TypeVar("_Piece", str, bytes)
_pausing = threading.Lock()
#: How many exports hold the collector off now, and whether it was on before the first of them.
_paused = 0
_was_on = True


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


@contextmanager
def _collections_paused() -> Iterator[None]:
    """Python's cycle collector held off: a batch of 10,000 exported cases makes some 40,000 short-lived
    lists and tuples, and the collections they set off cost a third of a million-case export's time
    (measured: 8.4 s against 5.9 s). Nothing the export makes holds a cycle, and what other threads
    make meanwhile is collected once the batch is written; held off only while some export makes one,
    and only if it was on."""
    global _paused, _was_on
    with _pausing:
        _paused += 1
        if _paused == 1:
            _was_on = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _pausing:
            _paused -= 1
            if _paused == 0 and _was_on:
                gc.enable()


def _written(batches: Iterator[ExportBatch], write: Callable[[ExportBatch], _Piece]) -> Iterator[_Piece]:
    """Each batch read and written with the collector held off; what is sent goes out between, and the
    other requests of the process get their turn (under gevent, ``time.sleep`` yields to its hub: an
    export of millions of cases, a second of work each 10,000, must not keep them waiting)."""
    while True:
        with _collections_paused():
            batch = next(batches, None)
            if batch is None:
                return
            piece = write(batch)
        if piece:
            yield piece
        time.sleep(0)


def csv_lines(batches: Iterator[ExportBatch]) -> Iterator[str]:
    """CSV of the exported cases, the columns of :data:`worker.jobs.views.CSV_COLUMNS`. Every field Dealer
    stores is a number or a canonical token string, so a row is written by formatting it; a batch with a
    field that would need quoting goes through the csv module instead."""
    yield ",".join(CSV_COLUMNS) + "\n"
    yield from _written(iter(batches), _csv_rows)


def _csv_rows(batch: ExportBatch) -> str:
    job, game, when = batch.job_id, batch.game, iso(batch.solved_at) or ""
    base = job * CASE_ID_BASE
    # In the order of CSV_COLUMNS.
    rows = [(base + index, job, index, game, text, outcome or "", "" if number is None else number,
             " ".join(map(str, detail)) if detail else "", line, cached, solve_us, when)
            for index, text, (outcome, number, detail, solve_us, cached, _error), line
            in zip(batch.indexes, batch.inputs, batch.results, batch.lines, strict=True)]
    if _NEEDS_QUOTES.search("\x1f".join(batch.inputs)) or _NEEDS_QUOTES.search("\x1f".join(batch.lines)):
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(rows)
        return buffer.getvalue()
    return "".join(_CSV_ROW % row for row in rows)


def ndjson_lines(batches: Iterator[ExportBatch]) -> Iterator[bytes]:
    """The exported cases, a JSON object a line."""
    return _written(iter(batches), _ndjson_rows)


def _ndjson_rows(batch: ExportBatch) -> bytes:
    dumps, option = orjson.dumps, orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z | orjson.OPT_APPEND_NEWLINE
    job, game, worker, when = batch.job_id, batch.game, batch.worker, batch.solved_at
    base = job * CASE_ID_BASE
    return b"".join(dumps({"id": base + index, "job_id": job, "index": index, "game": game, "input": text,
                           "outcome": outcome, "number": number, "detail": detail, "line": line or None,
                           "error": error, "cached": cached, "solve_us": solve_us, "worker": worker,
                           "solved_at": when}, option=option)
                    for index, text, (outcome, number, detail, solve_us, cached, error), line
                    in zip(batch.indexes, batch.inputs, batch.results, batch.lines, strict=True))
