"""10-20-30 (UVa 246): deal a deck onto seven piles, picking up threes that sum to 10, 20 or 30.

Rules (``judge-data/RULES.md``): deal one card to each of seven piles, left to right; then
deal the top card of the deck onto the next pile that still exists, wrapping from the
rightmost to the leftmost. While the pile just dealt to holds at least three cards,
check in this order: its first two + last card, its first + last two cards, its last
three cards; the first combination summing to 10, 20 or 30 is picked up and put under
the deck, in pile order ("first two + last" goes under as first, second, last). A pile
that empties is gone for the rest of the game. After each deal, once the pile is
settled: all piles gone is a win, an empty deck a loss, and a repeat of an earlier state
of this game (the seven piles and the deck, from the seventh deal on) a draw. ``N``
counts every card dealt: ``Win : 66``, ``Loss: 82``, ``Draw: 73``.

>>> sample = (
...     "2 6 5 10 10 4 10 10 10 4 5 10 4 5 10 9 7 6 1 7 6 9 5 3 10 10 4 10 9 2 1 "
...     "10 1 10 10 10 3 10 9 8 10 8 7 1 2 8 6 7 3 3 8 2")
>>> ENGINE.solve(Case(1, sample), trace=False).line
'Win : 66'

Input
-----
A deck is 52 card values, each an integer 1..10 (10 for ten, jack, queen, king),
separated by any whitespace; a deck may wrap anywhere. A ``0`` where a deck would start
ends the input; text after it is ignored with a warning, and a file without it is read
to its end with a warning. Values are read the way C's ``scanf("%d")`` reads them, but
only plain digits are accepted: ``05`` is the card 5 (written ``5`` in the case's
canonical text) and ``00`` ends the input like ``0``, while ``+5``, ``-3``, ``x`` or
``11`` are refused. A ``0`` after the first card of a deck is refused too: it cannot end
the input in the middle of a deck, and it is no card. Every deck must be a standard
deck, four each of 1..9 and sixteen 10s (every judge file's decks are); anything else is
refused, naming the value that occurs too often.

Trace (version 1)
-----------------
``{"version": 1, "cards": "...", "deals": "...", "after": "...", "picks": "...", "piles":
[...], "deck": "..."}`` and, for a draw only, ``"seen": S``. A card is one character,
``1``..``9`` or ``T`` for 10.

- ``cards``: every card in the order it went under the deck: the 52 cards of the input,
  then three for each pick-up. Deal ``k`` (counted from 1) deals ``cards[k - 1]``, and
  pick-up ``j`` (from 0) puts ``cards[52 + 3*j : 55 + 3*j]`` under the deck, in that
  order.
- ``deals``: one character per deal, the pile dealt onto, ``0``..``6`` from the left.
  There are ``N`` deals.
- ``after``: one character per deal, how many pick-ups come right after it, a base-36
  digit (``0``..``9``, then ``a``..``z``).
- ``picks``: one character per pick-up, in order, its combination: ``a`` first two +
  last card, ``b`` first + last two, ``c`` last three.
- ``piles`` (seven strings, bottom card first, ``""`` for a pile that is gone) and
  ``deck`` (top card first): the state the game ends in.
- ``seen`` (draws): the deal after which that final state was first seen.

Strings rather than arrays of numbers: a game is hundreds of moves, and strings keep a
trace small and fast to make, store and send.

Stored, a win or a loss is packed (:meth:`TenTwentyThirty.solve_packed`): the cards as
bytes, then a byte per pick-up (the cards the deck had left before it, times four, plus
its combination), the piles that emptied, and the end state, about 280 bytes in all. The
solving loop notes that byte and nothing else, which keeps a traced solve within a tenth
of a plain one; :meth:`TenTwentyThirty.unpack_trace` turns it back into the trace above,
checking that the bytes are whole. A draw, which is solved the slow way anyway, is
stored as its JSON.

>>> trace = ENGINE.solve(Case(1, sample)).trace
>>> trace["deals"][:10], trace["cards"][:10]
('0123456012', '265TT4TTT4')
>>> trace["after"][14:30], trace["picks"][:2], trace["cards"][52:58]
('0000000010010010', 'ba', '695TTT')
"""

from __future__ import annotations

import random
import re
import struct
from array import array
from collections.abc import Generator, Iterator
from itertools import chain, cycle
from operator import length_hint, sub
from typing import IO, Any, TypeVar

from worker.engines.base import (
    Case,
    Diagnostic,
    Engine,
    InputError,
    Result,
    TraceError,
    read_pieces,
    show,
)

DECK_SIZE = 52
PILES = 7
OUTCOMES = ("win", "loss", "draw")
#: The judge's words for each outcome, in the order of :data:`OUTCOMES`.
_LINES = ("Win : ", "Loss: ", "Draw: ")
_WIN, _LOSS, _DRAW = 0, 1, 2

