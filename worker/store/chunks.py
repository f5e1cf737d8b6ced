"""A chunk's cases as stored: compressed blobs per chunk instead of wide rows per case, and every read
of them. This is the one module that knows how a chunk's blobs are laid out; the rest of the code asks
it for inputs, judge lines, results and traces.

- ``inputs``: the cases' canonical inputs, one per line (the split stores it);
- ``lines``: the judge lines, one per case, joined by newlines (empty for a case not
  solved), so that a job's judge output is its chunks' blobs decompressed in order;
- ``results``: each case's result as JSON ``[outcome, number, detail, solve_us, cached, error]``,
  one per line, so that a page of results parses only its own cases' (chunks stored before
  2026-12 hold one JSON array of them, read alike);
- ``traces``: each case's packed trace (``Engine.solve_packed``), with their offsets.

Compressing a chunk's values together costs less than compressing each, and compresses
better (a 10-20-30 trace shares most of its bytes with its neighbours').

>>> blobs = pack_results([Solved("win", 66, [], "Win : 66", 120, False, None, b"\\x01ab")])
>>> chunk = unpack_chunk(pack_inputs(["1 2"]), *blobs)
>>> chunk.inputs, chunk.lines, chunk.result(0).number, chunk.trace(0)
(['1 2'], ['Win : 66'], 66, b'\\x01ab')
>>> older = ChunkData(["1 2"], ["Win : 66"], b'[["win",66,[],120,false,null]]', None)  # one JSON array
>>> older.result(0).number, older.rows[0][0]
(66, 'win')
>>> ChunkData(["1 2"], ["Win : 66"], b"", b"not zstd").trace(0)
Traceback (most recent call last):
...
worker.store.chunks.DamagedChunk: the stored traces of this case's chunk are damaged
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import orjson
import zstandard
from sqlalchemy import Connection, Row, bindparam, func, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from worker.states import ChunkStatus
from worker.store.codecs import compress, decompress
from worker.store.database import Database
from worker.store.models import Chunk

#: Chunks read per transaction by the reads that go through a whole job in file order: a download as
#: slow as its client holds nothing open.
CHUNKS_PER_READ = 32
#: A set of cases whose indexes lie further apart than this on average finds each case's chunk by itself.
SPARSE_SPAN = 64


class DamagedChunk(ValueError):
    """A chunk's stored blob cannot be read back (``str(error)`` says which)."""


# --- writing ------------------------------------------------------------------------------------


def pack_inputs(texts: Iterable[str]) -> bytes:
    """A chunk's canonical inputs, one per line, compressed."""
    return compress("\n".join(texts).encode())


def unpack_inputs(blob: bytes) -> list[str]:
    """
    >>> unpack_inputs(pack_inputs(["1 2 3", "4 5 6"]))
    ['1 2 3', '4 5 6']
    """
    return decompress(blob).decode().split("\n")


class Solved(NamedTuple):
    """One case's result as a solve task hands it to the store (a tuple: made once per case)."""

    outcome: str | None
    number: int | None
    detail: list[Any] | None
    line: str | None
    solve_us: int
    cached: bool
    error: str | None
    #: The packed trace (``Engine.solve_packed``); ``None`` when traces are not stored.
    trace: bytes | None


def pack_results(cases: Sequence[Solved]) -> tuple[bytes, bytes, bytes | None]:
    """``(lines, results, traces)`` blobs of a chunk's cases, in order (``traces`` is ``None``
    when no case has one)."""
    lines = compress("\n".join(case.line or "" for case in cases).encode())
    dumps = orjson.dumps
    results = compress(b"\n".join(dumps((c.outcome, c.number, c.detail, c.solve_us, c.cached, c.error))
                                   for c in cases))
    traces = [case.trace or b"" for case in cases]
    if not any(traces):
        return lines, results, None
    offsets = array("I", [0] * (len(traces) + 1))
    for k, trace in enumerate(traces):
        offsets[k + 1] = offsets[k] + len(trace)
    return lines, results, compress(array("I", [len(traces)]).tobytes() + offsets.tobytes() + b"".join(traces))


# --- a chunk, decompressed -------------------------------------------------------------------------


class StoredResult(NamedTuple):
    """One case's result as its chunk keeps it (the solve's :class:`Solved` without its line and trace)."""

    outcome: str | None
    number: int | None
    detail: list[Any] | None
    solve_us: int
    cached: bool
    error: str | None


