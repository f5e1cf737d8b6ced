"""A chunk's cases as stored, and every read of them: the one module that knows a chunk's blobs.

No row is kept per case. A chunk keeps its cases in a few compressed blobs, and beside them
what finds its cases without reading them:

- ``inputs``: the cases' canonical inputs, one per line (the split stores it);
- ``lines``: the judge lines, each ending in a newline (a newline alone for a case not
  solved), so that a job's judge output is its chunks' blobs decompressed in order;
- ``facts``: every case's outcome code, number, extra and solve time, as arrays
  (:class:`Facts`; the codes and extras are the engines': ``JudgeLines.code``,
  ``JudgeLines.extra``);
- ``traces``: each case's packed trace (``Engine.solve_packed``), with their offsets;
- ``facets`` (:class:`Summary`): how many of its cases came to each (outcome code, number)
  and to each (outcome code, solve time): what a page of results, sorted or filtered, reads
  first to know which chunks hold its cases (``worker.jobs.results``);
- ``bloom``: a filter of its inputs' hashes (:mod:`worker.store.bloom`), so that a search
  for one deck reads one block of each chunk, not the chunk;
- ``errors``: why a case was not solved, for the few that were not.

A chunk's cases are numbered by their place in the file from its ``first_index`` on, but for the
numbers in its ``gaps`` (runs ``[first, how many]``, ``None`` as nearly always): a bad case the split
read past keeps its number, and the chunk goes on past it (a fault costs no chunk of its own). Every
read turns a chunk's ``k``-th case into its number here (:func:`case_number`, :func:`case_place`).

A chunk's values compressed together cost less than each alone and compress better (a
10-20-30 trace shares most of its bytes with its neighbours'); what a case costs the
database is its bytes, not a row and its index entries.

>>> from array import array
>>> solved = Solved(2, b"Win : 66\\n\\n", array("I", [0, 3, 3]), b"abc", b"\\x01\\x00", array("i", [66, 0]),
...                 array("i", [0, 0]), array("I", [12, 0]), array("Q", [7, 8]), {1: "too long"})
>>> blobs = pack(solved)
>>> chunk = unpack(pack_inputs(["1 2", "3 4"]), blobs.lines, blobs.facts, blobs.traces, blobs.errors, 2)
>>> chunk.inputs, chunk.lines, chunk.facts.codes, list(chunk.facts.numbers), chunk.trace(0), chunk.error(1)
(['1 2', '3 4'], ['Win : 66', ''], b'\\x01\\x00', [66, 0], b'abc', 'too long')
>>> summary = Summary.of(1, 10, 2, None, blobs.facets)
>>> summary.numbers, summary.times
([(1, 66, 1)], [(0, 0, 1), (1, 12, 1)])
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, Protocol

import orjson
import zstandard
from sqlalchemy import BigInteger, Connection, Integer, Row, cast, func, literal, select, true
from sqlalchemy.orm import InstrumentedAttribute, Session

from worker.states import ChunkStatus
from worker.store import bloom
from worker.store.codecs import compress, decompress
from worker.store.database import Database
from worker.store.models import Chunk

#: Chunks read per transaction by the reads that go through a whole job in file order: a download as
#: slow as its client holds nothing open.
CHUNKS_PER_READ = 32
#: A set of cases whose indexes lie further apart than this on average finds each case's chunk by itself.
SPARSE_SPAN = 64
#: The arrays are kept little-endian, whatever the machine that wrote them.
_SWAP = sys.byteorder == "big"


class DamagedChunk(ValueError):
    """A chunk's stored blob cannot be read back (``str(error)`` says which)."""


# --- a chunk's case numbers -------------------------------------------------------------------------


class Numbered(Protocol):
    """A chunk as its rows and summaries give it: what numbers its cases."""

    @property
    def first_index(self) -> int: ...
    @property
    def count(self) -> int: ...
    @property
    def gaps(self) -> list[Any] | None: ...


class Span(NamedTuple):
    """A chunk's cases as numbered (:class:`Numbered`), without the rest of its row."""

    first_index: int
    count: int
    gaps: list[Any] | None = None


