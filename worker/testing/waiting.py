"""Waiting for a condition, never for a time: every wait of a test, of a harness here and of a benchmark.
A deadline only bounds how long one waits for what
must come; it is generous (a busy machine is slow), and a wait that runs out of it says what it saw last."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def until(look: Callable[[], T], ok: Callable[[T], object], what: str, timeout: float = 60,
          every: float = 0.1) -> T:
    """Call ``look`` every ``every`` seconds until ``ok`` holds of what it returned; return that.
    Fails after ``timeout`` seconds, naming ``what`` was awaited and what was seen last."""
    deadline = time.monotonic() + timeout
    while not ok(seen := look()):
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; saw last: {seen!r}")
        time.sleep(every)
    return seen
