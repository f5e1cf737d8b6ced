"""Accordion's native core (compiled only): :func:`.play.play`'s loop over C arrays (a card its number
plus one, 0 no pile), writing the judge line and the trace's ``play``. ``test_native.py`` holds it to
:mod:`.play`.
"""

import cython
from cython.cimports.libc.string import memcpy
from cython.cimports.worker.engines.out import Out, core, is_space, put, put_int, reserve

from worker.engines.accordion.trace import PILES


_RANKS, _SUITS = "A23456789TJQK", "CDHS"
#: By card (number + 1): its rank and suit bits; 0 for no card.
_MASK = cython.declare(cython.int[53])
_MASK[:] = [0] + [1 << rank | 1 << (13 + suit) for rank in range(13) for suit in range(4)]
#: By character: 4 * rank, or the suit, else -1.
_RANK4 = cython.declare(cython.int[256])
_RANK4[:] = [4 * _RANKS.find(chr(b)) if chr(b) in _RANKS else -1 for b in range(256)]
_SUIT = cython.declare(cython.int[256])
_SUIT[:] = [_SUITS.find(chr(b)) if chr(b) in _SUITS else -1 for b in range(256)]

# A game's state in static buffers: every call holds the GIL from start to end.
_deck = cython.declare(cython.int[52])
_tops = cython.declare(cython.int[56])
_under = cython.declare(cython.int[53])
# The trace's ``play`` (:mod:`.trace`): a "+" a deal and two characters a move (a card moves at
# least one pile left, never right: at most 0 + 1 + ... + 51 = 1326 moves).
_play_text = cython.declare(cython.char[2704])
_written = cython.declare(cython.int, 0)  # of _play_text, after a traced game
#: By pile (counting the three empty ones on the left), a move from it one and then three piles
#: to the left: its two characters, copied as one 16-bit word.
_STEPS = cython.declare(bytes, "".join(pile + str(far) for far in (1, 3) for pile in "   " + PILES).encode())
_STEP = cython.declare(cython.p_const_char, _STEPS)
_sizes = cython.declare(cython.int[52])


@cython.cfunc
@cython.exceptval(check=False)
def _read_at(s: cython.p_const_char, size: cython.Py_ssize_t) -> cython.bint:
    """The deck into ``_deck``, if the ``size`` bytes at ``s`` are a canonical deck (52 distinct
    cards, single spaces)."""
    seen: cython.longlong = 0
    k: cython.int
    rank: cython.int
    suit: cython.int
    if size != 155:
        return False
    for k in range(52):
        rank = _RANK4[cython.cast(cython.uchar, s[3 * k])]
        suit = _SUIT[cython.cast(cython.uchar, s[3 * k + 1])]
        if rank < 0 or suit < 0 or (k < 51 and s[3 * k + 2] != 32):
            return False
        seen |= cython.cast(cython.longlong, 1) << (rank + suit)
        _deck[k] = rank + suit + 1
    return seen == (cython.cast(cython.longlong, 1) << 52) - 1


@cython.cfunc
@cython.exceptval(check=False)
def _play(traced: cython.bint) -> cython.int:
    """Play ``_deck``: the piles left, their sizes in ``_sizes``, with ``traced`` the trace's ``play``
    in ``_play_text`` and ``_written``."""
    global _written
    tops: cython.p_int = _tops
    under: cython.p_int = _under
    text: cython.p_char = _play_text
    n: cython.int = 3
    m: cython.int = 0  # characters of _play_text
    k: cython.int
    card: cython.int
    t: cython.int
    u: cython.int
    j: cython.int
    i: cython.int
    source: cython.int
    below: cython.int
    tops[0], tops[1], tops[2] = 0, 0, 0
    for k in range(52):
        card = _deck[k]
        if traced:
            text[m] = 43  # +
            m += 1
        t = tops[n - 3]
        if _MASK[card] & _MASK[t]:
            j = n - 3
        else:
            t = tops[n - 1]
            if not (_MASK[card] & _MASK[t]):
                tops[n] = card
                under[card] = 0
                n += 1
                continue
            j = n - 1
        source = n  # the dealt card never made a pile
        while True:
            # ``card`` leaves pile ``source`` for pile ``j``, whose top is ``t``, and hops on.
            if traced:
                memcpy(text + m, _STEP + 2 * (55 * ((source - j) >> 1) + source), 2)
                m += 2
            while True:
                u = tops[j - 3]
                if _MASK[card] & _MASK[u]:
                    if traced:
                        memcpy(text + m, _STEP + 2 * (55 + j), 2)
                        m += 2
                    j -= 3
                    t = u
                else:
                    u = tops[j - 1]
                    if not (_MASK[card] & _MASK[u]):
                        break
                    if traced:
                        memcpy(text + m, _STEP + 2 * j, 2)
                        m += 2
                    j -= 1
                    t = u
            under[card] = t
            tops[j] = card
            # The next card to move, if any: pile j + 1 (onto j), j + 3 (onto j), or one
            # from ``source`` on.
            i = j + 1
            if i < source and _MASK[tops[i]] & _MASK[card]:
                t = card
                card = tops[i]
            elif j + 3 < source and _MASK[tops[j + 3]] & _MASK[card]:
                i = j + 3
                t = card
                card = tops[i]
            else:
                i = source
                while i < n:
                    card = tops[i]
                    t = tops[i - 3]
                    if _MASK[card] & _MASK[t]:
                        j = i - 3
                        break
                    t = tops[i - 1]
                    if _MASK[card] & _MASK[t]:
                        j = i - 1
                        break
                    i += 1
                if i == n:
                    break
            below = under[card]
            if below:
                tops[i] = below
            else:
                n -= 1
                for u in range(i, n):
                    tops[u] = tops[u + 1]
            source = i
    for i in range(3, n):
        j = 1
        card = under[tops[i]]
        while card:
            j += 1
            card = under[card]
        _sizes[i - 3] = j
    _written = m
    return n - 3