def runs(span: Numbered) -> Iterator[tuple[int, int, int]]:
    """A chunk's cases as runs of consecutive numbers: ``(place of the first, its number, how many)``.

    >>> list(runs(Span(3, 4, [[4, 2], [7, 1]])))
    [(0, 3, 1), (1, 6, 1), (2, 8, 2)]
    """
    k, number = 0, span.first_index
    for start, length in span.gaps or ():
        yield k, number, start - number
        k, number = k + start - number, start + length
    yield k, number, span.count - k


def case_number(chunk: Numbered, k: int) -> int:
    """The number (place in the file, from 1) of a chunk's ``k``-th case (from 0)."""
    number = chunk.first_index + k
    for start, length in chunk.gaps or ():
        if start > number:
            break
        number += length
    return number


def case_numbers(chunk: Numbered) -> Sequence[int]:
    """The numbers of a chunk's cases, in order.

    >>> list(case_numbers(Summary(1, 3, 4, None, [], [], [[4, 2], [7, 1]])))
    [3, 6, 8, 9]
    """
    if not chunk.gaps:
        return range(chunk.first_index, chunk.first_index + chunk.count)
    numbers: list[int] = []
    for _, number, count in runs(chunk):
        numbers.extend(range(number, number + count))
    return numbers


def case_place(chunk: Numbered, index: int) -> int | None:
    """The place in a chunk (from 0) of its case numbered ``index``; ``None`` when it holds none so
    numbered (outside its numbers, or a number it skips).

    >>> chunk = Summary(1, 3, 4, None, [], [], [[4, 2], [7, 1]])
    >>> [case_place(chunk, n) for n in (2, 3, 4, 6, 7, 8, 9, 10)]
    [None, 0, None, 1, None, 2, 3, None]
    """
    k = index - chunk.first_index
    for start, length in chunk.gaps or ():
        if start > index:
            break
        if index < start + length:
            return None
        k -= length
    return k if 0 <= k < chunk.count else None


def end_number(chunk: Numbered) -> int:
    """One past the number of a chunk's last case."""
    return chunk.first_index + chunk.count + sum(length for _, length in chunk.gaps or ())


# --- writing ------------------------------------------------------------------------------------


def pack_inputs(texts: Iterable[str]) -> bytes:
    """A chunk's canonical inputs, one per line, compressed."""
    return compress("\n".join(texts).encode())


def pack_input_texts(texts: bytes) -> bytes:
    """A chunk's canonical inputs as the split reads them (each followed by a newline), compressed as
    :func:`pack_inputs` stores them.

    >>> pack_input_texts(b"1 2 3\\n4 5 6\\n") == pack_inputs(["1 2 3", "4 5 6"])
    True
    """
    return compress(memoryview(texts)[:-1])


def unpack_inputs(blob: bytes) -> list[str]:
    """
    >>> unpack_inputs(pack_inputs(["1 2 3", "4 5 6"]))
    ['1 2 3', '4 5 6']
    """
    return decompress(blob).decode().split("\n")


def inputs_text(blob: bytes) -> bytes:
    """A chunk's canonical inputs joined by newlines, as the engines take a chunk to solve."""
    return decompress(blob)


class Solved(NamedTuple):
    """A chunk's cases as a solve hands them to the store: the engine's buffers (``ChunkSolution``)
    and why each case not solved was not. Case ``k`` is the chunk's ``k``-th, from 0."""

    count: int
    #: Each case's judge line ending in a newline (a newline alone for a case not solved).
    lines: bytes
    #: ``count + 1`` offsets of each case's packed trace in ``traces``; ``None`` when traces are not kept.
    offsets: array[int] | None
    traces: bytes | None
    #: A byte a case: its outcome's code, 0 for a case not solved.
    codes: bytes
    numbers: array[int]
    extras: array[int]
    solve_us: array[int]
    #: Each input's 64-bit hash, for the chunk's filter.
    hashes: array[int]
    #: Why a case was not solved, by its place.
    errors: dict[int, str] | None


