"""The small number a case's index row stores for its outcome (``cases.outcome``).

Outcome names are the engines' (``Engine.outcomes``, every game's through
:func:`worker.engines.outcomes`); this is only how the case index keeps them. The numbers
are in stored rows, so an outcome keeps its number for good: a game with an outcome no game
had before adds it at the end (the engine-contract tests hold every engine to having its
outcomes here).

>>> code("draw"), sorted(CODES.values()) == list(range(1, len(CODES) + 1))
(3, True)
"""

from __future__ import annotations

CODES = {"win": 1, "loss": 2, "draw": 3, "ready": 4, "not-ready": 5}


def code(outcome: str) -> int:
    """The stored number of an outcome."""
    try:
        return CODES[outcome]
    except KeyError:
        raise KeyError(f"the outcome {outcome!r} has no stored code: add it at the end of "
                       "worker.jobs.outcomes.CODES") from None
