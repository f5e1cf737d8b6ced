"""Classic wrong solutions, written plainly: each plays a game by the rules but for one mistake
that solutions to these problems are known to make. ``tests/generating/test_cover.py`` shows
that a ``--cover`` file catches every one (its output differs from Dealer's)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from worker.engines.mahjong.read import counts_of
from worker.engines.mahjong.tiles import TILES

#: A wrong solution: the cases' texts (as the engines' readers give them) to its output lines.
Solution = Callable[[list[str]], list[str]]


def ten_twenty_thirty(mistake: str) -> Solution:
    """10-20-30 with ``mistake``: one of :data:`TEN_TWENTY_THIRTY`."""

    def solve(texts: list[str]) -> list[str]:
        kept: set[bytes] = set()
        return [_play(text, mistake, kept) for text in texts]

    return solve


TEN_TWENTY_THIRTY = ("seen states kept from deck to deck", "combinations tried last three first",
                     "one pick-up a deal", "emptied piles dealt to again", "picked-up cards put on top of the deck",
                     "deals counted from the eighth", "states compared without the deck")


def _play(text: str, mistake: str, kept: set[bytes]) -> str:
    hand = deque(int(value) for value in text.split())
    piles: list[list[int]] = [[] for _ in range(7)]
    alive = list(range(7))
    seen = kept if mistake == "seen states kept from deck to deck" else set()
    order = (2, 1, 0) if mistake == "combinations tried last three first" else (0, 1, 2)
    k = dealt = 0
    while True:
        pile = piles[alive[k]]
        pile.append(hand.popleft())
        dealt += 1
        while len(pile) >= 3:
            places = [(0, 1, -1), (0, -2, -1), (-3, -2, -1)]
            combo = next((c for c in order if sum(pile[i] for i in places[c]) % 10 == 0), None)
            if combo is None:
                break
            cards = [pile[i] for i in places[combo]]
            for i in sorted((i % len(pile) for i in places[combo]), reverse=True):
                del pile[i]
            if mistake == "picked-up cards put on top of the deck":
                hand.extendleft(reversed(cards))
            else:
                hand.extend(cards)
            if mistake == "one pick-up a deal":
                break
        if pile or mistake == "emptied piles dealt to again":
            k += 1
        else:
            del alive[k]
        shown = dealt - 7 if mistake == "deals counted from the eighth" else dealt
        if not alive or all(not piles[i] for i in alive) and mistake == "emptied piles dealt to again":
            return f"Win : {shown}"
        if not hand:
            return f"Loss: {shown}"
        if dealt >= 7:
            deck = b"" if mistake == "states compared without the deck" else bytes(hand)
            state = b"|".join(bytes(p) for p in piles) + b"/" + deck
            if state in seen:
                return f"Draw: {shown}"
            seen.add(state)
        if k >= len(alive):
            k = 0


ACCORDION = ("a move of one before a move of three", "only the card dealt moves", "the rightmost card moves first",
             "after a move, the scan goes on past the pile left", '"1 piles remaining"')


def accordion(mistake: str) -> Solution:
    """Accordion with ``mistake``: one of :data:`ACCORDION`."""

    def match(a: str, b: str) -> bool:
        return a[0] == b[0] or a[1] == b[1]

    def target(piles: list[list[str]], i: int) -> int | None:
        distances = (1, 3) if mistake == "a move of one before a move of three" else (3, 1)
        for distance in distances:
            if i - distance >= 0 and match(piles[i][-1], piles[i - distance][-1]):
                return i - distance
        return None

    def move(piles: list[list[str]], i: int, j: int) -> None:
        piles[j].append(piles[i].pop())
        if not piles[i]:
            del piles[i]

    def solve(texts: list[str]) -> list[str]:
        lines = []
        for text in texts:
            piles: list[list[str]] = []
            for card in text.split():
                piles.append([card])
                if mistake == "only the card dealt moves":
                    i = len(piles) - 1
                    while (j := target(piles, i)) is not None:
                        move(piles, i, j)
                        i = j
                    continue
                i = 0
                while i < len(piles):
                    places = range(len(piles) - 1, -1, -1) if mistake == "the rightmost card moves first" else None
                    if places is not None:
                        found = next(((p, t) for p in places if (t := target(piles, p)) is not None), None)
                        if found is None:
                            break
                        move(piles, *found)
                        continue
                    j = target(piles, i)
                    if j is None:
                        i += 1
                        continue
                    emptied = len(piles[i]) == 1
                    move(piles, i, j)
                    if mistake == "after a move, the scan goes on past the pile left":
                        i += 0 if emptied else 1
                    else:
                        i = 0
            sizes = " ".join(str(len(p)) for p in piles)
            word = "pile" if len(piles) == 1 and mistake != '"1 piles remaining"' else "piles"
            lines.append(f"{len(piles)} {word} remaining: {sizes}")
        return lines

    return solve


MAHJONG = ("a fifth copy waited for", "chows of honours", "chows that wrap from 9 to 1", "seven pairs win",
           "thirteen orphans win", "honours listed first", "counts kept from hand to hand")
_ORPHANS = [0, 8, 9, 17, 18, 26, *range(27, 34)]


def mahjong(mistake: str) -> Solution:
    """Mahjong with ``mistake``: one of :data:`MAHJONG`."""

    wrap = mistake == "chows that wrap from 9 to 1"

    def chow_at(kind: int) -> list[int] | None:
        if kind >= 27:
            return [kind, kind + 1, kind + 2] if mistake == "chows of honours" and kind <= 31 else None
        rank, suit = kind % 9, kind - kind % 9
        if rank <= 6:
            return [kind, kind + 1, kind + 2]
        if wrap:
            return [kind, suit + (rank + 1) % 9, suit + (rank + 2) % 9]
        return None

    def melds(counts: list[int]) -> bool:
        kind = next((k for k in range(34) if counts[k]), None)
        if kind is None:
            return True
        # The lowest tile left is in a pong or in a chow: one it starts (or, wrapping, any of its suit's).
        options = [[kind] * 3] if counts[kind] >= 3 else []
        for start in range(kind - kind % 9, kind - kind % 9 + 9) if wrap and kind < 27 else (kind,):
            chow = chow_at(start)
            if chow and kind in chow and all(counts[k] for k in chow):
                options.append(chow)
        return any(without(counts, meld, melds) for meld in options)

    def wins(counts: list[int]) -> bool:
        if mistake == "seven pairs win" and sorted(counts)[-7:] == [2] * 7:
            return True
        if mistake == "thirteen orphans win" and all(counts[k] for k in _ORPHANS) and sum(counts[k] for k in _ORPHANS) == 14:
            return True
        return any(without(counts, [eye, eye], melds) for eye in range(34) if counts[eye] >= 2)

    def solve(texts: list[str]) -> list[str]:
        lines = []
        carried = [0] * 34
        for index, text in enumerate(texts, 1):
            counts = counts_of(text)
            if mistake == "counts kept from hand to hand":
                carried = [min(a + b, 4) for a, b in zip(carried, counts, strict=True)]
                counts = carried
            waits = []
            for kind in range(34):
                if counts[kind] < 4 or mistake == "a fifth copy waited for":
                    counts[kind] += 1
                    if wins(counts):
                        waits.append(TILES[kind])
                    counts[kind] -= 1
            if mistake == "honours listed first":
                waits.sort(key=lambda tile: tile[-1] in "TSW")
            lines.append(f"Case {index}: {' '.join(waits)}" if waits else f"Case {index}: Not ready")
        return lines

    return solve


def without(counts: list[int], tiles: list[int], then: Callable[[list[int]], bool]) -> bool:
    """``then`` of the counts less ``tiles`` (the counts are as they were afterwards)."""
    for kind in tiles:
        counts[kind] -= 1
    found = then(counts)
    for kind in tiles:
        counts[kind] += 1
    return found


MUTANTS: dict[str, tuple[Callable[[str], Solution], tuple[str, ...]]] = {
    "10-20-30": (ten_twenty_thirty, TEN_TWENTY_THIRTY),
    "accordion": (accordion, ACCORDION),
    "mahjong": (mahjong, MAHJONG),
}


def right(game: str) -> Solution:
    """The same plain solution without a mistake (which must agree with Dealer)."""
    return MUTANTS[game][0]("")
