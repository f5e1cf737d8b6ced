"""Chinese Mahjong (UVa 11210): the tiles that complete a hand of thirteen into an eye and four
melds (rules: ``tests/data/judge/RULES.md``). :mod:`.tiles`, :mod:`.read`, :mod:`.solve` (four
table look-ups), :mod:`.table` (reads ``table.bin``, which :mod:`.tablegen` builds), :mod:`.trace`
(proofs and their replay), the compiled :mod:`.core`, :mod:`.engine`.

>>> from worker.engines.reading import Case
>>> ENGINE.solve(Case(1, "1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA"), trace=False).line
'Case 1: 1S 4S FA'
"""

from worker.engines.mahjong.engine import ENGINE, MahjongEngine
from worker.engines.mahjong.solve import line_of
from worker.engines.mahjong.tiles import TILES

__all__ = ["ENGINE", "TILES", "MahjongEngine", "line_of"]
