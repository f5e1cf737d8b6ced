"""What the generator knows of each game: how to draw a random case, how to change one a
little (to walk from a rare case to others like it, :meth:`Maker.steps`), and what a mix can ask for.

A case is handled as the text it is written as: for the decks that is their canonical
text (the cards in dealing order), for a mahjong hand its tiles in the order drawn
(:meth:`Maker.canonical` sorts them for solving). A solved case is sorted into a mix by
its *key*, read from its judge line: 10-20-30's outcome (0 win, 1 loss, 2 draw), the
piles an accordion deck leaves (1-52), the tiles a mahjong hand waits for (0-9, 0 being
"Not ready").
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from worker.engines.accordion.cards import CARDS
from worker.engines.mahjong.tiles import HAND_SIZE, HONOURS, KIND, MAX_COPIES, TILES
from worker.generating.deal import shuffles, swaps
from worker.generating.errors import GenerateError
from worker.generating.prng import Rng

#: A 10-20-30 deck: four of each value 1..9 and sixteen 10s.
TEN_TWENTY_THIRTY_DECK = tuple([str(v) for v in range(1, 10) for _ in range(4)] + ["10"] * 16)


class Maker(ABC):
    """One game's cases, for :mod:`.search` and :mod:`.stream`."""

    slug: str
    #: What a mix names: each outcome's range of keys (lowest, highest).
    outcomes: dict[str, tuple[int, int]]
    #: The keys a mix may name by number, and what they count (``None``: by outcome only).
    numbers: tuple[int, int] | None = None
    number_name = ""
    #: What a number says of a case: ``phrase.format("3")``, "leaves 3 piles".
    phrase = ""
    unit = "deck"
    #: Whether a key close to another means a case close to it: then a walk towards a key
    #: nobody has drawn yet can start from the cases of the nearest keys.
    ordered = False
    #: Whether two cases of a block must differ (decks: there are far more than a file
    #: holds; hands: the hands that wait for 9 tiles can be counted on the fingers).
    distinct = True
    #: Tokens per case; whether its text may be cut into lines anywhere (decks), or is one line.
    tokens = 52
    wraps = True

    @abstractmethod
    def random(self, rng: Rng, count: int) -> list[str]:
        """``count`` random cases (what a file without a mix holds)."""

    def steps(self, starts: list[str], rng: Rng, count: int) -> list[str]:
        """``count`` cases, each a small change of a uniform pick of ``starts`` (a walk's
        steps): for decks, two cards of different values swapped."""
        return swaps(rng, starts, count)

    def variants(self, starts: list[str], rng: Rng, count: int) -> list[str]:
        """``count`` cases, each a uniform pick of ``starts`` written another way, where the
        game has other ways (see :attr:`distinct`)."""
        raise NotImplementedError(f"a {self.slug} {self.unit} is written one way")

    @abstractmethod
    def key(self, line: str) -> int:
        """The key of a case from its judge line."""

    def canonical(self, text: str) -> str:
        """The case's canonical text (what the engines solve)."""
        return text

    def canonicals(self, texts: list[str]) -> list[str]:
        """:meth:`canonical` of each text (a deck is written as its canonical text)."""
        return texts


class TenTwentyThirtyMaker(Maker):
    slug = "10-20-30"
    outcomes = {"win": (0, 0), "loss": (1, 1), "draw": (2, 2)}

    def random(self, rng: Rng, count: int) -> list[str]:
        """Uniformly shuffled decks.

        >>> TenTwentyThirtyMaker().random(Rng(1), 1)[0].split()[:6]
        ['8', '10', '10', '7', '7', '10']
        """
        return shuffles(rng, TEN_TWENTY_THIRTY_DECK, count, 52)

    def key(self, line: str) -> int:
        """The outcome, by the judge line's first letter.

        >>> [TenTwentyThirtyMaker().key(line) for line in ("Win : 66", "Loss: 82", "Draw: 73")]
        [0, 1, 2]
        """
        return "WLD".index(line[0])


class AccordionMaker(Maker):
    slug = "accordion"
    outcomes = {"win": (1, 1), "loss": (2, 52)}
    numbers = (1, 52)
    number_name = "piles left"
    phrase = "leaves {} piles"
    ordered = True

    def random(self, rng: Rng, count: int) -> list[str]:
        """Uniformly shuffled decks."""
        return shuffles(rng, CARDS, count, 52)

    def key(self, line: str) -> int:
        """The piles left, the judge line's first number.

        >>> AccordionMaker().key("6 piles remaining: 40 8 1 1 1 1"), AccordionMaker().key("1 pile remaining: 52")
        (6, 1)
        """
        return int(line[: line.index(" ")])