# Inside the engine a card is its value modulo 10 (a 10 is 0): the rules only ever ask
# whether a sum is a multiple of 10, and 0..9 keeps the lookup tables small.
_VALUE_CHARS = "T123456789"
_COMBOS = "abc"
_STATE_SEP = b"\n"  # 10
_DIGITS = bytes.maketrans(b"0123456789", bytes(range(10)))
#: bytes.translate tables: a residue to its value character (and 10, which no card is
#: inside the engine, to "|"), a combination (0, 1, 2) to its letter, a pile index to
#: its digit, a number of pick-ups to its base-36 digit.
_CHAR_OF = bytes.maketrans(bytes(range(11)), _VALUE_CHARS.encode() + b"|")
_COMBO_OF = bytes.maketrans(b"\x00\x01\x02", _COMBOS.encode())
_PILE_OF = bytes.maketrans(bytes(range(PILES)), b"0123456")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_COUNT_OF = bytes.maketrans(bytes(range(36)), _BASE36.encode())
#: A stored pick-up mark (see :func:`_play_traced`) to its combination's letter ("?": none).
_PICK_OF = bytes(ord((_COMBOS + "?")[mark & 3]) for mark in range(256))
#: A stored pick-up mark to what the deck iterator had left (``mark >> 2``).
_REM_OF = bytes(mark >> 2 for mark in range(256))
_CARD_BYTES = bytes(range(10))

# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------

#: A card token's weight: a base-64 digit per value, so the sum of a deck's weights
#: holds all ten counts and one comparison checks that it is a standard deck.
_WEIGHT: dict[bytes, int] = {str(v).encode(): 64 ** (v - 1) for v in range(1, 11)}
_STANDARD = sum(4 * 64 ** (v - 1) for v in range(1, 10)) + 16 * 64**9
_IN_DECK = {v: 4 for v in range(1, 10)} | {10: 16}

#: Where a piece of the file starts: (index of its first token among all the file's
#: tokens, line, column, the piece). Kept for the pieces not yet used up, so that a
#: position can be found for any token that is still waiting to make a deck.
_Mark = tuple[int, int, int, bytes]


class _Positions:
    """The line and column of waiting tokens, from the marks of their pieces."""

    def __init__(self) -> None:
        self.marks: list[_Mark] = []
        # The last token found inside a piece: (piece, its index there, its offset), so
        # that finding the next deck's start in a long line goes on from there.
        self._cursor: tuple[bytes, int, int] = (b"", 0, 0)

    def of(self, at: int) -> tuple[int, int]:
        """Where token ``at`` (counted over the whole file) stands."""
        first, line, column, piece = next(mark for mark in reversed(self.marks) if mark[0] <= at)
        i = at - first
        start = len(piece) - len(piece.lstrip())
        if i:
            known, index, offset = self._cursor
            if known is not piece or index > i:
                index, offset = 0, start
            if i > index:
                offset = _skip(i - index).match(piece, offset).end()  # type: ignore[union-attr]
            self._cursor = piece, i, offset
            start = offset
        return line, column + start


_SKIPS: dict[int, re.Pattern[bytes]] = {}


def _skip(count: int) -> re.Pattern[bytes]:
    """A pattern for ``count`` tokens and the whitespace after each."""
    pattern = _SKIPS.get(count)
    if pattern is None:
        if len(_SKIPS) > 100:
            _SKIPS.clear()
        pattern = _SKIPS[count] = re.compile(rb"(?:\S+\s+){%d}" % count)
    return pattern


def _is_zero(token: bytes) -> bool:
    """``0`` or a run of zeros, which ``scanf`` also reads as 0."""
    return token.isdigit() and not token.strip(b"0")


def _clean(cards: list[bytes], where: _Positions, at: int, number: int) -> list[bytes]:
    """The deck with leading zeros dropped, or its first bad token as an :class:`InputError`."""
    clean = []
    for j, token in enumerate(cards):
        # Bound the digits before int(): a run of thousands would raise ValueError in int().
        value = int(token) if token.isdigit() and len(token.lstrip(b"0")) <= 2 else -1
        if 1 <= value <= 10:
            clean.append(str(value).encode())
            continue
        line, column = where.of(at + j)
        if value == 0:
            raise InputError(
                f"{show(token)} is not a card value (1-10): this is card {j + 1} of deck {number}, "
                "and a 0 ends the input only where a deck would start", line, column)
        raise InputError(f"{show(token)} is not a card value (1-10)", line, column)
    return clean


def _count_error(cards: list[bytes], number: int, line: int, column: int) -> InputError:
    counts = {v: 0 for v in _IN_DECK}
    for token in cards:
        counts[int(token)] += 1
    value = next(v for v in _IN_DECK if counts[v] > _IN_DECK[v])
    return InputError(
        f"deck {number} is not a standard deck: {counts[value]} cards of value {value} "
        f"(at most {_IN_DECK[value]})", line, column)


def _cards(text: str) -> list[int]:
    """The cards of a deck's canonical text as residues (10 is 0), top card first.

    >>> _cards("10 1 9" + " 5" * 49)[:4]
    [0, 1, 9, 5]
    """
    # Canonical text is single-spaced, so once "10" is one character every card is
    # every other character: several times faster than split() and int().
    short = text.replace("10", "0")
    if (len(short) == 2 * DECK_SIZE - 1 and short[1::2] == " " * (DECK_SIZE - 1)
            and text.count("0") == text.count("10")):
        digits = short[::2]
        if digits.isascii() and digits.isdigit():
            return list(digits.encode().translate(_DIGITS))
    try:
        return _cards(ENGINE.canonical(text))
    except InputError as error:
        raise InputError(f"not a 10-20-30 deck: {error}") from None


