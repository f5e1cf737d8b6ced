"""Accordian Patience (UVa 127): deal a deck into a row of piles, folding it up to the left.

Rules (``judge-data/RULES.md``): cards are dealt one at a time onto a row of piles.
Whenever some top card can move, the leftmost such card moves: onto the pile three to
its left if it matches that pile's top card (same rank or same suit), else onto the pile
just to its left if it matches that one. An emptied pile is removed and the piles to its
right close up. When no top card can move, the next card is dealt. The answer is the
sizes of the piles left, left to right: ``6 piles remaining: 40 8 1 1 1 1``, or
``1 pile remaining: 52`` (outcome ``win``; any other count is a ``loss``).

>>> from worker.engines.reading import Case
>>> sample = ("QD AD 8H 5S 3H 5H TC 4D JH KS 6H 8S JS AC AS 8D 2H QS TS 3S AH 4H TH TD 3C 6S "
...           "8C 7D 4C 4S 7S 9H 7C 5D 2S KD 2D QH JD 6D 9D JC 2C KH 3D QC 6C 9S KC 7H 9C 5C")
>>> ENGINE.solve(Case(1, sample), trace=False).line
'6 piles remaining: 40 8 1 1 1 1'

The package:

- :mod:`.cards`: card names, numbers and bit masks, and a deck's text as cards;
- :mod:`.read`: the judge file ("Input": what is accepted);
- :mod:`.play`: the rules played fast, plain and traced (the hot path; "Speed");
- :mod:`.trace`: the trace format ("Trace (version 2)") and the replay, which plays the
  rules again, written plainly;
- :mod:`.core`: the native core (compiled by Cython when it can be, see
  :mod:`worker.engines.native`): the same play, and the reading of plain files, in C;
- :mod:`.engine`: the :class:`~worker.engines.base.Engine` over them, and the judge line.
"""

from worker.engines.accordion.cards import CARDS
from worker.engines.accordion.engine import ENGINE, AccordionEngine, line_of

__all__ = ["CARDS", "ENGINE", "AccordionEngine", "line_of"]
