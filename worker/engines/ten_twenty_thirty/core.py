"""10-20-30's native core (compiled only): :mod:`.play`'s rules over C arrays, draws found as there
and played again exactly, writing the judge line and :mod:`.trace`'s traces. ``test_native.py``
holds it to :mod:`.play`.
"""

import cython
from cython.cimports.libc.string import memcmp, memcpy, memset
from cython.cimports.worker.engines.out import Out, core, is_space, put, put_int, reserve


# The outcomes (:mod:`.rules`'), and a game whose history outgrows the buffers (the packed form
# counts it in 16 bits), which the engine plays by :mod:`.play` (``_case`` leaves it).
_WIN = cython.declare(cython.int, 0)
_LOSS = cython.declare(cython.int, 1)
_DRAW = cython.declare(cython.int, 2)
_LONG = cython.declare(cython.int, 3)
_CAP = cython.declare(cython.int, 65535)

# The game's state in static buffers: every call holds the GIL throughout.
_hist = cython.declare(cython.uchar[65536])  # every card in the order it went under the deck
_after = cython.declare(cython.uchar[65536])  # pick-ups after each deal (traced)
_marks = cython.declare(cython.uchar[21846])  # per pick-up: 4 * cards left in the deck + combination
_piles = cython.declare(cython.uchar[53][7])  # (in pure mode T[53][7] is C's T[7][53])
_sizes = cython.declare(cython.int[7])
_snap_piles = cython.declare(cython.uchar[53][7])
_snap_sizes = cython.declare(cython.int[7])
_snap_deck = cython.declare(cython.uchar[52])
_gone = cython.declare(cython.uint[14])  # the deal and the pile of each pile that emptied
# A draw played again exactly (:func:`_exact`): the state after each deal, by deal, as its
# length and then the piles, each ended by 10, and the deck (at most 1 + 52 + 7 bytes);
# and a hash table of deals by state, of ``_mask + 1`` slots, 0 for none.
_states = cython.declare(cython.uchar[64][65536])  # (C's uchar[65536][64])
_table = cython.declare(cython.int[131072])
_mask = cython.declare(cython.int, 0)
_filled = cython.declare(cython.int, 0)
_seen = cython.declare(cython.int, 0)  # a draw's first sighting of its final state

#: A residue's character in traces (10 separates the end piles in the packed form).
_CHAR = cython.declare(cython.p_const_char, b"T123456789|")
_DIGIT36 = cython.declare(cython.p_const_char, b"0123456789abcdefghijklmnopqrstuvwxyz")
_PICK_TEXT = cython.declare(bytes, b"abcd" * 64)  # a pick-up's combination, by its mark
_PICKS = cython.declare(cython.p_const_char, _PICK_TEXT)


@cython.cfunc
@cython.exceptval(check=False)
def _read_at(s: cython.p_const_char, size: cython.Py_ssize_t) -> cython.bint:
    """The deck into the history, if the ``size`` bytes at ``s`` are a canonical deck (52 values
    1..10, single spaces)."""
    at: cython.Py_ssize_t = 0
    j: cython.int
    ch: cython.char
    for j in range(52):
        if at >= size:
            return False
        ch = s[at]
        if ch == 49 and at + 1 < size and s[at + 1] == 48:  # "10"
            _hist[j] = 0
            at += 2
        elif 49 <= ch <= 57:
            _hist[j] = ch - 48
            at += 1
        else:
            return False
        if j < 51:
            if at >= size or s[at] != 32:
                return False
            at += 1
    return at == size


@cython.cfunc
@cython.exceptval(check=False)
def _same_state(rem: cython.int, start: cython.int) -> cython.bint:
    i: cython.int
    for i in range(7):
        if _sizes[i] != _snap_sizes[i] or memcmp(_piles[i], _snap_piles[i], _sizes[i]) != 0:
            return False
    return memcmp(cython.address(_hist[start]), _snap_deck, rem) == 0


@cython.cfunc
@cython.exceptval(check=False)
def _sighting(pos: cython.int, end: cython.int) -> cython.int:
    """The deal after which the state after deal ``pos`` was first seen, or 0 (it is then noted):
    :class:`.rules.Game`'s ``seen``, by hash instead of a dict."""
    global _filled
    row: cython.p_uchar = _states[pos]
    size: cython.int = 1
    i: cython.int
    for i in range(7):
        memcpy(row + size, _piles[i], _sizes[i])
        size += _sizes[i] + 1
        row[size - 1] = 10
    memcpy(row + size, cython.address(_hist[pos]), end - pos)
    size += end - pos
    row[0] = size
    h: cython.uint = 2166136261
    for i in range(1, size):
        h = (h ^ row[i]) * 16777619
    h &= _mask
    while _table[h]:
        if memcmp(_states[_table[h]], row, size) == 0:
            return _table[h]
        h = (h + 1) & _mask
    _table[h] = pos
    _filled += 1
    return 0


