"""Chinese Mahjong (UVa 11210): which tiles would complete a hand of thirteen?

Rules (``judge-data/RULES.md``): for each of the 34 kinds of tile **of which the hand
holds fewer than four**, add one; that kind is waited for when the fourteen tiles split
into exactly one eye (a pair) and four melds, a meld being a pong (three identical tiles)
or a chow (three consecutive tiles of one suit, no wrap-around, never honours). Kongs
and special hands (thirteen orphans and the like) do not count; four copies in a hand
may be split (a pong plus one tile in a chow). The answer lists the waited tiles in the
order 1T..9T, 1S..9S, 1W..9W, DONG, NAN, XI, BEI, ZHONG, FA, BAI.

>>> from worker.engines.reading import Case
>>> hand = "1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA"
>>> ENGINE.solve(Case(1, hand), trace=False).line
'Case 1: 1S 4S FA'
>>> ENGINE.solve(Case(2, "1S 2S 3S 4S 5S 6S 7S 8S 9S 1T 3T 5T 7T"), trace=False).line
'Case 2: Not ready'

Modules: :mod:`.tiles` (names, kinds, a hand's key), :mod:`.read` (the judge file),
:mod:`.solve` (four table look-ups, the judge line), :mod:`.table` (reads ``table.bin``),
:mod:`.tablegen` (builds it; never imported when solving), :mod:`.trace` (proofs and their
replay), :mod:`.core` (the native core, compiled by Cython) and :mod:`.engine`.
"""

from worker.engines.mahjong.engine import ENGINE, MahjongEngine
from worker.engines.mahjong.solve import line_of
from worker.engines.mahjong.tiles import TILES

__all__ = ["ENGINE", "TILES", "MahjongEngine", "line_of"]
