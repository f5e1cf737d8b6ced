"""A stored chunk solved in one call (``Engine.chunks``): :class:`ChunkSolution`, buffers with no
object per case, and :func:`case_hash`."""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: How :func:`case_hash` starts (times the length), mixes each word in, and finishes:
#: 2**64 / the golden ratio, and MurmurHash3's two finaliser constants.
HASH_START = 0x9E3779B97F4A7C15
HASH_MIX = 0xFF51AFD7ED558CCD
HASH_FINISH = 0xC4CEB9FE1A85EC53
_MASK64 = (1 << 64) - 1


def case_hash(text: str | bytes) -> int:
    """The 64-bit hash a chunk stores of each case's canonical input, which a search looks for: each
    step a bijection, so texts of one length that differ in one word never collide. Stored, and
    computed in C by ``out.py`` too: never change it."""
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


#: One case solved in Python: outcome code, number, extra, judge line and packed trace;
#: :data:`NOT_SOLVED` for a case given up on.
Entry = tuple[int, int, int, str, bytes]
Fallback = Callable[[int, str, bool], Entry]
NOT_SOLVED: Entry = (0, 0, 0, "", b"")


@dataclass(frozen=True, slots=True)
class ChunkSolution:
    """A chunk's ``count`` cases solved, ``started`` of them before the deadline: each judge line and
    ``\\n`` (``\\n`` alone: not solved), packed traces end to end (:meth:`trace`), outcome codes (0: not
    solved), numbers and extras (signed 32-bit), microseconds a case, :func:`case_hash` a case."""

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
    """The solutions of runs of consecutive cases as one (a chunk whose numbers skip is solved a run
    at a time)."""
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

    def cat(name: str) -> Any:
        first = getattr(parts[0], name)
        whole = b"".join(getattr(part, name) for part in parts)  # bytes, or arrays by their buffers
        return whole if isinstance(first, bytes) else array(first.typecode, whole)

    return ChunkSolution(sum(part.count for part in parts), started, cat("lines"), cat("traces"), offsets,
                         cat("outcomes"), cat("numbers"), cat("extras"), cat("solve_us"), cat("hashes"))