class ChunkData:
    """A stored chunk, decompressed: its inputs, judge lines and results (``rows``, each a list in
    :class:`StoredResult`'s order), and its traces on demand (they are most of its bytes, and a page
    of results needs none). The results are parsed as asked for: all of them for an export, one
    case's alone for a page (a page sorted by number takes one case from each of fifty chunks)."""

    __slots__ = ("inputs", "lines", "_results", "_rows", "_each", "_traces", "_raw")

    def __init__(self, inputs: list[str], lines: list[str], results: bytes, traces: bytes | None) -> None:
        self.inputs = inputs
        self.lines = lines
        self._results = results  # decompressed: JSON rows, one a line (or one array of them)
        self._rows: list[list[Any]] | None = None
        self._each: list[bytes] | None = None
        self._traces = traces
        self._raw: bytes | None = None  # the traces decompressed, once one is asked for

    @property
    def rows(self) -> list[list[Any]]:
        """Every case's result, in order (empty while the chunk is not solved)."""
        if self._rows is None:
            raw = self._results
            one_array = raw[:2] in (b"[[", b"[]")
            self._rows = orjson.loads(raw if one_array else b"[" + raw.replace(b"\n", b",") + b"]") if raw else []
        return self._rows

    def result(self, k: int) -> StoredResult | None:
        """The result of the chunk's ``k``-th case, or ``None`` while the chunk is not solved."""
        if self._rows is None and self._results[:2] not in (b"[[", b"[]"):
            each = self._each = self._each if self._each is not None else \
                (self._results.split(b"\n") if self._results else [])
            return StoredResult(*orjson.loads(each[k])) if k < len(each) else None
        rows = self.rows
        return StoredResult(*rows[k]) if k < len(rows) else None

    def trace(self, k: int) -> bytes | None:
        """The packed trace of the chunk's ``k``-th case (from 0), or ``None``.

        Raises :class:`DamagedChunk` when the chunk's traces are damaged.
        """
        if self._traces is None:
            return None
        try:
            raw = self._raw = self._raw if self._raw is not None else decompress(self._traces)
            count = array("I", raw[:4])[0]
            offsets = array("I", raw[4 + 4 * k : 12 + 4 * k]) if 0 <= k < count else None
        except (zstandard.ZstdError, IndexError, ValueError):
            raise DamagedChunk("the stored traces of this case's chunk are damaged") from None
        if offsets is None:
            return None
        start = 8 + 4 * count
        return raw[start + offsets[0] : start + offsets[1]] or None


def unpack_chunk(inputs: bytes, lines: bytes | None, results: bytes | None, traces: bytes | None) -> ChunkData:
    """A chunk's stored blobs, decompressed (``lines``/``results`` are ``None`` for a chunk not solved)."""
    texts = unpack_inputs(inputs)
    if lines is None or results is None:
        return ChunkData(texts, [], b"", None)
    return ChunkData(texts, decompress(lines).decode().split("\n"), decompress(results), traces)


def _output_piece(lines_blob: bytes) -> bytes:
    """A chunk's part of the judge output: its lines, each with its newline, unsolved cases left out."""
    text = decompress(lines_blob)
    if text and b"\n\n" not in text and not text.startswith(b"\n") and not text.endswith(b"\n"):
        return text + b"\n"  # every case solved, as nearly always: no need to look at each line
    return b"".join(line + b"\n" for line in text.split(b"\n") if line)


# --- reading chunks ----------------------------------------------------------------------------------


def chunks_holding(db: Session | Connection, job_id: int, indexes: Sequence[int],
                   *columns: InstrumentedAttribute[Any]) -> dict[int, Row[Any]]:
    """The stored chunk holding each of a job's case ``indexes`` (those found): its ``id``,
    ``first_index``, ``count`` and ``columns``, in one query.

    Close indexes (a page in file order) take the chunks over their range; indexes spread
    over the whole job (a page sorted by number, the cached results of another job) take each
    one's own chunk through the ``(job_id, first_index)`` index, where the range would list
    thousands of chunks.
    """
    low, high = min(indexes), max(indexes)
    if high - low <= SPARSE_SPAN * len(indexes):
        holding = (Chunk.first_index <= high) & (Chunk.first_index + Chunk.count > low)
    else:
        starts = [select(func.max(Chunk.first_index)).where(Chunk.job_id == job_id, Chunk.first_index <= index)
                  .scalar_subquery() for index in sorted(set(indexes))]
        holding = Chunk.first_index.in_(starts)
    chunks = db.execute(select(Chunk.id, Chunk.first_index, Chunk.count, *columns)
                        .where(Chunk.job_id == job_id, Chunk.status == ChunkStatus.DONE, holding)
                        .order_by(Chunk.first_index)).all()
    starts = [chunk.first_index for chunk in chunks]
    found: dict[int, Row[Any]] = {}
    for index in indexes:
        at = bisect_right(starts, index) - 1
        if at >= 0 and index < starts[at] + chunks[at].count:
            found[index] = chunks[at]
    return found


