"""Accordian Patience (UVa 127): what is particular to this game (``test_contract.py`` checks
what every engine shares): its reading rules and errors, its traces, and its fast
loop, traced or not, against the rules written plainly."""

from __future__ import annotations

import json
import random
import re
import threading
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.engines import samples
from tests.engines.samples import DECK1, DECK2, two_lines
from tests.support.paths import JUDGE_DATA, judge_files
from worker.engines.accordion import CARDS, ENGINE
from worker.engines.accordion.cards import NUMBER, TABLE_SIZE, masks_of
from worker.engines.accordion.play import play
from worker.engines.accordion.trace import PILES, replay_play
from worker.engines.reading import Case, Diagnostic, InputError
from worker.engines.results import TraceError

SAMPLE = JUDGE_DATA / "accordion" / "sample.in"
decks = samples.card_decks


def parse(data: bytes) -> tuple[list[Case], list[Diagnostic]]:
    return samples.parse(ENGINE, data)


def error(data: bytes) -> InputError:
    return samples.error(ENGINE, data)


def naive_sizes(deck: str) -> list[int]:
    """The rules written as plainly as possible: after each deal, move the leftmost card that can, again."""

    def match(a: str, b: str) -> bool:
        return a[0] == b[0] or a[1] == b[1]

    piles: list[list[str]] = []
    for card in deck.split():
        piles.append([card])
        moved = True
        while moved:
            moved = False
            for i in range(len(piles)):
                for distance in (3, 1):
                    if i >= distance and match(piles[i][-1], piles[i - distance][-1]):
                        piles[i - distance].append(piles[i].pop())
                        if not piles[i]:
                            del piles[i]
                        moved = True
                        break
                if moved:
                    break
    return [len(pile) for pile in piles]


# --------------------------------------------------------------------- the engine as a whole


def test_judge_files_have_no_repeated_cards() -> None:
    # Checked because a deck holding a card twice is refused: the shipped data must still read.
    for path in judge_files("accordion"):
        tokens = path.read_bytes().split()
        tokens = tokens[: tokens.index(b"#")]
        for start in range(0, len(tokens), 52):
            assert len(set(tokens[start : start + 52])) == 52, path


def test_sample() -> None:
    cases, warnings = parse(SAMPLE.read_bytes())
    assert [c.text for c in cases] == [DECK1, DECK2]
    assert [(c.index, c.line, c.column) for c in cases] == [(1, 1, 1), (2, 3, 1)]
    first, second = (ENGINE.solve(c) for c in cases)
    assert (first.outcome, first.number, first.detail, first.line) == (
        "loss", 6, [40, 8, 1, 1, 1, 1], "6 piles remaining: 40 8 1 1 1 1")
    assert (second.outcome, second.number, second.detail, second.line) == (
        "win", 1, [52], "1 pile remaining: 52")
    assert warnings == []


def test_solve_reads_any_whitespace_and_refuses_bad_text() -> None:
    spread = two_lines(DECK1).replace(" ", "\t")
    assert ENGINE.solve(Case(1, spread)).line == "6 piles remaining: 40 8 1 1 1 1"
    with pytest.raises(InputError, match='"1H" is not a card'):
        ENGINE.solve(Case(1, DECK1.replace("QD", "1H")))
    with pytest.raises(InputError, match="^AD appears twice in the deck$"):
        ENGINE.solve(Case(1, DECK1.replace("QD", "AD")))
    with pytest.raises(InputError, match="^a deck is 52 cards, not 51$"):
        ENGINE.solve(Case(1, DECK1[3:]))


def test_solve_from_many_threads_at_once() -> None:
    rng = random.Random(7)
    texts = [ENGINE.generate(rng) for _ in range(300)]
    expected = [ENGINE.solve(Case(i, t), trace=False).line for i, t in enumerate(texts)]
    found: list[list[str]] = []

    def work() -> None:
        found.append([ENGINE.solve(Case(i, t), trace=i % 2 == 0).line for i, t in enumerate(texts)])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [expected] * 4


# --------------------------------------------------------------------- reading rules


