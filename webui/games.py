"""The games as the web app shows them: ``GET /api/games``, the pages, and the scripts (which read the
same list from the page, see ``base.html``). Every text that differs by game is an attribute of its
engine (:class:`worker.engines.Engine`); what is said of all the games is made from them here."""

from __future__ import annotations

from collections.abc import Iterable

from worker import engines
from worker.jobs.views import GameView


def game_views() -> list[GameView]:
    """Every game the registry has, in its order."""
    return [GameView(slug=e.slug, title=e.title, summary=e.summary, unit=e.unit, number_name=e.number_name,
                     outcomes=list(e.outcomes), input_help=e.input_help, number_help=e.number_help,
                     detail_label=e.detail_label, detail_text=e.detail_text) for e in engines.all_engines()]


def either(words: Iterable[str]) -> str:
    """Each word once, in order, as a choice is said.

    >>> either(["deck", "deck", "hand"]), either(["deals", "piles", "waits"]), either(["hand"])
    ('deck or hand', 'deals, piles or waits', 'hand')
    """
    unique = list(dict.fromkeys(words))
    return ", ".join(unique[:-1]) + " or " + unique[-1] if len(unique) > 1 else "".join(unique)


def any_unit() -> str:
    """What a case is called when the game is not known: ``deck or hand``."""
    return either(engine.unit for engine in engines.all_engines())


def any_number_name() -> str:
    """What a result's number counts when the game is not known: ``deals, piles or waits``."""
    return either(engine.number_name for engine in engines.all_engines())
