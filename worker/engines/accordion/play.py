"""Accordion played fast: the hot path of solving.

Speed
-----
``solve`` is the hot path of ``dealer solve``: a card is a bit mask (one bit for its
rank, one for its suit) so matching is one ``&``; the row is kept as its top cards
only, with a flat table ``under`` giving, for each card, the card it covers; and the
leftmost card able to move is found by looking only where the last move can have made
one movable, never by scanning the row from the left (see :func:`play`).

Why two loops
-------------
:func:`play_traced` is :func:`play` plus the deals and moves it notes (the trace's
``play``). Measured in 2026 on 3,000 random decks, the traced loop used for plain
solves too made them 40% slower, and one loop with its notes behind a flag 7% slower,
while a plain solve is the hot path of ``dealer solve``. So the loop is written twice,
the traced copy differing only in its notes (``steps``). A property test
(``tests/engines/test_accordion.py``) checks that both leave the same piles, and that
the traced moves are the ones :func:`.trace.replay_play` (the rules written plainly)
makes.
"""

from __future__ import annotations

from typing import Any

from worker.engines.accordion.trace import PILES

#: Empty piles padded on the left of the row (top 0 matches nothing), so "the pile three
#: to the left" always exists and the hot loop needs no bounds checks.
_PAD = 3
#: A move from the pile at ``tops[i]``, one and three piles to the left, as a trace writes it.
_STEPS = tuple([""] * _PAD + [f"{pile}{distance}" for pile in PILES] for distance in (1, 3))


def play(masks: tuple[int, ...], under: list[int]) -> list[int]:
    """The pile sizes a deck leaves: the hot path, with no trace.

    ``tops`` is the row's top cards (after :data:`_PAD` empty piles); ``under[card]`` is
    the card that ``card`` covers (0 for none), which the table only needs to hold for
    the cards of this deck: each entry is written before it is read.

    The leftmost card that can move is found without scanning the row: before a deal no
    card can move, so the dealt card is the only candidate. A card that moves is the
    leftmost that could, so every pile left of the one it leaves (``source``) was
    settled. It lands on pile ``j`` and at once hops on while it can (it is now the
    leftmost card able to move). Of the piles between ``j`` and ``source``, only ``j + 1``
    and ``j + 3`` can have become movable (they see the new card 1 and 3 to their left);
    after them come the piles from ``source`` on, which are checked one by one.
    """
    tops = [0, 0, 0]  # _PAD empty piles
    n = _PAD  # len(tops)
    for card in masks:
        t = tops[n - 3]
        if card & t:
            j = n - 3
        else:
            t = tops[n - 1]
            if not card & t:
                tops.append(card)
                under[card] = 0
                n += 1
                continue
            j = n - 1
        source = n  # the dealt card never made a pile
        while True:
            # ``card`` leaves pile ``source`` for pile ``j``, whose top is ``t``, and hops on.
            while True:
                u = tops[j - 3]
                if card & u:
                    j -= 3
                    t = u
                else:
                    u = tops[j - 1]
                    if not card & u:
                        break
                    j -= 1
                    t = u
            under[card] = t
            tops[j] = card
            # The next card to move, if any: pile j + 1 (onto j), j + 3 (onto j), or one
            # from ``source`` on.
            i = j + 1
            if i < source and tops[i] & card:
                t = card
                card = tops[i]
            elif j + 3 < source and tops[j + 3] & card:
                i = j + 3
                t = card
                card = tops[i]
            else:
                i = source
                while i < n:
                    card = tops[i]
                    t = tops[i - 3]
                    if card & t:
                        j = i - 3
                        break
                    t = tops[i - 1]
                    if card & t:
                        j = i - 1
                        break
                    i += 1
                else:
                    break
            below = under[card]
            if below:
                tops[i] = below
            else:
                del tops[i]
                n -= 1
            source = i
    return sizes_of(tops, under)


def play_traced(masks: tuple[int, ...], under: list[int]) -> tuple[list[int], dict[str, Any]]:
    """:func:`play` that also notes every deal and move (the ``play`` of a version 2 trace,
    see :mod:`.trace`)."""
    one, three = _STEPS
    tops = [0, 0, 0]
    n = _PAD
    steps: list[str] = []
    for card in masks:
        steps.append("+")
        t = tops[n - 3]
        if card & t:
            j = n - 3
        else:
            t = tops[n - 1]
            if not card & t:
                tops.append(card)
                under[card] = 0
                n += 1
                continue
            j = n - 1
        source = n
        while True:
            steps.append(three[source] if source - j == 3 else one[source])
            while True:
                u = tops[j - 3]
                if card & u:
                    steps.append(three[j])
                    j -= 3
                    t = u
                else:
                    u = tops[j - 1]
                    if not card & u:
                        break
                    steps.append(one[j])
                    j -= 1
                    t = u
            under[card] = t
            tops[j] = card
            i = j + 1
            if i < source and tops[i] & card:
                t = card
                card = tops[i]
            elif j + 3 < source and tops[j + 3] & card:
                i = j + 3
                t = card
                card = tops[i]
            else:
                i = source
                while i < n:
                    card = tops[i]
                    t = tops[i - 3]
                    if card & t:
                        j = i - 3
                        break
                    t = tops[i - 1]
                    if card & t:
                        j = i - 1
                        break
                    i += 1
                else:
                    break
            below = under[card]
            if below:
                tops[i] = below
            else:
                del tops[i]
                n -= 1
            source = i
    return sizes_of(tops, under), {"version": 2, "play": "".join(steps)}


def sizes_of(tops: list[int], under: list[int]) -> list[int]:
    """The size of each pile, counted down from its top card."""
    sizes = []
    for card in tops[_PAD:]:
        size = 1
        card = under[card]
        while card:
            size += 1
            card = under[card]
        sizes.append(size)
    return sizes

