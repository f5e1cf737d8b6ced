"""Mahjong's native core (compiled only): :mod:`.solve`'s four look-ups in the same table, a hand read
straight into its group keys, the judge line and :func:`.trace.proofs_of`'s proofs written in C.
``test_native.py`` holds it to :mod:`.solve`.
"""

import cython
from cython.cimports.cpython.bytes import PyBytes_AS_STRING, PyBytes_GET_SIZE
from cython.cimports.cpython.unicode import PyUnicode_DecodeASCII
from cython.cimports.libc.string import memcmp, memcpy, memset
from cython.cimports.worker.engines.out import (Block, Core, Out, core, is_space, line_end, load64, lowest,
                                                new_case, put, put_int, reserve, took)

from worker.engines.mahjong.tiles import RARE, TILES, X

_X = cython.declare(cython.int, X)
_RARE = cython.declare(cython.int, RARE)
#: The longest line the native reader takes; a longer one goes to :func:`.read.read_hands`.
_LONGEST = cython.declare(cython.Py_ssize_t, 256)

# The table (kept alive by ``_payload``): by value index its class code and its mask of ranks (or of
# honour kinds); the rare suit keys, sorted, and their value indexes.
_payload = cython.declare(object, None)
_suits = cython.declare(cython.p_const_uchar, cython.NULL)
_honours = cython.declare(cython.p_const_uchar, cython.NULL)
_suit_code = cython.declare(cython.int[1024])
_suit_mask = cython.declare(cython.int[1024])
_byte_code = cython.declare(cython.int[256])
_honour_code = cython.declare(cython.int[256])
_honour_mask = cython.declare(cython.int[256])
_rare_key = cython.declare(cython.longlong[1024])
_rare_value = cython.declare(cython.int[1024])
_rare_count = cython.declare(cython.int, 0)

#: By kind (0..33): the tile's name as bytes in eight (the line), its length, and as a little-endian
#: word with the mask of its bytes (a token is compared with it whole).
_NAME_TEXT = cython.declare(bytes, b"".join(name.encode().ljust(8, b"\0") for name in TILES))
_name_bytes = cython.declare(cython.p_const_char, _NAME_TEXT)
_name_size = cython.declare(cython.int[34])
_name_size[:] = [len(name) for name in TILES]
_name_word = cython.declare(cython.ulonglong[34])
_name_word[:] = [int.from_bytes(name.encode(), "little") for name in TILES]
_name_mask = cython.declare(cython.ulonglong[34])
_name_mask[:] = [(1 << 8 * len(name)) - 1 for name in TILES]
_POW5 = cython.declare(cython.int[10])
_POW5[:] = [5**j for j in range(10)]
_counts = cython.declare(cython.int[34])
_present = cython.declare(cython.ulonglong, 0)  # the kinds a hand read holds, a bit each
_waits = cython.declare(cython.int[34])
_text = cython.declare(cython.char[128])


def _load() -> cython.void:
    """Read the table (the first hand solved does it, as :mod:`.solve` does)."""
    global _payload, _suits, _honours, _rare_count
    from worker.engines.mahjong.solve import read_table

    payload, at, suit_values, honour_values, rare = read_table()
    if len(suit_values) > 1024 or len(honour_values) > 256 or len(rare) > 1024:
        raise ValueError("the mahjong table outgrew the native core's arrays")
    j: cython.int
    for j, value in enumerate(suit_values):
        _suit_code[j], _suit_mask[j] = value >> 9, value & 511
    for j in range(256):
        # Byte 255 is a rare key: its code takes the sum out of the ready cases.
        _byte_code[j] = _RARE if j == 255 else _suit_code[j]
    for j, value in enumerate(honour_values):
        _honour_code[j], _honour_mask[j] = value >> 9, value & 511
    for j, entry in enumerate(sorted(rare)):
        _rare_key[j], _rare_value[j] = entry >> 16, entry & 0xFFFF
    _rare_count = len(rare)
    _payload = payload
    _suits = cython.cast(cython.p_const_uchar, PyBytes_AS_STRING(_payload)) + cython.cast(cython.Py_ssize_t, at)
    _honours = _suits + 5**9


