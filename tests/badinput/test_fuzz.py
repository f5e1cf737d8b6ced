"""Fuzzing the three readers with Hypothesis: random bytes, valid judge files mutated, and generated files
in every layout with layout faults made in them (lines cut short, lengthened, split, doubled or dropped,
tokens stray, missing or bad: ``worker/testing/mutations.py``), read strictly and past their faults.

Whatever the bytes, ``parse()`` either yields cases or raises :class:`InputError` (never
anything else) and finishes quickly; a case it yields is canonical (reading its text
again gives the same text) and can be solved. The upload checks and the line-length
reader are fuzzed too. ``DEALER_FUZZ_EXAMPLES`` raises the number of examples for a
longer run (the default keeps this file to a few seconds); ``bench/fuzz.py`` does the
same with atheris, guided by coverage.
"""

from __future__ import annotations

import gc
import io
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.paths import JUDGE_DATA
from worker import engines
from worker.engines.reading import MAX_TOKEN, Diagnostic, Faults, InputError
from worker.generating.stream import generate, plan
from worker.jobs.intake import sniff_upload
from worker.jobs.reading import LineLimitReader
from worker.testing.mutations import KINDS, edit

GAMES = engines.names()
EXAMPLES = int(os.environ.get("DEALER_FUZZ_EXAMPLES", "120"))
#: A parse of a few KiB takes milliseconds; a second means something is quadratic or worse. Measured
#: in this thread's CPU time, which what else the machine runs does not stretch (:func:`cpu_seconds`).
SLOW = 1.0
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: Small valid judge files to mutate (each game's own, read by every game's reader).
SEEDS = [(JUDGE_DATA / game / f"{name}.in").read_bytes() for game, name in [
    ("10-20-30", "sample"), ("10-20-30", "crlf"), ("10-20-30", "ragged-whitespace"),
    ("accordion", "sample"), ("accordion", "thirteen-per-line"), ("accordion", "one-deck-per-line"),
    ("mahjong", "sample"), ("mahjong", "crafted"), ("mahjong", "extra-spaces")]]
SEEDS = [seed[:4000] for seed in SEEDS]
#: Tokens that mean something to some reader, and some that nearly do.
VOCABULARY = [b"0", b"00", b"05", b"1", b"9", b"10", b"11", b"010", b"-3", b"+5", b"#", b"#x", b"QD", b"TC",
              b"10H", b"qd", b"AS", b"1T", b"9W", b"10T", b"DONG", b"dong", b"ZHONG", b"FA", b"BAI", b"X",
              b"\xff", b"\xc3\xa9", b"\x00", b"\xef\xbb\xbf", b"9" * MAX_TOKEN, b"9" * (MAX_TOKEN + 1)]
SEPARATORS = [b" ", b"  ", b"\t", b"\n", b"\r\n", b"\n\n", b"\x0b", b"\x0c", b"\r", b""]


@contextmanager
def cpu_seconds() -> Iterator[list[float]]:
    """This thread's CPU time over the block (in the list yielded, once it ends), the garbage collector
    held off: in a test process that has run hundreds of tests, one full collection of its heap takes a
    tenth of a second or more by itself, whatever the code measured did."""
    gc.disable()
    spent: list[float] = []
    started = time.thread_time()
    try:
        yield spent
    finally:
        spent.append(time.thread_time() - started)
        gc.enable()


def read_all(game: str, data: bytes) -> list[Any]:
    """Parse ``data`` as ``game``: the cases, or the InputError; anything else fails the test."""
    engine = engines.get(game)
    warnings: list[Diagnostic] = []
    with cpu_seconds() as spent:
        try:
            cases = list(engine.parse(io.BytesIO(data), warnings))
        except InputError as error:
            assert str(error) and error.message
            assert error.line is None or error.line >= 1
            assert error.column is None or error.column >= 1
            cases = []
    assert spent[0] < SLOW, f"{game}: {spent[0]:.2f} s for {len(data)} bytes"
    assert all(isinstance(w, Diagnostic) for w in warnings)
    for number, case in enumerate(cases, start=1):
        assert case.index == number and case.line >= 1 and case.column >= 1
    for case in cases[:2]:  # what the reader accepts is canonical and solvable
        assert engine.canonical(case.text) == case.text
        engine.solve(case, trace=False)
    return cases


@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=st.binary(max_size=2048))
def test_random_bytes_raise_only_input_errors(game: str, data: bytes) -> None:
    read_all(game, data)