class Tally(NamedTuple):
    """A chunk's cases counted: its facets, and what its job's figures add up (counted once for both)."""

    #: Solved cases by (outcome code, number).
    by_number: Counter[tuple[int, int]]
    #: Every case by (outcome code, solve time in µs); code 0: not solved.
    by_time: Counter[tuple[int, int]]

    @classmethod
    def of(cls, codes: bytes, numbers: Sequence[int], solve_us: Sequence[int]) -> Tally:
        by_number = Counter(zip(codes, numbers))
        for key in [key for key in by_number if not key[0]]:
            del by_number[key]
        return cls(by_number, Counter(zip(codes, solve_us)))


class Blobs(NamedTuple):
    """What a solved chunk adds to its row (``facets`` and ``bloom`` are stored as they are)."""

    lines: bytes
    facts: bytes
    traces: bytes | None
    facets: bytes
    bloom: bytes
    errors: dict[str, str] | None


def pack(solved: Solved, tally: Tally | None = None) -> Blobs:
    """A solved chunk as its row keeps it (``tally``: its cases counted, when the caller has them)."""
    tally = tally or Tally.of(solved.codes, solved.numbers, solved.solve_us)
    facts = [array("i", solved.numbers), array("i", solved.extras), array("I", solved.solve_us)]
    if _SWAP:
        for values in facts:
            values.byteswap()
    traces = None
    if solved.traces is not None and solved.offsets is not None:
        traces = _traces_blob(solved.count, solved.offsets, solved.traces)
    return Blobs(lines=compress(solved.lines),
                 facts=compress(solved.codes + b"".join(values.tobytes() for values in facts)),
                 traces=traces, facets=facets_of(tally),
                 bloom=bloom.build(solved.hashes),
                 errors={str(k): why for k, why in solved.errors.items()} if solved.errors else None)


def pack_traces(traces: Sequence[bytes]) -> bytes:
    """The ``traces`` blob of a chunk's cases' packed traces, in order."""
    offsets = array("I", [0])
    for trace in traces:
        offsets.append(offsets[-1] + len(trace))
    return _traces_blob(len(traces), offsets, b"".join(traces))


def _traces_blob(count: int, offsets: Sequence[int], data: bytes) -> bytes:
    head = array("I", [count, *offsets])
    if _SWAP:
        head.byteswap()
    return compress(head.tobytes() + data)


def facets_of(tally: Tally) -> bytes:
    """A chunk's facets: its solved cases counted by (code, number), and all its cases by (code, solve time).

    >>> facets_of(Tally.of(b"\\x01\\x01\\x00", [66, 66, 0], [5, 7, 0]))
    b'{"n":[[1,66,2]],"t":[[0,0,1],[1,5,1],[1,7,1]]}'
    """
    return orjson.dumps({"n": sorted((code, number, count) for (code, number), count in tally.by_number.items()),
                         "t": sorted((code, us, count) for (code, us), count in tally.by_time.items())})


# --- a chunk, read back -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Facts:
    """A chunk's cases as pages sort and filter them: arrays, case ``k`` at ``k`` (and its inputs
    when a search by input read them)."""

    codes: bytes
    numbers: array[int]
    extras: array[int]
    solve_us: array[int]
    inputs: list[str] | None = None

    @classmethod
    def of(cls, blob: bytes, count: int, inputs: list[str] | None = None) -> Facts:
        try:
            raw = decompress(blob)
        except zstandard.ZstdError:
            raise DamagedChunk("the stored results of this case's chunk are damaged") from None
        if len(raw) != 13 * count:
            raise DamagedChunk("the stored results of this case's chunk are damaged")
        arrays = [array(kind, raw[start : start + 4 * count]) for kind, start in
                  (("i", count), ("i", 5 * count), ("I", 9 * count))]
        if _SWAP:
            for values in arrays:
                values.byteswap()
        return cls(raw[:count], *arrays, inputs=inputs)


@dataclass(frozen=True, slots=True)
class Summary:
    """A stored chunk as a page finds it: where it is, when it was stored, and its facets."""

    id: int
    first_index: int
    count: int
    finished_at: datetime | None
    #: Its solved cases by (outcome code, number): ``(code, number, cases)``, in order.
    numbers: list[tuple[int, int, int]]
    #: Its cases by (outcome code, solve time in µs): ``(code, µs, cases)``, in order (code 0: not solved).
    times: list[tuple[int, int, int]]
    #: The numbers its cases skip (``Chunk.gaps``).
    gaps: list[Any] | None = None

    @classmethod
    def of(cls, ident: int, first_index: int, count: int, finished_at: datetime | None, facets: bytes | None,
           gaps: list[Any] | None = None) -> Summary:
        data = orjson.loads(facets) if facets else {"n": [], "t": [[0, 0, count]]}
        return cls(ident, first_index, count, finished_at, [tuple(e) for e in data["n"]],  # type: ignore[misc]
                   [tuple(e) for e in data["t"]], gaps)  # type: ignore[misc]