# By a tile's first two bytes (:func:`_key`): its kind + 1, 0 where no tile starts so.
_tile_of = cython.declare(cython.uchar[1024])


@cython.cfunc
@cython.inline
@cython.exceptval(check=False)
def _key(first: cython.int, second: cython.int) -> cython.int:
    return (first & 31) << 5 | (second & 31)


for _j, _name in enumerate(TILES):
    if _tile_of[_key(ord(_name[0]), ord(_name[1]))]:
        raise ValueError(f"{_name} and another tile start alike for the native reader")
    _tile_of[_key(ord(_name[0]), ord(_name[1]))] = _j + 1


@cython.cfunc
@cython.inline
@cython.exceptval(check=False)
def _kind(s: cython.p_const_char, size: cython.Py_ssize_t, readable: cython.Py_ssize_t) -> cython.int:
    """The kind of the token of ``size`` bytes at ``s``, or -1: found by its first two bytes, then
    compared whole, as one word where ``readable`` bytes from ``s`` on allow it."""
    if size < 2 or size > 5:
        return -1
    kind: cython.int = _tile_of[_key(s[0], s[1])] - 1
    if kind < 0 or _name_size[kind] != size:
        return -1
    if readable >= 8:
        if (load64(s) ^ _name_word[kind]) & _name_mask[kind]:
            return -1
    elif memcmp(s, _name_bytes + 8 * kind, size):
        return -1
    return kind


@cython.cfunc
@cython.exceptval(check=False)
def _value(key: cython.longlong, byte: cython.int) -> cython.int:
    """A rare suit key's value index (or ``byte`` when it is not listed, as :mod:`.solve`)."""
    low: cython.int = 0
    high: cython.int = _rare_count - 1
    mid: cython.int
    while low <= high:
        mid = (low + high) // 2
        if _rare_key[mid] == key:
            return _rare_value[mid]
        if _rare_key[mid] < key:
            low = mid + 1
        else:
            high = mid - 1
    return byte


@cython.cfunc
@cython.exceptval(check=False)
def _add(count: cython.int, group: cython.int, mask: cython.int) -> cython.int:
    """The waited kinds of ``mask`` in ``group``, after the ``count`` in ``_waits``."""
    r: cython.int
    for r in range(9):
        if mask >> r & 1:
            _waits[count] = 9 * group + r
            count += 1
    return count


