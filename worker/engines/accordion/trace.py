"""Accordion traces (``{"version": 2, "play": "++B1…"}``, format: ``docs/traces.md``) and their
replay against the rules written plainly; :func:`play_of` reads version 1 too."""

from __future__ import annotations

import re
from typing import Any, TypeGuard

from worker.engines.accordion.cards import CARDS, DECK_SIZE
from worker.engines.results import TraceError

#: Pile ``k`` of the row as ``play`` names it.
PILES = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_PILE = {letter: k for k, letter in enumerate(PILES)}
_PLAY = re.compile(rf"(?:\+(?:[A-Za-z][13])*){{{DECK_SIZE}}}")


def play_of(trace: Any) -> str:
    """The ``play`` of a trace of either version, after checking its shape.

    >>> play_of({"version": 1, "deals": [0, 1] + [0] * 50, "moves": [1, 0, 4]})[:6]
    '++B1++'
    """
    if isinstance(trace, dict) and trace.get("version") == 2:
        play = trace.get("play")
        if not isinstance(play, str) or not _PLAY.fullmatch(play):
            raise TraceError(f'"play" must be {DECK_SIZE} deals ("+"), each followed by its moves'
                             ' (a pile\'s letter and 1 or 3)')
        return play
    if isinstance(trace, dict) and trace.get("version") == 1:
        return _upgrade(trace)
    raise TraceError("not an accordion trace (version 2, or 1)")


def _upgrade(trace: dict[str, Any]) -> str:
    deals, moves = trace.get("deals"), trace.get("moves")
    if not _int_list(deals) or len(deals) != DECK_SIZE or min(deals) < 0:
        raise TraceError(f'"deals" must list {DECK_SIZE} move counts')
    if not _int_list(moves) or len(moves) % 3:
        raise TraceError('"moves" must be a flat list of integers, three per move')
    if sum(deals) * 3 != len(moves):
        raise TraceError(f'"deals" counts {sum(deals)} moves but "moves" holds {len(moves) // 3}')
    steps: list[str] = []
    m = 0
    for count in deals:
        steps.append("+")
        for _ in range(count):
            source, target, card = moves[m : m + 3]
            if not 0 <= target < source < DECK_SIZE or source - target not in (1, 3) or not 0 <= card < DECK_SIZE:
                raise TraceError(f"move {m // 3 + 1} of the trace, {moves[m : m + 3]}, is no move")
            steps.append(f"{PILES[source]}{source - target}")
            m += 3
    return "".join(steps)


def _int_list(value: Any) -> TypeGuard[list[int]]:
    return isinstance(value, list) and all(type(v) is int for v in value)


def replay_play(deck: list[int], play: str) -> list[int]:
    """Deal the deck (card numbers) and make the moves of ``play``, checking each against the rules
    written plainly (a second implementation that checks the fast one); the sizes left."""
    piles: list[list[int]] = []
    dealt = made = 0
    at = 0
    while at < len(play):
        if play[at] == "+":
            _settled(piles, dealt)
            piles.append([deck[dealt]])
            dealt += 1
            at += 1
            continue
        made += 1
        source, distance = _PILE[play[at]], int(play[at + 1])
        expected = _leftmost_move(piles)
        step = f"move {made} (after deal {dealt})"
        if expected is None:
            raise TraceError(f"{step}: no card can move")
        if (source, source - distance) != expected:
            rule_source, rule_target = expected
            raise TraceError(
                f"{step}: the rules move {CARDS[piles[rule_source][-1]]} from pile {rule_source} to pile "
                f"{rule_target}, the trace moves the top card of pile {source} {distance} to the left"
            )
        piles[source - distance].append(piles[source].pop())
        if not piles[source]:
            del piles[source]
        at += 2
    _settled(piles, dealt)
    return [len(pile) for pile in piles]


def _settled(piles: list[list[int]], dealt: int) -> None:
    """Refuse a trace that deals on (or stops) while a card can still move."""
    expected = _leftmost_move(piles)
    if expected is not None:
        source, target = expected
        raise TraceError(
            f"after deal {dealt} the trace makes no move, but {CARDS[piles[source][-1]]} "
            f"can move from pile {source} to pile {target}"
        )


def _leftmost_move(piles: list[list[int]]) -> tuple[int, int] | None:
    """The move the rules make now, as (from pile, to pile), or ``None`` when no card can move."""
    for i, pile in enumerate(piles):
        for distance in (3, 1):
            if i >= distance:
                card, other = pile[-1], piles[i - distance][-1]
                if card // 4 == other // 4 or card % 4 == other % 4:  # same rank or same suit
                    return i, i - distance
    return None
