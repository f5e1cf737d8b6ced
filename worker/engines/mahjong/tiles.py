"""Mahjong tiles: their names and kinds, a hand's key, and the classes of a group.

Shared by the reader, the solver, the traces and the table builder.
"""

from __future__ import annotations

SUITS = "TSW"
HONOURS = ("DONG", "NAN", "XI", "BEI", "ZHONG", "FA", "BAI")
#: Every kind of tile in the judge order; a kind's index here is its number (0..33).
TILES: tuple[str, ...] = tuple(f"{rank}{suit}" for suit in SUITS for rank in range(1, 10)) + HONOURS
HAND_SIZE = 13
MAX_COPIES = 4

KIND: dict[str, int] = {tile: kind for kind, tile in enumerate(TILES)}
KIND_BYTES: dict[bytes, int] = {tile.encode(): kind for kind, tile in enumerate(TILES)}

# A hand is summed into one integer, its *key*, holding the four groups side by side:
# group g (0..2 the suits, 3 the honours) from bit 21*g up, as the base-5 number whose
# digit r counts the tiles of rank r. Counts never exceed 4 and 5**9 < 2**21, so adding
# the tiles' units never carries from one digit or group into the next.
GROUP_BITS = 21
GROUP_MASK = (1 << GROUP_BITS) - 1
SUIT_KEYS = 5**9
HONOUR_KEYS = 5**7
KEY_UNIT: dict[str, int] = {
    tile: 5 ** (kind % 9 if kind < 27 else kind - 27) << (GROUP_BITS * min(kind // 9, 3))
    for kind, tile in enumerate(TILES)
}
KEY_UNIT_BYTES: dict[bytes, int] = {tile.encode(): unit for tile, unit in KEY_UNIT.items()}

# Codes of a group's class, chosen so that their sum over the four groups tells the
# cases apart: one X and no E sums to 16, one X and one E to 17, two Es and no X to 2;
# any other sum is not ready. DEAD is a group no tile can mend (a sum with it is >= 32);
# RARE marks a suit key whose entry is kept outside the one-byte table.
M, E, X, DEAD, RARE = 0, 1, 16, 32, 1024
