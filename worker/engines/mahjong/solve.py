"""Solving a hand: four look-ups in the table, then a case analysis.

No meld crosses the three suits and the honours (the *groups*). A group is *M* when it
splits into melds, *E* into an eye and melds, else *X* (an honour: M with 0 or 3 tiles, E
with 2, X with 1 or 4). Fourteen tiles win when one group is E and the others M, so
thirteen wait for: with one X and no E, the tiles making the X group E; with one X and one
E, those making the X group M; with two Es, those making either M. ``table.bin`` gives every
suit group's class and those tiles (:mod:`.tablegen` builds it).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from functools import cache

from worker.engines.mahjong.read import counts_of, recent
from worker.engines.mahjong.table import RARE_BYTE, read_table_file
from worker.engines.mahjong.tiles import GROUP_MASK, HONOUR_KEYS, KEY_UNIT, RARE, SUIT_KEYS, TILES, X
from worker.engines.mahjong.trace import proofs_of
from worker.engines.reading import Case
from worker.engines.results import Result, plain

_NO_ENTRY: tuple[str | None, int] = (None, 0)
#: Suit keys whose value is not in the one-byte table: key -> value index (:func:`.tablegen.build_table`).
_rare: dict[int, int] = {}


def line_of(index: int, waits: Sequence[str]) -> str:
    """The judge line of hand ``index`` waiting for ``waits``.

    >>> line_of(1, ("1S", "4S", "FA")), line_of(2, ())
    ('Case 1: 1S 4S FA', 'Case 2: Not ready')
    """
    return f"Case {index}: {' '.join(waits)}" if waits else f"Case {index}: Not ready"


def read_table() -> tuple[bytes, int, list[int], list[int], list[int]]:
    """The table (:func:`.tablegen.build_table`): the payload, where its suit keys
    start, the suit values, the honour values and the rare suit keys."""
    payload = read_table_file()
    at, values = 0, []
    for code in "HHQ":  # suit values, honour values, rare suit keys
        (count,) = struct.unpack_from("<H", payload, at)
        values.append(list(struct.unpack_from(f"<{count}{code}", payload, at + 2)))
        at += 2 + struct.calcsize(code) * count
    suit_values, honour_values, rare = values
    return payload, at, suit_values, honour_values, rare


@cache
def make_solver() -> Callable[[Case, bool], Result]:
    """Read the table file and build the solver, once a process, on first use (reading the table takes
    a few milliseconds)."""
    payload, at, suit_values, honour_values, rare_keys = read_table()
    rare = _rare
    rare.update((entry >> 16, entry & 0xFFFF) for entry in rare_keys)
    view = memoryview(payload)
    suits, honours = view[at : at + SUIT_KEYS], view[at + SUIT_KEYS : at + SUIT_KEYS + HONOUR_KEYS]
    # Lists indexed by a value index: the class code, and per group the tiles of the mask.
    codes = [value >> 9 for value in suit_values]
    honour_codes = [value >> 9 for value in honour_values]
    names = []
    for group in range(4):
        of_mask = _names_by_mask(TILES[9 * group : 9 * group + 9])
        names.append([of_mask[value & 511] for value in (honour_values if group == 3 else suit_values)])
    # In the table, byte 255 means "a rare key": its code takes any sum out of the ready
    # cases, so that the solver looks the key up among the rare ones.
    byte_codes = codes[:RARE_BYTE] + [RARE]
    mask = GROUP_MASK
    unit = KEY_UNIT.__getitem__
    queue = recent
    line = line_of
    if not plain(Result, ("outcome", "number", "detail", "line", "trace")):  # pragma: no cover
        raise TypeError("Result has fields solve() does not set")
    new = object.__new__
    n_t, n_s, n_w, n_h = names

    def solve(case: Case, trace: bool = True) -> Result:
        text = case.text
        entry = _NO_ENTRY
        if queue:
            try:  # another thread may take the head meanwhile: check what was taken
                entry = queue[0]
                if entry[0] is text:
                    entry = queue.popleft()
            except IndexError:
                entry = _NO_ENTRY
        if entry[0] is text:
            key = entry[1]
        else:
            try:
                key = sum(map(unit, text.split()))
            except KeyError:
                counts_of(text)  # raises the precise error
                raise
        t = suits[key & mask]
        s = suits[key >> 21 & mask]
        w = suits[key >> 42 & mask]
        h = honours[key >> 63]
        code = byte_codes[t] + byte_codes[s] + byte_codes[w] + honour_codes[h]
        if code >= RARE:
            t = rare.get(key & mask, t)
            s = rare.get(key >> 21 & mask, s)
            w = rare.get(key >> 42 & mask, w)
            code = codes[t] + codes[s] + codes[w] + honour_codes[h]
        if code == 2 or code == 16:  # the E or X groups' tiles; M groups hold none
            waits = n_t[t] + n_s[s] + n_w[w] + n_h[h]
        elif code == 17:  # one X and one E: only the X group's tiles
            # An X honour group here is a lone honour beside a pair: it cannot be mended.
            waits = n_t[t] if codes[t] == X else n_s[s] if codes[s] == X else n_w[w] if codes[w] == X else ()
        else:
            waits = ()
        result = new(Result)  # Result(...) without its __init__, see plain; every field is set below
        if waits:
            result.outcome, result.number, result.detail = "ready", len(waits), list(waits)
        else:
            result.outcome, result.number, result.detail = "not-ready", 0, []
        result.line = line(case.index, waits)
        result.trace = {"version": 1, "proofs": proofs_of(key, waits) if waits else []} if trace else None
        return result

    return solve


def _names_by_mask(names: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The names picked by each mask of ``len(names)`` bits, lowest bit first.

    >>> _names_by_mask(("a", "b", "c"))[5]
    ('a', 'c')
    """
    by_mask: list[tuple[str, ...]] = [()]
    for mask in range(1, 1 << len(names)):
        low = mask & -mask
        by_mask.append((names[low.bit_length() - 1], *by_mask[mask ^ low]))
    return by_mask