def test_layouts_read_the_same() -> None:
    canonical = [DECK1, DECK2]
    cards = (DECK1 + " " + DECK2).split()
    layouts = {
        "one deck a line": DECK1 + "\n" + DECK2 + "\n#\n",
        "crlf": (two_lines(DECK1) + "\n" + two_lines(DECK2) + "\n#\n").replace("\n", "\r\n"),
        "tabs and blank lines": (
            "\n\n\t" + "\t\t".join(cards[:60]) + "\n\n  " + "  ".join(cards[60:]) + " \n\n#"
        ),
        "one card a line": "\n".join(cards) + "\n#\n",
        "all on one line": " ".join(cards) + " #",
        "thirteen a line": "\n".join(" ".join(cards[k : k + 13]) for k in range(0, 104, 13)) + "\n#",
        "forty a line": "\n".join(" ".join(cards[k : k + 40]) for k in range(0, 104, 40)) + "\n#",
        "vertical tab and form feed": "\x0b".join(cards[:52]) + "\x0c" + " ".join(cards[52:]) + "\n#",
    }
    for name, text in layouts.items():
        cases, warnings = parse(text.encode())
        assert [c.text for c in cases] == canonical, name
        assert warnings == [], name


def test_case_positions() -> None:
    cards = (DECK1 + " " + DECK2).split()
    lines = ["  " + " ".join(cards[:40]), " ".join(cards[40:70]), "\t" + " ".join(cards[70:]), "#"]
    text = "\n".join(lines)
    cases, _ = parse(text.encode())
    # Deck 2 starts with the 13th card of line 2: 12 cards of 3 bytes before it.
    assert [(c.line, c.column) for c in cases] == [(1, 3), (2, 37)]


def test_several_decks_on_one_line_and_a_deck_over_many() -> None:
    rng = random.Random(3)
    texts = [" ".join(ENGINE.generate(rng).split()) for _ in range(7)]
    data = " ".join(texts) + "\n#\n"
    cases, _ = parse(data.encode())
    assert [c.text for c in cases] == texts
    assert [c.column for c in cases] == [1 + 156 * k for k in range(7)]


def test_any_token_starting_with_a_hash_ends_the_input() -> None:
    for end in ["#END", "#\n", "#x\n\n"]:
        cases, warnings = parse((DECK1 + "\n" + end).encode())
        assert [c.text for c in cases] == [DECK1] and warnings == []
    cases, warnings = parse((DECK1 + " #x " + DECK2).encode())  # on the deck's own line
    assert len(cases) == 1 and [(w.line, w.column) for w in warnings] == [(1, 160)]


# --------------------------------------------------------------------- errors


def test_not_a_card() -> None:
    bad = error(b"AS 2S\n3S 4S 1H 5S")
    assert (str(bad), bad.message, bad.line, bad.column) == (
        'line 2, column 7: "1H" is not a card (rank A23456789TJQK, suit CDHS)',
        '"1H" is not a card (rank A23456789TJQK, suit CDHS)', 2, 7)
    # in a later deck, and in a piece that is not canonical
    assert str(error((DECK1 + "\r\n" + DECK2.replace("KS", "KX") + "\r\n#").encode())) == (
        'line 2, column 154: "KX" is not a card (rank A23456789TJQK, suit CDHS)')
    assert str(error(b"AS 10H")) == 'line 1, column 4: "10H" is not a card (rank A23456789TJQK, suit CDHS)'
    assert str(error("AS \u00c9S".encode())) == (
        'line 1, column 4: "\u00c9S" is not a card (rank A23456789TJQK, suit CDHS)')


def test_lower_case_cards_are_refused_with_a_hint() -> None:
    bad = error(DECK1.lower().encode())
    assert str(bad) == (
        'line 1, column 1: "qd" is not a card '
        "(rank A23456789TJQK, suit CDHS; cards are written in upper case)")
    assert str(error(DECK1.replace("KS", "Ks").encode())).startswith('line 1, column 28: "Ks" is not a card')


def test_deck_cut_off_by_end_of_file() -> None:
    cards = DECK2.split()
    data = two_lines(DECK1) + "\n\n  " + " ".join(cards[:10]) + "\n" + " ".join(cards[10:17]) + "\n"
    bad = error(data.encode())
    assert str(bad) == "line 4, column 3: deck 2 ends at end of file after 17 of 52 cards"
    assert str(error(b"AS")) == "line 1, column 1: deck 1 ends at end of file after 1 of 52 cards"


def test_deck_cut_short_by_the_terminator() -> None:
    cards = DECK2.split()
    bad = error((DECK1 + "\n" + " ".join(cards[:17]) + "\n#\n").encode())
    assert str(bad) == 'line 2, column 1: deck 2 is cut short by "#" after 17 of 52 cards'