@cython.cfunc
@cython.exceptval(-1)
def _detail(into: Out, piles: cython.int, extra: cython.int) -> cython.int:
    """A record's detail: ``[a,b,c]`` of ``_sizes``, as orjson writes a list of integers."""
    j: cython.int
    for j in range(piles):
        put(into, b"," if j else b"[", 1)
        put_int(into, _sizes[j])
    return put(into, b"]", 1)


@cython.cfunc
@cython.exceptval(-1)
def _put_line(into: Out, piles: cython.int) -> cython.int:
    """``N piles remaining: a b c`` (``1 pile remaining: 52``), as :func:`.engine.line_of`."""
    j: cython.int
    if piles == 1:
        return put(into, b"1 pile remaining: 52", 20)
    put_int(into, piles)
    put(into, b" piles remaining:", 17)
    for j in range(piles):
        put(into, b" ", 1)
        put_int(into, _sizes[j])
    return 0


@cython.cfunc
@cython.exceptval(-1)
def _case(s: cython.p_const_char, size: cython.Py_ssize_t, index: cython.longlong, traced: cython.bint,
          json: cython.bint, lines: Out, traces: Out, number: cython.p_int,
          extra: cython.p_int) -> cython.int:
    """One deck (see ``CaseSolver`` in out.pxd): win 1, loss 2, 0 not canonical; ``number`` the piles.
    The trace as ``orjson.dumps`` writes it."""
    if not _read_at(s, size):
        return 0
    piles: cython.int = _play(traced)
    _put_line(lines, piles)
    if traced:
        put(traces, b'{"version":2,"play":"', 21)
        put(traces, _play_text, _written)
        put(traces, b'"}', 2)
    number[0], extra[0] = piles, 0
    return 1 if piles == 1 else 2


# --------------------------------------------------------------------- reading a judge file


@cython.cfunc
@cython.exceptval(check=False)
def _plain_line(s: cython.p_const_char, size: cython.Py_ssize_t, held: cython.ulonglong, after: cython.p_ulonglong,
                copy: cython.p_char) -> cython.int:
    """The cards of a plain line (between single spaces, none in ``held``, a mask of cards, nor twice),
    ``after`` them with ``held``; 0 for another line. Copied to ``copy`` (at most 155 bytes)."""
    if size > 155 or size % 3 != 2:
        return 0
    cards: cython.int = cython.cast(cython.int, size + 1) // 3
    k: cython.int
    card: cython.int
    bad: cython.int = 0
    mask: cython.ulonglong = held
    twice: cython.ulonglong = 0
    bit: cython.ulonglong
    for k in range(cards):
        card = _RANK4[cython.cast(cython.uchar, s[3 * k])] | _SUIT[cython.cast(cython.uchar, s[3 * k + 1])]
        bad |= card  # (negative for a byte that is no rank or suit)
        bit = cython.cast(cython.ulonglong, 1) << (card & 63)
        twice |= mask & bit
        mask |= bit
        copy[3 * k] = s[3 * k]
        copy[3 * k + 1] = s[3 * k + 1]
        copy[3 * k + 2] = 32
        if k < cards - 1:
            bad |= -(s[3 * k + 2] != 32)
    if bad < 0 or twice:
        return 0
    after[0] = mask
    return cards


@cython.cfunc
@cython.exceptval(check=False)
def _one_card(s: cython.p_const_char, size: cython.Py_ssize_t, held: cython.p_ulonglong,
              copy: cython.p_char) -> cython.int:
    """A card of a line written otherwise, not in ``held`` (then added): its two bytes, or 0."""
    if size < 2 or (size > 2 and not is_space(s[2])):
        return 0
    rank: cython.int = _RANK4[cython.cast(cython.uchar, s[0])]
    suit: cython.int = _SUIT[cython.cast(cython.uchar, s[1])]
    if rank < 0 or suit < 0 or held[0] >> (rank + suit) & 1:
        return 0
    held[0] |= cython.cast(cython.ulonglong, 1) << (rank + suit)
    copy[0], copy[1], copy[2] = s[0], s[1], 32
    return 2


# The native core (see out.Core): a deck's 52 cards are 52 distinct bits.
solve, solve_batch, solve_chunk, read, read_inputs, InputBlock = core(
    _case, _detail, (b"win", b"loss"), cython.NULL, _plain_line, _one_card,
    (cython.cast(cython.ulonglong, 1) << 52) - 1).exports()
