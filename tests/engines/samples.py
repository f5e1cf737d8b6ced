"""What the engine tests share: each game's sample cases and case strategies, and reading helpers.

Not a test module: the contract test (``test_contract.py``) and the per-game modules import
from here, never from each other.
"""

from __future__ import annotations

import io
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import IO, cast

import pytest
from hypothesis import strategies as st

from worker.engines.accordion import CARDS
from worker.engines.engine import Engine
from worker.engines.mahjong import TILES
from worker.engines.reading import Case, Diagnostic, InputError

# ----------------------------------------------------------------------------- 10-20-30

STANDARD = [v for v in range(1, 10) for _ in range(4)] + [10] * 16
#: The statement's three sample decks: a win, a loss and a draw.
WIN = ("2 6 5 10 10 4 10 10 10 4 5 10 4 5 10 9 7 6 1 7 6 9 5 3 10 10 4 10 9 2 1 "
       "10 1 10 10 10 3 10 9 8 10 8 7 1 2 8 6 7 3 3 8 2")
LOSS = ("4 3 2 10 8 10 6 8 9 5 8 10 5 3 5 4 6 9 9 1 7 6 3 5 10 10 8 10 9 10 10 7 "
        "2 6 10 10 4 10 1 3 10 1 1 10 2 2 10 4 10 7 7 10")
DRAW = ("10 5 4 3 5 7 10 8 2 3 9 10 8 4 5 1 7 6 7 2 6 9 10 2 3 10 3 4 4 9 10 1 1 "
        "10 5 10 10 1 8 10 7 8 10 6 10 10 10 9 6 2 10 10")
standard_decks = st.permutations(STANDARD).map(lambda cards: " ".join(map(str, cards)))

# ----------------------------------------------------------------------------- accordion

#: The statement's two sample decks: a loss and a win.
DECK1 = ("QD AD 8H 5S 3H 5H TC 4D JH KS 6H 8S JS AC AS 8D 2H QS TS 3S AH 4H TH TD 3C 6S "
         "8C 7D 4C 4S 7S 9H 7C 5D 2S KD 2D QH JD 6D 9D JC 2C KH 3D QC 6C 9S KC 7H 9C 5C")
DECK2 = ("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AD 2D 3D 4D 5D 6D 7D 8D TD 9D JD QD KD "
         "AH 2H 3H 4H 5H 6H 7H 8H 9H KH 6S QH TH AS 2S 3S 4S 5S JH 7S 8S 9S TS JS QS KS")
card_decks = st.permutations(CARDS).map(" ".join)

# ----------------------------------------------------------------------------- mahjong

HAND = "1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA"
NOT_READY = "1S 2S 3S 4S 5S 6S 7S 8S 9S 1T 3T 5T 7T"


def random_hand(rng: random.Random) -> list[str]:
    """Uniform, near-ready (a win less one tile, maybe with one tile swapped) or one-suit."""
    wall = [tile for tile in TILES for _ in range(4)]
    roll = rng.random()
    if roll < 0.3:
        return rng.sample(wall, 13)
    if roll < 0.8:
        while True:
            counts = Counter({rng.choice(TILES): 2})
            for _ in range(4):
                if rng.random() < 0.5:
                    suit, start = rng.choice("TSW"), rng.randrange(1, 8)
                    counts.update(f"{start + i}{suit}" for i in range(3))
                else:
                    counts[rng.choice(TILES)] += 3
            if max(counts.values()) <= 4:
                break
        tiles = list(counts.elements())
        del tiles[rng.randrange(14)]
        if roll > 0.7:  # one tile swapped: near-ready, often not ready
            tiles[rng.randrange(13)] = rng.choice(TILES)
            if max(Counter(tiles).values()) > 4:
                return random_hand(rng)
        return tiles
    suit = rng.choice("TSW")
    return rng.sample([t for t in wall if t[1:] == suit], 13)


def canonical_hand(tiles: list[str]) -> str:
    return " ".join(sorted(tiles, key=TILES.index))


hands = st.randoms(use_true_random=False).map(random_hand)

# ----------------------------------------------------------------------------- every game

#: One case of each game in canonical text.
SAMPLE = {"10-20-30": WIN, "accordion": DECK1, "mahjong": HAND}
#: Random canonical cases of each game, as hypothesis draws them.
CASES = {"10-20-30": standard_decks, "accordion": card_decks, "mahjong": hands.map(canonical_hand)}


def parse(engine: Engine, data: bytes) -> tuple[list[Case], list[Diagnostic]]:
    """The cases of a file and the warnings about it."""
    warnings: list[Diagnostic] = []
    return list(engine.parse(io.BytesIO(data), warnings)), warnings