class ChunkData:
    """A stored chunk, decompressed: its inputs, judge lines and facts, its errors and its traces on
    demand (the traces are most of its bytes, and a page of results needs none)."""

    __slots__ = ("inputs", "lines", "facts", "_errors", "_traces", "_raw")

    def __init__(self, inputs: list[str], lines: list[str], facts: Facts | None, traces: bytes | None,
                 errors: dict[str, str] | None) -> None:
        self.inputs = inputs
        #: Each case's judge line (``""`` for a case not solved); empty while the chunk is not solved.
        self.lines = lines
        #: ``None`` while the chunk is not solved.
        self.facts = facts
        self._errors = errors
        self._traces = traces
        self._raw: bytes | None = None  # the traces decompressed, once one is asked for

    def error(self, k: int) -> str | None:
        """Why the chunk's ``k``-th case was not solved (``None`` for one that was)."""
        return self._errors.get(str(k)) if self._errors else None

    def trace(self, k: int) -> bytes | None:
        """The packed trace of the chunk's ``k``-th case (from 0), or ``None``.

        Raises :class:`DamagedChunk` when the chunk's traces are damaged.
        """
        if self._traces is None:
            return None
        try:
            raw = self._raw = self._raw if self._raw is not None else decompress(self._traces)
            count = array("I", raw[:4])
            if _SWAP:
                count.byteswap()
            offsets = array("I", raw[4 + 4 * k : 12 + 4 * k]) if 0 <= k < count[0] else None
        except (zstandard.ZstdError, IndexError, ValueError):
            raise DamagedChunk("the stored traces of this case's chunk are damaged") from None
        if offsets is None:
            return None
        if _SWAP:
            offsets.byteswap()
        start = 8 + 4 * count[0]
        return raw[start + offsets[0] : start + offsets[1]] or None


def unpack(inputs: bytes, lines: bytes | None, facts: bytes | None, traces: bytes | None,
           errors: dict[str, str] | None, count: int) -> ChunkData:
    """A chunk's stored blobs, decompressed (``lines``/``facts`` are ``None`` for a chunk not solved)."""
    texts = unpack_inputs(inputs)
    if lines is None or facts is None:
        return ChunkData(texts, [], None, None, None)
    return ChunkData(texts, decompress(lines).decode().split("\n")[:count], Facts.of(facts, count), traces, errors)


def _output_piece(lines_blob: bytes) -> bytes:
    """A chunk's part of the judge output: its lines, unsolved cases left out."""
    text = decompress(lines_blob)
    if b"\n\n" not in text and not text.startswith(b"\n"):
        return text  # every case solved, as nearly always: no need to look at each line
    return b"".join(line + b"\n" for line in text.split(b"\n") if line)


# --- reading chunks ----------------------------------------------------------------------------------


def chunks_holding(db: Session | Connection, job_id: int, indexes: Sequence[int],
                   *columns: InstrumentedAttribute[Any]) -> dict[int, tuple[Row[Any], int]]:
    """The stored chunk holding each of a job's case ``indexes`` (those found), with the case's place in
    it: the chunk's ``id``, ``first_index``, ``count``, ``gaps`` and ``columns``, in one query.

    Close indexes (a page in file order) take the chunks over their range; indexes spread
    over the whole job take each one's own chunk through the ``(job_id, first_index)`` index,
    where the range would list thousands of chunks.
    """
    low, high = min(indexes), max(indexes)

    def start(index: int) -> Any:  # of the chunk that may hold it (a chunk's gaps keep its end from SQL)
        return select(func.max(Chunk.first_index)).where(Chunk.job_id == job_id, Chunk.first_index <= index) \
            .scalar_subquery()

    if high - low <= SPARSE_SPAN * len(indexes):
        holding = (Chunk.first_index <= high) & (Chunk.first_index >= func.coalesce(start(low), low))
    else:
        holding = Chunk.first_index.in_([start(index) for index in sorted(set(indexes))])
    chunks = db.execute(select(Chunk.id, Chunk.first_index, Chunk.count, Chunk.gaps, *columns)
                        .where(Chunk.job_id == job_id, Chunk.status == ChunkStatus.DONE, holding)
                        .order_by(Chunk.first_index)).all()
    starts = [chunk.first_index for chunk in chunks]
    found: dict[int, tuple[Row[Any], int]] = {}
    for index in indexes:
        at = bisect_right(starts, index) - 1
        if at >= 0 and (k := case_place(chunks[at], index)) is not None:
            found[index] = chunks[at], k
    return found


