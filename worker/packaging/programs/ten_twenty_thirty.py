"""10-20-30, an accepted solution: play each deck and say how its game ends."""

import sys
from collections import deque


def play(cards: list[int]) -> str:
    deck = deque(cards)
    piles: list[list[int]] = [[] for _ in range(7)]
    alive = list(range(7))  # the piles still in play, left to right
    seen: set[tuple[tuple[int, ...], ...]] = set()
    k = dealt = 0
    while True:
        pile = piles[alive[k]]
        pile.append(deck.popleft())
        dealt += 1
        while len(pile) >= 3:
            for places in ((0, 1, -1), (0, -2, -1), (-3, -2, -1)):
                if sum(pile[i] for i in places) % 10 == 0:
                    break
            else:
                break
            deck.extend(pile[i] for i in places)
            for i in sorted((i % len(pile) for i in places), reverse=True):
                del pile[i]
        if pile:
            k += 1
        else:
            del alive[k]
        if not alive:
            return f"Win : {dealt}"
        if not deck:
            return f"Loss: {dealt}"
        if dealt >= 7:
            state = (*map(tuple, piles), tuple(deck))
            if state in seen:
                return f"Draw: {dealt}"
            seen.add(state)
        if k >= len(alive):
            k = 0


def main() -> None:
    values = [int(token) for token in sys.stdin.read().split()]
    out = []
    at = 0
    while at + 52 <= len(values) and values[at] != 0:
        out.append(play(values[at : at + 52]))
        at += 52
    sys.stdout.write("".join(line + "\n" for line in out))


if __name__ == "__main__":
    main()
