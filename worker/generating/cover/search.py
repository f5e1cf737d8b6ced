"""The search behind the ``--cover`` files' found cases: ``python -m worker.generating.cover.search``
rewrites :mod:`.found` (commit what it writes; run again, it writes the same).

Extremes (the longest games, the longest cycle, the most piles) are not what random decks
give: each is sampled first, then climbed, by :func:`worker.generating.deal.swaps` steps
kept whenever they do at least as well. Everything runs from fixed seeds with fixed
budgets, on the native core when it is built (the same answers, only faster).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from worker import engines
from worker.engines.reading import Case
from worker.engines.ten_twenty_thirty.read import residues
from worker.engines.ten_twenty_thirty.rules import PILES, Game, pick
from worker.generating.deal import swaps
from worker.generating.makers import AccordionMaker, TenTwentyThirtyMaker
from worker.generating.prng import Rng
from worker.generating.stream import make_block, plan

#: A feature's score of a solved case (higher is better; ``None``: the case lacks it).
Score = Callable[[Any], "float | None"]

SAMPLES = 200_000
CLIMB = 100_000
BATCH = 1000


def ten_twenty_thirty_features() -> dict[str, Score]:
    """What the 10-20-30 cover file wants a deck of, scored on its traced result."""

    def when(outcome: str, sign: int) -> Score:
        return lambda r: sign * r.number if r.outcome == outcome else None

    # (A second pick-up after one deal never takes the last three cards: the pile's end is
    # then as it was when its top card came, and those three were checked then.)
    def follow_up(letter: str) -> Score:
        def score(r: Any) -> float | None:
            picks, at = r.trace["picks"], 0
            for count in r.trace["after"]:
                count = int(count, 36)
                if count > 1 and letter in picks[at + 1 : at + count]:
                    return 1.0
                at += count
            return None
        return score

    return {
        "a win in the fewest deals": when("win", -1),
        "a win in the most deals": when("win", 1),
        "a loss in the fewest deals": when("loss", -1),
        "a loss in the most deals": when("loss", 1),
        "a draw in the fewest deals": when("draw", -1),
        "a draw in the most deals": when("draw", 1),
        "the longest cycle before a draw": lambda r: r.number - r.detail[0] if r.outcome == "draw" else None,
        "a draw whose state was first seen soonest": lambda r: -r.detail[0] if r.outcome == "draw" else None,
        "the most pick-ups after one deal": lambda r: max(int(c, 36) for c in r.trace["after"]),
        "a second pick-up after one deal of the first two + last": follow_up("a"),
        "a second pick-up after one deal of the first + last two": follow_up("b"),
    }


def accordion_features() -> dict[str, Score]:
    def most_moves_after_a_deal(r: Any) -> float:
        return max(len(run) // 2 for run in r.trace["play"].split("+"))

    return {
        "one pile (a win)": lambda r: 1.0 if r.number == 1 else None,
        "two piles": lambda r: 1.0 if r.number == 2 else None,
        "the most moves after one deal": most_moves_after_a_deal,
        "the most moves of three piles": lambda r: r.trace["play"].count("3"),
    }


def search(game: str, features: dict[str, Score], random: Callable[[Rng, int], list[str]], seed: int) -> dict[str, str]:
    """The best case found for each feature: sampled, then climbed."""
    engine = engines.get(game)
    rng = Rng(seed)
    best: dict[str, tuple[float, str]] = {}

    def consider(texts: list[str]) -> None:
        for text in texts:
            result = engine.solve(Case(1, text), True)
            for name, score in features.items():
                value = score(result)
                if value is not None and (name not in best or value > best[name][0]):
                    best[name] = (value, text)

    for _ in range(SAMPLES // BATCH):
        consider(random(rng, BATCH))
    for name, score in features.items():
        if name not in best:
            continue
        value, text = best[name]
        for _ in range(CLIMB // BATCH):
            for step in swaps(rng, [text], BATCH):
                got = score(engine.solve(Case(1, step), True))
                if got is not None and got >= value:
                    value, text = got, step
        best[name] = (value, text)
    # A deck climbed for one feature may beat another's own: each feature takes the best of all.
    results = {text: engine.solve(Case(1, text), True) for _, text in best.values()}
    for name, score in features.items():
        for text, result in results.items():
            value = score(result)
            if name in best and value is not None and value > best[name][0]:
                best[name] = (value, text)
        print(f"{game}: {name}: {best[name][0]}", file=sys.stderr)
    return {name: text for name, (_, text) in best.items()}


def same_state_pair(seed: int) -> tuple[str, str]:
    """Two different 10-20-30 decks whose games pass through one state: a deck ``A`` and the
    deck ``B`` that deals, with no pick-up, the piles ``A`` holds after some deal (after a
    pick-up, so that B is another deck), with the rest of ``A``'s deck as its own."""
    rng = Rng(seed)
    maker = TenTwentyThirtyMaker()
    while True:
        for text in maker.random(rng, BATCH):
            other = balanced_deck(text)
            if other is not None:
                return text, other


def balanced_deck(text: str) -> str | None:
    """The deck that deals, with no pick-up, a state ``text``'s game passes through after it
    made a pick-up (see :func:`same_state_pair`), or ``None``."""
    game = Game(residues(text))
    dealt = 0
    for pile in game.deals():
        dealt += 1
        piles = game.piles
        if not game.picks or not all(piles):
            continue
        sizes = [len(p) for p in piles]
        total = sum(sizes)
        rows, rest = divmod(total, PILES)
        if sizes != [rows + 1] * rest + [rows] * (PILES - rest) or (pile + 1) % PILES != rest:
            continue
        if any(pick(p[:length]) >= 0 for p in piles for length in range(3, len(p) + 1)):
            continue  # dealing the pile again would pick something up on the way
        order = [piles[k % PILES][k // PILES] for k in range(total)] + list(game.cards[dealt:])
        return " ".join("10" if value == 0 else str(value) for value in order)
    return None


def main() -> None:
    found = {
        "10-20-30": search("10-20-30", ten_twenty_thirty_features(), TenTwentyThirtyMaker().random, 246),
        "accordion": search("accordion", accordion_features(), AccordionMaker().random, 127),
    }
    # The most piles, 52, is one deck in many millions: the generator's walk climbs to it.
    most = make_block(plan("accordion", 1, 52, "52=1"), 0, [1]).decode().split()[:52]
    found["accordion"]["the most piles"] = " ".join(most)
    first, second = same_state_pair(2026)
    found["10-20-30"]["a deck whose game passes through a state of the next deck's"] = first
    found["10-20-30"]["the next deck"] = second
    lines = ['"""Cases found by :mod:`.search` (``python -m worker.generating.cover.search`` writes this file)."""',
             "", "FOUND: dict[str, dict[str, str]] = {"]
    for game, cases in found.items():
        lines.append(f"    {game!r}: {{")
        for name, text in cases.items():
            lines.append(f"        {name!r}:")
            lines.append(f"            {text!r},")
        lines.append("    },")
    lines.append("}")
    Path(__file__).with_name("found.py").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
