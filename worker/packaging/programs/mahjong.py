"""Chinese Mahjong, an accepted solution: the tiles each hand of 13 waits for."""

import sys

KINDS = [f"{rank}{suit}" for suit in "TSW" for rank in range(1, 10)] + [
    "DONG", "NAN", "XI", "BEI", "ZHONG", "FA", "BAI"]
INDEX = {tile: kind for kind, tile in enumerate(KINDS)}


def chow(kind: int) -> bool:
    """Whether a chow can start at ``kind``: a suit tile of rank 1 to 7."""
    return kind < 27 and kind % 9 <= 6


def melds(counts: list[int], kind: int = 0) -> bool:
    """Whether the tiles from ``kind`` on split into pongs and chows."""
    while kind < 34 and not counts[kind]:
        kind += 1
    if kind == 34:
        return True
    if counts[kind] >= 3:
        counts[kind] -= 3
        found = melds(counts, kind)
        counts[kind] += 3
        if found:
            return True
    if chow(kind) and counts[kind + 1] and counts[kind + 2]:
        for k in (kind, kind + 1, kind + 2):
            counts[k] -= 1
        found = melds(counts, kind)
        for k in (kind, kind + 1, kind + 2):
            counts[k] += 1
        return found
    return False


def wins(counts: list[int]) -> bool:
    for eye in range(34):
        if counts[eye] >= 2:
            counts[eye] -= 2
            found = melds(counts)
            counts[eye] += 2
            if found:
                return True
    return False


def waits(tiles: list[str]) -> list[str]:
    counts = [0] * 34
    for tile in tiles:
        counts[INDEX[tile]] += 1
    found = []
    for kind in range(34):
        if counts[kind] < 4:
            counts[kind] += 1
            if wins(counts):
                found.append(KINDS[kind])
            counts[kind] -= 1
    return found


def main() -> None:
    out = []
    for line in sys.stdin:
        tiles = line.split()
        if not tiles:
            continue
        if tiles[0] == "0":
            break
        tiles_waited = waits(tiles)
        shown = " ".join(tiles_waited) if tiles_waited else "Not ready"
        out.append(f"Case {len(out) + 1}: {shown}")
    sys.stdout.write("".join(line + "\n" for line in out))


if __name__ == "__main__":
    main()