@cython.cfunc
@cython.exceptval(check=False)
def _exact(traced: cython.bint, bound: cython.int, out: cython.p_int) -> cython.int:
    """Play again a deck :func:`_play` found a cycle in after ``bound`` deals, keeping every state
    from deal 7 on as the rules do: a draw, ``_seen`` its first sighting, ``out`` as :func:`_play`'s."""
    global _mask, _filled
    size: cython.int = 1024
    i: cython.int
    d: cython.int
    # The first repeated state comes no later than the cycle found: at most ``bound`` states.
    while size < 2 * bound + 16 and size < 131072:
        size += size
    memset(_table, 0, size * cython.sizeof(cython.int))
    _mask, _filled = size - 1, 0
    for i in range(7):  # the deal starts the piles: no pick-up before deal 15
        _piles[i][0] = _hist[i]
        _piles[i][1] = _hist[7 + i]
    for d in range(7, 15):
        for i in range(7):
            _sizes[i] = 2 if 7 + i < d else 1
        _sighting(d, 52)  # (new: the deck differs in length)
    return _play(traced, True, out)


@cython.cfunc
@cython.exceptval(check=False)
def _play(traced: cython.bint, exact: cython.bint, out: cython.p_int) -> cython.int:
    """Play the deck in the history: the outcome; out[0..3] = N, history length, pick-ups, gone
    entries. With ``exact`` (:func:`_exact`) a draw is found where the rules find it, else only that
    there is one (out[0] = deals played by then). One function, not named steps: the C compiler keeps
    its state in registers across a deal, which calls sharing it through pointers would not."""
    global _seen
    pos: cython.int = 14  # cards dealt
    end: cython.int = 52  # cards in the history
    picks: cython.int = 0
    ngone: cython.int = 0
    act = cython.declare(cython.int[7])
    nact: cython.int = 7
    k: cython.int = 0
    i: cython.int
    j: cython.int
    n: cython.int
    c: cython.int
    a: cython.int
    y: cython.int
    z: cython.int
    combo: cython.int
    first: cython.int = 0
    lam: cython.int = 0
    power: cython.int = 1
    snap: cython.bint = False
    srem: cython.int = 0
    rem: cython.int
    picked: cython.bint
    p: cython.p_uchar
    for i in range(7):
        _piles[i][0] = _hist[i]
        _piles[i][1] = _hist[7 + i]
        _sizes[i] = 2
        act[i] = i
        if traced:
            _after[i] = 0
            _after[7 + i] = 0
    while True:
        if pos == end:
            out[0], out[1], out[2], out[3] = end, end, picks, ngone
            return _LOSS
        c = _hist[pos]
        pos += 1
        i = act[k]
        p = _piles[i]
        n = _sizes[i]
        p[n] = c
        n += 1
        if traced:
            _after[pos - 1] = 0
        picked = False
        while n >= 3:
            a, y, z = p[0], p[n - 2], p[n - 1]
            if end + 3 > _CAP:
                return _LONG
            if (a + p[1] + z) % 10 == 0:  # first two + last
                combo = 0
                _hist[end], _hist[end + 1], _hist[end + 2] = a, p[1], z
                for j in range(n - 3):
                    p[j] = p[j + 2]
            elif (a + y + z) % 10 == 0:  # first + last two
                combo = 1
                _hist[end], _hist[end + 1], _hist[end + 2] = a, y, z
                for j in range(n - 3):
                    p[j] = p[j + 1]
            elif (p[n - 3] + y + z) % 10 == 0:  # last three
                combo = 2
                _hist[end], _hist[end + 1], _hist[end + 2] = p[n - 3], y, z
            else:
                break
            if traced:
                _marks[picks] = 4 * (end - pos) + combo
                _after[pos - 1] += 1
            picks += 1
            end += 3
            n -= 3
            picked = True
        _sizes[i] = n
        if n == 0:
            _gone[ngone], _gone[ngone + 1] = pos, i
            ngone += 2
            nact -= 1
            for j in range(k, nact):
                act[j] = act[j + 1]
            if nact == 0:
                out[0], out[1], out[2], out[3] = end - 52, end, picks, ngone
                return _WIN
            if k == nact:
                k = 0
            first = act[0]
            lam, power, snap = 0, 1, False  # a cycle keeps every pile: start afresh
        if exact and pos < end:
            if 2 * _filled > _mask:  # more states than the cycle found allows: leave it to rules.py
                return _LONG
            _seen = _sighting(pos, end)
            if _seen:
                out[0], out[1], out[2], out[3] = pos, end, picks, ngone
                return _DRAW
        if n == 0:
            continue
        if picked and i == first and not exact:
            # As in play.py: a pick-up on the leftmost pile recurs in every cycle.
            rem = end - pos
            if snap and rem == srem and _same_state(rem, pos):
                out[0] = pos
                return _DRAW
            lam += 1
            if lam == power:
                power += power
                lam = 0
                snap = True
                srem = rem
                memcpy(_snap_piles, _piles, 7 * 53)
                memcpy(_snap_sizes, _sizes, 7 * cython.sizeof(cython.int))
                memcpy(_snap_deck, cython.address(_hist[pos]), rem)
        k += 1
        if k == nact:
            k = 0


