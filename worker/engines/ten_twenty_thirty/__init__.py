"""10-20-30 (UVa 246): deal onto seven piles, picking up threes that sum to 10, 20 or 30, to a win,
a loss or a draw after ``N`` cards dealt (rules: ``tests/data/judge/RULES.md``). :mod:`.read`,
:mod:`.rules` (as written: draws, replays), the fast loop :mod:`.play`, :mod:`.trace`, the
compiled :mod:`.core`, :mod:`.engine`.

>>> from worker.engines.reading import Case
>>> sample = (
...     "2 6 5 10 10 4 10 10 10 4 5 10 4 5 10 9 7 6 1 7 6 9 5 3 10 10 4 10 9 2 1 "
...     "10 1 10 10 10 3 10 9 8 10 8 7 1 2 8 6 7 3 3 8 2")
>>> ENGINE.solve(Case(1, sample), trace=False).line
'Win : 66'
"""

from worker.engines.ten_twenty_thirty.engine import ENGINE, TenTwentyThirty, line_of
from worker.engines.ten_twenty_thirty.rules import OUTCOMES
from worker.engines.ten_twenty_thirty.trace import walk_trace

__all__ = ["ENGINE", "OUTCOMES", "TenTwentyThirty", "line_of", "walk_trace"]
