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
LEVEL = -3
_codecs = threading.local()


def _contexts() -> Any:
    # Contexts are reused because setting one up costs more than compressing a trace;
    # they are not thread-safe, hence one pair per thread. Level -3 ("--fast=3"): what a service
    # stores is mostly packed traces, which compress little (10-20-30's by half at level 1, by a
    # fifth less at -3), and at -3 compressing them costs a fifth of what it does at level 1: the
    # bytes it saves cost the database far less than the compressing cost the workers.
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
