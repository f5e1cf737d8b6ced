"""Accordian Patience, an accepted solution: deal each deck and say what piles are left."""

import sys


def play(cards: list[str]) -> str:
    piles: list[list[str]] = []
    for card in cards:
        piles.append([card])
        # Nothing could move before the deal; after a move onto pile j, nothing left of j can.
        i = len(piles) - 1
        while i < len(piles):
            top = piles[i][-1]
            for distance in (3, 1):
                if i >= distance:
                    other = piles[i - distance][-1]
                    if top[0] == other[0] or top[1] == other[1]:
                        piles[i - distance].append(piles[i].pop())
                        if not piles[i]:
                            del piles[i]
                        i -= distance
                        break
            else:
                i += 1
    sizes = " ".join(str(len(pile)) for pile in piles)
    word = "pile" if len(piles) == 1 else "piles"
    return f"{len(piles)} {word} remaining: {sizes}"


def main() -> None:
    tokens = sys.stdin.read().split()
    out = []
    at = 0
    while at < len(tokens) and not tokens[at].startswith("#") and at + 52 <= len(tokens):
        out.append(play(tokens[at : at + 52]))
        at += 52
    sys.stdout.write("".join(line + "\n" for line in out))


if __name__ == "__main__":
    main()
