"""Compression, and the numbers PostgreSQL's advisory locks take.

>>> decompress(compress(b"1 2 3"))
b'1 2 3'
>>> lock_key("client", "key:ci") == lock_key("client", "key:ci") != lock_key("client", "key:alice")
True
"""

from __future__ import annotations

import threading
from hashlib import blake2b
from typing import Any

import zstandard

#: zstd's level for everything the service stores (see ``_contexts``).
LEVEL = 1
_codecs = threading.local()


def _contexts() -> Any:
    # Contexts are reused because setting one up costs more than compressing a trace;
    # they are not thread-safe, hence one pair per thread. Level 1, measured on 10,000 random cases a
    # game (2026-12-02): 10-20-30's packed traces, most of what the service stores, shrink 1.86x at
    # level 1 and 1.16x at -3, for 6.4 ms against 3.9 ms; the inputs, the uploaded file and the judge
    # lines shrink 8-70 % more at level 1 for the same time; level 3 shrinks them hardly more, at
    # up to 3x the time. Every byte saved is one the database server writes, logs and sends less.
    if not hasattr(_codecs, "compressor"):
        _codecs.compressor = zstandard.ZstdCompressor(level=LEVEL)
        _codecs.decompressor = zstandard.ZstdDecompressor()
    return _codecs


def compress(data: bytes) -> bytes:
    return _contexts().compressor.compress(data)


def decompress(blob: bytes) -> bytes:
    return _contexts().decompressor.decompress(blob)


def lock_key(kind: str, name: str) -> int:
    """The 63-bit number of a named thing's advisory lock (PostgreSQL's locks take a BIGINT)."""
    digest = blake2b(f"{kind}\n{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1
