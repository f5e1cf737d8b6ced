"""A chunk's results as stored: three compressed blobs per chunk instead of wide rows per case.

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
>>> chunk.lines, chunk.result(0).number, chunk.trace(0)
(['Win : 66'], 66, b'\\x01ab')
>>> older = ChunkData(["1 2"], ["Win : 66"], b'[["win",66,[],120,false,null]]', None)  # one JSON array
>>> older.result(0).number, older.rows[0][0]
(66, 'win')
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any, NamedTuple

import orjson
import zstandard

from worker.engines.base import TraceError
from worker.store.codecs import compress, decompress, pack_inputs, unpack_inputs

__all__ = ["ChunkData", "Solved", "pack_inputs", "pack_results", "unpack_chunk"]


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


class Result(NamedTuple):
    outcome: str | None
    number: int | None
    detail: list[Any] | None
    solve_us: int
    cached: bool
    error: str | None


class ChunkData:
    """A stored chunk, decompressed: its inputs, judge lines and results (``rows``, each a list in
    :class:`Result`'s order), and its traces on demand (they are most of its bytes, and a page of
    results needs none). The results are parsed as asked for: all of them for an export, one
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

    def result(self, k: int) -> Result | None:
        """The result of the chunk's ``k``-th case, or ``None`` while the chunk is not solved."""
        if self._rows is None and self._results[:2] not in (b"[[", b"[]"):
            each = self._each = self._each if self._each is not None else \
                (self._results.split(b"\n") if self._results else [])
            return Result(*orjson.loads(each[k])) if k < len(each) else None
        rows = self.rows
        return Result(*rows[k]) if k < len(rows) else None

    def trace(self, k: int) -> bytes | None:
        """The packed trace of the chunk's ``k``-th case (from 0), or ``None``.

        Raises :class:`TraceError` when the chunk's traces are damaged.
        """
        if self._traces is None:
            return None
        try:
            raw = self._raw = self._raw if self._raw is not None else decompress(self._traces)
            count = array("I", raw[:4])[0]
            offsets = array("I", raw[4 + 4 * k : 12 + 4 * k]) if 0 <= k < count else None
        except (zstandard.ZstdError, IndexError, ValueError):
            raise TraceError("the stored traces of this case's chunk are damaged") from None
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


def join_lines(lines_blob: bytes) -> bytes:
    """A chunk's part of the judge output: its lines, each with its newline, unsolved cases left out."""
    text = decompress(lines_blob)
    if text and b"\n\n" not in text and not text.startswith(b"\n") and not text.endswith(b"\n"):
        return text + b"\n"  # every case solved, as nearly always: no need to look at each line
    return b"".join(line + b"\n" for line in text.split(b"\n") if line)