@cython.cfunc
@cython.exceptval(-1)
def _put_packed(into: Out, dealt: cython.int, size: cython.int, picks: cython.int,
                ngone: cython.int) -> cython.int:
    """:func:`.trace.pack`'s bytes of a win or a loss: the header (``<BIHBB``), the history,
    the marks, the piles gone (32-bit, this machine's order, as ``array("I")``) and the end piles."""
    b: cython.p_uchar = cython.cast(cython.p_uchar, reserve(into, 9))
    b[0] = 1
    b[1], b[2], b[3], b[4] = dealt & 255, (dealt >> 8) & 255, (dealt >> 16) & 255, dealt >> 24
    b[5], b[6] = size & 255, size >> 8
    b[7], b[8] = size - dealt, ngone
    into.size += 9
    put(into, cython.cast(cython.p_const_char, _hist), size)
    put(into, cython.cast(cython.p_const_char, _marks), picks)
    put(into, cython.cast(cython.p_const_char, _gone), 4 * ngone)
    i: cython.int
    for i in range(7):
        put(into, b"\n", 1)
        put(into, cython.cast(cython.p_const_char, _piles[i]), _sizes[i])
    return 0


@cython.cfunc
@cython.exceptval(-1)
def _mapped(into: Out, table: cython.p_const_char, codes: cython.p_const_uchar,
            count: cython.int) -> cython.int:
    """``count`` characters, ``table``'s of each of ``codes``."""
    b: cython.p_char = reserve(into, count)
    j: cython.int
    for j in range(count):
        b[j] = table[codes[j]]
    into.size += count
    return 0


@cython.cfunc
@cython.exceptval(-1)
def _trace_json(into: Out, seen: cython.int, dealt: cython.int, size: cython.int, picks: cython.int) -> cython.int:
    """The version 2 trace of the game just played (:func:`.trace.from_marks`'s, or for a draw
    first seen after deal ``seen`` :func:`.trace.from_game`'s) as ``orjson.dumps`` writes it."""
    i: cython.int
    put(into, b'{"version":2,"cards":"', 22)
    _mapped(into, _CHAR, _hist, size)
    put(into, b'","after":"', 11)
    _mapped(into, _DIGIT36, _after, dealt)
    put(into, b'","picks":"', 11)
    _mapped(into, _PICKS, _marks, picks)
    put(into, b'","piles":[', 11)
    for i in range(7):
        put(into, b',"' if i else b'"', 2 if i else 1)
        _mapped(into, _CHAR, _piles[i], _sizes[i])
        put(into, b'"', 1)
    put(into, b'],"deck":"', 10)
    _mapped(into, _CHAR, _hist + dealt, size - dealt)
    if seen:
        put(into, b'","seen":', 9)
        put_int(into, seen)
        return put(into, b"}", 1)
    return put(into, b'"}', 2)


#: A judge line's start, by outcome.
_LINES = cython.declare(tuple, (b"Win : ", b"Loss: ", b"Draw: "))


@cython.cfunc
@cython.exceptval(-1)
def _case(s: cython.p_const_char, size: cython.Py_ssize_t, index: cython.longlong, traced: cython.bint,
          json: cython.bint, lines: Out, traces: Out, number: cython.p_int,
          extra: cython.p_int) -> cython.int:
    """One deck (see ``CaseSolver`` in out.pxd): its outcome + 1 (0: not canonical, or too long);
    ``number`` N, ``extra`` a draw's first sighting. A draw's trace is stored as JSON too."""
    out: cython.int[4] = [0, 0, 0, 0]
    if not _read_at(s, size):
        return 0
    outcome: cython.int = _play(traced, False, out)
    if outcome == _DRAW:  # found by a cycle: now where the rules find it
        outcome = _exact(traced, out[0], out)
    if outcome == _LONG:
        return 0
    seen: cython.int = _seen if outcome == _DRAW else 0
    put(lines, _LINES[outcome], 6)
    put_int(lines, out[0])
    if traced and (json or outcome == _DRAW):
        _trace_json(traces, seen, out[0], out[1], out[2])
    elif traced:
        _put_packed(traces, out[0], out[1], out[2], out[3])
    number[0], extra[0] = out[0], seen
    return outcome + 1


