"""Accordion played fast in pure Python (the native core plays in C): a card is a bit mask (rank
bit | suit bit), so matching is one ``&``; the row keeps only its top cards, ``under[card]`` the card
each covers.
"""

from __future__ import annotations

from worker.engines.accordion.trace import PILES

#: Empty piles on the left of the row (top 0 matches nothing): no bounds checks.
_PAD = 3
#: A move from the pile at ``tops[i]``, one and three piles to the left, as a trace writes it.
_ONE, _THREE = (tuple([""] * _PAD + [f"{pile}{distance}" for pile in PILES]) for distance in (1, 3))


def play(masks: tuple[int, ...], under: list[int], steps: list[str] | None = None) -> list[int]:
    """The pile sizes a deck leaves; with ``steps``, every deal and move noted there (a trace's
    ``play``). ``under`` needs no clearing. A card that moves is the leftmost that could, so after
    it lands on ``j`` only piles ``j + 1``, ``j + 3`` and those from its ``source`` on can move next.

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
        if card & tops[n - 3]:
            j = n - 3
        elif card & tops[n - 1]:
            j = n - 1
        else:
            tops.append(card)
            under[card] = 0
            n += 1
            continue
        source = n  # the dealt card never made a pile
        while True:
            # ``card`` leaves pile ``source`` for pile ``j`` and hops on while it can.
            if traced:
                steps.append(_THREE[source] if source - j == 3 else _ONE[source])
            while True:
                if card & tops[j - 3]:
                    if traced:
                        steps.append(_THREE[j])
                    j -= 3
                elif card & tops[j - 1]:
                    if traced:
                        steps.append(_ONE[j])
                    j -= 1
                else:
                    break
            under[card] = tops[j]
            tops[j] = card
            # The next card to move: from pile j + 1 or j + 3 onto j, or the first from ``source`` on.
            if j + 1 < source and tops[j + 1] & card:
                i = j + 1
            elif j + 3 < source and tops[j + 3] & card:
                i = j + 3
            else:
                for i in range(source, n):
                    if tops[i] & tops[i - 3]:
                        j = i - 3
                        break
                    if tops[i] & tops[i - 1]:
                        j = i - 1
                        break
                else:
                    break
            card = tops[i]
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
