"""Accordion traces, and replaying one move by move against the rules written plainly.

Trace (version 1)
-----------------
``{"version": 1, "deals": [d0, d1, ..., d51], "moves": [f, t, c, f, t, c, ...]}``

Play it back from an empty row: for each ``k`` in ``0..51``, deal card ``k`` of the deck
(the ``k``-th card of the case's text) as a new pile at the right end of the row, then
make the next ``deals[k]`` moves of ``moves``. ``moves`` is flat, three integers per
move, in play order: the top card of pile ``f`` goes onto pile ``t`` (``t`` is ``f - 1``
or ``f - 3``), and ``c`` names that card as a number ``0..51``: ``4 * rank + suit`` with
rank in ``A23456789TJQK`` and suit in ``CDHS`` order, so it is ``CARDS[c]`` (``0`` is
``AC``, ``51`` is ``KS``). Pile indices count from 0 at the left and hold just before
the move; a move that empties pile ``f`` removes it, and the piles right of it shift one
place left before the next move. A card that moves on at once from where it landed
makes a move of its own. So ``sum(deals) * 3 == len(moves)``, and the sizes of the piles
after the last move are the result's ``detail``.

>>> from worker.engines.accordion import ENGINE
>>> from worker.engines.base import Case
>>> sample = ("QD AD 8H 5S 3H 5H TC 4D JH KS 6H 8S JS AC AS 8D 2H QS TS 3S AH 4H TH TD 3C 6S "
...           "8C 7D 4C 4S 7S 9H 7C 5D 2S KD 2D QH JD 6D 9D JC 2C KH 3D QC 6C 9S KC 7H 9C 5C")
>>> trace = ENGINE.solve(Case(1, sample)).trace
>>> trace["deals"][:6], trace["moves"][:6]
([0, 1, 0, 0, 0, 2], [1, 0, 1, 4, 1, 18])

Deal 2 (``AD``, card 1) would make pile 1 and moves onto pile 0 (``QD``); deal 6
(``5H``, card 18) would make pile 4 and moves three to the left, onto ``8H``.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from worker.engines.accordion.cards import CARDS, DECK_SIZE
from worker.engines.base import TraceError


def trace_lists(trace: Any) -> tuple[list[int], list[int]]:
    """The ``deals`` and ``moves`` of a trace, after checking their shape."""
    if not isinstance(trace, dict) or trace.get("version") != 1:
        raise TraceError("not an accordion trace of version 1")
    deals, moves = trace.get("deals"), trace.get("moves")
    if not _int_list(deals) or len(deals) != DECK_SIZE or min(deals) < 0:
        raise TraceError(f'"deals" must list {DECK_SIZE} move counts')
    if not _int_list(moves) or len(moves) % 3:
        raise TraceError('"moves" must be a flat list of integers, three per move')
    if sum(deals) * 3 != len(moves):
        raise TraceError(f'"deals" counts {sum(deals)} moves but "moves" holds {len(moves) // 3}')
    return deals, moves


def _int_list(value: Any) -> TypeGuard[list[int]]:
    return isinstance(value, list) and all(type(v) is int for v in value)


def replay_moves(deck: list[int], deals: list[int], moves: list[int]) -> list[int]:
    """Deal the deck (card numbers) and make the traced moves, checking each; the sizes left.

    A plain second implementation of the rules (piles as lists, the leftmost movable
    card searched from the left each time), so replaying also checks the fast solver.
    """
    piles: list[list[int]] = []
    m = 0
    for k, count in enumerate(deals):
        piles.append([deck[k]])
        for _ in range(count):
            step = f"move {m // 3 + 1} (after deal {k + 1})"
            expected = _leftmost_move(piles)
            if expected is None:
                raise TraceError(f"{step}: no card can move")
            source, target = expected
            card = piles[source][-1]
            if moves[m : m + 3] != [source, target, card]:
                raise TraceError(
                    f"{step}: the rules move {CARDS[card]} from pile {source} to pile {target}, "
                    f"the trace says {moves[m : m + 3]}"
                )
            piles[target].append(piles[source].pop())
            if not piles[source]:
                del piles[source]
            m += 3
        expected = _leftmost_move(piles)
        if expected is not None:
            source, target = expected
            raise TraceError(
                f"after deal {k + 1} the trace makes no move, but {CARDS[piles[source][-1]]} "
                f"can move from pile {source} to pile {target}"
            )
    return [len(pile) for pile in piles]


def _matches(a: int, b: int) -> bool:
    """Same rank or same suit, for card numbers."""
    return a // 4 == b // 4 or a % 4 == b % 4


def _leftmost_move(piles: list[list[int]]) -> tuple[int, int] | None:
    """The move the rules make now, as (from pile, to pile), or ``None`` when no card can move."""
    for i, pile in enumerate(piles):
        for distance in (3, 1):
            if i >= distance and _matches(pile[-1], piles[i - distance][-1]):
                return i, i - distance
    return None

