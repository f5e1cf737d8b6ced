"""Every engine's stored trace form: ``solve_packed`` and ``unpack_trace`` against ``solve``."""

from __future__ import annotations

import random

import pytest

from worker import engines
from worker.engines.base import Case, TraceError


@pytest.mark.parametrize("game", engines.names())
def test_packed_traces_unpack_to_the_solved_ones(game: str) -> None:
    engine = engines.get(game)
    rng = random.Random(7)
    for index in range(1, 201):
        case = Case(index, engine.canonical(engine.generate(rng)))
        solved = engine.solve(case)
        result, packed = engine.solve_packed(case)
        assert result.trace is None and isinstance(packed, bytes)
        assert (result.outcome, result.number, result.detail, result.line) == (
            solved.outcome, solved.number, solved.detail, solved.line)
        assert engine.unpack_trace(packed) == solved.trace
        assert solved.trace is not None
        assert engine.unpack_trace(engine.pack_trace(solved.trace)) == solved.trace


@pytest.mark.parametrize("game", engines.names())
@pytest.mark.parametrize("junk", [b"", b"\x00", b"\x01\x02", b"[1, 2]", b"{\"version\": 1", b"\xff" * 40])
def test_bytes_that_are_no_trace_are_a_trace_error(game: str, junk: bytes) -> None:
    with pytest.raises(TraceError):
        engines.get(game).unpack_trace(junk)
