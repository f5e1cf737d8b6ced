"""Building ``table.bin``: ``python -m worker.engines.mahjong.tablegen``. Build tooling: the solver
only reads the file (:mod:`.table`); a test checks it is what this builds."""

from __future__ import annotations

import struct
import sys
import zlib
from collections import Counter

from worker.engines.mahjong.table import MAGIC, RARE_BYTE, TABLE_FILE, read_table_file
from worker.engines.mahjong.tiles import DEAD, HAND_SIZE, HONOUR_KEYS, MAX_COPIES, SUIT_KEYS, E, M, X


def build_table() -> bytes:
    """The solver's table, uncompressed, as ``table.bin`` holds it.

    Layout, little-endian::

        u16 S, S x u16   suit values: class code << 9 | mask of ranks; the most used first
        u16 H, H x u16   honour values, the same way (a mask of honour kinds)
        u16 R, R x u64   rare suit keys: key << 16 | index of its suit value
        5**9 x u8        the suit value of every suit key (the base-5 number of its
                         counts); 255 means "a rare key"
        5**7 x u8        the honour value of every honour key

    Value 0 is the dead group. A suit's mask is the ranks that make it E (3n+1 tiles) or M (3n+2);
    an honour group's, its pairs (E) or its lone tile (X). The 255 values most keys use fit the
    byte; the few keys of the others are listed apart.
    """
    suit_classes = _suit_classes()
    honour_classes = _honour_classes()
    used = Counter(suit_classes.values())
    suit_values = [(DEAD, 0)] + sorted(used, key=lambda value: (-used[value], value))
    honour_values = [(DEAD, 0)] + sorted(set(honour_classes) - {(DEAD, 0)})
    suit_index = {value: i for i, value in enumerate(suit_values)}
    honour_index = {value: i for i, value in enumerate(honour_values)}
    suit_table = bytearray(SUIT_KEYS)
    rare = []
    for key, value in sorted(suit_classes.items()):
        index = suit_index[value]
        suit_table[key] = min(index, RARE_BYTE)
        if index >= RARE_BYTE:
            rare.append(key << 16 | index)
    lists = (("H", [c << 9 | m for c, m in suit_values]), ("H", [c << 9 | m for c, m in honour_values]),
             ("Q", rare))
    return b"".join([*(struct.pack(f"<H{len(values)}{code}", len(values), *values) for code, values in lists),
                     bytes(suit_table), bytes(honour_index[value] for value in honour_classes)])


#: A rank's unit in a suit key of three bits a rank.
_UNITS = [1 << 3 * r for r in range(9)]


def _counts(key: int) -> list[int]:
    """The nine counts of a key of three bits a rank (cheap to add and test)."""
    return [key >> 3 * r & 7 for r in range(9)]


def _base5(key: int) -> int:
    """A key of three bits a rank as the table's base-5 key."""
    return sum(n * 5**r for r, n in enumerate(_counts(key)))


def _suit_sets() -> tuple[set[int], set[int]]:
    """The suit keys (three bits a rank) that split into up to four melds, and into an
    eye plus up to four melds, with at most four tiles of a rank."""
    units = _UNITS
    melds = [3 * u for u in units] + [units[r] + units[r + 1] + units[r + 2] for r in range(7)]
    only_melds = {0}
    layer = {0}
    for _ in range(4):
        layer = {key + meld for key in layer for meld in melds if max(_counts(key + meld)) <= MAX_COPIES}
        only_melds |= layer
    with_eye = {key + 2 * u for key in only_melds for u in units if max(_counts(key + 2 * u)) <= MAX_COPIES}
    return only_melds, with_eye


def _suit_classes() -> dict[int, tuple[int, int]]:
    """(class code, mask) of every suit key of at most 13 tiles that is not dead."""
    units = _UNITS
    only_melds, with_eye = _suit_sets()
    # The ranks that complete a key: into M for keys of 3n+2 tiles, into E for 3n+1.
    completed_by: dict[int, int] = {}
    for key in only_melds | with_eye:
        for r in range(9):
            if key >> 3 * r & 7:
                completed_by[key - units[r]] = completed_by.get(key - units[r], 0) | 1 << r
    classes = {}
    for key in only_melds | with_eye | set(completed_by):
        size = sum(_counts(key))
        if size > HAND_SIZE:
            continue
        mask = completed_by.get(key, 0)
        if size % 3 == 0:
            value = (M, 0) if key in only_melds else (DEAD, 0)
        elif size % 3 == 1 or key not in with_eye:
            value = (X, mask) if mask else (DEAD, 0)
        else:
            value = (E, mask)
        if value != (DEAD, 0):
            classes[_base5(key)] = value
    return classes


def _honour_classes() -> list[tuple[int, int]]:
    """(class code, mask) of every honour key 0..5**7-1, as a list indexed by key."""
    classes = []
    for key in range(HONOUR_KEYS):
        counts = [key // 5**j % 5 for j in range(7)]
        broken = [j for j in range(7) if counts[j] in (1, 4)]
        pairs = sum(1 << j for j in range(7) if counts[j] == 2)
        if not broken and pairs.bit_count() <= 2:
            classes.append((pairs.bit_count() * E, pairs))  # each pair may become a pong
        elif len(broken) == 1 and not pairs and counts[broken[0]] == 1:
            classes.append((X, 1 << broken[0]))  # the lone tile may become the eye
        else:
            # Two broken kinds, four of a kind, or a lone tile beside a pair (which could
            # only become a second eye): nothing mends it.
            classes.append((DEAD, 0))
    return classes


def write_table(path: str = TABLE_FILE) -> None:
    """Write the table file as :mod:`.table` describes it."""
    table = build_table()
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = packer.compress(table) + packer.flush()
    with open(path, "wb") as f:
        f.write(b"".join([MAGIC, len(table).to_bytes(4, "little"), len(packed).to_bytes(4, "little"), packed]))


def is_current(path: str = TABLE_FILE) -> bool:
    """Whether the table file at ``path`` holds what this module builds (compared uncompressed:
    another zlib may compress the same table to other bytes)."""
    return read_table_file(path) == build_table()


def main(argv: list[str]) -> int:
    """Write the shipped table file, or (``--check``) only say whether it is current."""
    if argv == ["--check"]:
        current = is_current()
        print(f"{TABLE_FILE} is {'current' if current else 'NOT what the builder makes'}")
        return 0 if current else 1
    if argv:
        print("usage: python -m worker.engines.mahjong.tablegen [--check]", file=sys.stderr)
        return 2
    write_table()
    print(f"wrote {TABLE_FILE}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
