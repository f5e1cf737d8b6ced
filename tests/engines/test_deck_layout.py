"""Reading rules the two deck games share: a deck is 52 tokens whatever the whitespace."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engines.samples import card_decks, parse, standard_decks, stream
from worker import engines

DECKS = {"10-20-30": standard_decks, "accordion": card_decks}


@pytest.mark.parametrize("game", DECKS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_whitespace_layout_reads_the_same(game: str, data: st.DataObject) -> None:
    engine = engines.get(game)
    texts = data.draw(st.lists(DECKS[game], min_size=1, max_size=3))
    spaces = st.text(alphabet=" \t\r\n\x0b\x0c", min_size=1, max_size=3)
    text = data.draw(st.text(alphabet=" \t\r\n", max_size=2))
    for card in " ".join(texts).split():
        text += card + data.draw(spaces)
    cases, warnings = parse(engine, (text + engine.terminator).encode())
    assert ([case.text for case in cases], warnings) == (texts, [])


@pytest.mark.parametrize("game", DECKS)
def test_generate_writes_two_lines_a_deck_reads(game: str) -> None:
    engine = engines.get(game)
    rng = random.Random(11)
    for _ in range(20):
        text = engine.generate(rng)
        assert [len(line.split()) for line in text.split("\n")] == [26, 26] and not text.endswith("\n")
        cases, _ = parse(engine, f"{text}\n{engine.terminator}\n".encode())
        assert [case.text for case in cases] == [" ".join(text.split())]


#: Peak bytes reading one endless line: accordion keeps the token columns of the 64 KiB
#: piece decks start in, a bound that does not grow with the line.
ONE_LINE_PEAK = {"10-20-30": 4 << 20, "accordion": 10 << 20}


@pytest.mark.slow
@pytest.mark.parametrize("game", DECKS)
def test_thousands_of_decks_on_one_line_take_little_memory(game: str) -> None:
    engine = engines.get(game)

    def parts() -> Iterator[bytes]:
        rng = random.Random(5)
        line = b" ".join(engine.generate(rng).encode().replace(b"\n", b" ") for _ in range(100)) + b" "
        for _ in range(50):  # 5,000 decks on one line
            yield line
        yield f"\n{engine.terminator}\n".encode()

    tracemalloc.start()
    try:
        cases = [(case.line, case.column) for case in engine.parse(stream(parts()), [])]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(cases) == 5_000 and {line for line, _ in cases} == {1}
    assert peak < ONE_LINE_PEAK[game], f"peak {peak} bytes"
