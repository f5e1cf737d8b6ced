"""10-20-30 played by the rules as written, every state kept: slow, used where a game must be exact
(a draw's ``N`` and first sighting, its trace) or checked (:func:`.trace.walk_trace`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

DECK_SIZE = 52
PILES = 7
OUTCOMES = ("win", "loss", "draw")
#: The outcomes as numbers, indexes of :data:`OUTCOMES`.
WIN, LOSS, DRAW = 0, 1, 2
#: Between the piles and the deck of a state: 10, which no card is inside the engine.
STATE_SEP = b"\n"


def pick(pile: Sequence[int]) -> int:
    """Which combination the pile allows first: 0, 1, 2 (the trace's a, b, c) or -1.

    >>> pick(bytearray([5, 2, 3])), pick(bytearray([1, 5, 4, 5])), pick(bytearray([1, 1, 3, 3, 4]))
    (0, 1, 2)
    >>> pick(bytearray([1, 1]))
    -1
    """
    if len(pile) < 3:
        return -1
    a, z = pile[0], pile[-1]
    if (a + pile[1] + z) % 10 == 0:
        return 0
    if (a + pile[-2] + z) % 10 == 0:
        return 1
    if (pile[-3] + pile[-2] + z) % 10 == 0:
        return 2
    return -1


def take(pile: bytearray, combo: int) -> bytearray:
    """Remove combination ``combo`` from the pile; its cards in the order they go under the deck."""
    bottom = 2 - combo  # cards from the bottom (two, one, none); the rest from the top
    cards = pile[:bottom] + pile[bottom - 3 :]
    del pile[bottom - 3 :]
    del pile[:bottom]
    return cards


class Game:
    """One game of a deck of residues (10 is 0), kept as the trace wants it: ``cards`` (every card in
    the order it went under the deck), ``piles``, ``picks`` and ``when`` (each pick-up's combination
    and deal), ``gone`` (deal and pile of each emptied pile), at the end ``outcome``, ``dealt``
    (``N``) and ``seen`` (a draw's first sighting, else 0). Bytes: a state hashes quickly."""

    __slots__ = ("cards", "dealt", "gone", "outcome", "picks", "piles", "seen", "when")

    def __init__(self, d: list[int]) -> None:
        self.cards = bytearray(d[:DECK_SIZE])
        self.piles = [bytearray() for _ in range(PILES)]
        self.picks = bytearray()
        self.when: list[int] = []
        self.gone: list[int] = []
        self.outcome, self.dealt, self.seen = -1, 0, 0

    def play(self) -> Game:
        """Play to the end; the game itself."""
        for _ in self.deals():
            pass
        return self

    def deals(self) -> Iterator[int]:
        """Play the game, yielding the pile of each deal once its pick-ups are made."""
        piles, cards, picks, when, gone = self.piles, self.cards, self.picks, self.when, self.gone
        join = STATE_SEP.join
        act = list(range(PILES))  # the piles still there
        seen: dict[bytes, int] = {}
        k = dealt = 0  # k: where in ``act`` the next deal goes
        while True:
            i = act[k]
            pile = piles[i]
            pile.append(cards[dealt])
            dealt += 1
            while (combo := pick(pile)) >= 0:
                cards += take(pile, combo)
                picks.append(combo)
                when.append(dealt)
            yield i
            if pile:
                k += 1
            else:
                del act[k]
                gone += (dealt, i)
            outcome, first = -1, 0
            if not act:
                outcome = WIN
            elif dealt == len(cards):
                outcome = LOSS
            elif dealt >= PILES:
                first = seen.setdefault(join((*piles, cards[dealt:])), dealt)
                if first < dealt:
                    outcome = DRAW
                else:
                    first = 0
            if outcome >= 0:
                self.outcome, self.dealt, self.seen = outcome, dealt, first
                return
            if k == len(act):
                k = 0
