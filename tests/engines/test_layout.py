"""Deck files read by their layout (:mod:`worker.engines.layout`): a mistake of one line is one fault,
named at a line of the deck it touched, and every other deck is kept; the native core and the
pure-Python readers give the same cases, faults and warnings, whole and in blocks."""

from __future__ import annotations

import io
import random

import pytest

from tests.engines.test_native import cores
from worker.engines.engine import Engine
from worker.engines.layout import Layout, learn
from worker.engines.reading import Diagnostic, Faults
from worker.generating.stream import generate, plan

DECKS = 40
#: What a mistake does to the lines of a file: (its lines, where) → its lines.
MISTAKES = {
    "short": lambda lines, k: lines[:k] + [b" ".join(lines[k].split()[:-6])] + lines[k + 1 :],
    "long": lambda lines, k: lines[:k] + [lines[k] + b" " + b" ".join(lines[k].split()[:4])] + lines[k + 1 :],
    "split": lambda lines, k: lines[:k] + [b" ".join(lines[k].split()[:5]), b" ".join(lines[k].split()[5:])]
    + lines[k + 1 :],
    "missing line": lambda lines, k: lines[:k] + lines[k + 1 :],
    "doubled line": lambda lines, k: lines[: k + 1] + lines[k:],
    "stray token": lambda lines, k: lines[:k] + [lines[k].replace(b" ", b" 7C ", 1)] + lines[k + 1 :],
    "missing token": lambda lines, k: lines[:k] + [lines[k].split(b" ", 1)[1]] + lines[k + 1 :],
    "bad token": lambda lines, k: lines[:k] + [b"XX " + lines[k].split(b" ", 1)[1]] + lines[k + 1 :],
}
GAMES = ("accordion", "10-20-30")


def judge_file(game: str, layout: str, seed: int = 5) -> list[bytes]:
    """The lines of a generated file, its terminator last (``blank``: with a blank line after each deck)."""
    out = io.BytesIO()
    generate(plan(game, DECKS, seed, layout=layout.removesuffix(",blank") or None), out)
    lines = out.getvalue().replace(b"\r\n", b"\n").split(b"\n")[:-1]
    if layout.endswith(",blank"):
        lines = [line + b"\n" if k % 2 else line for k, line in enumerate(lines)]
    return lines


def reading(engine: Engine, data: bytes) -> tuple[list[tuple[int, str, int, int]], list[str], int, int | None,
                                                   list[str]]:
    """What a file reads as, faults read past: its cases, first faults, fault count, first fault's
    case, warnings."""
    faults, warnings = Faults(), list[Diagnostic]()
    cases = [(c.index, c.text, c.line, c.column) for c in engine.parse(io.BytesIO(data), warnings, faults)]
    return cases, [str(fault) for fault in faults.first], faults.count, faults.case, [str(w) for w in warnings]


def blocks(engine: Engine, data: bytes) -> tuple[list[tuple[bytes, int, int]], list[str], int]:
    faults, warnings = Faults(), list[Diagnostic]()
    read = engine.read_inputs(io.BytesIO(data), warnings, max_cases=7, faults=faults)
    taken = [(texts, count, read.first) for texts, count in read]
    return taken, [str(fault) for fault in faults.first], faults.count


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("layout", ["per-line=26", "per-line=13", "per-line=20", "per-line=52", "per-line=40"])
@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_a_mistake_of_one_line_is_one_fault_and_the_other_decks_are_kept(game: str, layout: str,
                                                                         mistake: str) -> None:
    pure, fast = cores(game)
    per_line = int(layout.split("=")[1])
    lines_a_deck = -(-52 // per_line)
    lines = judge_file(game, layout)
    rng = random.Random(f"{game}{layout}{mistake}")
    deck = rng.randrange(3, DECKS - 3)
    k = deck * lines_a_deck + rng.randrange(lines_a_deck)
    data = b"\n".join(MISTAKES[mistake](lines, k)) + b"\n"
    ours = reading(fast, data)
    assert ours == reading(pure, data)
    assert blocks(fast, data) == blocks(pure, data)
    cases, first, count, _, warnings = ours
    assert not warnings
    if lines_a_deck == 1 and mistake in ("missing line", "doubled line"):  # a deck gone, or twice
        assert count == 0 and len(cases) == DECKS + (1 if mistake == "doubled line" else -1)
        return
    if mistake == "split":  # the judge reads cards whatever the lines: still a good file
        assert count == 0 and [text for _, text, _, _ in cases] == [
            case.text for case in pure.parse(io.BytesIO(b"\n".join(lines) + b"\n"))]
        return
    assert count == 1, first
    kept = {text for _, text, _, _ in cases}
    original = {case.text for case in pure.parse(io.BytesIO(b"\n".join(lines) + b"\n"))}
    assert len(original - kept) <= 1 and len(cases) >= DECKS - 1
    touched = range(deck * lines_a_deck + 1, deck * lines_a_deck + lines_a_deck + 2)
    assert int(first[0].split(",")[0].removeprefix("line ")) in touched, first


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("layout", ["flow,per-line=20", "flow,per-line=30", "per-line=26,crlf", "per-line=26,blank", "ragged"])
@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_both_cores_read_every_layout_alike(game: str, layout: str, mistake: str) -> None:
    """Flow layouts too: a mistake touches at most the two decks its line holds cards of."""
    pure, fast = cores(game)
    lines = judge_file(game, layout, seed=9)
    data = b"\n".join(MISTAKES[mistake](lines, len(lines) // 2)) + b"\n"
    for crlf in (False, True):
        data = data.replace(b"\n", b"\r\n") if crlf else data
        ours = reading(fast, data)
        assert ours == reading(pure, data)
        assert blocks(fast, data) == blocks(pure, data)
        if layout.startswith("flow"):
            assert ours[2] <= 2 and len(ours[0]) >= DECKS - 3, ours[1]


@pytest.mark.parametrize(("layout", "learnt"), [("per-line=26", Layout(26)), ("per-line=20", Layout(20)),
                                                ("flow,per-line=20", Layout(20, True)), ("per-line=52", Layout(52)),
                                                ("ragged", None)])
def test_the_layout_is_learnt_from_the_first_lines(layout: str, learnt: Layout | None) -> None:
    pure, _ = cores("accordion")
    assert pure.judge_file.rules is not None
    lines = judge_file("accordion", layout)
    lines[1] = b" ".join(lines[1].split()[:3])  # a mistake among them
    assert learn(b"\n".join(lines) + b"\n", True, pure.judge_file.rules.stops) == learnt


def test_a_bad_hand_is_one_fault() -> None:
    """Mahjong's hands are a line each: a line short, long or doubled is one fault or none."""
    pure, fast = cores("mahjong")
    lines = judge_file("mahjong", "", seed=3)
    for mistake in ("short", "long", "missing line", "doubled line", "stray token", "bad token"):
        data = b"\n".join(MISTAKES[mistake](lines, DECKS // 2)) + b"\n"
        ours = reading(fast, data)
        assert ours == reading(pure, data)
        assert ours[2] == (0 if mistake in ("missing line", "doubled line") else 1), (mistake, ours[1])
