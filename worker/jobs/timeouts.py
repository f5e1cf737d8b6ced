"""Time budgets for solving: a case that runs too long is stopped, and the worker moves on."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any


class CaseTimeout(Exception):
    pass


class CaseBudget:
    """A per-case time budget from SIGALRM.

    ``with CaseBudget(s) as budget:`` starts a timer that ticks every ``s / 10``
    seconds (at most every second) for a chunk; setting ``budget.started`` to a
    ``time.perf_counter()`` reading while a case runs, and back to ``None`` after it,
    makes a tick past ``s`` seconds raise :class:`CaseTimeout` in that case. Per case
    this costs two assignments, not two system calls. Only the main thread takes
    signals, so elsewhere (or with a budget of 0) cases run unbounded.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.active = seconds > 0 and threading.current_thread() is threading.main_thread()
        self.started: float | None = None
        self._previous: Any = None

    def __enter__(self) -> CaseBudget:
        if self.active:
            self._previous = signal.signal(signal.SIGALRM, self._tick)
            tick = min(1.0, self.seconds / 10)
            signal.setitimer(signal.ITIMER_REAL, tick, tick)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:
            self.started = None
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)

    def _tick(self, _signum: int, _frame: Any) -> None:
        started = self.started
        if started is not None and time.perf_counter() - started >= self.seconds:
            self.started = None  # one exception per case, even if the next tick comes early
            raise CaseTimeout
