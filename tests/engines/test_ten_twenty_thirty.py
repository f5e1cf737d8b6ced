"""10-20-30 (UVa 246): what is particular to this game (``test_contract.py`` checks what every
engine shares): its reading rules and errors, its traces, and its fast loop
(``play``, traced or not) against the rules as written."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engines import samples
from tests.engines.samples import DRAW, LOSS, STANDARD, WIN, two_lines
from tests.support.paths import JUDGE_DATA
from worker.engines.reading import Case, Diagnostic, InputError
from worker.engines.results import TraceError
from worker.engines.ten_twenty_thirty import ENGINE, rules, walk_trace
from worker.engines.ten_twenty_thirty.play import play
from worker.engines.ten_twenty_thirty.read import residues
from worker.engines.ten_twenty_thirty.rules import OUTCOMES, Game
from worker.engines.ten_twenty_thirty.trace import expand, from_game, from_marks, pack

GAME = JUDGE_DATA / "10-20-30"
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
decks = samples.standard_decks


def parse(data: bytes) -> tuple[list[Case], list[Diagnostic]]:
    return samples.parse(ENGINE, data)


def error(data: bytes) -> str:
    return str(samples.error(ENGINE, data))


def trace_of(deck: str) -> dict[str, Any]:
    trace = ENGINE.solve(Case(1, deck)).trace
    assert trace is not None
    return trace


def plain_rules(deck: str) -> tuple[str, int]:
    """The rules written as plainly as possible, every state kept: the judges' way."""
    cards = [int(t) for t in deck.split()]
    piles: list[list[int]] = [[] for _ in range(7)]
    gone = [False] * 7
    seen: set[tuple[Any, ...]] = set()
    i = dealt = 0
    while True:
        pile = piles[i]
        pile.append(cards.pop(0))
        dealt += 1
        while len(pile) >= 3:
            for picked in ([0, 1, -1], [0, -2, -1], [-3, -2, -1]):
                if sum(pile[j] for j in picked) % 10 == 0:
                    cards += [pile[j] for j in picked]
                    for j in sorted((j % len(pile) for j in picked), reverse=True):
                        del pile[j]
                    break
            else:
                break
        if dealt >= 7 and not pile:
            gone[i] = True
        if all(gone):
            return "win", dealt
        if not cards:
            return "loss", dealt
        if dealt >= 7:
            state = (tuple(map(tuple, piles)), tuple(cards))
            if state in seen:
                return "draw", dealt
            seen.add(state)
        i = (i + 1) % 7
        while dealt >= 7 and gone[i]:
            i = (i + 1) % 7


# ------------------------------------------------------------------------ the engine


def test_draws_on_the_judge_files_name_their_first_sighting() -> None:
    cases, _ = parse((GAME / "draws.in").read_bytes())
    for case in cases:
        r = ENGINE.solve(case, trace=False)
        assert r.outcome == "draw" and len(r.detail) == 1 and 7 <= r.detail[0] < r.number


def test_sample() -> None:
    assert [ENGINE.solve(Case(1, deck), trace=False).line for deck in (WIN, LOSS, DRAW)] == [
        "Win : 66", "Loss: 82", "Draw: 73"]


def test_draw_detail_and_trace_name_the_first_sighting() -> None:
    r = ENGINE.solve(Case(1, DRAW))
    assert r.trace is not None
    assert (r.outcome, r.number, r.detail, r.trace["seen"]) == ("draw", 73, [55], 55)
    steps = list(walk_trace(DRAW, r.trace))
    assert steps[55 - 1][1:] == steps[73 - 1][1:]  # the state after deal 55 is the one after deal 73
    assert all(steps[k][1:] != steps[73 - 1][1:] for k in range(6, 72) if k != 54)


def test_draws_are_found_by_the_cycle_check() -> None:
    cases, _ = parse((GAME / "draws.in").read_bytes())
    expected = (GAME / "draws.out").read_text().splitlines()
    for case, line in zip(cases, expected, strict=True):
        outcome = play(residues(case.text))[0]
        assert (outcome == rules.DRAW) == line.startswith("Draw")
        game = Game(residues(case.text)).play()
        assert ENGINE.lines.make(1, OUTCOMES[game.outcome], game.dealt, [game.seen]) == line


