"""The stream reader of the deck games (accordion, 10-20-30): a judge file as tokens in constant memory, 52
places a deck whatever the line breaks, so that a bad deck, taking its 52 places too, leaves every other
deck as it was. A game says what a good deck is, what ends the input and what is wrong with a bad deck
(:class:`DeckRules`); a line and column are found only for what a case or a message names.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import IO, ClassVar

from worker.engines.reading import Case, InputError, Reading, read_pieces, tokens_with_columns

DECK_SIZE = 52

#: Where token ``k`` of a deck stands: (line, column).
Where = Callable[[int], tuple[int, int]]


class DeckRules(ABC):
    """What the stream reader and the layout reader (:class:`.layout.LaidOut`) need of a game's decks."""

    #: The first byte of every token that ends the input; whether it ends it inside a deck's places too,
    #: not only where a deck starts.
    end_byte: ClassVar[int]
    ends_within: ClassVar[bool]

    @abstractmethod
    def ends(self, token: bytes) -> bool:
        """Whether the token ends the input (at a deck's start, or anywhere with :attr:`ends_within`)."""

    @abstractmethod
    def deck(self, tokens: list[bytes]) -> str | None:
        """The canonical text of 52 tokens that make a good deck, else ``None``."""

    @abstractmethod
    def token_error(self, tokens: Sequence[bytes], number: int, where: Where) -> InputError | None:
        """The first token of deck ``number`` that is no card."""

    @abstractmethod
    def deck_error(self, tokens: Sequence[bytes], number: int, where: Where) -> InputError:
        """What is wrong with deck ``number``, 52 cards that make no deck."""

    def fault(self, tokens: Sequence[bytes], number: int, where: Where, whole: bool) -> InputError | None:
        """What is wrong with deck ``number`` of these tokens (``whole``: all 52 of it), if anything."""
        return self.token_error(tokens, number, where) or (self.deck_error(tokens, number, where) if whole else None)

    def stops(self, line: bytes, tokens: list[bytes]) -> bool:
        """Whether a line, with these tokens, ends the input (it holds the terminator where it counts)."""
        return self.end_byte in line and any(map(self.ends, tokens if self.ends_within else tokens[:1]))

    def read(self, stream: IO[bytes], reading: Reading, start_line: int = 1, number: int = 0,
             start_column: int = 1) -> Iterator[Case]:
        """The game's stream reader (a :data:`.layout.ReaderFrom`): :func:`read_decks` by these rules."""
        return read_decks(stream, reading, self, start_line, number, start_column)


#: Where a piece not yet used up starts: (index of its first token in the file, line, column, piece).
_Mark = tuple[int, int, int, bytes]


def read_decks(stream: IO[bytes], reading: Reading, rules: DeckRules, start_line: int = 1, number: int = 0,
               start_column: int = 1) -> Iterator[Case]:
    """The decks of a judge file (or of its rest, from ``start_column`` of ``start_line``, after
    ``number`` decks) read as a stream of tokens in constant memory."""
    deck, ends, end_byte = rules.deck, rules.ends, rules.end_byte
    within = bytes([end_byte]) if rules.ends_within else None
    where = _Positions()
    marks = where.marks
    waiting: list[bytes] = []  # tokens read and not yet in a deck
    base = 0  # index among the file's tokens of waiting[0]
    empty = not number and start_line == 1
    for line, column, piece in (pieces := read_pieces(stream, line=start_line, column=start_column)):
        empty = False
        tokens = piece.split()
        if not tokens:
            continue
        marks.append((base + len(waiting), line, column, piece))
        waiting += tokens
        size = len(waiting)
        if size < DECK_SIZE and waiting[0][0] != end_byte and not (within and within in piece):
            continue  # most lines: nothing to do yet
        pos = 0
        while pos < size:
            if waiting[pos][0] == end_byte and ends(waiting[pos]):
                _ended(reading, number, where, base + pos, waiting, pos, pieces)
                return
            cards = waiting[pos : pos + DECK_SIZE]
            text = deck(cards) if len(cards) == DECK_SIZE else None
            if text is None:
                end = next((k for k, token in enumerate(cards) if ends(token)), -1) if within else -1
                if end < 0 and len(cards) < DECK_SIZE:
                    break
                number += 1
                at = base + pos
                error = rules.fault(cards[:end] if end >= 0 else cards, number, lambda j: where.of(at + j), end < 0)
                reading.fault(error or InputError(  # (a whole deck that is no deck always has an error)
                    f'deck {number} is cut short by "{reading.terminator}" after {end} of {DECK_SIZE} cards',
                    *where.of(at)), number)
                if end >= 0:
                    _ended(reading, number, where, at + end, waiting, pos + end, pieces)
                    return
                pos += DECK_SIZE  # a bad deck too takes its 52 places: the next deck starts after them
                continue
            at_line, at_column = where.of(base + pos)
            pos += DECK_SIZE
            yield Case(number := number + 1, text, at_line, at_column)
        if pos:
            del waiting[:pos]
            base += pos
            while len(marks) > 1 and marks[1][0] <= base:  # pieces used up
                del marks[0]
    if waiting:
        number += 1
        reading.fault(rules.fault(waiting, number, lambda j: where.of(base + j), False) or InputError(
            f"deck {number} ends at end of file after {len(waiting)} of {DECK_SIZE} cards", *where.of(base)), number)
    reading.unended(number, empty)


def _ended(reading: Reading, number: int, where: _Positions, at: int, waiting: list[bytes], pos: int,
           pieces: Iterator[tuple[int, int, bytes]]) -> None:
    """The terminator, token ``at`` of the file (``pos`` of the waiting ones), ends the input after
    ``number`` decks; what follows it is the next waiting token, or the rest of the file."""
    line, column = where.of(at)
    if pos + 1 < len(waiting):
        reading.ended(number, line, column, [(*where.of(at + 1), waiting[pos + 1])])
    else:
        reading.ended(number, line, column, pieces)


class _Positions:
    """The line and column of waiting tokens, from the marks of their pieces."""

    def __init__(self) -> None:
        self.marks: list[_Mark] = []
        self._columns: tuple[bytes, list[int]] = (b"", [])  # the last piece searched, its tokens' columns

    def of(self, at: int) -> tuple[int, int]:
        """Where token ``at`` (counted over the whole file) stands."""
        first, line, column, piece = next(mark for mark in reversed(self.marks) if mark[0] <= at)
        if at == first:  # the deck starts its piece, as in most files
            return line, column + len(piece) - len(piece.lstrip())
        if self._columns[0] is not piece:  # (a long line is searched once)
            self._columns = piece, [start for _, start in tokens_with_columns(piece, column)]
        return line, self._columns[1][at - first]
