"""Reading Accordian Patience judge files: two-character cards (rank ``A23456789TJQK``, suit
``CDHS``, upper case), 52 a deck across any whitespace, a token starting with ``#`` ending the
input, no card twice in a deck. Read by a layout (:data:`RULES`) or as a stream
(:func:`read_decks`), where a bad deck still takes its 52 places.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from itertools import chain
from typing import IO

from worker.engines.accordion.cards import DECK_SIZE, RANKS, SUITS, VALID, numbers_of
from worker.engines.reading import Case, InputError, Reading, read_pieces, show, tokens_with_columns

TERMINATOR = "#"
UNIT = "deck"
_TERMINATOR = TERMINATOR.encode()  # a token starting with it ends the input
_RANK_BYTES = RANKS.encode()
_SUIT_BYTES = SUITS.encode()

#: Where a piece of the file feeds the deck being read: (offset in the deck of the first
#: card it gives, line, column, piece, index of that card among the piece's tokens). The
#: piece is kept without surrounding whitespace, and the column is where it starts.
_Span = tuple[int, int, int, bytes, int]


def read_decks(stream: IO[bytes], reading: Reading, start_line: int = 1, index: int = 0,
               start_column: int = 1) -> Iterator[Case]:
    """The decks of a judge file (or of its rest, from ``start_column`` of ``start_line``, after
    ``index`` decks) read as a stream of cards in constant memory. A piece already canonical
    (cards and single spaces) is taken whole; any other is split into tokens.

    >>> import io
    >>> from worker.engines.accordion.cards import CARDS
    >>> deck = " ".join(CARDS)
    >>> reading = Reading(TERMINATOR, UNIT)
    >>> [(c.index, c.line) for c in read_decks(io.BytesIO((deck + "\\n" + deck).encode()), reading)]
    [(1, 1), (2, 2)]
    >>> [str(w) for w in reading.warnings]
    ['no terminating "#" at end of file']
    >>> list(read_decks(io.BytesIO(b"AC 1H"), reading))
    Traceback (most recent call last):
    ...
    worker.engines.reading.InputError: line 1, column 4: "1H" is not a card (rank A23456789TJQK, suit CDHS)
    """
    pieces = read_pieces(stream, line=start_line, column=start_column)
    segments: list[bytes] = []  # canonical text of the deck so far
    spans: list[_Span] = []
    count = 0  # cards in the deck so far
    skip = 0  # places of a bad deck still to pass over, read on past it (see Faults)
    empty = not index and start_line == 1
    for line, column, piece in pieces:
        empty = False
        while piece:
            if skip:
                passed = tokens_with_columns(piece, column)[:skip]
                for token, at in passed:
                    if token.startswith(_TERMINATOR):  # the input ends inside the bad deck
                        end = at + len(token)
                        reading.ended(index, line, at, chain([(line, end, piece[end - column :])], pieces))
                        return
                skip -= len(passed)
                if skip or not passed:
                    break
                end = passed[-1][1] + len(passed[-1][0])
                piece, column = piece[end - column :], end
            stop = -1
            if _all_cards(piece):
                body = piece
                cards = (len(piece) + 1) // 3
            else:
                tokens = piece.split()
                if tokens:  # keep no more of the piece than its tokens (for positions, if asked)
                    column += len(piece) - len(piece.lstrip())
                    piece = piece.strip()
                cards = len(tokens)
                if not VALID.issuperset(tokens):
                    cards = stop = next(k for k, token in enumerate(tokens) if token not in VALID)
                body = b" ".join(tokens[:cards])
            k = 0
            while k < cards:
                spans.append((count, line, column, piece, k))
                need = DECK_SIZE - count
                if cards - k < need:
                    segments.append(body[3 * k :] if k else body)
                    count += cards - k
                    break
                segments.append(body[3 * k : 3 * (k + need) - 1] if k or need < cards else body)
                k += need
                text = b" ".join(segments)
                index += 1
                # The cards are valid: numbers_of refuses a deck only when one is there twice.
                repeat = _repeat(text.split(), spans, index) if numbers_of(text) is None else None
                if repeat is not None:
                    reading.fault(repeat, index)
                else:
                    _, at_line, at_column, _, first = spans[0]
                    if first:  # the deck starts inside a piece, not at its first token
                        at_line, at_column = _position(spans, 0)
                    yield Case(index, text.decode(), at_line, at_column)
                segments.clear()
                spans.clear()
                count = 0
            if stop < 0:
                break
            token = tokens[stop]
            at = tokens_with_columns(piece, column)[stop][1]
            if token.startswith(_TERMINATOR):
                _stop_at((line, at, at + len(token)), (piece, column), (segments, spans, count), index, pieces, reading)
                return
            # A card's place holds something else: the deck is bad, and the next starts after its 52 places.
            index += 1
            reading.fault(_repeat(b" ".join(segments).split(), spans, index) or _not_card(token, line, at), index)
            skip = DECK_SIZE - count - 1
            segments.clear()
            spans.clear()
            count = 0
            end = at + len(token)
            piece, column = piece[end - column :], end
    if count:
        _short(segments, spans, count, index + 1, "ends at end of file", reading)
    reading.unended(index + bool(count), empty)


def _all_cards(text: bytes) -> bool:
    """Whether ``text`` is canonical: cards separated by single spaces, nothing else.

    >>> _all_cards(b"AC 2D TS"), _all_cards(b"AC  2D"), _all_cards(b"AC 2D\\r"), _all_cards(b"ac")
    (True, False, False, False)
    """
    size = len(text)
    # Card characters at every place but each third, and as many spaces as those places.
    return (
        size % 3 == 2
        and text.count(b" ") == size // 3
        and not text[0::3].translate(None, _RANK_BYTES)
        and not text[1::3].translate(None, _SUIT_BYTES)
    )


def _stop_at(
    where: tuple[int, int, int],
    within: tuple[bytes, int],
    deck: tuple[list[bytes], list[_Span], int],
    index: int,
    pieces: Iterator[tuple[int, int, bytes]],
    reading: Reading,
) -> None:
    """The terminator, on a line from one column to another (``where``) of a piece starting at a column
    (``within``), ends the input: a deck it cuts short is bad."""
    line, at, end = where
    piece, column = within
    segments, spans, count = deck
    if count:
        index += 1
        _short(segments, spans, count, index, f'is cut short by "{TERMINATOR}"', reading)
    # What follows: the rest of the piece, then the rest of the file.
    reading.ended(index, line, at, chain([(line, end, piece[end - column :])], pieces))


def _short(segments: list[bytes], spans: list[_Span], count: int, number: int, how: str,
           reading: Reading) -> None:
    """Deck ``number``, of ``count`` cards, ends too soon (``how``): a fault at its first problem."""
    reading.fault(_repeat(b" ".join(segments).split(), spans, number) or InputError(
        f"deck {number} {how} after {count} of {DECK_SIZE} cards", *_position(spans, 0)), number)


def _repeat(deck: list[bytes], spans: list[_Span], number: int) -> InputError | None:
    return _twice(deck, number, lambda k: _position(spans, k))


def _twice(deck: Sequence[bytes], number: int, where: Callable[[int], tuple[int, int]]) -> InputError | None:
    """The error at the second copy of the first card a (possibly partial) deck holds twice, if any."""
    seen: set[bytes] = set()
    for k, card in enumerate(deck):
        if card in seen:
            return InputError(f"{card.decode()} appears twice in deck {number}", *where(k))
        seen.add(card)
    return None


def _position(spans: list[_Span], k: int) -> tuple[int, int]:
    """Line and column of token ``k`` of the deck being read."""
    for offset, line, column, piece, first in reversed(spans):
        if offset <= k:
            nth = first + k - offset
            if nth == 0:  # pieces kept in spans start with a token
                return line, column
            return line, _columns(piece, column)[nth][1]
    raise AssertionError("token outside the deck")  # pragma: no cover


@lru_cache(maxsize=1)
def _columns(piece: bytes, column: int) -> list[tuple[bytes, int]]:
    # Many decks may start in one long piece: find its token columns once, not once per deck.
    # Decks are read in file order, so only the last piece is ever asked for again, and
    # one piece's columns (a few MB for 64 KiB of cards) are all that is kept.
    return tokens_with_columns(piece, column)


def _not_card(token: bytes, line: int, column: int) -> InputError:
    hint = "; cards are written in upper case" if token.upper() in VALID else ""
    return InputError(f"{show(token)} is not a card (rank {RANKS}, suit {SUITS}{hint})", line, column)


class _Rules:
    """What the layout reader needs of accordion's decks (:class:`~worker.engines.layout.DeckRules`)."""

    def stops(self, line: bytes, tokens: list[bytes]) -> bool:
        return _TERMINATOR in line and any(token.startswith(_TERMINATOR) for token in tokens)

    def deck(self, tokens: list[bytes]) -> str | None:
        if not VALID.issuperset(tokens):
            return None
        text = b" ".join(tokens)
        return text.decode() if numbers_of(text) is not None else None

    def token_error(self, tokens: Sequence[bytes], number: int, where: Callable[[int], tuple[int, int]]
                    ) -> InputError | None:
        bad = next((k for k, token in enumerate(tokens) if token not in VALID), None)
        return None if bad is None else _not_card(tokens[bad], *where(bad))

    def deck_error(self, tokens: list[bytes], number: int, where: Callable[[int], tuple[int, int]]) -> InputError:
        error = _twice(tokens, number, where)
        assert error is not None, "a deck of 52 distinct cards is good"
        return error


RULES = _Rules()