def test_repeated_decks_play_the_same_as_their_first_copy() -> None:
    cases, _ = parse((GAME / "repeated-decks.in").read_bytes())
    first: dict[str, str] = {}
    repeats = 0
    for case in cases:
        line = ENGINE.solve(case, trace=False).line
        repeats += case.text in first
        assert first.setdefault(case.text, line) == line
    assert repeats == len(cases) // 2


def test_solve_reads_any_text_of_one_deck_and_refuses_others() -> None:
    assert ENGINE.solve(Case(1, "  " + WIN.replace(" ", "\n ") + "\n")).line == "Win : 66"
    assert ENGINE.solve(Case(1, WIN.replace(" 6 ", " 06 ", 1))).line == "Win : 66"
    with pytest.raises(InputError):
        ENGINE.solve(Case(1, WIN.replace(" 6 ", " 0 ", 1)))
    with pytest.raises(InputError):
        ENGINE.solve(Case(1, WIN + " 5"))


# ------------------------------------------------------------------------ reading


def test_layouts_read_the_same() -> None:
    layouts = [
        f"{WIN}\n{LOSS}\n0\n",
        f"{two_lines(WIN)}\r\n{two_lines(LOSS)}\r\n0\r\n".replace("\n", "\r\n").replace("\r\r", "\r"),
        "\n\n\t " + f"{WIN} {LOSS}".replace(" ", " \t\n ") + "\n\n0",
        f"{WIN} {LOSS} 0",
    ]
    for text in layouts:
        cases, warnings = parse(text.encode())
        assert [c.text for c in cases] == [WIN, LOSS], repr(text[:40])
        assert warnings == []


def test_case_positions() -> None:
    text = f"  {two_lines(WIN)}\n\n\t{LOSS} {DRAW[:20]}\n{DRAW[20:]}\n0\n"
    cases, _ = parse(text.encode())
    where = [(c.index, c.line, c.column) for c in cases]
    assert where == [(1, 1, 3), (2, 4, 2), (3, 4, 2 + len(LOSS) + 1)]


def test_leading_zeros_are_read_as_scanf_does() -> None:
    cards = WIN.split()
    text = " ".join(["0" + c if i % 5 == 0 else c for i, c in enumerate(cards)]) + " 000\n"
    cases, warnings = parse(text.encode())
    assert [c.text for c in cases] == [WIN] and warnings == []


def test_a_run_of_zeros_ends_the_input_too() -> None:
    cases, warnings = parse(f"{WIN}\n00 junk\n".encode())
    assert len(cases) == 1
    assert [str(w) for w in warnings] == ['line 2, column 4: text after the terminating "0" is ignored']
    assert error(b"00") == "line 1, column 1: the file has no decks"


@pytest.mark.parametrize("token", ["11", "x", "-3", "+5", "5.0", "1O", "٣"])
def test_not_a_card_value(token: str) -> None:
    cards = LOSS.split()
    cards[13] = token
    text = " ".join(cards[:20]) + "\n" + " ".join(cards[20:]) + "\n0\n"
    column = len(" ".join(cards[:13])) + 2
    assert error(text.encode()) == f'line 1, column {column}: "{token}" is not a card value (1-10)'


def test_a_zero_inside_a_deck_is_refused() -> None:
    cards = WIN.split()
    text = f"{LOSS}\n" + " ".join(cards[:17]) + " 0 " + " ".join(cards[18:]) + "\n0\n"
    column = len(" ".join(cards[:17])) + 2
    assert error(text.encode()) == (
        f'line 2, column {column}: "0" is not a card value (1-10): this is card 18 of deck 2, '
        "and a 0 ends the input only where a deck would start")
    # A last deck cut short by the terminator says the same.
    assert error(f"{LOSS}\n1 2 3\n0\n".encode()) == (
        'line 3, column 1: "0" is not a card value (1-10): this is card 4 of deck 2, '
        "and a 0 ends the input only where a deck would start")


def test_deck_cut_off_by_end_of_file() -> None:
    # Its decks are a line each, so the last is named as the layout sees it (engines/layout.py).
    text = f"{WIN}\n{LOSS}\n{DRAW}\n\n  " + " ".join(WIN.split()[:17]) + "\n"
    assert error(text.encode()) == "line 5, column 3: this line has 17 cards; this file's decks have 52 a line"