class MahjongMaker(Maker):
    """Mahjong hands, with the honours (``DONG`` … ``BAI``) or, ``honours=False``, without."""

    slug = "mahjong"
    outcomes = {"ready": (1, 9), "not-ready": (0, 0)}
    numbers = (0, 9)
    number_name = "tiles waited for"
    phrase = "waits for {} tiles"
    unit = "hand"
    ordered = True
    distinct = False
    tokens = HAND_SIZE
    wraps = False

    def __init__(self, honours: bool = True) -> None:
        self.honours = honours
        self.kinds = [kind for kind, tile in enumerate(TILES) if honours or tile not in HONOURS]
        self.wall = [TILES[kind] for kind in self.kinds for _ in range(MAX_COPIES)]
        self.suit_walls = [[tile for tile in self.wall if tile[1:] == suit] for suit in "TSW"]
        self.suit_kinds = {suit: [9 * k + rank for rank in range(9)] for k, suit in enumerate("TSW")}

    def random(self, rng: Rng, count: int) -> list[str]:
        """Hands as ``ENGINE.generate`` draws them: four in ten from the whole wall (rarely
        ready), three in ten a winning hand less one tile (always ready), three in ten from
        one suit (often waiting for many tiles); the tiles in the order drawn.

        >>> hands = MahjongMaker(honours=False).random(Rng(3), 200)
        >>> {len(hand.split()) for hand in hands}, any(tile in hand for hand in hands for tile in HONOURS)
        ({13}, False)
        """
        modes = [rng.below(10) for _ in range(count)]
        walls = iter(shuffles(rng, self.wall, sum(mode < 4 for mode in modes), HAND_SIZE))
        hands = []
        for mode in modes:
            if mode < 4:
                hands.append(next(walls))
            elif mode < 7:
                tiles = self._winning(rng)
                del tiles[rng.below(len(tiles))]
                rng.shuffle(tiles)
                hands.append(" ".join(tiles))
            else:
                hands += shuffles(rng, self.suit_walls[rng.below(3)], 1, HAND_SIZE)
        return hands

    def _winning(self, rng: Rng) -> list[str]:
        """Fourteen tiles that win: an eye and four melds (chows or pongs), at most four of a kind."""
        kinds = self.kinds
        while True:
            counts = [0] * len(TILES)
            counts[rng.choice(kinds)] += 2
            for _ in range(4):
                if rng.below(2):
                    start = 9 * rng.below(3) + rng.below(7)
                    for kind in (start, start + 1, start + 2):
                        counts[kind] += 1
                else:
                    counts[rng.choice(kinds)] += 3
            if max(counts) <= MAX_COPIES:
                return [TILES[kind] for kind, count in enumerate(counts) for _ in range(count)]

    def steps(self, starts: list[str], rng: Rng, count: int) -> list[str]:
        """Hands with one tile changed into another kind (of which the hand holds fewer than
        four): half the time one of the same suit, where hands that wait for many tiles live."""
        hands = []
        for _ in range(count):
            tiles = starts[rng.below(len(starts))].split(" ")
            place = rng.below(HAND_SIZE)
            kinds = self.kinds
            if rng.below(2) and tiles[place][1:] in self.suit_kinds:
                kinds = self.suit_kinds[tiles[place][1:]]
            while True:
                tile = TILES[rng.choice(kinds)]
                if tile != tiles[place] and tiles.count(tile) < MAX_COPIES:
                    tiles[place] = tile
                    break
            hands.append(" ".join(tiles))
        return hands

    def variants(self, starts: list[str], rng: Rng, count: int) -> list[str]:
        """Hands with their tiles in another order."""
        hands = []
        for _ in range(count):
            tiles = starts[rng.below(len(starts))].split(" ")
            rng.shuffle(tiles)
            hands.append(" ".join(tiles))
        return hands

    def key(self, line: str) -> int:
        """The tiles waited for, counted in the judge line.

        >>> MahjongMaker().key("Case 1: 1S 4S FA"), MahjongMaker().key("Case 2: Not ready")
        (3, 0)
        """
        return 0 if line.endswith(" Not ready") else line.count(" ") - 1

    def canonical(self, text: str) -> str:
        """The tiles in the judge's order (as the reader makes a hand's text).

        >>> MahjongMaker().canonical("FA 2S 1S FA")
        '1S 2S FA FA'
        """
        return " ".join(sorted(text.split(" "), key=KIND.__getitem__))

    def canonicals(self, texts: list[str]) -> list[str]:
        return [self.canonical(text) for text in texts]


def maker(game: str, honours: bool = True) -> Maker:
    """The maker of ``game`` (a slug of :mod:`worker.engines`)."""
    if game == "mahjong":
        return MahjongMaker(honours)
    makers: dict[str, type[Maker]] = {"10-20-30": TenTwentyThirtyMaker, "accordion": AccordionMaker}
    if game not in makers:  # a game the engines solve, that no maker draws yet
        raise GenerateError(f"no generator makes {game} files yet", "game")
    return makers[game]()