def test_card_twice_in_a_deck() -> None:
    cards = DECK1.split()
    cards[40] = "QD"  # QD is the first card of the deck
    data = DECK2 + "\n" + DECK2 + "\n" + " ".join(cards[:26]) + "\n" + " ".join(cards[26:]) + "\n#\n"
    bad = error(data.encode())
    assert str(bad) == "line 4, column 43: QD appears twice in deck 3"
    # The same deck read the slow way (CRLF) says the same.
    assert str(error(data.replace("\n", "\r\n").encode())) == str(bad)
    # A repeat in an unfinished deck is found too, before the end of file is blamed.
    assert str(error(b"AS 2S AS")) == "line 1, column 7: AS appears twice in deck 1"
    assert str(error(b"AS 2S AS\n#")) == "line 1, column 7: AS appears twice in deck 1"


def test_first_problem_in_file_order_wins() -> None:
    assert str(error(b"AS 2S AS 1H")) == "line 1, column 7: AS appears twice in deck 1"
    assert str(error(b"AS 2S 1H AS")).startswith('line 1, column 7: "1H" is not a card')


# --------------------------------------------------------------------- traces


def test_trace_format() -> None:
    r = ENGINE.solve(Case(1, DECK1))
    trace = r.trace
    assert trace is not None and set(trace) == {"version", "play"} and trace["version"] == 2
    assert trace["play"].count("+") == 52 and set(trace["play"]) <= set("+13" + PILES)
    # Deal 2 (AD) moves from the new pile 1 (B) onto QD, one to the left.
    assert trace["play"].startswith("++B1")
    assert json.loads(json.dumps(trace)) == trace


def play_back(deck: str, trace: dict[str, Any]) -> list[list[str]]:
    """Follow a trace without the rules, checking the invariants at every step."""
    cards = deck.split()
    piles: list[list[str]] = []
    play = trace["play"]
    at = 0
    while at < len(play):
        if play[at] == "+":
            piles.append([cards[sum(map(len, piles))]])
            at += 1
            continue
        source, distance = PILES.index(play[at]), int(play[at + 1])
        target = source - distance
        assert distance in (1, 3) and 0 <= target < source < len(piles)
        card, top = piles[source][-1], piles[target][-1]  # only a top card moves
        assert top[0] == card[0] or top[1] == card[1]
        dealt = sum(map(len, piles))
        piles[target].append(piles[source].pop())
        if not piles[source]:
            del piles[source]
        assert all(piles)
        assert sum(map(len, piles)) == dealt  # nothing is lost or made
        at += 2
    assert sum(map(len, piles)) == 52
    return piles


def version_1(deck: str, trace: dict[str, Any]) -> dict[str, Any]:
    """The trace as Dealer stored it before version 2: the same game, as numbers."""
    cards = deck.split()
    piles: list[list[str]] = []
    deals: list[int] = []
    moves: list[int] = []
    for step in re.findall(r"\+|[A-Za-z][13]", trace["play"]):
        if step == "+":
            piles.append([cards[len(deals)]])
            deals.append(0)
            continue
        source = PILES.index(step[0])
        target = source - int(step[1])
        moves += (source, target, CARDS.index(piles[source][-1]))
        deals[-1] += 1
        piles[target].append(piles[source].pop())
        if not piles[source]:
            del piles[source]
    return {"version": 1, "deals": deals, "moves": moves}


@settings(max_examples=150, deadline=None)
@given(decks)
def test_solve_matches_the_rules_and_the_trace_replays(deck: str) -> None:
    r = ENGINE.solve(Case(5, deck))
    assert r.detail == naive_sizes(deck)
    assert r.number == len(r.detail) and sum(r.detail) == 52
    assert r.outcome == ("win" if r.number == 1 else "loss")
    assert ENGINE.lines.make(5, r.outcome, r.number, r.detail) == r.line
    assert ENGINE.solve(Case(5, deck), trace=False).line == r.line
    assert r.trace is not None
    piles = play_back(deck, r.trace)
    assert [len(p) for p in piles] == r.detail
    stored = json.loads(json.dumps(r.trace))
    again = ENGINE.replay(deck, stored)
    assert (again.outcome, again.number, again.detail, again.line) == (r.outcome, r.number, r.detail, r.line)


@settings(max_examples=50, deadline=None)
@given(decks)
def test_a_stored_version_1_trace_comes_back_in_version_2(deck: str) -> None:
    trace = ENGINE.solve(Case(1, deck)).trace
    assert trace is not None
    old = version_1(deck, trace)
    assert ENGINE.traces.unpack(ENGINE.traces.pack(old)) == trace
    assert ENGINE.replay(deck, old).line == ENGINE.replay(deck, trace).line