# ---------------------------------------------------------------------------------------
# Playing fast
# ---------------------------------------------------------------------------------------
# A pile is a list ``[code, card, card, ...]``, bottom card first. ``code`` sums up what
# the next deal onto the pile needs, so that a deal that picks nothing up (four deals
# in five) is one table lookup: ``_NEXT[code + card]`` is the pile's code after the deal,
# or, when the deal makes a pick-up, 0 / -1 / -2 for the combination (first two + last /
# first + last two / last three) that is picked up first.
#
# code = _K1 + 10*x                          a pile of one card x
#      = _K2 + 100*x + 10*y                  two cards x, y
#      = _K3 + 10000*a + 1000*f + 100*y + 10*z   three or more: first card a, f = first
#                                            two cards' sum mod 10, last two cards y, z
_K1, _K2, _K3 = 10, 110, 1110


def _build_next() -> list[int]:
    table = [0] * (_K3 + 100_000)
    codes = [_K3 + 10 * i for i in range(10_000)]  # one int object per code: fewer cache misses
    for x in range(10):
        for c in range(10):
            table[_K1 + 10 * x + c] = _K2 + 100 * x + 10 * c
            for y in range(10):
                f = (x + y) % 10
                nxt = codes[1000 * x + 100 * f + 10 * y + c]
                table[_K2 + 100 * x + 10 * y + c] = 0 if (f + c) % 10 == 0 else nxt
    for head in range(100):  # 10*a + f
        a, f = divmod(head, 10)
        # By (z, c): the next code (a, f, z, c), or the pick-up of a front combination,
        # which does not depend on y and comes first in rule order.
        by_zc = codes[100 * head : 100 * head + 100]
        for z in range(10):
            by_zc[10 * z + -(a + z) % 10] = -1
            by_zc[10 * z + -f % 10] = 0
        block = by_zc * 10  # by (y, z, c)
        for y in range(10):
            for z in range(10):
                last3 = 100 * y + 10 * z + -(y + z) % 10
                if block[last3] > 0:
                    block[last3] = -2
        table[_K3 + 1000 * head : _K3 + 1000 * head + 1000] = block
    return table


_NEXT = _build_next()
#: ``_FRONT[10*a + b]``: the part of a code that the first two cards a, b give.
_FRONT = tuple(_K3 + 10000 * a + 1000 * ((a + b) % 10) for a in range(10) for b in range(10))


def _play(d: list[int], nx: list[int] = _NEXT, front: tuple[int, ...] = _FRONT) -> tuple[int, int]:
    """Play a deck of residues to its end: ``(0, N)`` win, ``(1, N)`` loss or ``(2, 0)`` draw.

    ``d`` is extended in place: every pick-up is appended, so ``d`` becomes the whole
    history of cards dealt and ``len(d) - cards still in the deck`` is the deal count.
    A draw is found with Brent's cycle detection against one snapshot (not a set of
    every state); its ``N`` is then found by :func:`_play_exact`.

    >>> _play(_cards("2 6 5 10 10 4 10 10 10 4 5 10 4 5 10 9 7 6 1 7 6 9 5 3 10 10 4 10 9 2 1 "
    ...              "10 1 10 10 10 3 10 9 8 10 8 7 1 2 8 6 7 3 3 8 2"))
    (0, 66)
    """
    # The first 14 deals give every pile two cards and can pick nothing up.
    piles = [[_K2 + 100 * a + 10 * b, a, b] for a, b in zip(d[:PILES], d[PILES : 2 * PILES], strict=True)]
    act = piles[:]  # the piles still there, left to right
    deck = iter(d)  # a list iterator goes on over what is appended while it runs
    deck.__setstate__(14)  # type: ignore[attr-defined]
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
            # Pick up ``n`` (``c`` is its last card), then see whether the pile allows another.
            if n == -2:
                d += (p[-2], p[-1], c)
                del p[-2:]
            elif n == 0:
                d += (p[1], p[2], c)
                del p[1:3]
            else:
                d += (p[1], p[-1], c)
                del p[1]
                p.pop()
            while True:
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
            if size == 1:  # the pile is gone
                k = act.index(p)  # by equality, but only ``p`` is as short as ``[code]``
                del act[k]
                if not act:
                    return _WIN, len(d) - DECK_SIZE
                if k == len(act):
                    k = 0
                first = act[0]
                lam, power, scode = 0, 1, -1  # a cycle keeps every pile: start afresh
                break
            if p is first:  # after a pick-up the deck holds 3 cards or more: d[-rem:] is the deck
                if p[0] == scode:
                    rem = length_hint(deck)
                    if rem == srem and piles == spiles and d[-rem:] == sdeck:
                        return _DRAW, 0
                lam += 1
                if lam == power:
                    power += power
                    lam = 0
                    scode = p[0]
                    srem = length_hint(deck)
                    spiles = [q[:] for q in piles]
                    sdeck = d[-srem:]
        else:  # the deck ran out
            return _LOSS, len(d)


