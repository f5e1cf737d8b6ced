"""Waiting in a test: for a condition, never for a time (``until``, the harnesses' own wait, from
``worker/testing/waiting.py``)."""

from __future__ import annotations

from worker.testing.waiting import until

__all__ = ["until"]