def read_chunks(session: Session, ids: Iterable[int], traces: bool = False) -> dict[int, ChunkData]:
    """Chunks by id, decompressed, in one query; with their traces only when asked (they are most of a
    chunk's bytes, and a page of results shows none)."""
    columns = [Chunk.id, Chunk.count, Chunk.inputs, Chunk.lines, Chunk.facts, Chunk.errors,
               *([Chunk.traces] if traces else [])]
    return {row.id: unpack(row.inputs, row.lines, row.facts, row.traces if traces else None, row.errors, row.count)
            for row in session.execute(select(*columns).where(Chunk.id.in_(list(ids))))}


def summaries(session: Session, job_id: int) -> list[Summary]:
    """A job's stored chunks with their facets, in file order."""
    rows = session.execute(select(Chunk.id, Chunk.first_index, Chunk.count, Chunk.finished_at, Chunk.facets,
                                  Chunk.gaps)
                           .where(Chunk.job_id == job_id, Chunk.status == ChunkStatus.DONE)
                           .order_by(Chunk.first_index))
    return [Summary.of(*row) for row in rows]


def facts(session: Session, ids: Sequence[int], with_inputs: bool = False) -> dict[int, Facts]:
    """The facts of these stored chunks (and their inputs, for a search by input), in one query."""
    columns = [Chunk.id, Chunk.count, Chunk.facts, *([Chunk.inputs] if with_inputs else [])]
    return {row.id: Facts.of(row.facts, row.count, unpack_inputs(row.inputs) if with_inputs else None)
            for row in session.execute(select(*columns).where(Chunk.id.in_(list(ids))))}


def may_hold(session: Session, chunks: Sequence[Summary], h: int) -> list[int]:
    """The places in ``chunks`` of those whose filter may hold the input of hash ``h``: one block of each
    read, its place computed by the database (``bloom.key``), so that a search reads 64 bytes a chunk."""
    if not chunks:
        return []
    # Whole numbers throughout: SQLAlchemy's "/" would divide as decimals, and PostgreSQL's substr takes
    # an integer place.
    blocks = func.length(Chunk.bloom).op("/")(bloom.BLOCK_BYTES)
    start = cast(literal(bloom.key(h), BigInteger).op("%")(blocks) * bloom.BLOCK_BYTES + 1, Integer)
    block = func.substr(Chunk.bloom, start, bloom.BLOCK_BYTES)
    place = {chunk.id: at for at, chunk in enumerate(chunks)}
    found = []
    for start in range(0, len(chunks), 1000):
        ids = [chunk.id for chunk in chunks[start : start + 1000]]
        for ident, bits in session.execute(select(Chunk.id, block).where(Chunk.id.in_(ids), Chunk.bloom.is_not(None))):
            if bloom.holds(bytes(bits), h):
                found.append(place[ident])
    return sorted(found)


def judge_lines(session: Session, job_id: int, indexes: Sequence[int]) -> dict[int, str]:
    """The judge lines of these cases of a job (those stored), from the chunks holding them, each read once."""
    if not indexes:
        return {}
    found: dict[int, str] = {}
    lines: dict[int, list[str]] = {}
    for index, (chunk, k) in chunks_holding(session, job_id, indexes, Chunk.lines).items():
        if chunk.id not in lines:
            lines[chunk.id] = decompress(chunk.lines).decode().split("\n")
        found[index] = lines[chunk.id][k]
    return found