def test_a_bad_token_in_a_deck_cut_off_is_named_first() -> None:
    assert error(b"1 2 x 4") == 'line 1, column 5: "x" is not a card value (1-10)'


def test_a_deck_that_is_not_standard() -> None:
    cards = WIN.split()
    three = cards.index("3")
    cards[three] = "10"
    text = f"{LOSS}\n\n  " + " ".join(cards) + "\n0\n"
    assert error(text.encode()) == (
        "line 3, column 3: deck 2 is not a standard deck: 17 cards of value 10 (at most 16)")
    cards = WIN.split()
    cards[cards.index("10")] = "3"
    assert error((" ".join(cards) + " 0").encode()) == (
        "line 1, column 1: deck 1 is not a standard deck: 5 cards of value 3 (at most 4)")


def test_the_first_problem_in_file_order_wins() -> None:
    cards = WIN.split()
    cards[3], cards[40] = "11", "x"
    assert '"11"' in error((" ".join(cards) + " 0").encode())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*map(str, range(12)), "05", "010", "00", " ", "\n", "\r\n", "\t", "x"]),
                max_size=300))
def test_files_of_near_cards_read_or_fail_cleanly(tokens: list[str]) -> None:
    read_all(" ".join(tokens).encode())


def read_all(data: bytes) -> None:
    """Read ``data``: an :class:`InputError`, or standard decks that solve."""
    try:
        cases, _ = parse(data)
    except InputError:
        return
    for case in cases:
        assert len(case.text.split()) == 52
        assert Counter(map(int, case.text.split())) == Counter(STANDARD)
        ENGINE.solve(case, trace=False)


def test_canonical() -> None:
    assert ENGINE.canonical(two_lines(WIN).replace(" 6 ", " 006 ", 1)) == WIN


def test_sniff() -> None:
    sample = (GAME / "sample.in").read_bytes()
    assert ENGINE.sniff(sample)
    assert ENGINE.sniff(sample[:100])
    assert ENGINE.sniff((GAME / "random-2000.in").read_bytes()[:4096])  # cut inside a number
    assert not ENGINE.sniff(b"1 2 3 0 4")
    assert not ENGINE.sniff(b"1 2 11")


# ------------------------------------------------------------------------ traces


def test_trace_format() -> None:
    r = ENGINE.solve(Case(1, WIN))
    trace = trace_of(WIN)
    assert set(trace) == {"version", "cards", "after", "picks", "piles", "deck"}
    assert trace["version"] == 2
    assert len(trace["after"]) == r.number == 66
    assert len(trace["cards"]) == 52 + 3 * len(trace["picks"])
    assert sum(int(count, 36) for count in trace["after"]) == len(trace["picks"])
    assert trace["cards"][:52] == WIN.replace("10", "T").replace(" ", "")
    assert set(trace["picks"]) <= set("abc") and trace["after"][:14] == "0" * 14
    assert trace["piles"] == [""] * 7 and len(trace["deck"]) == 52
    assert json.loads(json.dumps(trace)) == trace
    loss = trace_of(LOSS)
    assert loss["deck"] == "" and sum(len(pile) for pile in loss["piles"]) == 52


def replayed(deck: str) -> tuple[Any, Any]:
    r = ENGINE.solve(Case(7, deck))
    trace = json.loads(json.dumps(r.trace))
    again = ENGINE.replay(deck, trace)
    return r, again


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(decks)
def test_solve_matches_the_rules_and_the_trace_replays(deck: str) -> None:
    plain = ENGINE.solve(Case(1, deck), trace=False)
    assert (plain.outcome, plain.number) == plain_rules(deck)
    assert plain.line == ENGINE.lines.make(1, plain.outcome, plain.number, plain.detail)
    r, again = replayed(deck)
    assert (r.outcome, r.number, r.detail, r.line) == (plain.outcome, plain.number, plain.detail, plain.line)
    assert (again.outcome, again.number, again.detail, again.line) == (r.outcome, r.number, r.detail, r.line)


