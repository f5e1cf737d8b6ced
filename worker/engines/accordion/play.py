"""Accordion played fast: the pure-Python hot path of solving (the native core plays in C).

A card is a bit mask (rank bit | suit bit), so matching is one ``&``; the row keeps only
its top cards, and ``under[card]`` is the card each covers. The leftmost movable card is
found by looking only where the last move can have made one movable (see :func:`play`).
"""

from __future__ import annotations

from worker.engines.accordion.trace import PILES

#: Empty piles on the left of the row (top 0 matches nothing): no bounds checks.
_PAD = 3
#: A move from the pile at ``tops[i]``, one and three piles to the left, as a trace writes it.
_ONE, _THREE = (tuple([""] * _PAD + [f"{pile}{distance}" for pile in PILES]) for distance in (1, 3))


def play(masks: tuple[int, ...], under: list[int], steps: list[str] | None = None) -> list[int]:
    """The pile sizes a deck leaves; with ``steps``, every deal and move noted there (the
    ``play`` of a trace, see :mod:`.trace`). ``under`` needs no clearing: each entry is
    written before it is read.

    A card that moves is the leftmost that could, so every pile left of the one it leaves
    (``source``) is settled: after it lands on ``j`` (and hops on while it can), only
    piles ``j + 1``, ``j + 3`` and those from ``source`` on can move next.

    >>> from worker.engines.accordion.cards import TABLE_SIZE, masks_of
    >>> deck = masks_of("QD AD 8H 5S 3H 5H TC 4D JH KS 6H 8S JS AC AS 8D 2H QS TS 3S AH 4H TH TD 3C 6S "
    ...                 "8C 7D 4C 4S 7S 9H 7C 5D 2S KD 2D QH JD 6D 9D JC 2C KH 3D QC 6C 9S KC 7H 9C 5C")
    >>> steps = []
    >>> play(deck, [0] * TABLE_SIZE, steps), "".join(steps)[:12]
    ([40, 8, 1, 1, 1, 1], '++B1++++E3C1')
    """
    traced = steps is not None
    tops = [0, 0, 0]  # _PAD empty piles
    n = _PAD  # len(tops)
    for card in masks:
        if traced:
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
        source = n  # the dealt card never made a pile
        while True:
            # ``card`` leaves pile ``source`` for pile ``j``, whose top is ``t``, and hops on.
            if traced:
                steps.append(_THREE[source] if source - j == 3 else _ONE[source])
            while True:
                u = tops[j - 3]
                if card & u:
                    if traced:
                        steps.append(_THREE[j])
                    j -= 3
                    t = u
                else:
                    u = tops[j - 1]
                    if not card & u:
                        break
                    if traced:
                        steps.append(_ONE[j])
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
