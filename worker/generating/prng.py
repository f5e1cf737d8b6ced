"""The generator's random numbers: SplitMix64, written down so that a file made from a seed
is the same on every machine, Python version and core.

Python's own ``random`` would do in Python, but the compiled core (:mod:`.core`) draws most
numbers of a large file, and it must draw exactly the numbers this module draws: so both
follow this one small, documented algorithm (Steele, Lea and Flood's SplitMix64, with
Lemire's unbiased bounded integers), and the tests hold them to the same stream.

>>> rng = Rng(7)
>>> [rng.below(10) for _ in range(8)]
[3, 0, 9, 5, 4, 2, 4, 3]
>>> rng.state == Rng(7).skip(8).state
True
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import TypeVar

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
GOLDEN = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB

T = TypeVar("T")


def mix64(z: int) -> int:
    """SplitMix64's output function: a bijection of 64-bit integers that scatters its bits."""
    z = ((z ^ (z >> 30)) * _MIX1) & M64
    z = ((z ^ (z >> 27)) * _MIX2) & M64
    return z ^ (z >> 31)


class Rng:
    """A SplitMix64 stream. ``state`` is all of it: the compiled core takes it, draws, and
    hands back the state after its draws."""

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state & M64

    @classmethod
    def of_block(cls, seed: int, block: int) -> Rng:
        """The stream of block ``block`` of a file made from ``seed``: blocks are made
        independently (on any process, in any order), each from its own stream."""
        return cls(mix64((seed & M64) ^ mix64((block + 1) * GOLDEN & M64)))

    def next32(self) -> int:
        """32 random bits (the high half of SplitMix64's next output)."""
        self.state = (self.state + GOLDEN) & M64
        return mix64(self.state) >> 32

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``, ``1 <= n <= 2**32``, by Lemire's multiply-and-shift
        with rejection (unbiased; one draw almost always)."""
        m = self.next32() * n
        low = m & M32
        if low < n:
            threshold = (M32 + 1 - n) % n
            while low < threshold:
                m = self.next32() * n
                low = m & M32
        return m >> 32

    def choice(self, items: list[T] | tuple[T, ...]) -> T:
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates from the front: place ``i`` takes a uniform pick of places ``i..n-1``
        (the order :func:`.deal.shuffles` draws in too)."""
        n = len(items)
        for i in range(n - 1):
            j = i + self.below(n - i)
            items[i], items[j] = items[j], items[i]

    def skip(self, draws: int) -> Rng:
        """The stream after ``draws`` 32-bit draws (for tests); the Rng itself."""
        self.state = (self.state + draws * GOLDEN) & M64
        return self
