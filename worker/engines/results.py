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
    """One case's answer: an engine's outcome, a number (deals, piles, waits), the rest as JSON-ready
    ``detail``, the judge line and the trace (or ``None``)."""

    outcome: str
    number: int
    detail: list[Any]
    line: str
    trace: dict[str, Any] | None = field(default=None)


def plain(cls: type, names: tuple[str, ...]) -> bool:
    """Whether dataclass ``cls`` is just the fields ``names``: then a reader or solver may fill its
    slots and skip ``__init__`` (a quarter and a tenth of their time); checked at import."""
    return tuple(f.name for f in dataclasses.fields(cls)) == names and not hasattr(cls, "__post_init__")


class JudgeLines(ABC):
    """A result as a store keeps it: the judge line (:meth:`make`), the outcome's code and one extra
    number the line leaves out; :meth:`parse` gives the result back."""

    def __init__(self, slug: str, outcomes: tuple[str, ...]) -> None:
        self.slug, self.outcomes = slug, outcomes

    @abstractmethod
    def make(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        """The judge line of a result, numbered ``index``."""

    @abstractmethod
    def fields(self, index: int, line: str, extra: int) -> Fields | None:
        """What a judge line says, or ``None``; lenient: :meth:`parse` checks the line is made again."""

    def extra(self, outcome: str, number: int, detail: list[Any]) -> int:
        """What a result holds beyond its judge line, as one number (0 unless a game says so)."""
        return 0

    def code(self, outcome: str) -> int:
        """An outcome's stored code: 1 + its place in ``outcomes`` (a game adds outcomes at the end)."""
        return self.outcomes.index(outcome) + 1

    def parse(self, index: int, line: str, extra: int = 0) -> Fields:
        """Case ``index``'s ``(outcome, number, detail)``: the exact inverse of :meth:`make` and
        :meth:`extra`, a :class:`ValueError` for a line and extra they do not give."""
        fields = self.fields(index, line, extra)
        if fields is None or self.make(index, *fields) != line or self.extra(*fields) != extra:
            raise ValueError(f"not a {self.slug} judge line of case {index}: {line!r}"
                             + (f" with extra {extra}" if extra else ""))
        return fields


class Traces:
    """A game's traces as stored bytes and as ``dealer solve --traces`` records; a game that raises
    :attr:`version` upgrades older stored traces in :meth:`unpack`."""

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
        """A line of ``dealer solve --traces`` (no newline); ``trace`` is JSON."""
        return orjson.dumps({"index": case.index, "outcome": result.outcome, "number": result.number,
                             "detail": result.detail, "trace": orjson.Fragment(trace)})

