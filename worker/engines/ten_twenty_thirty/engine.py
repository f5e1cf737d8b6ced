"""The 10-20-30 engine: reading, playing and tracing behind :class:`Engine`."""

from __future__ import annotations

from typing import Any

import orjson

from worker.engines import native, results
from worker.engines.engine import Engine, JudgeFile
from worker.engines.reading import Case
from worker.engines.results import Fields, JudgeLines, Result
from worker.engines.ten_twenty_thirty import trace as traces
from worker.engines.ten_twenty_thirty.play import play
from worker.engines.ten_twenty_thirty.read import RULES, TERMINATOR, UNIT, residues
from worker.engines.ten_twenty_thirty.rules import DECK_SIZE, DRAW, OUTCOMES, Game

#: The judge's words for each outcome, in the order of :data:`.rules.OUTCOMES`.
_LINES = ("Win : ", "Loss: ", "Draw: ")


def line_of(outcome: int, deals: int) -> str:
    """The judge line of a game: ``Win : 66``."""
    return _LINES[outcome] + str(deals)


def result_of(outcome: int, n: int, seen: int, trace: dict[str, Any] | None = None) -> Result:
    """The result of a game: its outcome (:data:`.rules.OUTCOMES`), ``N`` and a draw's first sighting."""
    return Result(OUTCOMES[outcome], n, [seen] if seen else [], line_of(outcome, n), trace)


class TenTwentyThirtyLines(JudgeLines):
    def make(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        return line_of(OUTCOMES.index(outcome), number)

    def fields(self, index: int, line: str, extra: int) -> Fields | None:
        word, deals = line[:6], line[6:]
        if word not in _LINES or not (deals.isascii() and deals.isdigit()):
            return None
        outcome = _LINES.index(word)
        return OUTCOMES[outcome], int(deals), [extra] if extra and outcome == DRAW else []

    def extra(self, outcome: str, number: int, detail: list[Any]) -> int:
        """A draw's first sighting, which its judge line does not say."""
        return detail[0] if detail else 0


class TenTwentyThirtyTraces(results.Traces):
    version = 2

    def unpack(self, packed: bytes) -> dict[str, Any]:
        """Packed traces too (:func:`.trace.pack`); version 1 comes back as 2."""
        if packed[:1] == traces.PACKED_TAG:
            return traces.expand(packed)
        return traces.upgrade(super().unpack(packed))  # type: ignore[no-any-return]


class TenTwentyThirty(Engine):
    """UVa 246. ``Result.number`` is the deal count ``N``; ``Result.detail`` is ``[]``, or
    ``[S]`` for a draw, ``S`` being the deal after which the repeated state was first seen."""

    slug = "10-20-30"
    title = "10-20-30 (UVa 246)"
    summary = "Deal onto seven piles, pick up threes summing to 10, 20 or 30: win, loss or draw."
    number_name = "deals"
    input_help = "52 card values 1–10 per deck, any spacing; a `0` ends the file."
    number_help = "How many cards were dealt before the game was won, lost or drawn."
    detail_label = "The repeated state was first seen"
    detail_text = "after deal {}"
    outcomes = OUTCOMES
    judge_file = JudgeFile(UNIT, TERMINATOR, RULES.read, RULES)
    Lines = TenTwentyThirtyLines
    Traces = TenTwentyThirtyTraces
    case_bytes = 120
    deck = tuple(str(v) for v in range(1, 10) for _ in range(4)) + ("10",) * 16

    def _solve_in_python(self, case: Case, trace: bool) -> Result:
        """Also a game too long for the core's buffers."""
        return _solve_here(case.text, trace, False)[0]

    def _packed_in_python(self, case: Case) -> tuple[Result, bytes]:
        """The result and its stored trace: :func:`.trace.pack`'s bytes, a draw's JSON."""
        return _solve_here(case.text, True, True)

    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        """Check ``trace`` move by move (:func:`.trace.walk_trace`); its result."""
        steps = traces.walk_trace(text, trace)
        try:
            while True:
                next(steps)
        except StopIteration as end:
            return result_of(*end.value, trace)

    def sniff(self, head: bytes) -> bool:
        """Integers 0..10, with a 0 only where a deck would start."""
        tokens = head.split()
        if tokens and not head[-1:].isspace() and len(head) >= 512:
            tokens.pop()  # perhaps cut short
        for j, token in enumerate(tokens):  # j: the cards before
            if not token.isdigit() or len(token) > 3:
                return False
            value = int(token)
            if value == 0:
                return j % DECK_SIZE == 0 and j > 0
            if value > 10:
                return False
        return bool(tokens)


def _solve_here(text: str, trace: bool, packed: bool) -> tuple[Result, bytes]:
    """A deck played in Python: its result with its trace (``trace``), or with the trace's
    stored bytes (``packed``: :func:`.trace.pack`'s for a win or a loss, a draw's JSON)."""
    d = residues(text)
    marks, gone = (bytearray(), []) if trace or packed else (None, None)
    outcome, n, piles, rem = play(d, marks, gone)
    seen, record = 0, None
    if outcome == DRAW:  # its ``N`` and first sighting need the game played exactly
        game = Game(d).play()
        n, seen = game.dealt, game.seen
        record = traces.from_game(game) if marks is not None else None
    result = result_of(outcome, n, seen)
    if packed:
        return result, orjson.dumps(record) if record else traces.pack(d, n, marks, gone, piles, rem)
    if trace:
        result.trace = record or traces.from_marks(d, n, marks, piles, rem)
    return result, b""


ENGINE = TenTwentyThirty(native.load("worker.engines.ten_twenty_thirty"))
