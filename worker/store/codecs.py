"""Compression, chunks' inputs, traces, and the hash that finds an input again.

>>> unpack_inputs(pack_inputs(["1 2 3", "4 5 6"]))
['1 2 3', '4 5 6']
>>> input_hash("mahjong", "1T 1T 1T") == input_hash("mahjong", "1T 1T 1T") != input_hash("mahjong", "2T 2T 2T")
True
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from hashlib import blake2b
from typing import Any

import zstandard

from worker import engines

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


def pack_inputs(texts: Iterable[str]) -> bytes:
    """A chunk's canonical inputs, one per line, compressed."""
    return compress("\n".join(texts).encode())


def unpack_inputs(blob: bytes) -> list[str]:
    return decompress(blob).decode().split("\n")


def load_trace(game: str, packed: bytes | None) -> dict[str, Any] | None:
    """The trace of a stored packed trace (``Engine.solve_packed``), as JSON-ready data.

    Raises ``TraceError`` if it is damaged.
    """
    if packed is None:
        return None
    return engines.get(game).unpack_trace(packed)