def read_chunk(connection: Connection, chunk_id: int) -> ChunkData:
    """One stored chunk, decompressed, traces included (a statement built once: the solve path's result
    cache reads a few per chunk it solves)."""
    row = connection.execute(_CHUNK_BLOBS, {"p_chunk": chunk_id}).one()
    return unpack_chunk(row.inputs, row.lines, row.results, row.traces)


def read_chunks(session: Session, ids: Iterable[int], traces: bool = False) -> dict[int, ChunkData]:
    """Chunks by id, decompressed, in one query; with their traces only when asked (they are most of a
    chunk's bytes, and a page of results shows none)."""
    columns = [Chunk.id, Chunk.inputs, Chunk.lines, Chunk.results, *([Chunk.traces] if traces else [])]
    return {row.id: unpack_chunk(row.inputs, row.lines, row.results, row.traces if traces else None)
            for row in session.execute(select(*columns).where(Chunk.id.in_(list(ids))))}


def judge_lines(session: Session, job_id: int, indexes: Sequence[int]) -> dict[int, str]:
    """The judge lines of these cases of a job (those stored), from the chunks holding them, each read once."""
    if not indexes:
        return {}
    found: dict[int, str] = {}
    lines: dict[int, list[str]] = {}
    for index, chunk in chunks_holding(session, job_id, indexes, Chunk.lines).items():
        if chunk.id not in lines:
            lines[chunk.id] = decompress(chunk.lines).decode().split("\n")
        found[index] = lines[chunk.id][index - chunk.first_index]
    return found


def judge_output(db: Database, job_id: int) -> Iterator[bytes]:
    """A job's judge output in pieces of whole lines (a chunk's each), in file order; unsolved cases have
    no line."""
    for chunk in _done_chunks(db, job_id, (Chunk.lines,)):
        yield _output_piece(chunk.lines)


def judge_blocks(db: Database, job_id: int, per_read: int = 64) -> Iterator[tuple[bytes, int]]:
    """A job's judge lines in file order, a chunk at a time: ``(its lines joined by LF, how many)``, read
    ``per_read`` chunks per transaction (what a check judges an output against)."""
    for chunk in _done_chunks(db, job_id, (Chunk.lines,), per_read=per_read):
        yield decompress(chunk.lines), chunk.count


def stored_cases(db: Database, job_id: int, descending: bool = False, since: datetime | None = None,
                 until: datetime | None = None) -> Iterator[tuple[Any, ChunkData]]:
    """A job's stored chunks in file order (reversed when ``descending``), only those stored in
    ``[since, until)`` when given: each row (``first_index``, ``count``, ``worker``, ``finished_at``)
    with its cases decompressed, traces left out (what an export writes)."""
    for chunk in _done_chunks(db, job_id, (Chunk.worker, Chunk.finished_at, Chunk.inputs, Chunk.lines,
                                           Chunk.results), descending, since, until):
        yield chunk, unpack_chunk(chunk.inputs, chunk.lines, chunk.results, None)


def _done_chunks(db: Database, job_id: int, columns: tuple[InstrumentedAttribute[Any], ...],
                 descending: bool = False, since: datetime | None = None, until: datetime | None = None,
                 per_read: int = CHUNKS_PER_READ) -> Iterator[Any]:
    """A job's stored chunks in file order (reversed when ``descending``), read ``per_read`` at a time,
    each few in a transaction of its own."""
    query = (select(Chunk.first_index, Chunk.count, *columns)
             .where(Chunk.job_id == job_id, Chunk.status == ChunkStatus.DONE)
             .order_by(Chunk.first_index.desc() if descending else Chunk.first_index).limit(per_read))
    if since is not None:
        query = query.where(Chunk.finished_at >= since)
    if until is not None:
        query = query.where(Chunk.finished_at < until)
    after: int | None = None
    while True:
        page = query if after is None else query.where(
            Chunk.first_index < after if descending else Chunk.first_index > after)
        with db.session(write=False) as session:
            chunks = session.execute(page).all()
        yield from chunks
        if len(chunks) < per_read:
            return
        after = chunks[-1].first_index


_CHUNK_BLOBS = select(Chunk.inputs, Chunk.lines, Chunk.results, Chunk.traces).where(Chunk.id == bindparam("p_chunk"))