@cython.cfunc
@cython.exceptval(check=False)
def _solve() -> cython.int:
    """The waited kinds of the hand in ``_counts``, into ``_waits``: how many."""
    j: cython.int
    keys = cython.declare(cython.longlong[4])  # by group
    keys[0], keys[1], keys[2], keys[3] = 0, 0, 0, 0
    for j in range(34):  # (the honours, 27..33, are group 3's ranks 0..6)
        keys[j // 9] += _counts[j] * _POW5[j % 9]
    t: cython.int = _suits[keys[0]]
    s: cython.int = _suits[keys[1]]
    w: cython.int = _suits[keys[2]]
    h: cython.int = _honours[keys[3]]
    code: cython.int = _byte_code[t] + _byte_code[s] + _byte_code[w] + _honour_code[h]
    if code >= _RARE:
        t, s, w = _value(keys[0], t), _value(keys[1], s), _value(keys[2], w)
        code = _suit_code[t] + _suit_code[s] + _suit_code[w] + _honour_code[h]
    count: cython.int = 0
    if code == 2 or code == 16:  # the E or X groups' tiles; M groups hold none
        count = _add(count, 0, _suit_mask[t])
        count = _add(count, 1, _suit_mask[s])
        count = _add(count, 2, _suit_mask[w])
        count = _add(count, 3, _honour_mask[h])
    elif code == 17:  # one X and one E: only the X group's tiles (an X honour group cannot mend)
        if _suit_code[t] == _X:
            count = _add(count, 0, _suit_mask[t])
        elif _suit_code[s] == _X:
            count = _add(count, 1, _suit_mask[s])
        elif _suit_code[w] == _X:
            count = _add(count, 2, _suit_mask[w])
    return count


@cython.cfunc
@cython.exceptval(-1)
def _case(s: cython.p_const_char, size: cython.Py_ssize_t, index: cython.longlong, traced: cython.bint,
          json: cython.bint, lines: Out, traces: Out, number: cython.p_int,
          extra: cython.p_int) -> cython.int:
    """One hand (see ``CaseSolver`` in out.pxd): ready 1, not ready 2, 0 not 13 valid tiles between
    single spaces; ``number`` the kinds it waits for (``_waits``)."""
    if not _plain_hand(s, size, size):
        return 0
    if _payload is None:
        _load()
    count: cython.int = _solve()
    _put_line(lines, index, count)
    if traced:
        _put_trace(traces, count)
    number[0], extra[0] = count, 0
    return 1 if count else 2


@cython.cfunc
@cython.exceptval(-1)
def _detail(records: Out, count: cython.int, extra: cython.int) -> cython.int:
    """A record's detail: the names of the waited kinds, as orjson writes a list of them."""
    j: cython.int
    put(records, b"[", 1)
    for j in range(count):
        put(records, b',"' if j else b'"', 2 if j else 1)
        put(records, _name_bytes + 8 * _waits[j], _name_size[_waits[j]])
        put(records, b'"', 1)
    return put(records, b"]", 1)


@cython.cfunc
@cython.exceptval(-1)
def _put_trace(into: Out, count: cython.int) -> cython.int:
    """The trace of the hand just solved as ``orjson.dumps`` writes it (nothing in proofs to escape)."""
    j: cython.int
    put(into, b'{"version":1,"proofs":[', 23)
    if count:  # split the groups as they are: a proof changes only one
        for j in range(4):
            _group_melds[j] = _split(j, -1, j)
    for j in range(count):
        put(into, b',"' if j else b'"', 2 if j else 1)
        _put_proof(into, _waits[j])
        put(into, b'"', 1)
    return put(into, b"]}", 2)


@cython.cfunc
@cython.exceptval(-1)
def _put_line(into: Out, index: cython.longlong, count: cython.int) -> cython.int:
    """``Case k: 1S 4S FA`` or ``Case k: Not ready``, as :func:`.solve.line_of`."""
    j: cython.int
    put(into, b"Case ", 5)
    put_int(into, index)
    if count == 0:
        return put(into, b": Not ready", 11)
    put(into, b":", 1)
    for j in range(count):
        put(into, b" ", 1)
        put(into, _name_bytes + 8 * _waits[j], _name_size[_waits[j]])
    return 0


@cython.cfunc
@cython.exceptval(check=False)
def _plain_hand(s: cython.p_const_char, size: cython.Py_ssize_t, readable: cython.Py_ssize_t) -> cython.bint:
    """Read one line into ``_counts`` and ``_present`` when it is a hand as judge files write it (13
    tiles between single spaces, at most four of a kind; ``readable`` bytes from ``s`` on can be
    read). The spaces are found first, so that the tiles are looked up each on its own, not in turn."""
    global _present
    ends = cython.declare(cython.int[16])  # where each tile ends
    spaces: cython.int = 0
    i: cython.int
    begin: cython.int = 0
    kind: cython.int
    over: cython.int = 0
    if size > 77:  # (13 tiles of at most 5 bytes)
        return False
    for i in range(size):
        ends[spaces & 15] = i
        spaces += s[i] == 32
    if spaces != 12:
        return False
    ends[12] = size
    memset(_counts, 0, cython.sizeof(_counts))
    _present = 0
    for i in range(13):
        kind = _kind(s + begin, ends[i] - begin, readable - begin)
        if kind < 0:
            return False
        _counts[kind] += 1
        over |= _counts[kind] > 4
        _present |= cython.cast(cython.ulonglong, 1) << kind
        begin = ends[i] + 1
    return not over


@cython.cfunc
@cython.exceptval(check=False)
def _hand_line(s: cython.p_const_char, size: cython.Py_ssize_t) -> cython.int:
    """Read any other line into ``_counts``: the column of its first tile when it is a hand (13 tiles
    between any whitespace, at most four of a kind), 0 when blank, -1 else (:mod:`.read` says what)."""
    global _present
    at: cython.Py_ssize_t = 0
    start: cython.Py_ssize_t
    first: cython.int = 0
    tiles: cython.int = 0
    kind: cython.int
    memset(_counts, 0, cython.sizeof(_counts))
    _present = 0
    while True:
        while at < size and is_space(s[at]):
            at += 1
        if at == size:
            break
        start = at
        while at < size and not is_space(s[at]):
            at += 1
        kind = _kind(s + start, at - start, size - start)
        if kind < 0 or _counts[kind] == 4 or tiles == 13:
            return -1
        if not tiles:
            first = start + 1
        _counts[kind] += 1
        _present |= cython.cast(cython.ulonglong, 1) << kind
        tiles += 1
    return first if tiles == 13 or tiles == 0 else -1  # (first is 0 while there is no tile)


@cython.cfunc
@cython.exceptval(check=False)
def _write_hand(into: cython.p_char) -> cython.int:
    """Write the canonical text of the hand read (``_counts`` of the kinds in ``_present``), a space
    after each tile, at ``into`` (with eight bytes of room after it): its length."""
    at: cython.int = 0
    kinds: cython.ulonglong = _present
    kind: cython.int
    c: cython.int
    while kinds:
        kind = lowest(kinds)
        kinds &= kinds - 1
        for c in range(_counts[kind]):
            at = _name_at(into, at, kind)
            into[at] = 32
            at += 1
    return at


@cython.cfunc
def _read_from(game: Core, data: bytes, at: cython.Py_ssize_t, final: cython.bint, line: cython.longlong,
               count: cython.longlong, cases: list, block: Block, per_line: cython.int, flow: cython.bint) -> tuple:
    """The native readers' loop (``ReadFrom`` in out.pxd): a hand a line (no layout), while each line is
    a hand or blank; it stops at the terminator, an error, a line longer than any hand's."""
    s: cython.p_const_char = PyBytes_AS_STRING(data)
    size: cython.Py_ssize_t = PyBytes_GET_SIZE(data)
    stop: cython.Py_ssize_t
    column: cython.int
    while at < size:
        stop = line_end(s, at, size, final, _LONGEST)
        if stop == -2:
            return at, line, count, True
        if stop == -1:
            break
        column = 1 if _plain_hand(s + at, stop - at, size - at) else _hand_line(s + at, stop - at)
        if column < 0:
            return at, line, count, True
        line += 1
        at = stop + 1
        if column:
            count += 1
            if block is None:
                text: str = PyUnicode_DecodeASCII(_text, _write_hand(_text) - 1, cython.NULL)
                cases.append(new_case(count, text, line - 1, column))
            else:
                block.size += _write_hand(reserve(block, 128))
                block.data[block.size - 1] = 10
                took(block, block.size)
                if block.full:
                    break
    return min(at, size), line, count, False


solve, solve_batch, solve_chunk, read, read_inputs, InputBlock = core(
    _case, _detail, (b"ready", b"not-ready"), _read_from, cython.NULL, cython.NULL, 0).exports()


# --------------------------------------------------------------------- proofs for traces

# The split of each group of the hand just solved, as :func:`.trace._split` finds it, by slot:
# 0..3 the four groups as they are (found once a hand: a proof changes one group), 4 the waited
# tile's group with it. A slot holds the eye (a kind, or -1), the melds (a kind each, and whether it
# starts a chow) and how many, or -1 when the group does not split.
_group_eye = cython.declare(cython.int[5])
_group_melds = cython.declare(cython.int[5])
_group_kind = cython.declare(cython.int[4][5])  # (C's int[5][4]: by slot, then meld)
_group_chow = cython.declare(cython.bint[4][5])


@cython.cfunc
@cython.exceptval(check=False)
def _split(group: cython.int, wait: cython.int, slot: cython.int) -> cython.int:
    """The split of one group of the hand read (``_counts``), with the waited kind ``wait`` (-1: none),
    into ``slot``, as :func:`.trace._split` finds it: how many melds, or -1 when it does not split."""
    counts = cython.declare(cython.int[9])
    left = cython.declare(cython.int[9])
    kinds: cython.int = 7 if group == 3 else 9
    total: cython.int = 0
    weight: cython.int = 0  # of rank * count: melds add multiples of 3, so only an eye's 2 * rank matters
    r: cython.int
    melds: cython.int
    _group_eye[slot] = -1
    if wait < 0 and not _present >> 9 * group & 511:  # no tiles of the group: often so in a ready hand
        return 0
    for r in range(kinds):
        counts[r] = _counts[9 * group + r] + (9 * group + r == wait)
        total += counts[r]
        weight += r * counts[r]
    if total % 3 != 2:
        return _greedy_melds(counts, total, group, slot)
    for r in range(kinds):
        if counts[r] >= 2 and (weight - 2 * r) % 3 == 0:
            left = counts  # (a copy: C arrays)
            left[r] -= 2
            melds = _greedy_melds(left, total - 2, group, slot)
            if melds >= 0:
                _group_eye[slot] = 9 * group + r
                return melds
    return -1


@cython.cfunc
@cython.exceptval(check=False)
def _greedy_melds(left: cython.p_int, total: cython.int, group: cython.int, slot: cython.int) -> cython.int:
    """The melds of a group's ``left`` counts (consumed; ``total`` tiles) into ``slot``
    (:func:`.trace._greedy_melds`): how many, or -1."""
    r: cython.int = 0
    melds: cython.int = 0
    while total:
        if left[r] >= 3:
            _group_kind[slot][melds], _group_chow[slot][melds] = 9 * group + r, False
            melds += 1
            left[r] -= 3
            total -= 3
        if left[r]:
            if group == 3 or r > 6 or left[r + 1] < left[r] or left[r + 2] < left[r]:
                return -1
            left[r + 1] -= left[r]
            left[r + 2] -= left[r]
            total -= 3 * left[r]
            while left[r]:
                _group_kind[slot][melds], _group_chow[slot][melds] = 9 * group + r, True
                melds += 1
                left[r] -= 1
        r += 1
    return melds


@cython.cfunc
@cython.exceptval(check=False)
def _name_at(b: cython.p_char, at: cython.int, kind: cython.int) -> cython.int:
    """Write a kind's name at ``b[at]`` (all eight bytes: the room is there); where the next goes."""
    memcpy(b + at, _name_bytes + 8 * kind, 8)
    return at + _name_size[kind]


@cython.cfunc
@cython.exceptval(-1)
def _put_proof(into: Out, kind: cython.int) -> cython.int:
    """``1S|FA FA|1S 1S 1S|2S 2S 2S|3S 3S 3S|7S 8S 9S``: the waited tile, the eye and the melds of the
    hand with it, as :func:`.trace.proofs_of` writes it (once :func:`_put_trace` split its groups)."""
    group: cython.int = kind // 9 if kind < 27 else 3
    g: cython.int
    j: cython.int
    k: cython.int
    m: cython.int
    slot: cython.int
    eye: cython.int = -1
    total: cython.int = 0
    _group_melds[4] = _split(group, kind, 4)
    for g in range(4):
        slot = 4 if g == group else g
        if _group_melds[slot] < 0 or (eye >= 0 and _group_eye[slot] >= 0):
            total = -1
            break
        if _group_eye[slot] >= 0:
            eye = _group_eye[slot]
        total += _group_melds[slot]
    if eye < 0 or total != 4:  # the look-up table is wrong
        raise ValueError(f"the hand with {TILES[kind]} does not split: the mahjong table is damaged")
    # 15 names of at most five letters, and 14 separators: 89 bytes, and 8 to copy the last.
    b: cython.p_char = reserve(into, 104)
    at: cython.int = _name_at(b, 0, kind)
    for j in range(2):
        b[at] = 32 if j else 124  # |
        at = _name_at(b, at + 1, eye)
    for g in range(4):
        slot = 4 if g == group else g
        for j in range(_group_melds[slot]):
            k = _group_kind[slot][j]
            for m in range(3):
                b[at] = 32 if m else 124
                at = _name_at(b, at + 1, k + m * _group_chow[slot][j])
    into.size += at
    return 0
