"""A stored chunk solved in one call (:class:`Chunks`, an engine's ``chunks``) into a few buffers with
no object per case (:class:`ChunkSolution`), and :func:`case_hash`, each case's stored hash."""

from __future__ import annotations

import struct
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from worker.engines.reading import Case
from worker.engines.results import Solver

#: How :func:`case_hash` starts (times the length), mixes each word in, and finishes:
#: 2**64 / the golden ratio, and MurmurHash3's two finaliser constants.
HASH_START = 0x9E3779B97F4A7C15
HASH_MIX = 0xFF51AFD7ED558CCD
HASH_FINISH = 0xC4CEB9FE1A85EC53
_MASK64 = (1 << 64) - 1


def case_hash(text: str | bytes) -> int:
    """The 64-bit hash a chunk stores of each case's canonical input (UTF-8), which a search looks for:
    ``h = len * HASH_START``; for each little-endian word of eight bytes (the last padded with zeros)
    ``h = (h ^ word) * HASH_MIX; h ^= h >> 32``; then MurmurHash3's finaliser, modulo 2**64. Each step
    is a bijection: texts of one length that differ in one word never collide. ``out.py`` computes it
    in C; it is stored: never change it.

    >>> hex(case_hash("1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T")), hex(case_hash(b"x")), case_hash("")
    ('0x3abd89b318171854', '0xdd54286755cf9de3', 0)
    """
    data = text.encode() if isinstance(text, str) else text
    h = len(data) * HASH_START & _MASK64
    for (word,) in struct.iter_unpack("<Q", data + bytes(-len(data) % 8)):
        h = (h ^ word) * HASH_MIX & _MASK64
        h ^= h >> 32
    h ^= h >> 33
    h = h * HASH_MIX & _MASK64
    h ^= h >> 33
    h = h * HASH_FINISH & _MASK64
    return h ^ (h >> 33)


#: One case solved in Python: its outcome's code, number, extra, judge line (no newline) and
#: packed trace (``b""`` untraced); :data:`NOT_SOLVED` for a case given up on.
Entry = tuple[int, int, int, str, bytes]
Fallback = Callable[[int, str, bool], Entry]
NOT_SOLVED: Entry = (0, 0, 0, "", b"")


@dataclass(frozen=True, slots=True)
class ChunkSolution:
    """A chunk's ``count`` cases solved (case ``k`` is the chunk's ``first + k``), ``started`` of them
    before the deadline: ``lines``, each judge line and ``\\n`` (alone for a case not solved); the
    packed ``traces`` end to end (case ``k``'s from ``offsets[k]``: :meth:`trace`); ``outcomes``, a
    byte a case (``JudgeLines.code``, 0: not solved); ``numbers`` and ``extras`` (``JudgeLines.extra``),
    signed 32-bit; ``solve_us``, microseconds from a case's start to the next's; ``hashes``
    (:func:`case_hash`)."""

    count: int
    started: int
    lines: bytes
    traces: bytes
    offsets: array[int]
    outcomes: bytes
    numbers: array[int]
    extras: array[int]
    solve_us: array[int]
    hashes: array[int]

    def trace(self, k: int) -> bytes:
        """The packed trace of case ``k`` (from 0); ``b""`` when not traced or not solved."""
        return self.traces[self.offsets[k] : self.offsets[k + 1]]


class Chunks:
    """An engine's stored chunks (canonical texts joined by ``\\n``) solved in one call: in C by the
    native core, which hands what it does not finish to a fallback, else case by case in Python."""

    def __init__(self, engine: Solver) -> None:
        self.engine = engine

    def solve(self, inputs: bytes, first: int, traced: bool, deadline: float | None = None,
              fallback: Fallback | None = None) -> ChunkSolution:
        """A chunk's cases numbered from ``first``, none started once ``time.monotonic()`` reaches
        ``deadline``. What C does not finish (a text not canonical, a 10-20-30 game past 65,535
        cards) goes to ``fallback`` (:meth:`solve_one` unless given), which can bound a case's time.

        >>> from worker.engines import get
        >>> solution = get("mahjong").chunks.solve(b"1S 2S 3S 4S 4S 4S 5S 6S 7S 7S 8S 8S 9S\\n"
        ...                                        b"1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI", 7, True)
        >>> solution.lines, solution.outcomes, list(solution.numbers), solution.trace(1), solution.started
        (b'Case 7: 3S 5S 6S 8S 9S\\nCase 8: Not ready\\n', b'\\x01\\x02', [5, 0], b'{"version":1,"proofs":[]}', 2)
        """
        one = self.solve_one if fallback is None else fallback
        if self.engine.core is not None:
            return ChunkSolution(*self.engine.core.solve_chunk(inputs, first, traced, deadline, one))
        texts = inputs.split(b"\n") if inputs else []
        count = started = len(texts)
        lines = [""] * count
        traces = [b""] * count
        outcomes = bytearray(count)
        numbers, extras, solve_us = (array(code, bytes(4 * count)) for code in "iiI")
        stop = float("inf") if deadline is None else deadline * 1e9
        now = time.monotonic_ns()
        for k, text in enumerate(texts):
            if now >= stop:
                started = k
                break
            code, number, extra, line, packed = one(first + k, text.decode(), traced)
            if not 0 <= code <= 255:
                raise ValueError(f"an outcome code is 0..255, not {code}")
            if code:
                outcomes[k], numbers[k], extras[k], lines[k] = code, number, extra, line
                traces[k] = packed if traced else b""
            then = time.monotonic_ns()
            solve_us[k] = (then - now) // 1000
            now = then
        offsets = array("I", accumulate(map(len, traces), initial=0))
        return ChunkSolution(count, started, "".join(line + "\n" for line in lines).encode(), b"".join(traces),
                             offsets, bytes(outcomes), numbers, extras, solve_us, array("Q", map(case_hash, texts)))

    def solve_one(self, index: int, text: str, traced: bool) -> Entry:
        """One case of :meth:`solve` solved in Python."""
        engine, case = self.engine, Case(index, text)
        result, packed = engine.solve_packed(case) if traced else (engine.solve(case, False), b"")
        return (engine.lines.code(result.outcome), result.number,
                engine.lines.extra(result.outcome, result.number, result.detail), result.line, packed)
