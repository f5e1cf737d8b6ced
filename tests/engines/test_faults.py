"""A reading that goes on past bad cases (``Faults``): each bad case noted where it is and skipped, keeping
its place, so that the cases after it are those of a good file; a reading without ``Faults`` stops at the
first, as before. The native core (which hands a file over to the game's own reader at its first line
that is not plain) and the pure-Python engines read every file alike, as cases and as blocks.
"""

from __future__ import annotations

import io
import itertools
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engines.samples import CASES, DECK1, DECK2, DRAW, LOSS, WIN
from tests.engines.test_native import EXAMPLES
from worker import engines
from worker.engines import get, native
from worker.engines.engine import Engine
from worker.engines.reading import FAULTS_KEPT, Case, Diagnostic, Faults, InputError

FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
games = pytest.mark.parametrize("game", engines.names())

GOOD = {"10-20-30": [WIN, LOSS, DRAW], "accordion": [DECK1, DECK2],
        "mahjong": ["1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA", "1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI"]}


def cores(game: str) -> tuple[Engine, Engine]:
    """The game's engine on the pure-Python core and on the native one (``test_native`` fails where it is
    not built)."""
    engine = get(game)
    core = native.compiled(type(engine).__module__.rsplit(".", 1)[0])
    if core is None:
        pytest.skip("no native core")
    return type(engine)(None), type(engine)(core)


def kept(engine: Engine, data: bytes) -> tuple[list[Case], Faults, list[str], str | None]:
    """A file read past its faults: its good cases, its faults, its warnings, and the error that ended the
    reading, if one did (bytes that are not text)."""
    faults, warnings, cases = Faults(), list[Diagnostic](), []
    try:
        cases.extend(engine.parse(io.BytesIO(data), warnings, faults))
    except InputError as error:
        return cases, faults, [str(w) for w in warnings], str(error)
    return cases, faults, [str(w) for w in warnings], None


def blocks(engine: Engine, data: bytes, size: int) -> tuple[list[tuple[int, int, bytes]], list[str]]:
    """The file read past its faults as blocks of ``size`` cases: each block's first case, count and texts."""
    faults = Faults()
    read = engine.read_inputs(io.BytesIO(data), [], max_cases=size, faults=faults)
    found = []
    try:
        for texts, count in read:
            found.append((read.first, count, texts))
    except InputError as error:
        found.append((0, 0, str(error).encode()))
    return found, [str(fault) for fault in faults.first]


def written(game: str, cases: list[str]) -> bytes:
    """Cases as the problem writes them (a deck on two lines of 26, a hand on a line), then the terminator."""
    lines = []
    for text in cases:
        tokens = text.split()
        lines += [" ".join(tokens)] if game == "mahjong" else [" ".join(tokens[:26]), " ".join(tokens[26:])]
    return ("\n".join(lines) + f"\n{get(game).terminator}\n").encode()


def marks(data: bytes) -> list[tuple[int, int]]:
    """The line and column of each ``X`` in a file."""
    return [(line, found.start() + 1) for line, text in enumerate(data.split(b"\n"), 1)
            for found in re.finditer(rb"(?<!\S)X(?!\S)", text)]


def spoilt(text: str, at: int, token: str = "X") -> str:
    tokens = text.split()
    tokens[at] = token
    return " ".join(tokens)


@games
def test_a_bad_case_keeps_its_place_and_the_reading_goes_on(game: str) -> None:
    good = GOOD[game]
    cases = [good[0], spoilt(good[1], 30 if game != "mahjong" else 3), good[0], spoilt(good[0], 0), good[1]]
    data = written(game, cases)
    for engine in cores(game):
        found, faults, warnings, end = kept(engine, data)
        assert [(case.index, case.text) for case in found] == [(1, good[0]), (3, good[0]), (5, good[1])]
        assert (faults.count, faults.case, warnings, end) == (2, 2, [], None)
        assert [(fault.line, fault.column) for fault in faults.first] == marks(data)
        assert all('"X"' in fault.message for fault in faults.first)
        with pytest.raises(InputError) as strict:
            list(engine.parse(io.BytesIO(data)))
        assert str(strict.value) == str(faults.first[0])


@games
def test_every_case_bad_is_no_file_without_cases(game: str) -> None:
    data = written(game, [spoilt(text, 0) for text in GOOD[game]])
    for engine in cores(game):
        found, faults, warnings, end = kept(engine, data)
        assert (found, faults.count, faults.case, warnings, end) == ([], len(GOOD[game]), 1, [], None)


@games
def test_a_hundred_faults_are_kept_and_all_counted(game: str) -> None:
    data = written(game, [spoilt(GOOD[game][0], 0)] * 150 + [GOOD[game][1]])
    for engine in cores(game):
        found, faults, _, _ = kept(engine, data)
        assert [case.index for case in found] == [151]
        assert (len(faults.first), faults.count) == (FAULTS_KEPT, 150)