@settings(max_examples=150, deadline=None)
@given(decks, st.data())
def test_a_tampered_trace_is_refused(deck: str, data: st.DataObject) -> None:
    trace = ENGINE.solve(Case(1, deck)).trace
    assert trace is not None
    steps = re.findall(r"\+|[A-Za-z][13]", trace["play"])
    where = data.draw(st.integers(0, len(steps) - 1))
    change = data.draw(st.sampled_from(["pile", "distance", "drop", "add", "swap"]))
    if change == "pile":
        steps[where] = data.draw(st.sampled_from(PILES)) + (steps[where][1:] or "1")
    elif change == "distance":
        steps[where] = (steps[where][:1] if steps[where] != "+" else "B") + data.draw(st.sampled_from("13"))
    elif change == "drop":
        del steps[where]
    elif change == "add":
        steps.insert(where, data.draw(st.sampled_from(["+", "B1", "D3", "Z1"])))
    else:
        other = data.draw(st.integers(0, len(steps) - 1))
        steps[where], steps[other] = steps[other], steps[where]
    tampered = "".join(steps)
    assume(tampered != trace["play"])
    with pytest.raises(TraceError):
        ENGINE.replay(deck, {"version": 2, "play": tampered})


@pytest.mark.parametrize("trace", [
    None, [], {}, {"version": 3, "play": "+" * 52}, {"version": 2}, {"version": 2, "play": ["+"] * 52},
    {"version": 2, "play": "+" * 51}, {"version": 2, "play": "+" * 53}, {"version": 2, "play": "B1" + "+" * 52},
    {"version": 2, "play": "++B2" + "+" * 50}, {"version": 2, "play": "++1B" + "+" * 50},
    {"version": 2, "play": "++B" + "+" * 50}, {"version": 2, "play": "++-1" + "+" * 50},
    {"version": 2, "play": "++\u00c51" + "+" * 50}, {"version": 2, "play": "+" * 52 + "\n"},
    {"version": 1, "deals": [0] * 51, "moves": []},
    {"version": 1, "deals": [0] * 52, "moves": "0"},
    {"version": 1, "deals": [0.0] * 52, "moves": []},
    {"version": 1, "deals": [True] + [0] * 51, "moves": [1, 0, 4]},
    {"version": 1, "deals": [-1, 1] + [0] * 50, "moves": [1, 0, 4]},
    {"version": 1, "deals": [0] * 52, "moves": [1, 0]},
    {"version": 1, "deals": [0] * 52, "moves": [None, 0, 0]},
    {"version": 1, "deals": [0, 1] + [0] * 50, "moves": [1, 1, 4]},
    {"version": 1, "deals": [0, 1] + [0] * 50, "moves": [60, 57, 4]},
    {"version": 1, "deals": [0, 1] + [0] * 50, "moves": [1, 0, 52]},
])
def test_malformed_traces_are_refused(trace: object) -> None:
    with pytest.raises(TraceError):
        ENGINE.replay(DECK1, trace)  # type: ignore[arg-type]


def test_a_trace_stopping_early_is_refused() -> None:
    trace = ENGINE.solve(Case(1, DECK1)).trace
    assert trace is not None
    play = trace["play"]
    last = max(play.rfind("1"), play.rfind("3")) - 1
    deals = play[:last].count("+")
    with pytest.raises(TraceError, match=f"after deal {deals} the trace makes no move"):
        ENGINE.replay(DECK1, {"version": 2, "play": play[:last] + play[last + 2:]})


def test_sniff() -> None:
    assert ENGINE.sniff(SAMPLE.read_bytes())
    assert ENGINE.sniff(SAMPLE.read_bytes()[:100])  # cut inside a card
    assert ENGINE.sniff(DECK1.lower().encode())
    assert not ENGINE.sniff(b"2S 3S 4S 5S 6S 7S 8S 9S 9S 9S 2S 2S 3S\n")  # bamboo tiles, not cards


# --------------------------------------------------------------------- played fast, traced or not, and plainly


@settings(max_examples=300, deadline=None)
@given(decks)
def test_the_traced_loop_agrees_with_the_plain_loop_and_the_rules(deck: str) -> None:
    """``play`` with and without its notes: the same piles, and the moves it notes are the ones
    the rules, written plainly (``trace.replay_play``: the leftmost movable card, searched from
    the left), make."""
    cards = masks_of(deck)
    plain = play(cards, [0] * TABLE_SIZE)
    steps: list[str] = []
    sizes = play(cards, [0] * TABLE_SIZE, steps)
    trace = {"version": 2, "play": "".join(steps)}
    assert sizes == plain == naive_sizes(deck)
    assert replay_play([NUMBER[card] for card in cards], trace["play"]) == sizes
    assert ENGINE.solve(Case(1, deck)).trace == trace