@cython.cfunc
@cython.exceptval(-1)
def _detail(records: Out, number: cython.int, seen: cython.int) -> cython.int:
    """A record's detail: ``[seen]`` for a draw, else ``[]``."""
    put(records, b"[", 1)
    if seen:
        put_int(records, seen)
    return put(records, b"]", 1)


# --------------------------------------------------------------------- reading a judge file

# A deck's cards add up to one word (as in :mod:`.read`): a base-64 digit a card value, the count
# of its cards, so that one comparison with ``_STANDARD`` checks all ten counts.
_STANDARD = cython.declare(cython.ulonglong, sum(4 * 64 ** (v - 1) for v in range(1, 10)) + 16 * 64**9)
# A plain line (:func:`_plain_line`) is read a byte at a time with no branch: by byte, its
# weight, the digit of its value ("1" counts a 1; the "0" after it turns that into a 10), in the
# low 60 bits, and its class (0 another byte, 1 a space, 2 "0", 3 "1", 4 "2".."9") in the top 3;
# and by two classes in a row (8 * the first + the second), whether they may not follow each other.
_BYTE = cython.declare(cython.ulonglong[256])
_BYTE[:] = [{32: 1 << 61, 48: (2 << 61) + (1 << 54) - 1, 49: (3 << 61) + 1}.get(
    c, (4 << 61) + (1 << 6 * (c - 49)) if 50 <= c <= 57 else 0) for c in range(256)]
# A card ("1", "2".."9", or "1" then "0") after a space, and a space after a card.
_BAD = cython.declare(cython.uchar[40])
_BAD[:] = [b < 5 and not (a == 1 and b >= 3 or a >= 2 and b == 1 or a == 3 and b == 2)
           for a, b in (divmod(i, 8) for i in range(40))]
_WEIGHTS = cython.declare(cython.ulonglong, (1 << 60) - 1)

@cython.cfunc
@cython.exceptval(check=False)
def _plain_line(s: cython.p_const_char, size: cython.Py_ssize_t, held: cython.ulonglong, after: cython.p_ulonglong,
                copy: cython.p_char) -> cython.int:
    """How many cards the line holds when written plainly (values 1..10 between single spaces)
    and no more than a deck, ``after`` their weights with ``held``; 0 for any other line. The
    line is copied to ``copy`` on the way (whatever it holds: at most 155 bytes)."""
    previous: cython.uint = 1  # (the line's start counts as a space)
    bad: cython.uint = 0
    total: cython.ulonglong = 0
    entry: cython.ulonglong
    i: cython.Py_ssize_t
    cards: cython.int = 0
    if size > 155:  # (more than 52 cards: and then no digit of the weights could overflow)
        return 0
    for i in range(size):
        copy[i] = s[i]
        entry = _BYTE[cython.cast(cython.uchar, s[i])]
        total += entry
        bad |= _BAD[8 * previous + (entry >> 61)]
        previous = entry >> 61
    if bad or previous == 1:  # (a line ending in a space, or empty)
        return 0
    total &= _WEIGHTS
    after[0] = held + total
    while total:
        cards += total & 63
        total >>= 6
    return cards


@cython.cfunc
@cython.exceptval(check=False)
def _one_card(s: cython.p_const_char, size: cython.Py_ssize_t, held: cython.p_ulonglong,
              copy: cython.p_char) -> cython.int:
    """A card of a line written otherwise (1..10, no ``05``), its weight added to ``held``: its bytes, or 0."""
    width: cython.int
    if 49 <= s[0] <= 57 and (size == 1 or is_space(s[1])):
        width = 1
    elif s[0] == 49 and size > 1 and s[1] == 48 and (size == 2 or is_space(s[2])):
        width = 2
    else:
        return 0
    held[0] += cython.cast(cython.ulonglong, 1) << (6 * (9 if width == 2 else s[0] - 49))
    copy[0] = s[0]
    copy[1] = 48  # (a space overwrites it after a 1..9)
    copy[width] = 32
    return width


# The native core (see out.Core): a standard deck's weights add up to _STANDARD.
solve, solve_batch, solve_chunk, read, read_inputs, InputBlock = core(
    _case, _detail, (b"win", b"loss", b"draw"), cython.NULL, _plain_line, _one_card, _STANDARD).exports()
