"""Reading Accordian Patience judge files: two-character cards (rank ``A23456789TJQK``, suit
``CDHS``, upper case), 52 a deck across any whitespace, a token starting with ``#`` ending the
input, no card twice in a deck. Read by a layout (:data:`RULES`) or as a stream
(:func:`read_decks`), where a bad deck still takes its 52 places.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import IO

from worker.engines import decks
from worker.engines.accordion.cards import RANKS, SUITS, VALID, numbers_of
from worker.engines.decks import Where
from worker.engines.reading import Case, InputError, Reading, show

TERMINATOR = "#"
UNIT = "deck"
_TERMINATOR = TERMINATOR.encode()  # a token starting with it ends the input


def read_decks(stream: IO[bytes], reading: Reading, start_line: int = 1, index: int = 0,
               start_column: int = 1) -> Iterator[Case]:
    """The decks of a judge file read as a stream (:func:`worker.engines.decks.read_decks`).

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
    return decks.read_decks(stream, reading, RULES, start_line, index, start_column)


def _twice(deck: Sequence[bytes], number: int, where: Where) -> InputError | None:
    """The error at the second copy of the first card a (possibly partial) deck holds twice, if any."""
    seen: set[bytes] = set()
    for k, card in enumerate(deck):
        if card in seen:
            return InputError(f"{card.decode()} appears twice in deck {number}", *where(k))
        seen.add(card)
    return None


def _not_card(token: bytes, line: int, column: int) -> InputError:
    hint = "; cards are written in upper case" if token.upper() in VALID else ""
    return InputError(f"{show(token)} is not a card (rank {RANKS}, suit {SUITS}{hint})", line, column)


class _Rules:
    """What the layout and stream readers need of accordion's decks (:class:`~worker.engines.layout.DeckRules`,
    :class:`~worker.engines.decks.StreamRules`)."""

    ends_within = True
    end_byte = _TERMINATOR[0]

    def stops(self, line: bytes, tokens: list[bytes]) -> bool:
        return _TERMINATOR in line and any(token.startswith(_TERMINATOR) for token in tokens)

    def deck(self, tokens: list[bytes]) -> str | None:
        text = b" ".join(tokens)  # numbers_of refuses any text but 52 distinct cards single-spaced
        return text.decode() if numbers_of(text) is not None else None

    def ends(self, token: bytes) -> bool:
        return token[0] == 35  # "#"

    def fault(self, tokens: Sequence[bytes], number: int, where: Where, whole: bool) -> InputError | None:
        bad = next((k for k, token in enumerate(tokens) if token not in VALID), len(tokens))
        return _twice(tokens[:bad], number, where) or self.token_error(tokens, number, where)

    def token_error(self, tokens: Sequence[bytes], number: int, where: Where) -> InputError | None:
        bad = next((k for k, token in enumerate(tokens) if token not in VALID), None)
        return None if bad is None else _not_card(tokens[bad], *where(bad))

    def deck_error(self, tokens: list[bytes], number: int, where: Where) -> InputError:
        error = _twice(tokens, number, where)
        assert error is not None, "a deck of 52 distinct cards is good"
        return error


RULES = _Rules()
