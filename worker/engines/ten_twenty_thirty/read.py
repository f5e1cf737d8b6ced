"""Reading 10-20-30 judge files: 52 card values 1..10 a deck across any whitespace, a ``0`` where a
deck would start ending the input. Values are read as C's ``scanf("%d")`` reads them, digits only
(``05`` is 5, ``00`` ends the input; ``+5``, ``11`` or a ``0`` inside a deck are refused), and a deck
must be standard (four each of 1..9, sixteen 10s). Read by a layout (:data:`RULES`) or as a stream
(:func:`read_decks`), where a bad deck still takes its 52 places.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from typing import IO

from worker.engines import decks
from worker.engines.decks import Where
from worker.engines.reading import Case, InputError, Reading, only_case, show
from worker.engines.ten_twenty_thirty.rules import DECK_SIZE

TERMINATOR = "0"
UNIT = "deck"

#: A card's weight, a base-64 digit a value: one comparison of a deck's sum checks all ten counts.
_WEIGHT: dict[bytes, int] = {str(v).encode(): 64 ** (v - 1) for v in range(1, 11)}
_weight = _WEIGHT.__getitem__
_STANDARD = sum(4 * 64 ** (v - 1) for v in range(1, 10)) + 16 * 64**9
_IN_DECK = {v: 4 for v in range(1, 10)} | {10: 16}
_DIGITS = bytes.maketrans(b"0123456789", bytes(range(10)))

def read_decks(stream: IO[bytes], reading: Reading, start_line: int = 1, number: int = 0,
               start_column: int = 1) -> Iterator[Case]:
    """The decks of a judge file read as a stream (:func:`worker.engines.decks.read_decks`).

    >>> deck = " ".join(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "10", "10", "10"] * 4)
    >>> [(c.index, c.line, c.column) for c in read_decks(io.BytesIO(f"{deck}\\n  {deck} 0".encode()),
    ...                                                  Reading(TERMINATOR, UNIT))]
    [(1, 1, 1), (2, 2, 3)]
    >>> try:
    ...     list(read_decks(io.BytesIO(b"05 " + b"1 " * 51 + b"\\n0\\n"), Reading(TERMINATOR, UNIT)))
    ... except InputError as error:
    ...     print(error)
    line 1, column 1: deck 1 is not a standard deck: 51 cards of value 1 (at most 4)
    """
    return decks.read_decks(stream, reading, RULES, start_line, number, start_column)


def residues(text: str) -> list[int]:
    """The cards of one deck written as text, as residues (10 is 0), top card first.

    >>> residues("10 1 9" + " 5" * 49)[:4]
    [0, 1, 9, 5]
    """
    # Canonical text is single-spaced, so once "10" is one character every card is
    # every other character: several times faster than split() and int().
    short = text.replace("10", "0")
    if (len(short) == 2 * DECK_SIZE - 1 and short[1::2] == " " * (DECK_SIZE - 1)
            and text.count("0") == text.count("10")):
        digits = short[::2]
        if digits.isascii() and digits.isdigit():
            return list(digits.encode().translate(_DIGITS))
    try:
        canonical = only_case(read_decks(io.BytesIO(text.encode()), Reading(TERMINATOR, UNIT)), UNIT).text
    except InputError as error:
        raise InputError(f"not a 10-20-30 deck: {error}") from None
    return residues(canonical)


def _is_zero(token: bytes) -> bool:
    """``0`` or a run of zeros, which ``scanf`` also reads as 0."""
    return token.isdigit() and not token.strip(b"0")


def _clean(cards: Sequence[bytes], where: Where, number: int) -> list[bytes]:
    """The deck with leading zeros dropped, or its first bad token (``where`` says where token ``k``
    is) as an :class:`InputError`."""
    clean = []
    for j, token in enumerate(cards):
        # Bound the digits before int(): a run of thousands would raise ValueError in int().
        value = int(token) if token.isdigit() and len(token.lstrip(b"0")) <= 2 else -1
        if 1 <= value <= 10:
            clean.append(str(value).encode())
            continue
        line, column = where(j)
        if value == 0:
            raise InputError(
                f"{show(token)} is not a card value (1-10): this is card {j + 1} of deck {number}, "
                "and a 0 ends the input only where a deck would start", line, column)
        raise InputError(f"{show(token)} is not a card value (1-10)", line, column)
    return clean


def _token_error(cards: Sequence[bytes], where: Where, number: int
                 ) -> InputError | None:
    try:
        _clean(cards, where, number)
    except InputError as error:
        return error
    return None


def _count_error(cards: list[bytes], number: int, line: int, column: int) -> InputError:
    counts = {v: 0 for v in _IN_DECK}
    for token in cards:
        counts[int(token)] += 1
    value = next(v for v in _IN_DECK if counts[v] > _IN_DECK[v])
    return InputError(
        f"deck {number} is not a standard deck: {counts[value]} cards of value {value} "
        f"(at most {_IN_DECK[value]})", line, column)


class _Rules:
    """What the layout and stream readers need of 10-20-30's decks (:class:`~worker.engines.layout.DeckRules`,
    :class:`~worker.engines.decks.StreamRules`)."""

    ends_within = False
    end_byte = 48  # "0"

    def stops(self, line: bytes, tokens: list[bytes]) -> bool:
        return tokens[0][0] == 48 and _is_zero(tokens[0])

    def ends(self, token: bytes) -> bool:
        return token[0] == 48 and _is_zero(token)

    def fault(self, tokens: Sequence[bytes], number: int, where: Where, whole: bool) -> InputError | None:
        error = _token_error(tokens, where, number)
        if error is None and whole:
            return _count_error(_clean(tokens, where, number), number, *where(0))
        return error

    def deck(self, tokens: list[bytes]) -> str | None:
        try:
            total = sum(map(_weight, tokens))
        except KeyError:  # a leading zero, or a bad token
            try:
                tokens = _clean(tokens, lambda j: (0, 0), 0)
            except InputError:
                return None
            total = sum(map(_weight, tokens))
        return b" ".join(tokens).decode("ascii") if total == _STANDARD else None

    def token_error(self, tokens: Sequence[bytes], number: int, where: Where) -> InputError | None:
        return _token_error(tokens, where, number)

    def deck_error(self, tokens: list[bytes], number: int, where: Where) -> InputError:
        return _count_error(_clean(tokens, where, number), number, *where(0))


RULES = _Rules()