def test_a_deck_not_standard_is_skipped_whole() -> None:
    data = written("10-20-30", [WIN, spoilt(WIN, 5, "1"), LOSS])
    for engine in cores("10-20-30"):
        found, faults, _, _ = kept(engine, data)
        assert [case.index for case in found] == [1, 3]
        assert [str(fault) for fault in faults.first] == [
            "line 3, column 1: deck 2 is not a standard deck: 5 cards of value 1 (at most 4)"]


def test_a_card_twice_is_a_bad_deck_and_the_next_is_read() -> None:
    data = written("accordion", [DECK1, spoilt(DECK1, 40, DECK1.split()[0]), DECK2])
    for engine in cores("accordion"):
        found, faults, _, _ = kept(engine, data)
        assert [case.index for case in found] == [1, 3]
        assert [str(fault) for fault in faults.first] == ["line 4, column 43: QD appears twice in deck 2"]


def test_the_terminator_inside_a_bad_deck_ends_the_input() -> None:
    data = (DECK1 + "\n" + spoilt(DECK2, 3) + "\n").encode().replace(b" JH 7S", b" # 7S", 1) + DECK1.encode()
    for engine in cores("accordion"):
        found, faults, warnings, end = kept(engine, data)
        assert ([case.index for case in found], faults.count, end) == ([1], 1, None)
        assert warnings == ['line 2, column 134: text after the terminating "#" is ignored']


@games
def test_a_case_the_file_ends_in_is_a_fault(game: str) -> None:
    cut = " ".join(GOOD[game][1].split()[:7])
    data = (" ".join(GOOD[game][0].split()) + "\n" + cut + "\n").encode()
    for engine in cores(game):
        found, faults, warnings, _ = kept(engine, data)
        assert [case.index for case in found] == [1] and faults.case == 2
        assert faults.first[0].line == 2 and str(faults.first[0]).split(": ", 1)[1] in {
            "deck 2 ends at end of file after 7 of 52 cards", "hand has 7 tiles, expected 13"}
        assert warnings == [f'no terminating "{engine.terminator}" at end of file']


@games
def test_blocks_end_at_a_bad_case_and_the_next_starts_at_its_place(game: str) -> None:
    rng = random.Random(5)
    texts = [next(iter(get(game).parse(io.BytesIO(get(game).generate(rng).encode())))).text for _ in range(40)]
    bad = {3, 17, 18, 40}
    data = written(game, [spoilt(text, 0) if place in bad else text for place, text in enumerate(texts, 1)])
    pure, fast = cores(game)
    assert blocks(fast, data, 7) == blocks(pure, data, 7)
    found, faults = blocks(fast, data, 7)
    assert len(faults) == len(bad)
    good = [place for place in range(1, 41) if place not in bad]
    assert [first + k for first, count, _ in found for k in range(count)] == good
    assert b"".join(block for _, _, block in found) == "".join(texts[place - 1] + "\n" for place in good).encode()
    runs = [list(run) for _, run in itertools.groupby(enumerate(good), lambda pair: pair[1] - pair[0])]
    assert all(any(first == run[0][1] for first, _, _ in found) for run in runs)  # every run starts a block


_SPOILERS = ["X", "0", "11", "ac", "1", "#", "AS", "FA", "1S 2S", "\n", "\n\n", "\xff"]


@pytest.mark.slow
@games
@FUZZ
@given(data=st.data())
def test_both_cores_read_past_faults_alike(game: str, data: st.DataObject) -> None:
    """Cases with tokens swapped for others (good or bad) and lines broken anywhere: the native core
    and the pure one keep the same cases, name the same faults and warnings, and give the same blocks;
    and the first fault is the error a reading without faults stops at, after the same cases."""
    pure, fast = cores(game)
    cases = data.draw(st.lists(CASES[game], max_size=10))
    tokens = " ".join(cases).split()
    for _ in range(data.draw(st.integers(0, 4))):
        if tokens:
            tokens[data.draw(st.integers(0, len(tokens) - 1))] = data.draw(st.sampled_from(_SPOILERS))
    width = data.draw(st.integers(1, 60))
    lines = [" ".join(tokens[at : at + width]) for at in range(0, len(tokens), width)]
    body = ("\n".join(lines) + data.draw(st.sampled_from(["\n", "", f"\n{pure.terminator}\n"]))).encode(
        "utf-8", "surrogateescape")
    read = kept(pure, body)
    assert _shown(kept(fast, body)) == _shown(read)
    size = data.draw(st.integers(1, 5))
    assert blocks(fast, body, size) == blocks(pure, body, size)
    found, faults, _, end = read
    strict: list[Case] = []
    try:
        strict.extend(pure.parse(io.BytesIO(body), []))
        error = None
    except InputError as stopped:
        error = str(stopped)
    if faults:
        assert error == str(faults.first[0])
        assert strict == [case for case in found if case.index < (faults.case or 0)]
    else:
        assert (strict, error) == (found, end)


def _shown(read: tuple[list[Case], Faults, list[str], str | None]) -> tuple[object, ...]:
    found, faults, warnings, end = read
    return found, [str(fault) for fault in faults.first], faults.count, faults.case, warnings, end
