"""A stored chunk solved in one call (``Engine.chunks``): :class:`ChunkSolution`, a few buffers with no
object per case, and :func:`case_hash`, each case's stored hash."""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

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


def joined(parts: Sequence[ChunkSolution]) -> ChunkSolution:
    """The solutions of consecutive runs of cases as one (a stored chunk whose cases skip numbers is
    solved a run of consecutive numbers at a time, each numbered from its first).

    >>> part = ChunkSolution(1, 1, b"a\\n", b"xy", array("I", [0, 2]), b"\\x01", array("i", [5]),
    ...                      array("i", [0]), array("I", [7]), array("Q", [9]))
    >>> both = joined([part, part])
    >>> both.count, both.started, both.lines, both.trace(1), list(both.numbers)
    (2, 2, b'a\\na\\n', b'xy', [5, 5])
    """
    if len(parts) == 1:
        return parts[0]
    offsets, base, started = array("I", [0]), 0, 0
    for part in parts:
        offsets.extend(base + offset for offset in part.offsets[1:])
        base += len(part.traces)
    for part in parts:  # those from the first unfinished one on were started no further
        started += part.started
        if part.started < part.count:
            break

    def cat(name: str) -> array[int]:
        arrays: list[array[int]] = [getattr(part, name) for part in parts]
        whole = array(arrays[0].typecode)
        for values in arrays:
            whole.extend(values)
        return whole

    return ChunkSolution(sum(part.count for part in parts), started, b"".join(part.lines for part in parts),
                         b"".join(part.traces for part in parts), offsets,
                         b"".join(part.outcomes for part in parts), cat("numbers"), cat("extras"), cat("solve_us"),
                         cat("hashes"))

