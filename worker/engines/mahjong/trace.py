"""Mahjong traces, a proof per waited tile (format: ``docs/traces.md``), and their replay
against a plain search (:func:`reference_waits`)."""

from __future__ import annotations

from itertools import accumulate, chain

from worker.engines.mahjong.table import numbers_of, read_section
from worker.engines.mahjong.tiles import GROUP_BITS, GROUP_MASK, HONOURS, KEY_UNIT, KIND, MAX_COPIES, TILES
from worker.engines.results import TraceError

#: Per group (0..2 suits, 3 honours), by group key: its split as (eye, melds), cached.
_splits: list[dict[int, tuple[str, str]]] = [{}, {}, {}, {}]
#: Suit key -> its split, packed (see :func:`.tablegen.build_split_table`); read on the first proof.
_split_table: dict[int, int] | None = None
#: The group of each tile and its unit within its group's key.
_GROUP_UNIT: dict[str, tuple[int, int]] = {
    tile: (min(kind // 9, 3), KEY_UNIT[tile] >> GROUP_BITS * min(kind // 9, 3)) for kind, tile in enumerate(TILES)
}


def proofs_of(key: int, waits: tuple[str, ...]) -> list[str]:
    """A proof a waited tile: only the tile's group changes, so the others are looked up once."""
    keys = [key & GROUP_MASK, key >> 21 & GROUP_MASK, key >> 42 & GROUP_MASK, key >> 63]
    base = [cache.get(keys[group]) for group, cache in enumerate(_splits)]
    proofs = []
    for tile in waits:
        group, unit = _GROUP_UNIT[tile]
        splits = base.copy()
        splits[group] = _splits[group].get(keys[group] + unit) or _split(group, keys[group] + unit)
        if None in splits:  # another group's split is not cached yet
            for other in range(4):
                if splits[other] is None and other != group:
                    splits[other] = base[other] = _split(other, keys[other])
        (e0, m0), (e1, m1), (e2, m2), (e3, m3) = splits  # type: ignore[misc]  # None: the tile does not win
        proofs.append(f"{tile}|{e0 or e1 or e2 or e3}|{'|'.join(filter(None, (m0, m1, m2, m3)))}")
    return proofs


#: Per suit: the text of each meld code (a pong of rank r is r, a chow from r is 9 + r),
#: and of each eye code (rank + 1; 0 is no eye).
_MELD_TEXT = [
    [" ".join([TILES[9 * g + r]] * 3) for r in range(9)] + [" ".join(TILES[9 * g + r : 9 * g + r + 3]) for r in range(7)]
    for g in range(3)
]
_EYE_TEXT = [[""] + [f"{TILES[9 * g + r]} {TILES[9 * g + r]}" for r in range(9)] for g in range(3)]


def _split(group: int, key: int) -> tuple[str, str] | None:
    """A group's split as (its eye or "", its melds joined by "|"), else ``None``."""
    result: tuple[str, str] | None = None
    if group == 3:
        counts = [key // 5**j % 5 for j in range(7)]
        if all(c in (0, 2, 3) for c in counts) and counts.count(2) <= 1:
            names = HONOURS
            eye = " ".join(names[j] for j in range(7) if counts[j] == 2 for _ in range(2))
            result = (eye, "|".join(" ".join([names[j]] * 3) for j in range(7) if counts[j] == 3))
    else:
        packed = split_table().get(key)
        if packed is not None:
            texts = _MELD_TEXT[group]
            melds = [texts[packed >> shift & 15] for shift in _SHIFTS[: packed >> 4 & 7]]
            result = (_EYE_TEXT[group][packed & 15], "|".join(melds))
    if result is not None:  # caching splits only bounds the caches: 21,743 keys a suit split
        _splits[group][key] = result
    return result


_SHIFTS = (8, 12, 16, 20)


def split_table() -> dict[int, int]:
    """Suit key -> its split, packed (see :func:`.tablegen.build_split_table`), read once."""
    global _split_table
    if _split_table is None:
        _split_table = _unpack_splits(read_section(1))
    return _split_table


def _unpack_splits(payload: bytes) -> dict[int, int]:
    """Section 1 of the table file as a dict (see :func:`.tablegen.build_split_table`)."""
    count = int.from_bytes(payload[:4], "little")
    numbers = numbers_of(payload, 4, 2 * count, 4)
    return dict(zip(accumulate(numbers[:count]), numbers[count:]))


# --------------------------------------------------------------------- replaying


def check_proof(counts: list[int], proof: str) -> str:
    """Check one proof against the hand's counts; the waited tile it proves."""
    groups = [group.split(" ") for group in proof.split("|")]
    if [len(g) for g in groups] != [1, 2, 3, 3, 3, 3]:
        raise TraceError(f"proof {proof!r}: expected the waited tile, an eye of 2 tiles and 4 melds of 3")
    for group in groups:
        for tile in group:
            if tile not in KIND:
                raise TraceError(f"proof {proof!r}: unknown tile {tile!r}")
    (wait,), eye, *melds = [[KIND[tile] for tile in group] for group in groups]
    if counts[wait] >= MAX_COPIES:
        raise TraceError(f"proof {proof!r}: the hand holds all four {TILES[wait]} already")
    if eye[0] != eye[1]:
        raise TraceError(f"proof {proof!r}: the eye {' '.join(groups[1])} is not a pair")
    for meld, written in zip(melds, groups[2:]):
        pong = meld[0] == meld[1] == meld[2]
        chow = meld[0] < 27 and meld[0] % 9 <= 6 and meld[1] == meld[0] + 1 and meld[2] == meld[0] + 2
        if not (pong or chow):
            raise TraceError(f"proof {proof!r}: {' '.join(written)} is neither a pong nor a chow")
    if [m[0] for m in melds] != sorted(m[0] for m in melds):
        raise TraceError(f"proof {proof!r}: the melds are not in the order of their first tiles")
    used = [0] * len(TILES)
    for kind in chain(eye, *melds):
        used[kind] += 1
    needed = counts.copy()
    needed[wait] += 1
    if used != needed:
        raise TraceError(f"proof {proof!r}: its tiles are not the hand plus {TILES[wait]}")
    return TILES[wait]


def reference_waits(counts: list[int]) -> list[int]:
    """The waited kinds of a hand's 34 counts, by plain search, without the table.

    >>> from worker.engines.mahjong.read import counts_of
    >>> reference_waits(counts_of("1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA"))
    [9, 12, 32]
    """
    counts = counts.copy()
    waits = []
    for kind in range(len(TILES)):
        if counts[kind] < MAX_COPIES:
            counts[kind] += 1
            if _wins(counts):
                waits.append(kind)
            counts[kind] -= 1
    return waits


def _wins(counts: list[int]) -> bool:
    """Whether 14 tiles split into an eye and melds (each eye, then melds from the lowest tile)."""
    for kind in range(len(TILES)):
        if counts[kind] >= 2:
            counts[kind] -= 2
            found = _melds(counts, 0)
            counts[kind] += 2
            if found:
                return True
    return False


def _melds(counts: list[int], kind: int) -> bool:
    while kind < len(TILES) and counts[kind] == 0:
        kind += 1
    if kind == len(TILES):
        return True
    if counts[kind] >= 3:
        counts[kind] -= 3
        found = _melds(counts, kind)
        counts[kind] += 3
        if found:
            return True
    if kind < 27 and kind % 9 <= 6 and counts[kind + 1] and counts[kind + 2]:
        for k in (kind, kind + 1, kind + 2):
            counts[k] -= 1
        found = _melds(counts, kind)
        for k in (kind, kind + 1, kind + 2):
            counts[k] += 1
        return found
    return False

