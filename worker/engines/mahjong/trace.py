"""Mahjong traces, a proof per waited tile (format: ``docs/traces.md``), and their replay
against a plain search (:func:`reference_waits`)."""

from __future__ import annotations

from itertools import chain

from worker.engines.mahjong.tiles import GROUP_BITS, GROUP_MASK, KEY_UNIT, KIND, MAX_COPIES, TILES
from worker.engines.results import TraceError

#: Per group (0..2 suits, 3 honours), by group key: its split as (eye, melds), cached.
_splits: list[dict[int, tuple[str, str]]] = [{}, {}, {}, {}]
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


def _split(group: int, key: int) -> tuple[str, str] | None:
    """A group's split as (its eye or "", its melds joined by "|"), else ``None``: the eye the
    lowest kind that leaves melds, the melds from the lowest tile up, a pong wherever three tiles
    of a kind are left (three chows from a rank are as well three pongs: no search needed)."""
    names = TILES[9 * group : 9 * group + 9]  # the honours: seven
    counts = [key // unit % 5 for unit in _UNITS[: len(names)]]
    eyes = [r for r in range(len(names)) if counts[r] >= 2] if sum(counts) % 3 == 2 else [-1]
    for eye in eyes:
        left = counts.copy()
        if eye >= 0:
            left[eye] -= 2
        melds = _greedy_melds(left, _PONGS[group], _CHOWS[group])
        if melds is not None:
            result = (f"{names[eye]} {names[eye]}" if eye >= 0 else "", "|".join(melds))
            _splits[group][key] = result  # caching splits only bounds the caches: 21,743 keys a suit split
            return result
    return None


#: A rank's unit in a group key; by group, the text of a pong of each kind and of a chow from each
#: rank (none of the honours).
_UNITS = [5**r for r in range(9)]
_PONGS = [[" ".join([name] * 3) for name in TILES[9 * g : 9 * g + 9]] for g in range(4)]
_CHOWS = [[" ".join(TILES[9 * g + r : 9 * g + r + 3]) for r in range(7)] if g < 3 else [] for g in range(4)]


def _greedy_melds(left: list[int], pongs: list[str], chows: list[str]) -> list[str] | None:
    """The melds of a group's ``left`` counts (consumed), lowest first, else ``None``."""
    melds = []
    for r, count in enumerate(left):  # (each count read once the chows before have taken theirs)
        if count >= 3:
            melds.append(pongs[r])
            count -= 3
        if count:
            if r >= len(chows) or left[r + 1] < count or left[r + 2] < count:
                return None
            melds += [chows[r]] * count
            left[r + 1] -= count
            left[r + 2] -= count
    return melds


# --------------------------------------------------------------------- replaying


def check_proof(counts: list[int], proof: str) -> str:
    """Check one proof against the hand's counts; the waited tile it proves."""
    groups = [group.split(" ") for group in proof.split("|")]
    if [len(g) for g in groups] != [1, 2, 3, 3, 3, 3]:
        raise TraceError(f"proof {proof!r}: expected the waited tile, an eye of 2 tiles and 4 melds of 3")
    unknown = next((tile for group in groups for tile in group if tile not in KIND), None)
    if unknown is not None:
        raise TraceError(f"proof {proof!r}: unknown tile {unknown!r}")
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

