"""Compression, and the hash that finds an input again.

>>> decompress(compress(b"1 2 3"))
b'1 2 3'
>>> input_hash("game", "1 2 3") == input_hash("game", "1 2 3") != input_hash("game", "2 2 3")
True
"""

from __future__ import annotations

import threading
from hashlib import blake2b
from typing import Any

import zstandard

_codecs = threading.local()


def _contexts() -> Any:
    # Contexts are reused because setting one up costs more than compressing a trace;
    # they are not thread-safe, hence one pair per thread. Level 1: on a chunk's traces it is
    # twice as fast as level 3, and compresses them as well.
    if not hasattr(_codecs, "compressor"):
        _codecs.compressor = zstandard.ZstdCompressor(level=1)
        _codecs.decompressor = zstandard.ZstdDecompressor()
    return _codecs


def compress(data: bytes) -> bytes:
    return _contexts().compressor.compress(data)


def decompress(blob: bytes) -> bytes:
    return _contexts().decompressor.decompress(blob)


def input_hash(game: str, text: str) -> int:
    """A 63-bit hash of a case's canonical input (fits a signed BIGINT)."""
    digest = blake2b(f"{game}\n{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1
