"""Accordion's native core, compiled by Cython (it declares C arrays, so it runs compiled only).

:func:`.play.play`'s loop over C arrays: a card is its number plus one (0: no pile),
``_MASK`` its rank and suit bits; it writes the judge line and the trace's ``play``, per
case or for a whole batch or chunk. ``tests/engines/test_native.py`` holds it to :mod:`.play`.
"""

from typing import Optional

import cython
from cython.cimports.cpython.bytes import PyBytes_AS_STRING, PyBytes_GET_SIZE
from cython.cimports.cpython.list import PyList_New, PyList_SET_ITEM
from cython.cimports.cpython.long import PyLong_FromLong
from cython.cimports.cpython.ref import Py_INCREF
from cython.cimports.cpython.unicode import PyUnicode_AsUTF8AndSize, PyUnicode_DecodeASCII
from cython.cimports.libc.string import memchr, memcpy
from cython.cimports.worker.engines.out import (Block, Out, batch, chunk, fits_layout, is_space, new_case, put,
                                                put_int, reserve, took)

from worker.engines.accordion.trace import PILES


_RANKS = cython.declare(cython.p_const_char, b"A23456789TJQK")
_SUITS = cython.declare(cython.p_const_char, b"CDHS")
#: By card (number + 1): its rank and suit bits; 0 for no card.
_MASK = cython.declare(cython.int[53])
#: By character: 4 * rank, or the suit, else -1.
_RANK4 = cython.declare(cython.int[256])
_SUIT = cython.declare(cython.int[256])

# A game's state in static buffers: every call holds the GIL from start to end.
_deck = cython.declare(cython.int[52])
_tops = cython.declare(cython.int[56])
_under = cython.declare(cython.int[53])
# The trace's ``play`` (see :mod:`.trace`): a "+" a deal and two characters a move. A move
# takes a card at least one pile to the left and no card ever goes right, so a deck makes
# at most 0 + 1 + ... + 51 = 1326 moves.
_play_text = cython.declare(cython.char[2704])
_written = cython.declare(cython.int, 0)  # of _play_text, after a traced game
#: By pile (counting the three empty ones on the left), a move from it one and three piles to
#: the left, its two characters as one 16-bit store.
_STEP = cython.declare(cython.ushort[56][2])  # (C's ushort[2][56])
_sizes = cython.declare(cython.int[52])


@cython.cfunc
def _setup() -> cython.void:
    b: cython.int
    r: cython.int
    s: cython.int
    for b in range(256):
        _RANK4[b] = -1
        _SUIT[b] = -1
    for r in range(13):
        _RANK4[cython.cast(cython.uchar, _RANKS[r])] = 4 * r
    for s in range(4):
        _SUIT[cython.cast(cython.uchar, _SUITS[s])] = s
    _MASK[0] = 0
    for r in range(13):
        for s in range(4):
            _MASK[4 * r + s + 1] = (1 << r) | (1 << (13 + s))
    piles: bytes = PILES.encode()
    for r in range(52):
        for s in range(2):
            pair: cython.char[2] = [piles[r], 49 + 2 * s]
            memcpy(cython.address(_STEP[s][r + 3]), pair, 2)


_setup()


@cython.cfunc
@cython.exceptval(check=False)
def _read(text: str) -> cython.bint:
    """The deck into ``_deck``, if ``text`` is a canonical deck (:func:`_read_at`)."""
    size = cython.declare(cython.Py_ssize_t)
    if not text.isascii():  # (no case is otherwise, and a lone surrogate has no UTF-8)
        return False
    s: cython.p_const_char = PyUnicode_AsUTF8AndSize(text, cython.address(size))
    return _read_at(s, size)