def _play_traced(
    d: list[int], nx: list[int] = _NEXT, front: tuple[int, ...] = _FRONT
) -> tuple[int, int, bytearray, list[int], list[list[int]], int]:
    """:func:`_play` that also notes what a trace needs, one byte per pick-up.

    Returns ``(outcome, N, marks, gone, piles, cards left in the deck)``. Pick-up ``j``
    (from 0) notes ``4 * r + combination`` in ``marks``, ``r`` being what the deck
    iterator had left just before the pick-up's cards joined ``d``: the deal it follows
    is then ``52 + 3*j - r`` (:func:`_expand`), and as the deck never holds 52 cards a
    mark fits a byte. Every pile that empties adds the deal and the pile to ``gone``.
    With the history ``d`` that is all a trace needs: the deals go round robin, so the
    piles dealt onto follow from ``gone``. A draw is ``(2, 0, ...)`` and has run past
    the draw.
    """
    piles = [[_K2 + 100 * a + 10 * b, a, b] for a, b in zip(d[:PILES], d[PILES : 2 * PILES], strict=True)]
    act = piles[:]
    deck = iter(d)
    deck.__setstate__(14)  # type: ignore[attr-defined]
    left = deck.__length_hint__  # type: ignore[attr-defined]
    marks = bytearray()
    note = marks.append
    gone: list[int] = []
    k = 0
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
            if n == -2:
                note(4 * left() + 2)
                d += (p[-2], p[-1], c)
                del p[-2:]
            elif n == 0:
                note(4 * left())
                d += (p[1], p[2], c)
                del p[1:3]
            else:
                note(4 * left() + 1)
                d += (p[1], p[-1], c)
                del p[1]
                p.pop()
            while True:
                size = len(p)
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
                if n == -2:
                    note(4 * left() + 2)
                    d += p[-3:]
                    del p[-3:]
                elif n == 0:
                    note(4 * left())
                    d += (p[1], p[2], p[-1])
                    del p[1:3]
                    p.pop()
                else:
                    note(4 * left() + 1)
                    d += (p[1], p[-2], p[-1])
                    del p[1]
                    del p[-2:]
            if size == 1:
                k = act.index(p)
                del act[k]
                i = 0  # the pile's place, by identity: a loop is cheaper than a generator
                while piles[i] is not p:
                    i += 1
                gone += (len(d) - left(), i)
                if not act:
                    return _WIN, len(d) - DECK_SIZE, marks, gone, piles, DECK_SIZE
                if k == len(act):
                    k = 0
                first = act[0]
                lam, power, scode = 0, 1, -1
                break
            if p is first:
                if p[0] == scode:
                    rem = left()
                    if rem == srem and piles == spiles and d[-rem:] == sdeck:
                        return _DRAW, 0, marks, gone, piles, rem
                lam += 1
                if lam == power:
                    power += power
                    lam = 0
                    scode = p[0]
                    srem = left()
                    spiles = [q[:] for q in piles]
                    sdeck = d[-srem:]
        else:
            return _LOSS, len(d), marks, gone, piles, 0


#: The compact stored form of a win or a loss (:func:`_pack`): a tag, then the deal
#: count ``N``, the history's length, the cards left in the deck and the piles gone.
_PACKED = struct.Struct("<BIHBB")
_PACKED_TAG = 1


def _pack(d: list[int], dealt: int, marks: bytearray, gone: list[int], piles: list[list[int]],
          rem: int) -> bytes:
    """What :func:`_play_traced` noted, as bytes: the header, the history ``d``, the
    marks, ``gone`` (as 32-bit numbers) and the end piles (:func:`_ends`)."""
    return b"".join((_PACKED.pack(_PACKED_TAG, dealt, len(d), rem, len(gone)), bytes(d), marks,
                     array("I", gone).tobytes() if gone else b"", _ends(piles)))


def _ends(piles: list[list[int]]) -> bytes:
    """The piles a game ends with as residues, each after a 10 (which no card is)."""
    for p in piles:
        p[0] = 10  # the pile's code is not needed any more
    return b"".join(map(bytes, piles))


