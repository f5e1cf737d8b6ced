"""A toy game for the tests that add a game (``test_a_new_game.py``): coin tosses.

A case (a throw) is a line of 1 to 9 tosses, ``H`` or ``T``, separated by spaces; a line ``#`` ends the file. More
heads than tails wins. The judge prints ``3 heads, 2 tails`` per case. It is registered only by the
tests that use it, as a game's package is by the one line of the registry.

>>> result = ENGINE.solve(Case(1, "H T H"))
>>> result.outcome, result.number, result.detail, result.line, result.trace
('win', 2, [2, 1], '2 heads, 1 tails', {'version': 1, 'tosses': 'HTH'})
>>> import io
>>> [case.text for case in ENGINE.parse(io.BytesIO(b"H  T\\n\\nT\\n#\\n"))]
['H T', 'T']
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import chain
from typing import IO, Any

from worker.engines.engine import Engine, JudgeFile
from worker.engines.reading import Case, InputError, Reading, read_pieces, show, tokens_with_columns
from worker.engines.results import Fields, JudgeLines, Result, TraceError

TOSSES = (b"H", b"T")
MOST = 9


class CoinLines(JudgeLines):
    def make(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        return f"{detail[0]} heads, {detail[1]} tails"

    def fields(self, index: int, line: str, extra: int) -> Fields | None:
        heads, said, tails = line.removesuffix(" tails").partition(" heads, ")
        if not (said and heads.isdigit() and tails.isdigit()):
            return None
        return ("win" if int(heads) > int(tails) else "loss"), int(heads), [int(heads), int(tails)]


class Coins(Engine):
    slug = "coins"
    title = "Coin tosses (a toy)"
    summary = "toss coins: more heads than tails wins"
    number_name = "heads"
    input_help = "Up to 9 tosses like `H T T` per line; a line `#` ends the file."
    number_help = "How many tosses came up heads."
    detail_label = "Heads and tails"
    outcomes = ("win", "loss")
    judge_file = JudgeFile("throw", "#")
    case_bytes = 10
    Lines = CoinLines

    def read(self, stream: IO[bytes], reading: Reading) -> Iterator[Case]:
        pieces = read_pieces(stream)
        count, seen, at_line, start = 0, False, 0, (1, 1)
        tokens: list[str] = []
        for line, column, piece in pieces:
            seen = True
            if line != at_line and tokens:
                count += 1
                yield Case(count, " ".join(tokens), *start)
                tokens = []
            at_line = line
            for token, at in tokens_with_columns(piece, column):
                if not tokens and token == self.terminator.encode():
                    after = at - column + 1
                    reading.ended(count, line, at, chain([(line, at + 1, piece[after:])], pieces))
                    return
                if token not in TOSSES:
                    raise InputError(f"{show(token)} is not a toss (H or T)", line, at)
                if len(tokens) == MOST:
                    raise InputError(f"more than {MOST} tosses in a case", line, at)
                if not tokens:
                    start = (line, at)
                tokens.append(token.decode())
        if tokens:
            count += 1
            yield Case(count, " ".join(tokens), *start)
        reading.unended(count, empty=not seen)

    def _solve_in_python(self, case: Case, trace: bool) -> Result:
        tosses = "".join(case.text.split())
        heads = tosses.count("H")
        tails = len(tosses) - heads
        return Result("win" if heads > tails else "loss", heads, [heads, tails],
                      self.lines.make(case.index, "", heads, [heads, tails]),
                      {"version": 1, "tosses": tosses} if trace else None)

    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        if not isinstance(trace, dict) or trace.get("version") != 1:
            raise TraceError("not a coins trace of version 1")
        if trace.get("tosses") != "".join(text.split()):
            raise TraceError("the trace's tosses are not the case's")
        return self.solve(Case(1, text))

    def generate(self, rng: random.Random) -> str:
        return " ".join(rng.choice("HT") for _ in range(rng.randint(1, MOST)))

    def sniff(self, head: bytes) -> bool:
        first = head.split(b"\n", 1)[0].split()
        return bool(first) and all(token in TOSSES for token in first)


ENGINE = Coins()
