"""Filters for results (one job's cases, or the history across jobs): typed, checked, then turned into SQL.

The web app parses query parameters into a :class:`ResultFilter`; :meth:`ResultFilter.checked`
applies the rules that need the games (a known outcome, a searchable input), and every
value ends up bound as a parameter, never spelled into SQL.

>>> ResultFilter(game="10-20-30", outcome="draw", input_text="1 " * 52).checked()
Traceback (most recent call last):
...
worker.jobs.errors.Invalid: input: line 1, column 1: deck 1 is not a standard deck: 52 cards of value 1 (at most 4)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Select

from worker import engines
from worker.jobs.errors import Invalid
from worker.store.codecs import input_hash
from worker.store.models import CaseRow

#: What results can be sorted by (a leading ``-`` sorts descending).
SORTS = ("index", "number", "outcome", "solve_us", "solved_at", "job_id")
MAX_PER_PAGE = 500
DEFAULT_PER_PAGE = 50


@dataclass(frozen=True)
class ResultFilter:
    game: str | None = None
    outcome: str | None = None
    number_min: int | None = None
    number_max: int | None = None
    job_id: int | None = None
    since: datetime | None = None
    until: datetime | None = None
    input_text: str | None = None
    sort: str = "index"
    descending: bool = False
    page: int = 1
    per_page: int = DEFAULT_PER_PAGE
    #: ``input_text`` in the game's canonical form (set by :meth:`checked`).
    canonical: str | None = None

    def checked(self) -> ResultFilter:
        """This filter once its values make sense together, else :class:`Invalid` saying why."""
        if self.game is not None:
            engines.check(self.game)
        if self.sort not in SORTS:
            raise Invalid(f"cannot sort by {self.sort!r}; expected one of {', '.join(SORTS)}")
        if self.outcome is not None:
            allowed = (engines.get(self.game).outcomes if self.game
                       else sorted({o for e in engines.all_engines() for o in e.outcomes}))
            if self.outcome not in allowed:
                raise Invalid(f"unknown outcome {self.outcome!r}; expected one of {', '.join(allowed)}")
        if self.input_text is None:
            return self
        if self.game is None:
            raise Invalid("searching by input needs a game")
        try:
            canonical = engines.get(self.game).canonical(self.input_text)
        except engines.InputError as error:
            raise Invalid(f"input: {error}") from None
        return replace(self, canonical=canonical)

    def apply(self, query: Select[Any]) -> Select[Any]:
        conditions = []
        if self.game is not None:
            conditions.append(CaseRow.game == self.game)
        if self.outcome is not None:
            conditions.append(CaseRow.outcome == self.outcome)
        if self.number_min is not None:
            conditions.append(CaseRow.number >= self.number_min)
        if self.number_max is not None:
            conditions.append(CaseRow.number <= self.number_max)
        if self.job_id is not None:
            conditions.append(CaseRow.job_id == self.job_id)
        if self.since is not None:
            conditions.append(CaseRow.solved_at >= self.since)
        if self.until is not None:
            conditions.append(CaseRow.solved_at < self.until)
        if self.canonical is not None and self.game is not None:
            conditions.append(CaseRow.input_hash == input_hash(self.game, self.canonical))
            conditions.append(CaseRow.input == self.canonical)
        return query.where(*conditions)

    def order(self, query: Select[Any]) -> Select[Any]:
        column = getattr(CaseRow, self.sort)
        first = column.desc() if self.descending else column.asc()
        return query.order_by(first, CaseRow.id.desc() if self.descending else CaseRow.id)