@st.composite
def mutated(draw: Any) -> bytes:
    """A valid judge file with one to five mutations: bytes cut, inserted or repeated, tokens
    replaced, dropped, doubled or swapped, separators changed, the file cut short."""
    data = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 5))):
        parts = re.split(rb"(\s+)", data)  # tokens at even places, separators at odd ones
        tokens = len(parts) // 2 + 1
        kind = draw(st.sampled_from(["cut", "insert", "repeat", "replace", "drop", "double", "swap",
                                     "separator", "truncate", "case"]))
        at = draw(st.integers(0, len(data)))
        if kind == "cut":
            data = data[:at] + data[at + draw(st.integers(1, 64)):]
        elif kind == "insert":
            extra = draw(st.one_of(st.binary(max_size=8), st.sampled_from(VOCABULARY + SEPARATORS)))
            data = data[:at] + extra + data[at:]
        elif kind == "repeat":
            size = draw(st.integers(1, 200))
            data = data[:at] + data[at:at + size] * draw(st.integers(2, 8)) + data[at:]
        elif kind == "truncate":
            data = data[:at]
        elif kind == "separator" and len(parts) > 1:
            k = 2 * draw(st.integers(0, len(parts) // 2 - 1)) + 1
            parts[k] = draw(st.sampled_from(SEPARATORS[:-1]))
            data = b"".join(parts)
        elif tokens:
            k = 2 * draw(st.integers(0, tokens - 1))
            if kind == "replace":
                parts[k] = draw(st.sampled_from(VOCABULARY))
            elif kind == "drop":
                parts[k] = b""
            elif kind == "double":
                parts[k] = parts[k] + b" " + parts[k]
            elif kind == "case":
                parts[k] = parts[k].swapcase()
            elif kind == "swap":
                j = 2 * draw(st.integers(0, tokens - 1))
                parts[k], parts[j] = parts[j], parts[k]
            data = b"".join(parts)
    return data


@pytest.mark.parametrize("game", GAMES)
@FUZZ
@given(data=mutated())
def test_mutated_judge_files_raise_only_input_errors(game: str, data: bytes) -> None:
    read_all(game, data)


#: The layouts the generated files are made in (``dealer generate --layout``), by whether a game's cases wrap.
LAYOUTS = {True: ["", "per-line=13", "per-line=52", "per-line=20", "flow,per-line=20", "per-line=7,flow,crlf",
                  "ragged", "per-line=13,no-terminator,no-final-newline"],
           False: ["", "crlf", "ragged", "sorted,no-terminator"]}


@st.composite
def layout_mutated(draw: Any) -> tuple[str, bytes]:
    """A generated file of some game in some layout with one to four layout faults, each at any line of the
    file as the faults before it left it."""
    game = draw(st.sampled_from(GAMES))
    out = io.BytesIO()
    layout = draw(st.sampled_from(LAYOUTS[engines.get(game).unit == "deck"]))
    generate(plan(game, draw(st.integers(1, 8)), draw(st.integers(0, 2**32)), None, layout or None), out)
    data = out.getvalue()
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(KINDS))
        least = 2 if kind in ("short-line", "split-line") else 1
        lines = [n for n, line in enumerate(data.splitlines(), 1) if len(line.split()) >= least]
        if lines:
            data = edit(data, kind, draw(st.sampled_from(lines)))
    return game, data


@FUZZ
@given(mutant=layout_mutated())
def test_layout_faults_raise_only_input_errors_and_are_read_past(mutant: tuple[str, bytes]) -> None:
    """Read strictly, a file with layout faults gives cases or an InputError; read past its faults, good
    cases, canonical and numbered in file order, and its faults each at a line of the file, in order (or
    an InputError for what no reading goes on past: a file of no good case)."""
    game, data = mutant
    read_all(game, data)
    engine, faults, cases = engines.get(game), Faults(), []
    with cpu_seconds() as spent:
        try:
            cases.extend(engine.parse(io.BytesIO(data), [], faults))
        except InputError as error:
            assert error.message
    assert spent[0] < SLOW, f"{game}: {spent[0]:.2f} s for {len(data)} bytes read past its faults"
    assert [case.index for case in cases] == sorted({case.index for case in cases})
    assert all(engine.canonical(case.text) == case.text for case in cases)
    lines = [fault.line for fault in faults.first]
    assert faults.count >= len(lines) and lines == sorted(lines)
    assert all(line is not None and 1 <= line <= data.count(b"\n") + 1 for line in lines)


@FUZZ
@given(head=st.binary(max_size=600), extra=st.integers(0, 100))
def test_upload_checks_take_any_bytes(head: bytes, extra: int) -> None:
    message = sniff_upload(head, len(head) + extra)
    assert message is None or isinstance(message, str)
    assert engines.detect(head) in (None, *GAMES)
    for game in GAMES:
        assert isinstance(engines.get(game).sniff(head), bool)


@FUZZ
@given(lines=st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=12),
       limit=st.integers(1, 20), size=st.integers(1, 40))
def test_the_line_reader_passes_exactly_what_fits(lines: list[bytes], limit: int, size: int) -> None:
    data = b"\n".join(lines)
    reader = LineLimitReader(io.BytesIO(data), limit)
    too_long = [n for n, line in enumerate(lines, start=1) if len(line) > limit]
    read = b""
    try:
        while chunk := reader.read(size):
            read += chunk
    except InputError as error:
        assert too_long and error.line == too_long[0]
        assert str(error).startswith(f"line {too_long[0]}: the line is longer than the limit of {limit} byte")
    else:
        assert not too_long and read == data


# --- what fuzzing found once, kept as regression tests -------------------------------------------


def test_found_a_10_20_30_token_of_4301_digits() -> None:
    assert read_all("10-20-30", b"2 " + b"1" * 4301 + b"\n0\n") == []  # an InputError, not a ValueError


def test_found_accordion_decks_on_one_line_are_slow() -> None:
    """Fuzzing found many decks on one line slow to read. The time grows as the line does: eight times the
    decks, about eight times the time (were it quadratic, 64), each the least of three runs' CPU time, so
    that no pause of the machine's counts. Both lines are long enough (from about 1,000 decks) that the native
    core leaves them to the Python reader, the one fuzzing found slow: a shorter line is read faster, so a pair
    across that length would measure the change of reader, not the growth."""
    deck = b" ".join((JUDGE_DATA / "accordion" / "sample.in").read_bytes().split()[:52])
    engine = engines.get("accordion")

    def least(decks: int) -> float:
        data = b" ".join([deck] * decks) + b"\n#\n"
        runs = []
        for _ in range(3):
            with cpu_seconds() as spent:
                assert sum(1 for _ in engine.parse(io.BytesIO(data), [])) == decks
            runs.append(spent[0])
        return min(runs)

    short, long = least(1_600), least(12_800)
    assert long < 24 * short + 0.05, f"1,600 decks on a line: {short * 1000:.1f} ms; 12,800: {long * 1000:.1f} ms"