@settings(max_examples=100, deadline=None)
@given(decks)
def test_cards_are_conserved_at_every_step(deck: str) -> None:
    r = ENGINE.solve(Case(1, deck))
    assert r.trace is not None
    whole = Counter(map(int, deck.split()))
    deals = 0
    for n, piles, rest in walk_trace(deck, r.trace):
        deals += 1
        assert n == deals
        assert Counter(card for pile in piles for card in pile) + Counter(rest) == whole
        assert len(rest) + sum(map(len, piles)) == 52
    assert deals == r.number


def test_draws_replay_with_their_first_sighting() -> None:
    cases, _ = parse((GAME / "draws.in").read_bytes())
    for case in cases[:60]:
        r, again = replayed(case.text)
        assert r.outcome == again.outcome == "draw"
        assert r.detail == again.detail == [r.trace["seen"]] and 7 <= r.trace["seen"] < r.number


@settings(max_examples=50, deadline=None)
@given(decks)
def test_a_stored_version_1_trace_comes_back_in_version_2(deck: str) -> None:
    """Version 1 also had ``deals``, the pile of every deal; Dealer stored draws as that JSON."""
    trace = trace_of(deck)
    deals = "".join(str(pile) for pile in Game(residues(deck)).deals())
    old = {"version": 1, "cards": trace["cards"], "deals": deals,
           **{key: value for key, value in trace.items() if key not in ("version", "cards")}}
    assert ENGINE.traces.unpack(orjson.dumps(old)) == trace
    assert ENGINE.replay(deck, old).line == ENGINE.replay(deck, trace).line
    with pytest.raises(TraceError):
        ENGINE.replay(deck, {**old, "deals": deals[:-1]})


def tamperings(trace: dict[str, Any], rng: random.Random) -> Iterator[tuple[str, dict[str, Any]]]:
    def changed(text: str, alphabet: str) -> str:
        k = rng.randrange(len(text))
        return text[:k] + rng.choice([c for c in alphabet if c != text[k]]) + text[k + 1 :]

    def with_(**kw: Any) -> dict[str, Any]:
        return {**trace, **kw}

    yield "a card", with_(cards=changed(trace["cards"], "123456789T"))
    yield "one deal fewer", with_(after=trace["after"][:-1])
    yield "one deal more", with_(after=trace["after"] + "0")
    piles = trace["piles"]
    moved = piles[1:] + piles[:1] if len(set(piles)) > 1 else ["1", *piles[1:]]
    yield "the end piles", with_(piles=moved)
    yield "the end deck", with_(deck=trace["deck"] + "5")
    yield "the version", with_(version=3)
    yield "a draw's sighting", with_(seen=trace.get("seen", 0) + 1)
    yield "the number of pick-ups after a deal", with_(after=changed(trace["after"], "0123"))
    yield "pick-ups as a list", with_(after=[int(n, 36) for n in trace["after"]])
    if trace["picks"]:
        yield "a combination", with_(picks=changed(trace["picks"], "abc"))
        last = trace["after"].rstrip("0")
        fewer = last[:-1] + _BASE36[int(last[-1], 36) - 1] + trace["after"][len(last) :]
        yield "a pick-up dropped", with_(picks=trace["picks"][:-1], after=fewer, cards=trace["cards"][:-3])


@settings(max_examples=60, deadline=None)
@given(decks, st.randoms(use_true_random=False))
def test_a_tampered_trace_is_refused(deck: str, rng: random.Random) -> None:
    for what, trace in tamperings(trace_of(deck), rng):
        with pytest.raises(TraceError):
            ENGINE.replay(deck, json.loads(json.dumps(trace)))
            pytest.fail(f"changed {what}, still replays")


@pytest.mark.parametrize("trace", [None, [], {}, {"version": 2}, {"version": 2, "cards": 5},
                                   {"version": 2, "cards": "", "after": "1", "picks": "ab"},
                                   {"version": 2, "cards": "", "after": "", "picks": ""},
                                   {"version": 1}, {"version": 1, "deals": 5},
                                   {"version": 1, "cards": "", "deals": "0", "after": "", "picks": ""},
                                   {"version": 1, "cards": "", "deals": "", "after": "", "picks": ""}])
