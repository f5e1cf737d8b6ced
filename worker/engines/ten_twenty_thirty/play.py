"""10-20-30 played fast in pure Python (the native core plays in C); ``tests/engines`` hold it
to :class:`.rules.Game`, the rules as written.

A card is its value modulo 10 (10 is 0): the rules only ask whether a sum is a multiple of
10. A pile is ``[code, card, ...]``, bottom card first; ``code`` sums up what the next deal
needs, so a deal that picks nothing up (four in five) is one look-up: ``_NEXT[code + card]``
is the pile's next code, or 0 / -1 / -2 for the combination picked up first (first two +
last / first + last two / last three)::

    code = _K1 + 10*x                              one card x
         = _K2 + 100*x + 10*y                      two cards x, y
         = _K3 + 10000*a + 1000*f + 100*y + 10*z   more: first card a, f = first two's sum
                                                   mod 10, last two cards y, z
"""

from __future__ import annotations

from itertools import cycle, product

from worker.engines.ten_twenty_thirty.rules import DECK_SIZE, DRAW, LOSS, PILES, WIN, pick

_K1, _K2, _K3 = 10, 110, 1110


def _build_next() -> list[int]:
    """``_NEXT``, each pick-up found by :func:`.rules.pick` on the fewest cards a code and a card
    stand for (as the second card, one that makes the first two's sum ``f``)."""
    table = [0] * (_K3 + 100_000)
    codes = [_K3 + 10 * i for i in range(10_000)]  # one int object per code: fewer cache misses
    for x, c in product(range(10), repeat=2):
        table[_K1 + 10 * x + c] = _K2 + 100 * x + 10 * c
    for i, (x, y, c) in enumerate(product(range(10), repeat=3)):
        combo = pick((x, y, c))
        table[_K2 + i] = -combo if combo >= 0 else codes[1000 * x + 100 * ((x + y) % 10) + 10 * y + c]
    for i, (a, f, y, z, c) in enumerate(product(range(10), repeat=5)):
        combo = pick((a, (f - a) % 10, y, z, c))
        table[_K3 + i] = -combo if combo >= 0 else codes[i // 1000 * 100 + i % 100]  # (a, f, z, c)
    return table


_NEXT = _build_next()
#: ``_FRONT[10*a + b]``: the part of a code that the first two cards a, b give.
_FRONT = tuple(_K3 + 10000 * a + 1000 * ((a + b) % 10) for a in range(10) for b in range(10))


def play(d: list[int], marks: bytearray | None = None, gone: list[int] | None = None,
         nx: list[int] = _NEXT, front: tuple[int, ...] = _FRONT) -> tuple[int, int, list[list[int]], int]:
    """Play a deck of residues to its end: ``(outcome, N, piles, cards left in the deck)``;
    a draw's ``N`` is 0 (:class:`.rules.Game` finds it, and its first sighting).

    ``d`` is extended in place with every pick-up, so it becomes the game's history. A trace
    passes ``marks`` and ``gone``: pick-up ``j`` notes ``4 * r + combination``, ``r`` being
    what the deck had left just before its cards joined ``d`` (so it follows deal ``52 + 3*j
    - r``, :func:`.trace.deals_of`), and a pile that empties notes its deal and its place.
    A draw is found by Brent's cycle detection against one snapshot, not a set of states.

    >>> from worker.engines.ten_twenty_thirty.read import residues
    >>> d = residues("2 6 5 10 10 4 10 10 10 4 5 10 4 5 10 9 7 6 1 7 6 9 5 3 10 10 4 10 9 2 1 "
    ...              "10 1 10 10 10 3 10 9 8 10 8 7 1 2 8 6 7 3 3 8 2")
    >>> marks, gone = bytearray(), []
    >>> play(d, marks, gone)[:2], len(marks), len(gone)
    ((0, 66), 22, 14)
    """
    traced = marks is not None
    note = marks.append if marks is not None else None
    # The first 14 deals give every pile two cards and can pick nothing up.
    piles = [[_K2 + 100 * a + 10 * b, a, b] for a, b in zip(d[:PILES], d[PILES : 2 * PILES], strict=True)]
    act = piles[:]  # the piles still there, left to right
    deck = iter(d)  # a list iterator goes on over what is appended while it runs
    deck.__setstate__(14)  # type: ignore[attr-defined]
    left = deck.__length_hint__  # type: ignore[attr-defined]
    k = 0  # where in ``act`` the next deal goes
    # Brent: the state is compared with a snapshot only right after a pick-up on the
    # leftmost pile (``first``). In a cycle every pile gets the same number of deals, a
    # multiple of three (its length comes back), so such a moment recurs in every cycle.
    first = act[0]
    lam, power, scode = 0, 1, -1
    srem, spiles, sdeck = 0, piles, d
    while True:
        for c, p in zip(deck, cycle(act[k:] + act[:k]) if k else cycle(act), strict=False):
            n = nx[p[0] + c]
            if n > 0:
                p[0] = n
                p.append(c)
                continue
            p.append(c)
            while True:  # pick up combination ``-n``, then see whether the pile allows another
                if traced:
                    note(4 * left() - n)  # type: ignore[misc]
                if n == -2:
                    d += p[-3:]
                    del p[-3:]
                elif n == 0:
                    d += (p[1], p[2], p[-1])
                    del p[1:3]
                    p.pop()
                else:
                    d += (p[1], p[-2], p[-1])
                    del p[1]
                    del p[-2:]
                size = len(p)  # one more than the cards
                if size > 4:  # (a negative index would not take CPython's fast path)
                    n = nx[front[10 * p[1] + p[2]] + 100 * p[size - 3] + 10 * p[size - 2] + p[size - 1]]
                elif size == 4:
                    n = nx[_K2 + 100 * p[1] + 10 * p[2] + p[3]]
                elif size == 3:
                    n = _K2 + 100 * p[1] + 10 * p[2]
                elif size == 2:
                    n = _K1 + 10 * p[1]
                else:
                    break
                if n > 0:
                    p[0] = n
                    break
            if size == 1:  # the pile is gone
                k = act.index(p)  # by equality, but only ``p`` is as short as ``[code]``
                del act[k]
                if traced:
                    place = [q is p for q in piles].index(True)  # equal piles may differ in place
                    gone += (len(d) - left(), place)  # type: ignore[operator]
                if not act:
                    return WIN, len(d) - DECK_SIZE, piles, DECK_SIZE
                if k == len(act):
                    k = 0
                first = act[0]
                lam, power, scode = 0, 1, -1  # a cycle keeps every pile: start afresh
                break
            if p is first:  # after a pick-up the deck holds 3 cards or more: d[-rem:] is the deck
                if p[0] == scode:
                    rem = left()
                    if rem == srem and piles == spiles and d[-rem:] == sdeck:
                        return DRAW, 0, piles, rem
                lam += 1
                if lam == power:
                    power += power
                    lam = 0
                    scode = p[0]
                    srem = left()
                    spiles = [q[:] for q in piles]
                    sdeck = d[-srem:]
        else:  # the deck ran out
            return LOSS, len(d), piles, 0
