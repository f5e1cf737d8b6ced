"""What solving a case gives, :class:`Result`, and the two forms a store keeps of it: its judge line
(:class:`JudgeLines`) and its trace as bytes (:class:`Traces`)."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import orjson

from worker.engines.reading import Case

#: What a judge line says: ``(outcome, number, detail)``.
Fields = tuple[str, int, list[Any]]


class TraceError(ValueError):
    """A stored trace does not replay to the result it claims."""


@dataclass(slots=True)
class Result:
    """One case's answer: ``outcome`` (one of the engine's ``outcomes``), ``number`` (deals, piles,
    waits), ``detail`` (the rest, JSON-ready), ``line`` (the judge line) and ``trace`` (or ``None``)."""

    outcome: str
    number: int
    detail: list[Any]
    line: str
    trace: dict[str, Any] | None = field(default=None)


def plain(cls: type, names: tuple[str, ...]) -> bool:
    """Whether the dataclass ``cls`` is just the fields ``names``, nothing run on creation: then a
    reader or solver may fill a Case's or Result's slots itself and skip ``__init__`` (a quarter and a
    tenth of their time). Checked at import, so that a change to either class brings the calls back."""
    return tuple(f.name for f in dataclasses.fields(cls)) == names and not hasattr(cls, "__post_init__")


class JudgeLines(ABC):
    """A game's results as a store keeps them, no detail per case: the judge line (:meth:`make`), the
    outcome's code and one extra number the line leaves out; :meth:`parse` gives the result back."""

    def __init__(self, slug: str, outcomes: tuple[str, ...]) -> None:
        self.slug, self.outcomes = slug, outcomes

    @abstractmethod
    def make(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        """The judge line of a result, numbered ``index``."""

    @abstractmethod
    def fields(self, index: int, line: str, extra: int) -> Fields | None:
        """What a judge line says, or ``None``; lenient: :meth:`parse` checks the line is made again."""

    def extra(self, outcome: str, number: int, detail: list[Any]) -> int:
        """What a result holds beyond its judge line, as one number (0 unless the game says otherwise)."""
        return 0

    def code(self, outcome: str) -> int:
        """An outcome's stored code: 1 + its place in ``outcomes`` (a game adds outcomes at the end).

        >>> from worker.engines import get
        >>> get("10-20-30").lines.code("draw"), get("mahjong").lines.code("not-ready")
        (3, 2)
        """
        return self.outcomes.index(outcome) + 1

    def parse(self, index: int, line: str, extra: int = 0) -> Fields:
        """Case ``index``'s ``(outcome, number, detail)``: the exact inverse of :meth:`make` and
        :meth:`extra`, a :class:`ValueError` for a line and extra they do not give.

        >>> from worker.engines import get
        >>> get("10-20-30").lines.parse(4, "Win : 066")
        Traceback (most recent call last):
        ...
        ValueError: not a 10-20-30 judge line of case 4: 'Win : 066'
        """
        fields = self.fields(index, line, extra)
        if fields is None or self.make(index, *fields) != line or self.extra(*fields) != extra:
            raise ValueError(f"not a {self.slug} judge line of case {index}: {line!r}"
                             + (f" with extra {extra}" if extra else ""))
        return fields


class Traces:
    """A game's traces as stored bytes (:meth:`pack`, :meth:`unpack`) and as ``dealer solve --traces``
    records. A game that raises :attr:`version` upgrades older stored traces in :meth:`unpack`."""

    version = 1

    def __init__(self, slug: str) -> None:
        self.slug = slug

    def pack(self, trace: dict[str, Any]) -> bytes:
        return orjson.dumps(trace)

    def unpack(self, packed: bytes) -> dict[str, Any]:
        """The trace of stored bytes; :class:`TraceError` for bytes no trace packs to."""
        try:
            trace = orjson.loads(packed)
        except orjson.JSONDecodeError:
            trace = None
        if not isinstance(trace, dict):
            raise TraceError(f"not a stored {self.slug} trace")
        return trace

    def record(self, case: Case, result: Result, trace: bytes) -> bytes:
        """A line of ``dealer solve --traces`` (no newline); ``trace`` is JSON.

        >>> from worker.engines import Case, get
        >>> mahjong, case = get("mahjong"), Case(4, "1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI")
        >>> print(mahjong.traces.record(case, mahjong.solve(case, False), b'{"version":1,"proofs":[]}').decode())
        {"index":4,"outcome":"not-ready","number":0,"detail":[],"trace":{"version":1,"proofs":[]}}
        """
        return orjson.dumps({"index": case.index, "outcome": result.outcome, "number": result.number,
                             "detail": result.detail, "trace": orjson.Fragment(trace)})

