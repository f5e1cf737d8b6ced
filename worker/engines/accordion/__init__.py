"""Accordian Patience (UVa 127): deal a deck into a row of piles, folding it up to the left.

Whenever a top card matches (same rank or suit) the top card three piles to its left, or
else the one just left of it, the leftmost such card moves there; an emptied pile closes up;
when none can move, the next card is dealt. The answer is the piles left: ``1 pile
remaining: 52`` is a ``win``, any other count a ``loss``.

>>> from worker.engines.reading import Case
>>> sample = ("QD AD 8H 5S 3H 5H TC 4D JH KS 6H 8S JS AC AS 8D 2H QS TS 3S AH 4H TH TD 3C 6S "
...           "8C 7D 4C 4S 7S 9H 7C 5D 2S KD 2D QH JD 6D 9D JC 2C KH 3D QC 6C 9S KC 7H 9C 5C")
>>> ENGINE.solve(Case(1, sample), trace=False).line
'6 piles remaining: 40 8 1 1 1 1'

Modules: :mod:`.cards` (names, numbers, masks), :mod:`.read` (the judge file), :mod:`.play`
(the fast loop), :mod:`.trace` (the trace and its plain replay), :mod:`.core` (the native
core, compiled by Cython) and :mod:`.engine`.
"""

from worker.engines.accordion.cards import CARDS
from worker.engines.accordion.engine import ENGINE, AccordionEngine, line_of

__all__ = ["CARDS", "ENGINE", "AccordionEngine", "line_of"]
