"""The mix of a generated file: which outcomes, in which shares.

Syntax (``dealer generate --mix``): items ``KEY=WEIGHT`` separated by commas.

- ``KEY`` is an outcome of the game (10-20-30: ``win``, ``loss``, ``draw``; accordion:
  ``win``, ``loss``; mahjong: ``ready``, ``not-ready``) or, for accordion and mahjong, a
  number of piles left (1-52) or of tiles waited for (0-9): ``N``, a range ``A-B``, or
  ``A+`` for A or more. Keys may not overlap (``loss`` and ``5`` do, for accordion).
- ``WEIGHT`` is a positive number (``1``, ``2.5``, ``1/3``); a key gets ``weight / sum of
  weights`` of the cases, exactly: the counts are rounded to whole cases once for the whole
  file (largest remainders), then shared out among its blocks the same way.

What is left out gets no case: ``--mix win=1,draw=1`` makes a file of wins and draws only.

>>> from worker.generating.makers import AccordionMaker
>>> mix = parse_mix(AccordionMaker(), "1=1, 2-5=2, 6+=1")
>>> [(b.label, b.low, b.high, str(b.weight)) for b in mix.buckets]
[('1', 1, 1, '1'), ('2-5', 2, 5, '2'), ('6+', 6, 52, '1')]
>>> mix.quotas(10)
[3, 5, 2]
>>> str(mix)
'1=1,2-5=2,6+=1'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from worker.generating.errors import GenerateError
from worker.generating.makers import Maker


@dataclass(frozen=True)
class Bucket:
    """One key of a mix: the keys ``low..high`` (see :mod:`.makers`), as the user wrote them."""

    label: str
    low: int
    high: int
    weight: Fraction

    def distance(self, key: int) -> int:
        """How far ``key`` is from this bucket's keys (0 inside)."""
        return self.low - key if key < self.low else key - self.high if key > self.high else 0


@dataclass(frozen=True)
class Mix:
    buckets: tuple[Bucket, ...]

    def __str__(self) -> str:
        return ",".join(f"{bucket.label}={bucket.weight}" for bucket in self.buckets)

    def quotas(self, cases: int) -> list[int]:
        """How many of ``cases`` each bucket gets (largest remainders; ties to the first)."""
        return apportion(cases, [bucket.weight for bucket in self.buckets])


def apportion(total: int, weights: list[Fraction] | list[int]) -> list[int]:
    """``total`` shared in proportion to ``weights`` (not all 0) by largest remainders: each
    share is its exact part rounded down or up, and they add up to ``total``.

    >>> apportion(10, [1, 1, 1]), apportion(7, [0, 5, 2]), apportion(3, [Fraction(1, 3), 2])
    ([4, 3, 3], [0, 5, 2], [0, 3])
    """
    whole = sum(weights)
    exact = [Fraction(total) * weight / whole for weight in weights]
    shares = [int(part) for part in exact]  # floor: every part is >= 0
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - shares[i]), i))
    for i in order[: total - sum(shares)]:
        shares[i] += 1
    return shares


_ITEM = re.compile(r"\s*([^=\s]+)\s*=\s*(\S+)\s*")
_NUMBER_KEY = re.compile(r"(\d{1,6})(?:(-)(\d{1,6})|(\+))?")


def parse_mix(maker: Maker, text: str) -> Mix:
    """The mix ``text`` asks for, for ``maker``'s game; :class:`GenerateError` says what is wrong."""
    items = text.split(",")
    buckets: list[Bucket] = []
    for item in items:
        match = _ITEM.fullmatch(item)
        if match is None:
            raise GenerateError(f'"{item.strip()}" is not KEY=WEIGHT (e.g. {_example(maker)})')
        key, weight_text = match.groups()
        low, high = _keys(maker, key)
        try:
            weight = Fraction(weight_text)
        except (ValueError, ZeroDivisionError):
            raise GenerateError(f'the weight of {key}, "{weight_text}", is not a number') from None
        if weight < 0:
            raise GenerateError(f"the weight of {key} is negative ({weight_text})")
        if weight == 0:
            raise GenerateError(f"the weight of {key} is 0: leave {key} out to have none")
        for other in buckets:
            if other.label == key:
                raise GenerateError(f"{key} is named twice")
            if low <= other.high and other.low <= high:
                raise GenerateError(f"{other.label} and {key} overlap: name each {_what(maker)} once")
        buckets.append(Bucket(key, low, high, weight))
    return Mix(tuple(buckets))


def _keys(maker: Maker, key: str) -> tuple[int, int]:
    """The keys ``key`` names: an outcome's, or numbers of piles or waits."""
    if key in maker.outcomes:
        return maker.outcomes[key]
    match = _NUMBER_KEY.fullmatch(key)
    outcomes = ", ".join(maker.outcomes)
    if match is None:
        numbers = f", or {maker.number_name} as N, A-B or A+" if maker.numbers else ""
        raise GenerateError(f'{maker.slug} has no outcome "{key}" (expected {outcomes}{numbers})')
    if maker.numbers is None:
        raise GenerateError(f'{maker.slug} is mixed by outcome ({outcomes}), not by number ("{key}")')
    least, most = maker.numbers
    low = int(match.group(1))
    high = most if match.group(4) else int(match.group(3)) if match.group(2) else low
    unit, phrase = maker.unit, maker.phrase
    if low > most or high < least:
        raise GenerateError(f"no {unit} {phrase.format(key)}: a {unit} {phrase.format(f'{least} to {most}')}")
    if high < low:
        raise GenerateError(f"{key} is an empty range")
    if low < least or high > most:
        raise GenerateError(f"{key} goes beyond what can be: a {unit} {phrase.format(f'{least} to {most}')}")
    return low, high


def _what(maker: Maker) -> str:
    return "outcome or number" if maker.numbers else "outcome"


def _example(maker: Maker) -> str:
    return ",".join(f"{outcome}=1" for outcome in maker.outcomes)