def test_malformed_traces_are_refused(trace: Any) -> None:
    with pytest.raises(TraceError):
        ENGINE.replay(WIN, trace)


def test_a_trace_stopping_early_is_refused() -> None:
    trace = trace_of(WIN)
    with pytest.raises(TraceError, match="stops after deal 65"):
        ENGINE.replay(WIN, {**trace, "after": trace["after"][:-1]})


# ------------------------------------------------------------------------ played fast, traced or not, and by the rules


@settings(max_examples=300, deadline=None)
@given(decks)
def test_the_traced_loop_agrees_with_the_plain_loop_and_the_rules(deck: str) -> None:
    """``play`` with and without its notes: the same outcome and ``N``, and what it notes is
    the trace of the game played by the rules as written (``rules.Game``), packed or not."""
    d = residues(deck)
    outcome, n, _, _ = play(d[:])
    noted, marks, gone = d[:], bytearray(), []  # play extends its deck with the history of the game
    traced_outcome, traced_n, piles, rem = play(noted, marks, gone)
    assert (traced_outcome, traced_n) == (outcome, n)
    game = Game(d).play()
    assert game.outcome == outcome
    if outcome == rules.DRAW:  # the loop knows only that there is a cycle
        assert n == 0 and game.seen < game.dealt
    else:
        assert n == game.dealt and game.seen == 0
        assert bytes(noted) == bytes(game.cards)
        exact = from_game(game)
        assert expand(pack(noted, n, marks, gone, piles, rem)) == exact
        assert from_marks(noted, n, marks, piles, rem) == exact
    assert ENGINE.solve(Case(1, deck)).trace == from_game(game)


def test_the_three_agree_on_many_random_decks() -> None:
    rng = random.Random(246)
    outcomes: Counter[int] = Counter()
    for _ in range(1500):
        deck = STANDARD[:]
        rng.shuffle(deck)
        d = residues(" ".join(map(str, deck)))
        fast, traced, game = play(d[:])[:2], play(d[:], bytearray(), [])[:2], Game(d).play()
        assert fast == traced and fast[0] == game.outcome and (fast[0] == rules.DRAW or fast[1] == game.dealt)
        outcomes[game.outcome] += 1
    assert all(outcomes[k] for k in (rules.WIN, rules.LOSS, rules.DRAW))


def test_the_stored_form_agrees_with_the_rules() -> None:
    rng = random.Random(30)
    for _ in range(300):
        deck = STANDARD[:]
        rng.shuffle(deck)
        text = " ".join(map(str, deck))
        result, packed = ENGINE.solve_packed(Case(1, text))
        game = Game(residues(text)).play()
        assert (result.outcome, result.number, result.detail, result.trace) == (
            OUTCOMES[game.outcome], game.dealt, [game.seen] if game.seen else [], None)
        assert ENGINE.traces.unpack(packed) == ENGINE.solve(Case(1, text)).trace == from_game(game)
        # A win or a loss packs to about a byte per card dealt and pick-up, well under its JSON.
        assert packed[0] == (ord("{") if game.outcome == rules.DRAW else 1)
        assert game.outcome == rules.DRAW or len(packed) < len(json.dumps(from_game(game))) * 2 / 3


def test_a_damaged_packed_trace_is_a_trace_error() -> None:
    rng = random.Random(31)
    _, packed = ENGINE.solve_packed(Case(1, WIN))
    assert ENGINE.traces.unpack(ENGINE.traces.pack(trace_of(LOSS))) == trace_of(LOSS)
    for cut in range(len(packed)):
        with pytest.raises(TraceError):
            ENGINE.traces.unpack(packed[:cut])
    for _ in range(300):
        damaged = bytearray(packed)
        damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        try:
            ENGINE.traces.unpack(bytes(damaged))
        except TraceError:
            pass  # what it must raise, when it notices
    # An end pile's card that is no card is noticed (it once escaped as a UnicodeDecodeError).
    _, packed = ENGINE.solve_packed(Case(1, LOSS))
    assert trace_of(LOSS)["piles"][-1]
    for value in (11, 0x31, 0xA2):
        damaged = bytearray(packed)
        damaged[-1] = value
        with pytest.raises(TraceError, match="damaged"):
            ENGINE.traces.unpack(bytes(damaged))
