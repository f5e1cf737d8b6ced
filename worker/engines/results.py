"""What solving a case gives: its :class:`Result`, or a :class:`TraceError` from a replay."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


class TraceError(ValueError):
    """A stored trace does not replay to the result it claims."""


@dataclass(slots=True)
class Result:
    """The answer for one case: ``outcome`` (one of the engine's ``outcomes``), ``number`` (what
    the game is judged by: deals, piles, waits), ``detail`` (the rest, JSON-ready), ``line`` (the
    judge line, no newline) and ``trace`` (``None`` when not asked for)."""

    outcome: str
    number: int
    detail: list[Any]
    line: str
    trace: dict[str, Any] | None = field(default=None)


def plain(cls: type, names: tuple[str, ...]) -> bool:
    """Whether the dataclass ``cls`` is just the fields ``names``, with nothing run on creation,
    so that filling its slots makes the object its ``__init__`` would: a reader makes a Case a
    case and a solver a Result, and their ``__init__`` would cost a quarter and a tenth of their
    time. Checked at import, so a change to either class brings the calls back."""
    return tuple(f.name for f in dataclasses.fields(cls)) == names and not hasattr(cls, "__post_init__")
