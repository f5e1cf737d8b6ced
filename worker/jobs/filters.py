"""Filters for results (one job's cases, or the history across jobs): typed and checked.

The web app parses query parameters into a :class:`ResultFilter`; :meth:`ResultFilter.checked`
applies the rules that need the games (a known outcome, a searchable input).
:mod:`worker.jobs.results` turns it into queries, every value bound as a parameter.

>>> ResultFilter(game="10-20-30", outcome="draw", input_text="1 " * 52).checked()
Traceback (most recent call last):
...
worker.jobs.errors.Invalid: input: line 1, column 1: deck 1 is not a standard deck: 52 cards of value 1 (at most 4)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from worker import engines
from worker.jobs.errors import Invalid

#: What results can be sorted by (a leading ``-`` sorts descending).
SORTS = ("index", "number", "outcome", "solve_us", "solved_at", "job_id")
MAX_PER_PAGE = 500
DEFAULT_PER_PAGE = 50
#: How many results page numbers reach (``page * per_page``); past them, pages follow cursors.
MAX_PAGED = 10_000


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
    per_page: int = DEFAULT_PER_PAGE
    #: Which page: the first; the one after or before a cursor (``"job:index"``); or the ``last``.
    after: str | None = None
    before: str | None = None
    last: bool = False
    #: A page number, for the first few thousand results only (deeper pages follow cursors).
    page: int = 1
    #: ``input_text`` in the game's canonical form (set by :meth:`checked`).
    canonical: str | None = None

    def checked(self) -> ResultFilter:
        """This filter once its values make sense together, else :class:`Invalid` saying why."""
        if self.game is not None:
            engines.check(self.game)
        if self.sort not in SORTS:
            raise Invalid(f"cannot sort by {self.sort!r}; expected one of {', '.join(SORTS)}")
        if self.page > 1 and (self.after or self.before or self.last):
            raise Invalid("give either a page number or a cursor (after, before, last), not both")
        if self.page * self.per_page > MAX_PAGED:
            raise Invalid(f"page {self.page:,} is too deep for page numbers (they reach the first "
                          f"{MAX_PAGED:,} results): follow the next and prev cursors of the pages instead")
        # An outcome of another game than the filter's is no error: it is a filter that matches nothing.
        if self.outcome is not None and self.outcome not in engines.outcomes():
            raise Invalid(f"unknown outcome {self.outcome!r}; expected one of {', '.join(engines.outcomes())}")
        if self.input_text is None:
            return self
        if self.game is None:
            return self._with_game_of_input()
        try:
            canonical = engines.get(self.game).canonical(self.input_text)
        except engines.InputError as error:
            raise Invalid(f"input: {error}") from None
        return replace(self, canonical=canonical)

    def _with_game_of_input(self) -> ResultFilter:
        """With no game chosen, the input says which: the one game it is a case of (else an error saying
        why: no game's, with each reader's words, or several games')."""
        assert self.input_text is not None
        found: dict[str, str] = {}
        errors: list[str] = []
        for engine in engines.all_engines():
            try:
                found[engine.slug] = engine.canonical(self.input_text)
            except engines.InputError as error:
                errors.append(f"as {engine.slug}: {error}")
        if len(found) == 1:
            game, canonical = next(iter(found.items()))
            return replace(self, game=game, canonical=canonical)
        if found:
            raise Invalid(f"input: it is a case of {' and of '.join(found)}; choose the game")
        raise Invalid("input: it is no case of any game (" + "; ".join(errors) + ")")