@cython.cfunc
@cython.exceptval(check=False)
def _read_at(s: cython.p_const_char, size: cython.Py_ssize_t) -> cython.bint:
    """The deck into ``_deck``, if the ``size`` bytes at ``s`` are a canonical deck (52
    distinct cards, single spaces); anything else is left to the engine, which knows what to say."""
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
    """Play ``_deck``; the number of piles left, their sizes in ``_sizes``, and with
    ``traced`` the trace's ``play`` in ``_play_text`` and ``_written``."""
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
    found: cython.bint
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
                memcpy(text + m, cython.address(_STEP[(source - j) >> 1][source]), 2)
                m += 2
            while True:
                u = tops[j - 3]
                if _MASK[card] & _MASK[u]:
                    if traced:
                        memcpy(text + m, cython.address(_STEP[1][j]), 2)
                        m += 2
                    j -= 3
                    t = u
                else:
                    u = tops[j - 1]
                    if not (_MASK[card] & _MASK[u]):
                        break
                    if traced:
                        memcpy(text + m, cython.address(_STEP[0][j]), 2)
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
                found = False
                i = source
                while i < n:
                    card = tops[i]
                    t = tops[i - 3]
                    if _MASK[card] & _MASK[t]:
                        j = i - 3
                        found = True
                        break
                    t = tops[i - 1]
                    if _MASK[card] & _MASK[t]:
                        j = i - 1
                        found = True
                        break
                    i += 1
                if not found:
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
def _ints(values: cython.p_int, count: cython.int) -> list:
    result: list = PyList_New(count)
    j: cython.int
    for j in range(count):
        item = PyLong_FromLong(values[j])
        Py_INCREF(item)
        PyList_SET_ITEM(result, j, item)
    return result


@cython.cfunc
@cython.exceptval(-1)
def _put_line(into: Out, piles: cython.int) -> cython.int:
    """``N piles remaining: a b c`` (``1 pile remaining: 52``), as :func:`.engine.line_of`."""
    j: cython.int
    if piles == 1:
        put(into, b"1 pile remaining: 52", 20)
        return 0
    put_int(into, piles)
    put(into, b" piles remaining:", 17)
    for j in range(piles):
        put(into, b" ", 1)
        put_int(into, _sizes[j])
    return 0


# A case's line or trace, written and taken with no Python code in between.
_scratch = cython.declare(Out, Out())


@cython.cfunc
def _judge_line(piles: cython.int) -> str:
    _scratch.size = 0
    _put_line(_scratch, piles)
    return _scratch.take_text()


# Each pile size (1 to 52) as orjson writes it in a list, with the comma after it: four
# bytes a number (copied as one word), of which ``_NUMBER_SIZE`` count.
_NUMBER = cython.declare(cython.char[4][53])  # (C's char[53][4])
_NUMBER_SIZE = cython.declare(cython.int[53])


@cython.cfunc
def _setup_numbers() -> cython.void:
    v: cython.int
    for v in range(53):
        if v < 10:
            _NUMBER[v][0], _NUMBER[v][1], _NUMBER_SIZE[v] = 48 + v, 44, 2
        else:
            _NUMBER[v][0], _NUMBER[v][1], _NUMBER[v][2], _NUMBER_SIZE[v] = 48 + v // 10, 48 + v % 10, 44, 3


_setup_numbers()


@cython.cfunc
@cython.exceptval(-1)
def _put_sizes(into: Out, count: cython.int) -> cython.int:
    """``[a,b,c]`` of ``_sizes``, as orjson writes a list of integers (each at most 52)."""
    b: cython.p_char = reserve(into, 3 * count + 2)
    at: cython.Py_ssize_t = 1
    j: cython.int
    b[0] = 91  # [
    for j in range(count):
        memcpy(b + at, _NUMBER[_sizes[j]], 4)
        at += _NUMBER_SIZE[_sizes[j]]
    if count:
        at -= 1  # the last comma
    b[at] = 93  # ]
    into.size += at + 1
    return 0


@cython.cfunc
@cython.exceptval(-1)
def _put_trace(into: Out) -> cython.int:
    """The trace of the game just played, as ``orjson.dumps`` writes it."""
    put(into, b'{"version":2,"play":"', 21)
    put(into, _play_text, _written)
    return put(into, b'"}', 2)


