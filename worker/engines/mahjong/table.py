"""The mahjong table file, ``table.bin``, as the solver reads it: the magic, the table's size, its
compressed size (u32 little-endian) and the table (:func:`.tablegen.build_table`) as raw deflate (no
checksum to verify at every start)."""

from __future__ import annotations

import os
import sys

#: The file, shipped as package data beside this module.
TABLE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "table.bin")
MAGIC = b"MJ11210\x06"
#: In the table, the byte of a suit key whose value is listed apart (a "rare" key).
RARE_BYTE = 255


def read_table_file(path: str = TABLE_FILE) -> bytes:
    """The table of the table file, uncompressed."""
    import zlib

    with open(path, "rb") as f:
        data = f.read()
    if data[: len(MAGIC)] != MAGIC:
        raise ValueError(f"{path} is not a mahjong table of this version")
    at = len(MAGIC)
    size, packed = int.from_bytes(data[at : at + 4], "little"), int.from_bytes(data[at + 4 : at + 8], "little")
    # Told its size, zlib fills one buffer instead of growing and joining several.
    return zlib.decompress(data[at + 8 : at + 8 + packed], -15, size)


def numbers_of(payload: bytes, at: int, count: int, size: int) -> list[int]:
    """``count`` little-endian unsigned integers of ``size`` (2 or 8) bytes from ``payload[at:]``."""
    if sys.byteorder == "little":
        view = memoryview(payload)[at : at + size * count]
        numbers: list[int] = (view.cast("H") if size == 2 else view.cast("Q")).tolist()
        return numbers
    return [int.from_bytes(payload[i : i + size], "little") for i in range(at, at + size * count, size)]

