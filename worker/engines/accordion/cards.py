"""Accordion cards: their names, and a deck's text as card numbers (``4 * rank + suit``, ``0`` is
``AC``) and bit masks (:data:`MASK`).
"""

from __future__ import annotations

from operator import itemgetter

from worker.engines.reading import InputError

RANKS = "A23456789TJQK"
SUITS = "CDHS"
DECK_SIZE = 52
#: Every card as the judge writes it; a card's number in traces is its place here.
CARDS = tuple(r + s for r in RANKS for s in SUITS)

#: A card as a bit mask, a bit for its rank and one for its suit (two cards match when their masks
#: share a bit), below 2**17 so that masks index flat tables; 0 is no card.
MASK: dict[str, int] = {
    r + s: (1 << ri) | (1 << (13 + si)) for ri, r in enumerate(RANKS) for si, s in enumerate(SUITS)
}
TABLE_SIZE = max(MASK.values()) + 1
#: Card number (place in :data:`CARDS`) by mask.
NUMBER: list[int] = [0] * TABLE_SIZE
for _number, _card in enumerate(CARDS):
    NUMBER[MASK[_card]] = _number
#: Rank character -> 4 * rank, suit character -> suit, else 100 (no card; two still fit a byte).
_RANK_TIMES_4 = bytes(4 * RANKS.index(chr(b)) if chr(b) in RANKS else 100 for b in range(256))
_SUIT_NUMBER = bytes(SUITS.index(chr(b)) if chr(b) in SUITS else 100 for b in range(256))
_ALL_NUMBERS = bytes(range(DECK_SIZE))
_CANONICAL_SIZE = 3 * DECK_SIZE - 1
#: Mask by card number.
_MASK_BY_NUMBER: list[int] = [MASK[card] for card in CARDS]
VALID: frozenset[bytes] = frozenset(card.encode() for card in CARDS)


def numbers_of(text: bytes) -> bytes | None:
    """The card numbers of a canonical deck (52 distinct cards, single spaces), else ``None``.

    >>> list(numbers_of(" ".join(CARDS).encode())[:6])
    [0, 1, 2, 3, 4, 5]
    >>> numbers_of(" ".join(["AC"] * 52).encode()) is None
    True
    """
    if len(text) != _CANONICAL_SIZE or text.count(b" ") != DECK_SIZE - 1:
        return None
    ranks = int.from_bytes(text[0::3].translate(_RANK_TIMES_4), "little")
    suits = int.from_bytes(text[1::3].translate(_SUIT_NUMBER), "little")
    numbers = (ranks + suits).to_bytes(DECK_SIZE, "little")
    return None if _ALL_NUMBERS.translate(None, numbers) else numbers


def masks_of(text: str) -> tuple[int, ...]:
    """The cards of a deck as masks; ``InputError`` unless it is 52 distinct cards."""
    numbers = numbers_of(text.encode())
    if numbers is not None:
        return itemgetter(*numbers)(_MASK_BY_NUMBER)  # type: ignore[no-any-return]
    cards = text.split()  # not canonical: say what is wrong, or read it the slow way
    for card in cards:
        if card not in MASK:
            raise InputError(f'"{card}" is not a card (rank {RANKS}, suit {SUITS})')
    if len(cards) != DECK_SIZE:
        raise InputError(f"a deck is {DECK_SIZE} cards, not {len(cards)}")
    if len(set(cards)) != DECK_SIZE:
        twice = next(card for k, card in enumerate(cards) if card in cards[:k])
        raise InputError(f"{twice} appears twice in the deck")
    return tuple(MASK[card] for card in cards)

