"""How cases' inputs and traces are kept in the database, and the hash that finds an input again.

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
from worker.engines.base import TraceError

#: The first bytes of every zstd frame; no packed trace starts with them (see ``store_trace``).
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

_codecs = threading.local()


def _contexts() -> Any:
    # Contexts are reused because setting one up costs more than compressing a trace;
    # they are not thread-safe, hence one pair per thread.
    if not hasattr(_codecs, "compressor"):
        _codecs.compressor = zstandard.ZstdCompressor(level=3)
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


def store_trace(packed: bytes) -> bytes:
    """A packed trace (``Engine.solve_packed``) as stored.

    JSON is compressed with zstd. An engine's own compact form (10-20-30: a byte per
    card and pick-up) is stored as it is: zstd takes it only from ~280 to ~190 bytes,
    at a cost that shows in a worker's throughput.
    """
    return compress(packed) if packed[:1] == b"{" else packed


def load_trace(game: str, blob: bytes | None) -> dict[str, Any] | None:
    """The trace a stored blob holds, as JSON-ready data (``TraceError`` if it is damaged)."""
    if blob is None:
        return None
    try:
        packed = decompress(blob) if blob[:4] == ZSTD_MAGIC else blob
    except zstandard.ZstdError:
        raise TraceError("a stored trace is damaged: it does not decompress") from None
    return engines.get(game).unpack_trace(packed)