def play_packed(text: str) -> object:
    """:func:`play` with the trace as ``orjson.dumps`` writes it (the engine's ``pack_trace``)."""
    if not _read(text):
        return None
    piles: cython.int = _play(True)
    _scratch.size = 0
    _put_trace(_scratch)
    trace: bytes = _scratch.take()
    return (_ints(_sizes, piles), _judge_line(piles), trace)


def play(text: str, traced: cython.bint) -> object:
    """Play a canonical deck: ``None`` when ``text`` is not one, else ``(sizes, judge
    line, trace)``, the trace ``None`` unless ``traced``."""
    if not _read(text):
        return None
    piles: cython.int = _play(traced)
    record: object = None
    if traced:
        record = {"version": 2, "play": PyUnicode_DecodeASCII(_play_text, _written, cython.NULL)}
    return (_ints(_sizes, piles), _judge_line(piles), record)


def solve_batch(texts: list, first: cython.longlong, traced: cython.bint, one: object) -> tuple:
    """:meth:`Engine.solve_batch <worker.engines.engine.Engine.solve_batch>` in C; ``one`` solves what it leaves."""
    return batch(_write_batch, texts, first, traced, one)


@cython.cfunc
@cython.exceptval(-1)
def _write_batch(texts: list, index: cython.longlong, traced: cython.bint, one: object, lines: Out,
                 records: Out) -> cython.int:
    piles: cython.int
    text: str
    for text in texts:
        if not _read(text):
            records.fallback(lines, one(index, text, traced))
            index += 1
            continue
        piles = _play(traced)
        _put_line(lines, piles)
        put(lines, b"\n", 1)
        if traced:
            records.head(index, b"win" if piles == 1 else b"loss", piles)
            _put_sizes(records, piles)
            put(records, b',"trace":', 9)
            _put_trace(records)
            put(records, b"}\n", 2)
        index += 1
    return 0


def solve_chunk(inputs: bytes, first: cython.longlong, traced: cython.bint, deadline: object,
                one: object) -> tuple:
    """:meth:`Engine.solve_chunk <worker.engines.engine.Engine.solve_chunk>` in C (:func:`worker.engines.out.chunk`)."""
    return chunk(_chunk_case, inputs, first, traced, deadline, one)


@cython.cfunc
@cython.exceptval(-1)
def _chunk_case(s: cython.p_const_char, size: cython.Py_ssize_t, index: cython.longlong, traced: cython.bint,
                lines: Out, traces: Out, number: cython.p_int, extra: cython.p_int) -> cython.int:
    """One deck of :func:`solve_chunk`: its line, trace and piles; its outcome's code (0: not canonical)."""
    if not _read_at(s, size):
        return 0
    piles: cython.int = _play(traced)
    _put_line(lines, piles)
    if traced:
        _put_trace(traces)
    number[0], extra[0] = piles, 0
    return 1 if piles == 1 else 2


# --------------------------------------------------------------------- reading a judge file

#: The longest line, and the most decks in one stretch of lines (see :func:`read`), that
#: the native reader takes; beyond them :func:`.read.read_decks` reads on.
_LONGEST = cython.declare(cython.Py_ssize_t, 1024)
_MOST = cython.declare(cython.int, 8)
# The texts of a stretch's decks, one after another, each ending in a space (156 bytes), and
# room for one more line: here, or, for :func:`read_inputs`, in its block past what it holds.
_STRETCH = cython.declare(cython.int, 9 * 156)
_stretch = cython.declare(cython.char[1404])
_where = cython.declare(cython.longlong[2][8])  # the line and column of each deck's first card