def _expand(packed: bytes) -> dict[str, Any]:
    """The version 1 trace from :func:`_pack`'s bytes, checked to be whole."""
    try:
        _, dealt, size, rem, count = _PACKED.unpack_from(packed)
        at = _PACKED.size
        history = packed[at : at + size]
        at += size
        picks = (size - DECK_SIZE) // 3
        marks = packed[at : at + picks]
        at += picks
        gone = array("I", packed[at : at + 4 * count]).tolist()
        at += 4 * count
        ends = packed[at:]
    except (struct.error, ValueError):
        raise TraceError("a stored 10-20-30 trace is cut short") from None
    # A game's length follows from its history (a loss deals every card, a win all but
    # the 52 left in the deck), which bounds everything else by the bytes at hand.
    letters = marks.translate(_PICK_OF)
    deals = _deals_of(marks)  # in deal order, as pick-ups come
    if (dealt not in (size, size - DECK_SIZE) or len(history) != size or len(marks) != picks
            or len(gone) != count or count > 2 * PILES or ends[:1] != b"\n" or ends.count(10) != PILES
            or len(ends) - PILES + rem != DECK_SIZE or history.translate(None, _CARD_BYTES)
            or b"?" in letters or (deals and not 0 < deals[0] <= deals[-1] <= dealt) or deals != sorted(deals)
            or any(not 0 < deal <= dealt or pile >= PILES for deal, pile in zip(gone[::2], gone[1::2]))
            or len(set(gone[1::2])) != count // 2):
        raise TraceError("a stored 10-20-30 trace is damaged")
    return _trace(history, dealt, deals, letters, gone, ends, rem)


def _trace(history: bytes, dealt: int, deals: list[int], letters: bytes, gone: list[int], ends: bytes,
           rem: int) -> dict[str, Any]:
    """The version 1 trace of a win or a loss from what :func:`_play_traced` noted:
    bytes operations but for one short step of Python per pick-up. ``deals`` holds the
    deal each pick-up follows, ``letters`` their combinations."""
    after = bytearray(dealt + 1)  # pick-ups after each deal, from deal 1
    for deal in deals:
        after[deal] += 1
    cards = history.translate(_CHAR_OF).decode("ascii")
    return {
        "version": 1,
        "cards": cards,
        "deals": (_dealt_to(dealt, gone) if gone else _round_robin(_TURN, dealt)).decode("ascii"),
        "after": after[1:].translate(_COUNT_OF).decode("ascii"),
        "picks": letters.decode("ascii"),
        "piles": ends.translate(_CHAR_OF).decode("ascii").split("|")[1:],
        "deck": cards[len(cards) - rem :] if rem else "",
    }


def _deals_of(marks: bytes) -> list[int]:
    """The deal each pick-up follows: pick-up j's is 52 + 3*j - (its mark >> 2)."""
    return list(map(sub, range(DECK_SIZE, DECK_SIZE + 3 * len(marks), 3), marks.translate(_REM_OF)))


_TURN = b"0123456"


def _dealt_to(dealt: int, gone: list[int]) -> bytes:
    """The pile of every deal, as digits, when piles empty on the way (``gone``): round
    robin over the piles still there, from pile 0, the order changing only where a pile
    empties."""
    order = _TURN  # the piles still there
    parts = [_TURN * 2]  # deals 1..14
    start, k = 2 * PILES, 0
    for j in range(0, len(gone), 2):
        parts.append(_round_robin(order[k:] + order[:k], gone[j] - start))
        k = order.index(gone[j + 1] + 48)
        order = order[:k] + order[k + 1 :]
        if k == len(order):
            k = 0
        start = gone[j]
    if order:
        parts.append(_round_robin(order[k:] + order[:k], dealt - start))
    return b"".join(parts)


_LONG_TURNS: dict[bytes, bytes] = {}  # at most 448 turns: the rotations of each set of piles


def _round_robin(turn: bytes, count: int) -> bytes:
    """``count`` deals round robin over the piles ``turn`` (digits), from its first."""
    if count > 1000:
        return (turn * (count // len(turn) + 1))[:count]
    rounds = _LONG_TURNS.get(turn)
    if rounds is None:
        rounds = _LONG_TURNS[turn] = turn * (1000 // len(turn) + 1)
    return rounds[:count]


def _piles_text(piles: list[list[int]] | list[bytearray]) -> list[str]:
    """Piles of residues as the trace writes them."""
    joined = bytes(chain.from_iterable([10, *p] for p in piles)).translate(_CHAR_OF)
    return joined.decode("ascii").split("|")[1:]


# ---------------------------------------------------------------------------------------
# Playing plainly: the rules as written, every state kept (draws, their traces, replay)
# ---------------------------------------------------------------------------------------


def _pick(pile: list[int] | bytearray) -> int:
    """Which combination the pile allows first: 0, 1, 2 (the trace's a, b, c) or -1."""
    if len(pile) < 3:
        return -1
    a, z = pile[0], pile[-1]
    if (a + pile[1] + z) % 10 == 0:
        return 0
    if (a + pile[-2] + z) % 10 == 0:
        return 1
    if (pile[-3] + pile[-2] + z) % 10 == 0:
        return 2
    return -1


_Pile = TypeVar("_Pile", list[int], bytearray)


def _take(pile: _Pile, combo: int) -> _Pile:
    """Remove combination ``combo`` from the pile; its cards in the order they go under the deck."""
    if combo == 0:
        cards = pile[:2] + pile[-1:]
        del pile[:2]
        del pile[-1]
    elif combo == 1:
        cards = pile[:1] + pile[-2:]
        del pile[0]
        del pile[-2:]
    else:
        cards = pile[-3:]
        del pile[-3:]
    return cards


def _play_exact(d: list[int], record: bool) -> tuple[int, int, int, dict[str, Any] | None]:
    """Play the rules as written, keeping every state like the judges do.

    Returns ``(outcome, N, seen, trace)``: ``seen`` is the deal after which a draw's
    final state was first seen (0 for a win or loss); ``trace`` is ``None`` unless
    ``record``. Slow next to :func:`_play`, and used for what is rare: draws, whose
    first repeat must be found exactly.

    >>> _play_exact(_cards("10 5 4 3 5 7 10 8 2 3 9 10 8 4 5 1 7 6 7 2 6 9 10 2 3 10 3 4 4 9 10 1 1 "
    ...                    "10 5 10 10 1 8 10 7 8 10 6 10 10 10 9 6 2 10 10"), False)
    (2, 73, 55, None)
    """
    # Bytes, so that a state is one bytes object, quick to make and to hash: the piles
    # and the deck joined by 10, which no card is here.
    piles = [bytearray() for _ in range(PILES)]
    deck = bytearray(d[:DECK_SIZE])
    top = 0  # the deck is deck[top:]
    act = list(range(PILES))
    seen: dict[bytes, int] = {}
    deals: list[int] = []
    picks: list[int] = []
    after = bytearray(1)  # pick-ups after each deal, from deal 1
    k = dealt = 0
    while True:
        i = act[k]
        pile = piles[i]
        pile.append(deck[top])
        top += 1
        dealt += 1
        if record:
            deals.append(i)
            after.append(0)
        while (combo := _pick(pile)) >= 0:
            deck += _take(pile, combo)
            if record:
                picks.append(combo)
                after[dealt] += 1
        if pile:
            k += 1
        else:
            del act[k]
        outcome, first = -1, 0
        if not act:
            outcome = _WIN
        elif top == len(deck):
            outcome = _LOSS
        elif dealt >= PILES:
            first = seen.setdefault(_STATE_SEP.join((*piles, deck[top:])), dealt)
            if first < dealt:
                outcome = _DRAW
            else:
                first = 0
        if outcome >= 0:
            break
        if k == len(act):
            k = 0
    if not record:
        return outcome, dealt, first, None
    cards = bytes(deck).translate(_CHAR_OF).decode("ascii")
    trace = {
        "version": 1,
        "cards": cards,
        "deals": bytes(deals).translate(_PILE_OF).decode("ascii"),
        "after": after[1:].translate(_COUNT_OF).decode("ascii"),
        "picks": bytes(picks).translate(_COMBO_OF).decode("ascii"),
        "piles": _piles_text(piles),
        "deck": cards[top:],
    }
    if first:
        trace["seen"] = first
    return outcome, dealt, first, trace


# ---------------------------------------------------------------------------------------
# Replaying a trace
# ---------------------------------------------------------------------------------------

#: What :func:`walk_trace` yields after each deal: (N, piles, deck).
_Step = tuple[int, list[list[int]], list[int]]


def _trace_parts(trace: Any) -> tuple[str, str, str, str]:
    if not isinstance(trace, dict) or trace.get("version") != 1:
        raise TraceError("not a version 1 trace of 10-20-30")
    parts = []
    for key in ("cards", "deals", "after", "picks"):
        part = trace.get(key)
        if not isinstance(part, str) or not part.isascii():
            raise TraceError(f'the trace has no "{key}" string')
        parts.append(part)
    cards, deals, after, picks = parts
    if len(after) != len(deals):
        raise TraceError(f'the trace has {len(deals)} deals in "deals" but {len(after)} in "after"')
    return cards, deals, after, picks


def walk_trace(text: str, trace: dict[str, Any]) -> Generator[_Step, None, tuple[int, int, int]]:
    """Play ``trace`` from the deck ``text``, checking every move against the rules.

    Yields ``(N, piles, deck)`` after each deal and its pick-ups, as card values 1..10
    (fresh lists each time), and returns ``(outcome, N, seen)`` when the game ends.
    Raises :class:`TraceError` where a move is not what the rules dictate, where the
    trace goes on after the game ends or stops before it does, and where its end state
    is not the one the moves lead to.

    >>> sample = "4 3 2 10 8 10 6 8 9 5 8 10 5 3 5 4 6 9 9 1 7 6 3 5 10 10 8 10 9 10 10 7 " \\
    ...          "2 6 10 10 4 10 1 3 10 1 1 10 2 2 10 4 10 7 7 10"
    >>> steps = list(walk_trace(sample, ENGINE.solve(Case(1, sample)).trace))
    >>> n, piles, deck = steps[0]
    >>> n, piles, deck[:5], len(deck)
    (1, [[4], [], [], [], [], [], []], [3, 2, 10, 8, 10], 51)
    >>> len(steps), steps[-1][2]
    (82, [])
    """
    cards, deals, after, picks = _trace_parts(trace)
    try:
        d = _cards(text)
    except InputError as error:
        raise TraceError(str(error)) from None
    piles: list[list[int]] = [[] for _ in range(PILES)]
    deck = d[:]
    top = 0
    act = list(range(PILES))
    seen: dict[tuple[Any, ...], int] = {}
    k = dealt = j = 0  # j: pick-ups replayed
    while True:
        i = act[k]
        if dealt == len(deals):
            raise TraceError(f"the trace stops after deal {dealt}, before the game ends")
        want, found = f"{i}{_VALUE_CHARS[deck[top]]}", deals[dealt] + cards[dealt : dealt + 1]
        if found != want:
            raise TraceError(f"deal {dealt + 1}: the rules deal {want!r} (pile, card), "
                             f"the trace has {found!r}")
        pile = piles[i]
        pile.append(deck[top])
        top += 1
        dealt += 1
        count = _BASE36.find(after[dealt - 1])
        while (combo := _pick(pile)) >= 0:
            taken = _take(pile, combo)
            deck += taken
            want = _COMBOS[combo] + "".join(_VALUE_CHARS[c] for c in taken)
            found = picks[j : j + 1] + cards[DECK_SIZE + 3 * j : DECK_SIZE + 3 * j + 3]
            if count <= 0 or found != want:
                raise TraceError(f"deal {dealt}: the rules pick up {want!r} next, the trace does not")
            count -= 1
            j += 1
        if count:
            raise TraceError(f"deal {dealt}: the trace has {after[dealt - 1]!r} pick-ups next, "
                             "the rules differ")
        yield dealt, [[c or 10 for c in p] for p in piles], [c or 10 for c in deck[top:]]
        if pile:
            k += 1
        else:
            del act[k]
        outcome, first = -1, 0
        if not act:
            outcome = _WIN
        elif top == len(deck):
            outcome = _LOSS
        elif dealt >= PILES:
            state = (*map(tuple, piles), tuple(deck[top:]))
            if state in seen:
                outcome, first = _DRAW, seen[state]
            seen[state] = dealt
        if outcome >= 0:
            break
        if k == len(act):
            k = 0
    if len(deals) != dealt or j != len(picks) or len(cards) != len(deck):
        raise TraceError(f"the game ends at deal {dealt}, but the trace goes on")
    if cards[:DECK_SIZE] != bytes(d[:DECK_SIZE]).translate(_CHAR_OF).decode("ascii"):
        raise TraceError("the trace's cards do not start with the deck")  # a draw may deal fewer than 52
    if trace.get("piles") != _piles_text(piles) or trace.get("deck") != cards[top:]:
        raise TraceError(f"the trace's end state is not the one its moves lead to (after deal {dealt})")
    if trace.get("seen", 0) != first:
        raise TraceError(f"the trace says the final state was first seen after deal {trace.get('seen')}, "
                         f"the moves say {first or 'never'}")
    return outcome, dealt, first


# ---------------------------------------------------------------------------------------
# The engine
# ---------------------------------------------------------------------------------------


class TenTwentyThirty(Engine):
    """UVa 246. ``Result.number`` is the deal count ``N``; ``Result.detail`` is ``[]``, or
    ``[S]`` for a draw, ``S`` being the deal after which the repeated state was first seen.

    >>> r = ENGINE.solve(Case(1, "10 5 4 3 5 7 10 8 2 3 9 10 8 4 5 1 7 6 7 2 6 9 10 2 3 10 3 4 4 9 "
    ...                          "10 1 1 10 5 10 10 1 8 10 7 8 10 6 10 10 10 9 6 2 10 10"), trace=False)
    >>> r.outcome, r.number, r.detail, r.line
    ('draw', 73, [55], 'Draw: 73')
    >>> ENGINE.judge_line(3, "loss", 82, [])
    'Loss: 82'
    """

    slug = "10-20-30"
    title = "10-20-30 (UVa 246)"
    summary = "deal onto seven piles, pick up threes summing to 10, 20 or 30: win, loss or draw"
    unit = "deck"
    number_name = "deals"
    outcomes = OUTCOMES
    terminator = "0"
    trace_version = 1
    typical_solve_us = 100

    def parse(self, stream: IO[bytes], warnings: list[Diagnostic] | None = None) -> Iterator[Case]:
        """The decks of a judge file; see the module's "Input" for what is accepted.

        >>> import io
        >>> deck = " ".join(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "10", "10", "10"] * 4)
        >>> [(c.index, c.line, c.column) for c in ENGINE.parse(io.BytesIO(f"{deck}\\n  {deck} 0".encode()))]
        [(1, 1, 1), (2, 2, 3)]
        >>> try:
        ...     list(ENGINE.parse(io.BytesIO(b"05 " + b"1 " * 51 + b"\\n0\\n")))
        ... except InputError as error:
        ...     print(error)
        line 1, column 1: deck 1 is not a standard deck: 51 cards of value 1 (at most 4)
        """
        if warnings is None:
            warnings = []
        weight = _WEIGHT.__getitem__
        where = _Positions()
        marks = where.marks
        waiting: list[bytes] = []  # tokens read and not yet in a deck
        base = 0  # index among the file's tokens of waiting[0]
        number = 0  # decks read
        line = 0
        for line, column, piece in (pieces := read_pieces(stream)):
            tokens = piece.split()
            if not tokens:
                continue
            marks.append((base + len(waiting), line, column, piece))
            waiting += tokens
            size = len(waiting)
            if size < DECK_SIZE and waiting[0][0] != 48:  # most of a deck's lines: nothing to do yet
                continue
            pos = 0
            while pos < size:
                if waiting[pos][0] == 48 and _is_zero(waiting[pos]):  # "0": the end
                    if not number:
                        raise InputError("the file has no decks", *where.of(base + pos))
                    if pos + 1 < size:
                        _warn_after(warnings, *where.of(base + pos + 1))
                    else:
                        _warn_rest(warnings, pieces)
                    return
                if size - pos < DECK_SIZE:
                    break
                cards = waiting[pos : pos + DECK_SIZE]
                number += 1
                try:
                    total = sum(map(weight, cards))
                except KeyError:  # a leading zero, or a bad token: the slow path says which
                    cards = _clean(cards, where, base + pos, number)
                    total = sum(map(weight, cards))
                first, at_line, at_column, at_piece = marks[0]
                if first == base + pos:  # the deck starts its piece, as in most files
                    at_column += len(at_piece) - len(at_piece.lstrip())
                else:
                    at_line, at_column = where.of(base + pos)
                if total != _STANDARD:
                    raise _count_error(cards, number, at_line, at_column)
                yield Case(number, b" ".join(cards).decode("ascii"), at_line, at_column)
                pos += DECK_SIZE
            if pos:
                del waiting[:pos]
                base += pos
                while len(marks) > 1 and marks[1][0] <= base:  # pieces used up
                    del marks[0]
        if waiting:
            _clean(waiting, where, base, number + 1)  # a bad token in it is the first problem
            raise InputError(
                f"deck {number + 1} ends at end of file after {len(waiting)} of {DECK_SIZE} cards",
                *where.of(base))
        if not line:
            raise InputError("the file is empty")
        if not number:
            raise InputError("the file has no decks")
        warnings.append(Diagnostic('no terminating "0" at end of file'))

    def solve(self, case: Case, trace: bool = True) -> Result:
        d = _cards(case.text)
        if not trace:
            outcome, n = _play(d)
            if outcome != _DRAW:
                return Result(OUTCOMES[outcome], n, [], _LINES[outcome] + str(n))
            _, n, seen, _ = _play_exact(d, False)
            return Result("draw", n, [seen], f"Draw: {n}")
        outcome, n, marks, gone, piles, rem = _play_traced(d)
        if outcome != _DRAW:
            trace = _trace(bytes(d), n, _deals_of(marks), marks.translate(_PICK_OF), gone, _ends(piles), rem)
            return Result(OUTCOMES[outcome], n, [], _LINES[outcome] + str(n), trace)
        _, n, seen, exact = _play_exact(d, True)
        return Result("draw", n, [seen], f"Draw: {n}", exact)

    def solve_packed(self, case: Case) -> tuple[Result, bytes]:
        """The result and its trace in the stored form: for a win or a loss the compact
        bytes of :func:`_pack` (a byte per pick-up), for a draw its JSON.

        >>> result, packed = ENGINE.solve_packed(Case(1, "2 6 5 10 10 4 10 10 10 4 5 10 4 5 10 9 7 6 "
        ...     "1 7 6 9 5 3 10 10 4 10 9 2 1 10 1 10 10 10 3 10 9 8 10 8 7 1 2 8 6 7 3 3 8 2"))
        >>> result.line, len(packed), ENGINE.unpack_trace(packed)["picks"][:5]
        ('Win : 66', 212, 'babab')
        """
        d = _cards(case.text)
        outcome, n, marks, gone, piles, rem = _play_traced(d)
        if outcome != _DRAW:
            return Result(OUTCOMES[outcome], n, [], _LINES[outcome] + str(n)), _pack(d, n, marks, gone, piles, rem)
        _, n, seen, exact = _play_exact(d, True)
        return Result("draw", n, [seen], f"Draw: {n}"), self.pack_trace(exact or {})

    def unpack_trace(self, packed: bytes) -> dict[str, Any]:
        if packed[:1] == bytes((_PACKED_TAG,)):
            return _expand(packed)
        return super().unpack_trace(packed)

    def judge_line(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        return _LINES[OUTCOMES.index(outcome)] + str(number)

    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        """Check ``trace`` move by move (see :func:`walk_trace`) and return its result."""
        steps = walk_trace(text, trace)
        while True:
            try:
                next(steps)
            except StopIteration as end:
                outcome, n, seen = end.value
                break
        return Result(OUTCOMES[outcome], n, [seen] if seen else [], _LINES[outcome] + str(n), trace)

    def generate(self, rng: random.Random) -> str:
        """A random standard deck on two lines of 26 cards.

        >>> text = ENGINE.generate(random.Random(1))
        >>> len(text.split()), text.count("\\n")
        (52, 1)
        """
        deck = [str(v) for v in range(1, 10) for _ in range(4)] + ["10"] * 16
        rng.shuffle(deck)
        return " ".join(deck[:26]) + "\n" + " ".join(deck[26:])

    def sniff(self, head: bytes) -> bool:
        """Integers 0..10, with a 0 only where a deck would start.

        >>> ENGINE.sniff(b"2 6 5 10 10 4 1"), ENGINE.sniff(b"QD AD"), ENGINE.sniff(b"1T 2T 3T")
        (True, False, False)
        """
        tokens = head.split()
        if tokens and not head[-1:].isspace() and len(head) >= 512:
            tokens.pop()  # a head that long may be the start of a longer file, cut in a token
        cards = 0
        for j, token in enumerate(tokens):
            if not token.isdigit() or len(token) > 3:
                return False
            value = int(token)
            if value == 0:
                return j % DECK_SIZE == 0 and cards > 0
            if value > 10:
                return False
            cards += 1
        return cards > 0


def _warn_after(warnings: list[Diagnostic], line: int, column: int) -> None:
    warnings.append(Diagnostic('text after the terminating "0" is ignored', line, column))


def _warn_rest(warnings: list[Diagnostic], pieces: Iterator[tuple[int, int, bytes]]) -> None:
    """Warn about the first text after the terminator, reading no further than it."""
    for line, column, piece in pieces:
        if piece.split():
            _warn_after(warnings, line, column + len(piece) - len(piece.lstrip()))
            return


ENGINE = TenTwentyThirty()
