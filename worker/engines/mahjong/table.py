"""The mahjong table file, ``table.bin``, as the solver reads it: the magic, the table's size, its
compressed size (u32 little-endian) and the table (:func:`.tablegen.build_table`) as raw deflate (no
checksum to verify at every start)."""

from __future__ import annotations

import os
import struct

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
    size, packed = struct.unpack_from("<II", data, len(MAGIC))
    # Told its size, zlib fills one buffer instead of growing and joining several.
    return zlib.decompress(data[len(MAGIC) + 8 : len(MAGIC) + 8 + packed], -15, size)
