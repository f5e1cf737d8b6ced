"""Reading rules the two deck games share: a deck is 52 tokens whatever the whitespace."""

from __future__ import annotations

import io
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engines.test_accordion import decks as accordion_decks
from tests.engines.test_ten_twenty_thirty import decks as ten_twenty_thirty_decks
from worker import engines
from worker.engines.base import Diagnostic

DECKS = {"10-20-30": ten_twenty_thirty_decks, "accordion": accordion_decks}


def parse(game: str, data: bytes) -> tuple[list[str], list[Diagnostic]]:
    warnings: list[Diagnostic] = []
    return [case.text for case in engines.get(game).parse(io.BytesIO(data), warnings)], warnings


@pytest.mark.parametrize("game", DECKS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_whitespace_layout_reads_the_same(game: str, data: st.DataObject) -> None:
    texts = data.draw(st.lists(DECKS[game], min_size=1, max_size=3))
    spaces = st.text(alphabet=" \t\r\n\x0b\x0c", min_size=1, max_size=3)
    text = data.draw(st.text(alphabet=" \t\r\n", max_size=2))
    for card in " ".join(texts).split():
        text += card + data.draw(spaces)
    assert parse(game, (text + engines.get(game).terminator).encode()) == (texts, [])


@pytest.mark.parametrize("game", DECKS)
def test_generate_writes_two_lines_a_deck_reads(game: str) -> None:
    engine = engines.get(game)
    rng = random.Random(11)
    for _ in range(20):
        text = engine.generate(rng)
        assert [len(line.split()) for line in text.split("\n")] == [26, 26] and not text.endswith("\n")
        cases, _ = parse(game, f"{text}\n{engine.terminator}\n".encode())
        assert cases == [" ".join(text.split())]
