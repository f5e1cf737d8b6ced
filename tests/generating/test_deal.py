"""The generator's compiled core against its Python twin: the same draws from the same stream,
the same texts and bytes, so that a file does not depend on the core that made it."""

from __future__ import annotations

import os
import shutil
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.engines import native
from worker.generating import deal
from worker.generating.makers import TEN_TWENTY_THIRTY_DECK, MahjongMaker
from worker.generating.prng import M64, Rng

seeds = st.integers(0, M64)


@pytest.fixture(scope="module")
def core() -> ModuleType:
    built = native.compiled("worker.generating")
    if built is None:
        if shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc"):
            pytest.fail("the generator's core is not built, though there is a C compiler: run make install")
        pytest.skip("no native core and no C compiler to build one")
    return built


@settings(max_examples=200, deadline=None)
@given(seed=seeds, take=st.integers(1, 52), count=st.integers(0, 20),
       tokens=st.sampled_from([TEN_TWENTY_THIRTY_DECK, MahjongMaker().wall, ("a", "b")]))
def test_shuffles_match(core: ModuleType, seed: int, take: int, count: int, tokens: tuple[str, ...]) -> None:
    take = min(take, len(tokens))
    python = Rng(seed)
    texts = deal.shuffles_py(python, tokens, count, take)
    assert core.shuffles(seed, list(tokens), count, take) == (texts, python.state)
    assert all(len(text.split(" ")) == take for text in texts)


@settings(max_examples=200, deadline=None)
@given(seed=seeds, count=st.integers(0, 30), starts=st.integers(1, 5))
def test_swaps_match(core: ModuleType, seed: int, count: int, starts: int) -> None:
    decks = deal.shuffles_py(Rng(seed ^ 1), TEN_TWENTY_THIRTY_DECK, starts, 52)
    python = Rng(seed)
    texts = deal.swaps_py(python, decks, count)
    assert core.swaps(seed, decks, count) == (texts, python.state)
    for text in texts:  # a swap of two different cards: the same cards, two places changed
        assert sorted(text.split()) == sorted(TEN_TWENTY_THIRTY_DECK)
        assert min(sum(a != b for a, b in zip(text.split(), deck.split(), strict=True)) for deck in decks) == 2


@settings(max_examples=200, deadline=None)
@given(seed=seeds, count=st.integers(0, 6), per_line=st.integers(1, 60), flow=st.booleans(), crlf=st.booleans(),
       start=st.integers(0, 59))
def test_lay_matches(core: ModuleType, seed: int, count: int, per_line: int, flow: bool, crlf: bool,
                     start: int) -> None:
    texts = deal.shuffles_py(Rng(seed), TEN_TWENTY_THIRTY_DECK, count, 52)
    start %= per_line
    laid = deal.lay_py(texts, per_line, flow, crlf, start)
    assert core.lay(texts, per_line, flow, crlf, start) == laid
    assert laid.split() == " ".join(texts).encode().split()
    lines = laid.split(b"\r\n" if crlf else b"\n")
    assert all(len(line.split()) <= per_line for line in lines)


def test_the_core_refuses_what_it_cannot_draw(core: ModuleType) -> None:
    with pytest.raises(ValueError):
        core.shuffles(1, ["a"] * 300, 1, 3)
    with pytest.raises(ValueError):
        core.shuffles(1, ["a", "b"], 1, 3)
    with pytest.raises(ValueError):
        core.swaps(1, [], 1)
    with pytest.raises(ValueError):
        core.lay(["café"], 2, False, False, 0)


def test_bounded_draws_are_uniform_enough() -> None:
    rng = Rng(5)
    counts = [0] * 7
    for _ in range(70_000):
        counts[rng.below(7)] += 1
    assert all(abs(count - 10_000) < 500 for count in counts)  # 5 sigma is about 450
