"""What ``--mix`` and ``--layout`` accept, what they refuse and why, and the exact shares."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worker.generating import GenerateError, plan
from worker.generating.layout import parse_layout
from worker.generating.makers import maker
from worker.generating.mix import apportion, parse_mix


@given(total=st.integers(0, 10**7), weights=st.lists(st.fractions(min_value=0, max_value=1000), min_size=1, max_size=6))
def test_apportion_is_exact_to_a_case(total: int, weights: list[Fraction]) -> None:
    if not sum(weights):
        weights[0] = Fraction(1)
    shares = apportion(total, weights)
    assert sum(shares) == total
    for share, weight in zip(shares, weights, strict=True):
        assert abs(share - Fraction(total) * weight / sum(weights)) < 1


@pytest.mark.parametrize(("game", "text", "buckets"), [
    ("10-20-30", "win=1,loss=1,draw=1", [("win", 0, 0), ("loss", 1, 1), ("draw", 2, 2)]),
    ("accordion", " 1 = 1 , 2-5=2,6+=1/2", [("1", 1, 1), ("2-5", 2, 5), ("6+", 6, 52)]),
    ("accordion", "win=1,loss=3", [("win", 1, 1), ("loss", 2, 52)]),
    ("mahjong", "ready=3,not-ready=1", [("ready", 1, 9), ("not-ready", 0, 0)]),
    ("mahjong", "0=1,9=0.5", [("0", 0, 0), ("9", 9, 9)]),
])
def test_mixes_name_outcomes_and_numbers(game: str, text: str, buckets: list[tuple[str, int, int]]) -> None:
    mix = parse_mix(maker(game), text)
    assert [(b.label, b.low, b.high) for b in mix.buckets] == buckets


@pytest.mark.parametrize(("game", "text", "message"), [
    ("10-20-30", "tie=1", 'has no outcome "tie" (expected win, loss, draw)'),
    ("10-20-30", "3=1", "10-20-30 is mixed by outcome (win, loss, draw), not by number"),
    ("accordion", "draw=1", 'accordion has no outcome "draw"'),
    ("accordion", "53=1", "no deck leaves 53 piles: a deck leaves 1 to 52 piles"),
    ("accordion", "0=1", "no deck leaves 0 piles"),
    ("accordion", "50-60=1", "50-60 goes beyond what can be"),
    ("accordion", "5-3=1", "5-3 is an empty range"),
    ("accordion", "loss=1,5=1", "loss and 5 overlap"),
    ("mahjong", "10+=1", "no hand waits for 10+ tiles: a hand waits for 0 to 9 tiles"),
    ("mahjong", "ready=0", "the weight of ready is 0: leave ready out to have none"),
    ("mahjong", "ready=-1", "the weight of ready is negative"),
    ("mahjong", "ready=x", 'the weight of ready, "x", is not a number'),
    ("mahjong", "ready=1/0", "is not a number"),
    ("mahjong", "ready", '"ready" is not KEY=WEIGHT'),
    ("mahjong", "ready=1,ready=2", "ready is named twice"),
])
def test_impossible_mixes_are_refused_saying_why(game: str, text: str, message: str) -> None:
    with pytest.raises(GenerateError, match=message.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        parse_mix(maker(game), text)


@pytest.mark.parametrize(("game", "text", "message"), [
    ("mahjong", "per-line=3", "a mahjong hand is one line"),
    ("accordion", "per-line=0", "per-line takes a number of cards from 1 to 52"),
    ("10-20-30", "per-line=x", "per-line takes a number"),
    ("mahjong", "flow", "flow is for decks"),
    ("accordion", "sorted", "sorted is for mahjong hands"),
    ("accordion", "crlf=1", "crlf takes no value"),
    ("accordion", "wavy", '"wavy" is not a layout'),
    ("accordion", "crlf,crlf", "crlf is given twice"),
    ("10-20-30", "ragged,per-line=13", "ragged makes its own lines"),
])
def test_impossible_layouts_are_refused_saying_why(game: str, text: str, message: str) -> None:
    with pytest.raises(GenerateError, match=message):
        parse_layout(maker(game), text)


@pytest.mark.parametrize(("arguments", "field"), [
    ({"cases": 0}, "cases"), ({"cases": 100_000_001}, "cases"), ({"seed": -1}, "seed"), ({"seed": 2**64}, "seed"),
    ({"mix": "draw=1", "game": "accordion"}, "mix"), ({"layout": "wavy"}, "layout"), ({"honours": False}, "honours"),
])
def test_a_plan_names_what_is_wrong(arguments: dict[str, object], field: str) -> None:
    given_ = {"game": "10-20-30", "cases": 10, "seed": 1} | arguments
    with pytest.raises(GenerateError) as error:
        plan(**given_)  # type: ignore[arg-type]
    assert error.value.field == field and str(error.value).startswith(f"{field}: ")