@cython.cfunc
@cython.exceptval(check=False)
def _plain_line(s: cython.p_const_char, size: cython.Py_ssize_t, seen: cython.longlong,
                deck: cython.p_longlong, copy: cython.p_char) -> cython.int:
    """How many cards the ``size`` bytes at ``s`` hold, when they are written plainly (cards
    between single spaces, nothing before the first or after the last), none of them in ``seen``
    (a mask of cards) nor twice, and no more than a deck, with ``seen`` and them in ``deck``; 0
    for any other line. The line is copied to ``copy`` on the way (whatever it holds: at most
    155 bytes)."""
    if size > 155 or size % 3 != 2:
        return 0
    cards: cython.int = cython.cast(cython.int, size + 1) // 3
    k: cython.int
    card: cython.int
    bad: cython.int = 0
    mask: cython.longlong = seen
    twice: cython.longlong = 0
    bit: cython.longlong
    for k in range(cards):
        card = _RANK4[cython.cast(cython.uchar, s[3 * k])] | _SUIT[cython.cast(cython.uchar, s[3 * k + 1])]
        bad |= card  # (negative for a byte that is no rank or suit)
        bit = cython.cast(cython.longlong, 1) << (card & 63)
        twice |= mask & bit
        mask |= bit
        copy[3 * k] = s[3 * k]
        copy[3 * k + 1] = s[3 * k + 1]
        copy[3 * k + 2] = 32
        if k < cards - 1:
            bad |= -(s[3 * k + 2] != 32)
    if bad < 0 or twice:
        return 0
    deck[0] = mask
    return cards


def read(data: bytes, at: cython.Py_ssize_t, final: cython.bint, line: cython.longlong, count: cython.longlong,
         per_line: cython.int, flow: cython.bint) -> tuple:
    """The native reader of :func:`~worker.engines.handover.read_cases`.

    It takes the file a *stretch* of whole lines at a time: lines from the start of a deck
    to the first line end that is also the end of a deck (in judge files, every deck's
    last line). A stretch of cards only, no deck holding a card twice, gives its decks;
    the first that is not is left whole to the Python readers (the terminator, an
    error, a deck ending in mid-line for too long, a line longer than any judge file's).
    Each line must hold the cards the file's layout says (``per_line`` a line, 0 for a file
    without a layout; ``flow``: see :mod:`worker.engines.layout`), else the stretch is left
    to the Python readers, from ``at`` in ``data`` (where a deck starts a line).
    """
    cases: list = []
    return (cases, *_read_from(data, at, final, line, count, cases, None, per_line, flow))


#: The buffer :func:`read_inputs` writes into, for ``handover.InputBlocks`` to make one (out.py, which
#: declares it, imports base, which imports handover: handover cannot import it).
InputBlock = Block


def read_inputs(data: bytes, at: cython.Py_ssize_t, final: cython.bint, line: cython.longlong,
                count: cython.longlong, block: Block, per_line: cython.int, flow: cython.bint) -> tuple:
    """The native reader of :class:`~worker.engines.handover.InputBlocks`: :func:`read`'s, from ``at``
    in ``data``, writing each deck's canonical text into ``block`` until it is full."""
    return _read_from(data, at, final, line, count, None, block, per_line, flow)


@cython.cfunc
def _give(texts: cython.p_char, decks: cython.int, count: cython.longlong, cases: Optional[list],
          block: Optional[Block]) -> cython.longlong:
    """A stretch's ``decks`` decks, read into ``texts``: as :class:`Case` values into ``cases``, or
    into ``block``; the count of decks after them. (Once a stretch: a call costs the loop nothing.)"""
    k: cython.int
    for k in range(decks):
        count += 1
        if block is None:
            cases.append(new_case(count, PyUnicode_DecodeASCII(texts + 156 * k, 155, cython.NULL),
                                  _where[k][0], _where[k][1]))
        else:
            texts[156 * k + 155] = 10
            took(block, block.size + 156 * (k + 1))
    if block is not None:
        block.size += 156 * decks
    return count