#: How a reading ended: ``None`` at the end of the file, else its error's message, line and column.
Ending = tuple[str, int | None, int | None] | None
#: A block size of ``read_inputs``: most cases, most bytes.
Size = tuple[int, int]


def parsed_inputs(engine: Engine, stream: IO[bytes]) -> tuple[list[bytes], Ending, list[str]]:
    """What ``read_inputs`` must give, from ``parse``: each case's text and newline, how the
    reading ended, and the warnings."""
    warnings: list[Diagnostic] = []
    texts: list[bytes] = []
    ending: Ending = None
    try:
        for case in engine.parse(stream, warnings):
            texts.append(case.text.encode() + b"\n")
    except InputError as error:
        ending = (error.message, error.line, error.column)
    return texts, ending, [str(warning) for warning in warnings]


#: The last files' ``parsed_inputs``, by game, core and bytes: the tests ask ``assert_inputs`` for one
#: file in many block sizes, and parse's answer depends on the file alone (parsing it again for each
#: size was a third of their CPU time).
_PARSED: dict[tuple[str, str, bytes], tuple[list[bytes], Ending, list[str]]] = {}


def _parsed_once(engine: Engine, data: bytes) -> tuple[list[bytes], Ending, list[str]]:
    key = (engine.slug, engine.core_name, data)
    if key not in _PARSED:
        if len(_PARSED) >= 4:
            _PARSED.clear()
        _PARSED[key] = parsed_inputs(engine, io.BytesIO(data))
    return _PARSED[key]


def inputs_in_blocks(engine: Engine, stream: IO[bytes], sizes: Iterable[Size],
                     size: int) -> tuple[list[tuple[bytes, int, Size]], Ending, list[str]]:
    """``read_inputs`` of a stream of ``size`` bytes, taking blocks of ``sizes`` in turn (the last
    one again and again): each block with the size asked, how the reading ended, the warnings.
    Checks on the way what the reader says of itself: the cases given, and bytes read that
    only grow, to at most the stream's size."""
    warnings: list[Diagnostic] = []
    reader = engine.read_inputs(stream, warnings)
    asked = iter(sizes)
    wanted = next(asked)
    blocks: list[tuple[bytes, int, Size]] = []
    ending: Ending = None
    read = given = 0
    try:
        while True:
            texts, count = reader.take(*wanted)
            given += count
            assert reader.cases == given and read <= reader.bytes_read <= size
            read = reader.bytes_read
            if not count:
                assert texts == b"" and reader.take() == (b"", 0) and list(reader) == []
                break
            blocks.append((texts, count, wanted))
            wanted = next(asked, wanted)
    except InputError as error:
        ending = (error.message, error.line, error.column)
        assert reader.take() == (b"", 0)  # (raised once, as a generator would)
    return blocks, ending, [str(warning) for warning in warnings]


def assert_inputs(engine: Engine, data: bytes, sizes: Iterable[Size]) -> list[tuple[bytes, int, Size]]:
    """``read_inputs`` of ``data`` gives ``parse``'s texts, in blocks cut as asked, then its error
    or its end, and its warnings: the blocks."""
    texts, ending, warnings = _parsed_once(engine, data)
    blocks, our_ending, our_warnings = inputs_in_blocks(engine, io.BytesIO(data), sizes, len(data))
    assert (our_ending, our_warnings) == (ending, warnings)
    assert b"".join(block for block, _, _ in blocks) == b"".join(texts)
    at = 0
    for k, (block, count, (most, room)) in enumerate(blocks):
        assert count == block.count(b"\n") and 1 <= count <= most
        assert len(block) <= room or count == 1, (k, count, len(block), room)
        at += count
        if k + 1 < len(blocks) and count < most:  # a short block but for the last: the next case is too long for it
            assert len(block) + len(texts[at]) > room, (k, count, len(block), room)
    return blocks


def error(engine: Engine, data: bytes) -> InputError:
    """The error that reading ``data`` raises."""
    with pytest.raises(InputError) as caught:
        parse(engine, data)
    return caught.value


def two_lines(deck: str) -> str:
    """A deck written as judge files write it: two lines of 26 cards."""
    cards = deck.split()
    return " ".join(cards[:26]) + "\n" + " ".join(cards[26:])


def stream(parts: Iterable[bytes]) -> IO[bytes]:
    """A binary file made on the fly from ``parts``, never held in memory."""
    return cast(IO[bytes], io.BufferedReader(_Parts(parts), buffer_size=1 << 16))


class _Parts(io.RawIOBase):
    def __init__(self, parts: Iterable[bytes]) -> None:
        self.parts: Iterator[bytes] = iter(parts)
        self.left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        while not self.left:
            self.left = next(self.parts, b"")
            if not self.left:
                return 0
        n = min(len(buffer), len(self.left))
        buffer[:n] = self.left[:n]
        self.left = self.left[n:]
        return n
