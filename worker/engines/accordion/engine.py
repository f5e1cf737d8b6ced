"""The accordion engine: reading, playing and tracing behind :class:`Engine`."""

from __future__ import annotations

from typing import Any

from worker.engines import native, results
from worker.engines.accordion.cards import CARDS, DECK_SIZE, NUMBER, TABLE_SIZE, VALID, masks_of
from worker.engines.accordion.play import play
from worker.engines.accordion.read import RULES, TERMINATOR, UNIT
from worker.engines.accordion.trace import play_of, replay_play
from worker.engines.engine import Engine, JudgeFile
from worker.engines.reading import Case, InputError
from worker.engines.results import Fields, JudgeLines, Result, TraceError

#: Spare ``under`` tables, one per concurrent game: allocating 70,000 slots costs more than a game.
_SPARE_TABLES: list[list[int]] = []


def line_of(piles: int, sizes: list[int]) -> str:
    """The judge line of ``piles`` piles of ``sizes``: ``6 piles remaining: 40 8 1 1 1 1``."""
    if piles == 1:
        return f"1 pile remaining: {sizes[0]}"
    return f"{piles} piles remaining: " + " ".join(map(str, sizes))


def result_of(sizes: list[int], trace: dict[str, Any] | None) -> Result:
    """The result of a game that left piles of ``sizes``."""
    n = len(sizes)
    return Result("win" if n == 1 else "loss", n, sizes, line_of(n, sizes), trace)


class AccordionLines(JudgeLines):
    """A judge line gives the pile sizes (it does not name the deck)."""

    def make(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        return line_of(number, detail)

    def fields(self, index: int, line: str, extra: int) -> Fields | None:
        head, said, tail = line.partition(" remaining: ")
        try:
            piles, sizes = int(head.partition(" ")[0]), list(map(int, tail.split(" ")))
        except ValueError:
            return None
        if not said or piles != len(sizes) or sum(sizes) != DECK_SIZE or 0 in sizes:
            return None
        return "win" if piles == 1 else "loss", piles, sizes


class AccordionTraces(results.Traces):
    version = 2

    def unpack(self, packed: bytes) -> dict[str, Any]:
        """A trace stored in version 1 comes back in version 2."""
        trace = super().unpack(packed)
        return {"version": 2, "play": play_of(trace)} if trace.get("version") == 1 else trace


class AccordionEngine(Engine):
    """UVa 127 "Accordian" Patience: the piles left after folding a deck to the left."""

    slug = "accordion"
    title = "Accordian Patience (UVa 127)"
    summary = "Deal 52 cards in a row, moving each onto a matching pile 1 or 3 to its left; count piles left."
    number_name = "piles"
    input_help = "52 cards like `QD AD 8H` per deck; a line `#` ends the file."
    number_help = "How many piles were left at the end of each deck."
    detail_label = "Pile sizes, left to right"
    outcomes = ("win", "loss")
    judge_file = JudgeFile(UNIT, TERMINATOR, RULES.read, RULES)
    Lines = AccordionLines
    Traces = AccordionTraces
    case_bytes = 156
    deck = CARDS

    def _solve_in_python(self, case: Case, trace: bool) -> Result:
        deck = masks_of(case.text)  # or say what is wrong with it
        try:
            under = _SPARE_TABLES.pop()
        except IndexError:
            under = [0] * TABLE_SIZE
        steps: list[str] | None = [] if trace else None
        try:
            sizes = play(deck, under, steps)
        finally:
            _SPARE_TABLES.append(under)
        return result_of(sizes, None if steps is None else {"version": 2, "play": "".join(steps)})

    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        """Re-play a trace move by move, checking each is the move the rules make."""
        try:
            deck = masks_of(text)
        except InputError as error:
            raise TraceError(f"the deck cannot be replayed: {error}") from None
        return result_of(replay_play([NUMBER[mask] for mask in deck], play_of(trace)), trace)

    def sniff(self, head: bytes) -> bool:
        """Whether a file starts with cards (either case), no card twice a deck."""
        tokens = head.split()
        if tokens and not head[-1:].isspace():
            tokens.pop()  # perhaps cut short
        cards: list[bytes] = []
        for token in tokens:
            if token[:1] == b"#":
                break
            card = token.upper()
            if card not in VALID:
                return False
            cards.append(card)
        # Bamboo tiles 2S..9S read as cards too, but mahjong hands repeat them.
        first_deck = cards[:DECK_SIZE]
        return bool(cards) and len(set(first_deck)) == len(first_deck)


ENGINE = AccordionEngine(native.load("worker.engines.accordion"))
