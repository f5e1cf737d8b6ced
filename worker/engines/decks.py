"""The stream reader of the deck games (accordion, 10-20-30): a judge file as tokens in constant memory, 52
places a deck whatever the line breaks, so that a bad deck, taking its 52 places too, leaves every other
deck as it was. A game says what a good deck is, what ends the input and what is wrong with a bad deck
(:class:`DeckRules`); a line and column are found only for what a case or a message names.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, ClassVar

from worker.engines.reading import Case, InputError, Piece, Reading, read_pieces

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
        error = self.token_error(tokens, number, where)
        return self.deck_error(tokens, number, where) if error is None and whole else error

    def stops(self, line: bytes, tokens: list[bytes]) -> bool:
        """Whether a line, with these tokens, ends the input (it holds the terminator where it counts)."""
        if tokens[0][0] == self.end_byte and self.ends(tokens[0]):
            return True
        return self.ends_within and self.end_byte in line and any(map(self.ends, tokens))

    def read(self, stream: IO[bytes], reading: Reading, start_line: int = 1, number: int = 0,
             start_column: int = 1) -> Iterator[Case]:
        """The game's stream reader (a :data:`.layout.ReaderFrom`): the decks of a judge file (or of its
        rest, from ``start_column`` of ``start_line``, after ``number`` decks) read as a stream of tokens
        in constant memory."""
        deck, ends, end_byte, new = self.deck, self.ends, self.end_byte, Case.new
        within = bytes([end_byte]) if self.ends_within else None
        waiting = _Waiting()
        queue, marks = waiting.tokens, waiting.marks
        empty = not number and start_line == 1
        for line, column, piece in (pieces := read_pieces(stream, line=start_line, column=start_column)):
            empty = False
            tokens = piece.split()
            if not tokens:
                continue
            marks.append((waiting.base + len(queue), line, column, piece))  # (inline: the stream's every piece)
            queue += tokens
            size = len(queue)
            if size < DECK_SIZE and queue[0][0] != end_byte and not (within and within in piece):
                continue  # most lines: nothing to do yet
            pos = 0
            while pos < size:
                if queue[pos][0] == end_byte and ends(queue[pos]):
                    _ended(reading, number, waiting, pos, pieces)
                    return
                cards = queue[pos : pos + DECK_SIZE]
                text = deck(cards) if len(cards) == DECK_SIZE else None
                if text is None:
                    end = next((k for k, token in enumerate(cards) if ends(token)), -1) if within else -1
                    if end < 0 and len(cards) < DECK_SIZE:
                        break
                    number += 1
                    short = f'is cut short by "{reading.terminator}"'
                    _fault(reading, self, cards[:end] if end >= 0 else cards, number, waiting.where(pos), short)
                    if end >= 0:
                        _ended(reading, number, waiting, pos + end, pieces)
                        return
                    pos += DECK_SIZE  # a bad deck too takes its 52 places: the next deck starts after them
                    continue
                yield new(number := number + 1, text, *waiting.of(pos))
                pos += DECK_SIZE
            waiting.drop(pos)
        if queue:
            number += 1
            _fault(reading, self, queue, number, waiting.where(0), "ends at end of file")
        reading.unended(number, empty)


def _fault(reading: Reading, rules: DeckRules, cards: list[bytes], number: int, where: Where, short: str
           ) -> None:
    """Deck ``number`` is bad: what ``rules`` find wrong with its ``cards``, else that it ``short``."""
    error = rules.fault(cards, number, where, len(cards) == DECK_SIZE)
    short_error = InputError(f"deck {number} {short} after {len(cards)} of {DECK_SIZE} cards", *where(0))
    reading.fault(error or short_error, number)


def _ended(reading: Reading, number: int, waiting: _Waiting, pos: int,
           pieces: Iterator[tuple[int, int, bytes]]) -> None:
    """The terminator, waiting token ``pos``, ends the input after ``number`` decks; what follows it is the
    next waiting token, or the rest of the file."""
    rest: Iterable[Piece] = pieces
    if pos + 1 < len(waiting.tokens):
        rest = [(*waiting.of(pos + 1), waiting.tokens[pos + 1])]
    reading.ended(number, *waiting.of(pos), rest)


class _Waiting:
    """The tokens read and not yet in a deck, and where each stands, from the pieces they came in."""

    def __init__(self) -> None:
        self.tokens: list[bytes] = []
        self.base = 0  # the index of tokens[0] among the file's
        #: The pieces not used up: (the index of their first token among the file's, line, column, piece).
        self.marks: list[tuple[int, int, int, bytes]] = []
        # The last token found inside a piece (piece, index, offset): a long line is searched once.
        self._cursor: tuple[bytes, int, int] = (b"", 0, 0)

    def drop(self, count: int) -> None:
        """The first ``count`` tokens are used up."""
        del self.tokens[:count]
        self.base += count
        while len(self.marks) > 1 and self.marks[1][0] <= self.base:
            del self.marks[0]

    def of(self, k: int) -> tuple[int, int]:
        """Where waiting token ``k`` stands."""
        at = self.base + k
        first, line, column, piece = self.marks[0]
        if first != at:  # (most decks start the oldest piece)
            first, line, column, piece = next(mark for mark in reversed(self.marks) if mark[0] <= at)
        i, start = at - first, len(piece) - len(piece.lstrip())
        if i:
            known, index, offset = self._cursor
            if known is not piece or index > i:
                index, offset = 0, start
            if i > index:
                skip = re.compile(rb"(?:\S+\s+){%d}" % (i - index))  # (re caches it)
                offset = skip.match(piece, offset).end()  # type: ignore[union-attr]
            self._cursor = piece, i, offset
            start = offset
        return line, column + start

    def where(self, pos: int) -> Where:
        """Where token ``k`` of the deck at waiting token ``pos`` stands."""
        return lambda k: self.of(pos + k)
