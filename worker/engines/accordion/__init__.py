"""Accordian Patience (UVa 127): fold a dealt row of piles to the left; the piles left are the
answer, one a ``win`` (rules: ``tests/data/judge/RULES.md``). :mod:`.cards`, :mod:`.read`, the
fast loop :mod:`.play`, :mod:`.trace` and its plain replay, the compiled :mod:`.core`, :mod:`.engine`.

>>> from worker.engines.reading import Case
>>> sample = ("QD AD 8H 5S 3H 5H TC 4D JH KS 6H 8S JS AC AS 8D 2H QS TS 3S AH 4H TH TD 3C 6S "
...           "8C 7D 4C 4S 7S 9H 7C 5D 2S KD 2D QH JD 6D 9D JC 2C KH 3D QC 6C 9S KC 7H 9C 5C")
>>> ENGINE.solve(Case(1, sample), trace=False).line
'6 piles remaining: 40 8 1 1 1 1'
"""

from worker.engines.accordion.cards import CARDS
from worker.engines.accordion.engine import ENGINE, AccordionEngine, line_of

__all__ = ["CARDS", "ENGINE", "AccordionEngine", "line_of"]
