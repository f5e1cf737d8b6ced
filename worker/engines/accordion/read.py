"""Reading Accordian Patience judge files: two-character cards (rank ``A23456789TJQK``, suit ``CDHS``,
upper case), 52 a deck across any whitespace, no card twice in a deck, a token starting with ``#`` ending
the input. :data:`RULES` tells the deck readers (:mod:`worker.engines.decks`, :mod:`worker.engines.layout`).
"""

from __future__ import annotations

from collections.abc import Sequence

from worker.engines.accordion.cards import RANKS, SUITS, VALID, numbers_of
from worker.engines.decks import DeckRules, Where
from worker.engines.reading import InputError, show

TERMINATOR = "#"
UNIT = "deck"


def _twice(deck: Sequence[bytes], number: int, where: Where) -> InputError | None:
    """The error at the second copy of the first card a (possibly partial) deck holds twice, if any."""
    seen: set[bytes] = set()
    for k, card in enumerate(deck):
        if card in seen:
            return InputError(f"{card.decode()} appears twice in deck {number}", *where(k))
        seen.add(card)
    return None


class _Rules(DeckRules):
    end_byte = ord(TERMINATOR)
    ends_within = True

    def ends(self, token: bytes) -> bool:
        return token[0] == 35  # "#"

    def deck(self, tokens: list[bytes]) -> str | None:
        text = b" ".join(tokens)  # numbers_of refuses any text but 52 distinct cards single-spaced
        return text.decode() if numbers_of(text) is not None else None

    def fault(self, tokens: Sequence[bytes], number: int, where: Where, whole: bool) -> InputError | None:
        # The first problem in file order: a card twice before the first token that is no card.
        bad = next((k for k, token in enumerate(tokens) if token not in VALID), len(tokens))
        return _twice(tokens[:bad], number, where) or self.token_error(tokens, number, where)

    def token_error(self, tokens: Sequence[bytes], number: int, where: Where) -> InputError | None:
        bad = next((k for k, token in enumerate(tokens) if token not in VALID), None)
        if bad is None:
            return None
        token = tokens[bad]
        hint = "; cards are written in upper case" if token.upper() in VALID else ""
        return InputError(f"{show(token)} is not a card (rank {RANKS}, suit {SUITS}{hint})", *where(bad))

    def deck_error(self, tokens: Sequence[bytes], number: int, where: Where) -> InputError:
        error = _twice(tokens, number, where)
        assert error is not None, "a deck of 52 distinct cards is good"
        return error


RULES = _Rules()
