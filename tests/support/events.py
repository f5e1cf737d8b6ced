"""Reading a live page's event stream in a test."""

from __future__ import annotations

from collections.abc import Iterator


def next_write(chunks: Iterator[bytes]) -> bytes:
    """The stream's next write that is not a keep-alive comment: a stream that waits a tick for its first
    reading (a loaded machine) sends one first, as it may at any time."""
    for chunk in chunks:
        if chunk != b":\n\n":
            return bytes(chunk)
    raise AssertionError("the stream ended")