def judge_output(db: Database, job_id: int, before: int | None = None) -> Iterator[bytes]:
    """A job's judge output in pieces of whole lines (a chunk's each), in file order; unsolved cases have
    no line. With ``before``, of the cases before that one only (a case no chunk holds ends it)."""
    for chunk in _done_chunks(db, job_id, (Chunk.lines,)):
        if before is not None and chunk.first_index >= before:
            return
        if before is not None and end_number(chunk) > before:  # the chunk's cases run past it (gaps)
            lines = decompress(chunk.lines).split(b"\n")
            yield b"".join(lines[k] + b"\n" for k, number in enumerate(case_numbers(chunk))
                           if number < before and lines[k])
            return
        yield _output_piece(chunk.lines)


def job_inputs(db: Database, job_id: int) -> Iterator[bytes]:
    """A job's canonical inputs in file order, one a line, a chunk's at a time: every case the split
    stored, solved or not."""
    for chunk in _done_chunks(db, job_id, (Chunk.inputs,), solved=False):
        yield decompress(chunk.inputs) + b"\n"


def judge_blocks(db: Database, job_id: int, per_read: int = 64) -> Iterator[tuple[bytes, int]]:
    """A job's judge lines in file order, a chunk at a time: ``(its lines joined by LF, how many)``, read
    ``per_read`` chunks per transaction (what a check judges an output against)."""
    for chunk in _done_chunks(db, job_id, (Chunk.lines,), per_read=per_read):
        yield decompress(chunk.lines)[:-1], chunk.count


def stored_cases(db: Database, job_id: int, descending: bool = False, since: datetime | None = None,
                 until: datetime | None = None) -> Iterator[tuple[Any, ChunkData]]:
    """A job's stored chunks in file order (reversed when ``descending``), only those stored in
    ``[since, until)`` when given: each row (``first_index``, ``count``, ``gaps``, ``worker``, ``finished_at``)
    with its cases decompressed, traces left out (what an export writes)."""
    for chunk in _done_chunks(db, job_id, (Chunk.worker, Chunk.finished_at, Chunk.inputs, Chunk.lines,
                                           Chunk.facts, Chunk.errors), descending, since, until):
        yield chunk, unpack(chunk.inputs, chunk.lines, chunk.facts, None, chunk.errors, chunk.count)


def first_unsolved(connection: Connection, job_id: int) -> int | None:
    """The index of a job's first case that was not solved (the chunks keep why), or ``None``."""
    row = connection.execute(select(Chunk.first_index, Chunk.count, Chunk.gaps, Chunk.errors).where(
        Chunk.job_id == job_id, Chunk.errors.is_not(None)).order_by(Chunk.first_index).limit(1)).first()
    return case_number(row, min(int(k) for k in row.errors)) if row is not None and row.errors else None


def coverage(session: Session, job_id: int) -> tuple[int, int]:
    """``(cases stored, distinct cases stored)`` of a job: equal when no case is stored twice (each
    stored chunk's cases counted, and the distinct ones by their chunks' ranges)."""
    chunks = session.execute(select(Chunk.first_index, Chunk.count, Chunk.gaps).where(
        Chunk.job_id == job_id, Chunk.status == ChunkStatus.DONE).order_by(Chunk.first_index)).all()
    stored = sum(chunk.count for chunk in chunks)
    distinct, reach = 0, 0
    for chunk in chunks:
        numbers = case_numbers(chunk)
        distinct += len(numbers) - bisect_left(numbers, reach)
        reach = max(reach, end_number(chunk))
    return stored, distinct


def _done_chunks(db: Database, job_id: int, columns: tuple[InstrumentedAttribute[Any], ...],
                 descending: bool = False, since: datetime | None = None, until: datetime | None = None,
                 per_read: int = CHUNKS_PER_READ, solved: bool = True) -> Iterator[Any]:
    """A job's stored chunks in file order (reversed when ``descending``), read ``per_read`` at a time,
    each few in a transaction of its own: the solved ones, or all (``solved=False``)."""
    query = (select(Chunk.first_index, Chunk.count, Chunk.gaps, *columns)
             .where(Chunk.job_id == job_id, Chunk.status == ChunkStatus.DONE if solved else true())
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
