"""Reading 10-20-30 judge files: 52 card values 1..10 a deck across any whitespace, a ``0`` where a deck
would start ending the input. Values are read as C's ``scanf("%d")`` reads them, digits only (``05`` is 5,
``00`` ends the input; ``+5``, ``11`` or a ``0`` inside a deck are refused), and a deck must be standard
(four each of 1..9, sixteen 10s). :data:`RULES` tells the deck readers (:mod:`worker.engines.decks`).
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence

from worker.engines.decks import DeckRules, Where
from worker.engines.reading import InputError, Reading, only_case, show
from worker.engines.ten_twenty_thirty.rules import DECK_SIZE

TERMINATOR = "0"
UNIT = "deck"

#: A card's weight, a base-64 digit a value: one comparison of a deck's sum checks all ten counts.
_WEIGHT: dict[bytes, int] = {str(v).encode(): 64 ** (v - 1) for v in range(1, 11)}
_weight = _WEIGHT.__getitem__
_STANDARD = sum(4 * 64 ** (v - 1) for v in range(1, 10)) + 16 * 64**9
_IN_DECK = {v: 4 for v in range(1, 10)} | {10: 16}
_DIGITS = bytes.maketrans(b"0123456789", bytes(range(10)))


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
        canonical = only_case(RULES.read(io.BytesIO(text.encode()), Reading(TERMINATOR, UNIT)), UNIT).text
    except InputError as error:
        raise InputError(f"not a 10-20-30 deck: {error}") from None
    return residues(canonical)


def _clean(cards: Sequence[bytes], where: Where, number: int) -> list[bytes]:
    """The deck with leading zeros dropped, or :class:`InputError` at its first bad token."""
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


class _Rules(DeckRules):
    end_byte = ord(TERMINATOR)
    ends_within = False

    def ends(self, token: bytes) -> bool:
        return token[0] == 48 and token.isdigit() and not token.strip(b"0")  # "0", "00": scanf reads 0

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
        try:
            _clean(tokens, where, number)
        except InputError as error:
            return error
        return None

    def deck_error(self, tokens: Sequence[bytes], number: int, where: Where) -> InputError:
        counts = Counter(map(int, _clean(tokens, where, number)))
        value = next(v for v in _IN_DECK if counts[v] > _IN_DECK[v])
        return InputError(f"deck {number} is not a standard deck: {counts[value]} cards of value {value} "
                          f"(at most {_IN_DECK[value]})", *where(0))


RULES = _Rules()