@cython.cfunc
def _read_from(data: bytes, at: cython.Py_ssize_t, final: cython.bint, line: cython.longlong,
               count: cython.longlong, cases: Optional[list], block: Optional[Block], per_line: cython.int,
               flow: cython.bint) -> tuple:
    """Both readers: the decks of ``data`` from ``at`` as :class:`Case` values into ``cases``, or
    into ``block`` (a reader has one of them), each line holding the cards the file's layout says
    (``per_line``, 0 for a file without one, and ``flow``: see :mod:`worker.engines.layout`); then
    where the next stretch starts, its line, the count of decks and whether the reading stopped at
    a stretch left to Python.

    One loop, as the compiler keeps its state in registers: a line's steps (a plain line whole,
    any other card by card, the layout's check) share the deck being read, and split into calls
    they would pass it back and forth by address at every line."""
    s: cython.p_const_char = PyBytes_AS_STRING(data)
    size: cython.Py_ssize_t = PyBytes_GET_SIZE(data)
    start: cython.Py_ssize_t = at  # where the stretch starts
    start_line: cython.longlong = line
    stop: cython.Py_ssize_t
    j: cython.Py_ssize_t
    newline: cython.p_const_char
    rank: cython.int
    suit: cython.int
    decks: cython.int = 0  # complete decks in the stretch
    cards: cython.int = 0  # cards of the deck being read
    seen: cython.longlong = 0  # the cards of the deck being read, a bit each
    with_line: cython.longlong = 0
    plain: cython.int
    texts: cython.p_char = _stretch  # the stretch's texts: deck k's at 156 * k
    at_card: cython.p_char
    at_line: cython.int  # the stretch's cards before the line
    while at < size:
        newline = cython.cast(cython.p_const_char, memchr(s + at, 10, size - at))
        stop = size if newline == cython.NULL else newline - s
        if stop - at > _LONGEST:
            return start, start_line, count, True
        if newline == cython.NULL and not final:
            break  # the line goes on in the next block
        at_line = decks * 52 + cards
        if decks == 0 and cards == 0 and block is not None:
            texts = reserve(block, _STRETCH)
        at_card = texts + 156 * decks + 3 * cards
        plain = _plain_line(s + at, stop - at, seen, cython.address(with_line), at_card)
        j = at
        if plain and cards + plain <= 52:  # a plain line inside a deck, as judge files write them: taken whole
            j = stop
            if cards == 0:
                if decks == _MOST:
                    return start, start_line, count, True
                _where[decks][0], _where[decks][1] = line, 1
            cards += plain
            seen = with_line
            if cards == 52:
                cards, seen = 0, 0
                decks += 1
        while j < stop:  # (any other line card by card)
            while j < stop and is_space(s[j]):
                j += 1
            if j == stop:
                break
            if stop - j < 2 or (stop - j > 2 and not is_space(s[j + 2])):
                return start, start_line, count, True
            rank = _RANK4[cython.cast(cython.uchar, s[j])]
            suit = _SUIT[cython.cast(cython.uchar, s[j + 1])]
            if rank < 0 or suit < 0 or seen >> (rank + suit) & 1:
                return start, start_line, count, True
            if cards == 0:
                if decks == _MOST:
                    return start, start_line, count, True
                _where[decks][0], _where[decks][1] = line, j - at + 1
            seen |= cython.cast(cython.longlong, 1) << (rank + suit)
            at_card = texts + 156 * decks + 3 * cards
            at_card[0], at_card[1], at_card[2] = s[j], s[j + 1], 32
            cards += 1
            if cards == 52:
                cards, seen = 0, 0
                decks += 1
            j += 2
        if per_line and not fits_layout(per_line, flow, at_line, decks * 52 + cards - at_line):
            return start, start_line, count, True
        line += 1
        at = stop + 1
        if cards == 0:  # the stretch ends here
            count = _give(texts, decks, count, cases, block)
            decks = 0
            start, start_line = min(at, size), line
            if block is not None and block.full:
                break
    if final and (decks or cards):  # a deck cut short by the end of the file
        return start, start_line, count, True
    return start, start_line, count, False
