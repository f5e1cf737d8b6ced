"""Quantities as people read them: a ground-floor helper the pure modules (the judge of checks, the
readers' limits) and the store's messages share."""

from __future__ import annotations


def format_size(size: int) -> str:
    """A byte count as people read it.

    >>> format_size(4 << 30), format_size(1536), format_size(12)
    ('4 GiB', '1.5 KiB', '12 bytes')
    """
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            if unit == "bytes":
                return f"{int(value)} bytes"
            return f"{value:.1f}".rstrip("0").rstrip(".") + f" {unit}"
        value /= 1024
    raise AssertionError("unreachable")
