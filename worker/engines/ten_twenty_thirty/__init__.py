"""10-20-30 (UVa 246): deal a deck onto seven piles, picking up threes that sum to 10, 20 or 30.

Rules (``judge-data/RULES.md``): deal one card to each of seven piles, left to right; then
deal the top card of the deck onto the next pile that still exists, wrapping from the
rightmost to the leftmost. While the pile just dealt to holds at least three cards,
check in this order: its first two + last card, its first + last two cards, its last
three cards; the first combination summing to 10, 20 or 30 is picked up and put under
the deck, in pile order ("first two + last" goes under as first, second, last). A pile
that empties is gone for the rest of the game. After each deal, once the pile is
settled: all piles gone is a win, an empty deck a loss, and a repeat of an earlier state
of this game (the seven piles and the deck, from the seventh deal on) a draw. ``N``
counts every card dealt: ``Win : 66``, ``Loss: 82``, ``Draw: 73``.

>>> from worker.engines.reading import Case
>>> sample = (
...     "2 6 5 10 10 4 10 10 10 4 5 10 4 5 10 9 7 6 1 7 6 9 5 3 10 10 4 10 9 2 1 "
...     "10 1 10 10 10 3 10 9 8 10 8 7 1 2 8 6 7 3 3 8 2")
>>> ENGINE.solve(Case(1, sample), trace=False).line
'Win : 66'

Modules: :mod:`.read` (the judge file), :mod:`.rules` (the rules as written: draws, replays),
:mod:`.play` (the fast loop), :mod:`.trace` (the trace, stored form and replay), :mod:`.core`
(the native core, compiled by Cython) and :mod:`.engine`.
"""

from worker.engines.ten_twenty_thirty.engine import ENGINE, TenTwentyThirty, line_of
from worker.engines.ten_twenty_thirty.rules import OUTCOMES
from worker.engines.ten_twenty_thirty.trace import walk_trace

__all__ = ["ENGINE", "OUTCOMES", "TenTwentyThirty", "line_of", "walk_trace"]
