"""10-20-30 (UVa 246): judge files, reading rules, errors, traces and properties."""

from __future__ import annotations

import doctest
import io
import json
import random
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import JUDGE_DATA, judge_files
from worker import engines
from worker.engines import ten_twenty_thirty as ttt
from worker.engines.base import Case, Diagnostic, InputError, TraceError
from worker.engines.ten_twenty_thirty import ENGINE, walk_trace

GAME = JUDGE_DATA / "10-20-30"
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
STANDARD = [v for v in range(1, 10) for _ in range(4)] + [10] * 16
#: The statement's three sample decks: a win, a loss and a draw.
WIN = ("2 6 5 10 10 4 10 10 10 4 5 10 4 5 10 9 7 6 1 7 6 9 5 3 10 10 4 10 9 2 1 "
       "10 1 10 10 10 3 10 9 8 10 8 7 1 2 8 6 7 3 3 8 2")
LOSS = ("4 3 2 10 8 10 6 8 9 5 8 10 5 3 5 4 6 9 9 1 7 6 3 5 10 10 8 10 9 10 10 7 "
        "2 6 10 10 4 10 1 3 10 1 1 10 2 2 10 4 10 7 7 10")
DRAW = ("10 5 4 3 5 7 10 8 2 3 9 10 8 4 5 1 7 6 7 2 6 9 10 2 3 10 3 4 4 9 10 1 1 "
        "10 5 10 10 1 8 10 7 8 10 6 10 10 10 9 6 2 10 10")

decks = st.permutations(STANDARD).map(lambda cards: " ".join(map(str, cards)))


def parse(data: bytes) -> tuple[list[Case], list[Diagnostic]]:
    warnings: list[Diagnostic] = []
    return list(ENGINE.parse(io.BytesIO(data), warnings)), warnings


def error(data: bytes) -> str:
    with pytest.raises(InputError) as caught:
        parse(data)
    return str(caught.value)


def trace_of(deck: str) -> dict[str, Any]:
    trace = ENGINE.solve(Case(1, deck)).trace
    assert trace is not None
    return trace


def two_lines(deck: str) -> str:
    cards = deck.split()
    return " ".join(cards[:26]) + "\n" + " ".join(cards[26:])


def rules(deck: str) -> tuple[str, int]:
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


def test_registered_with_its_attributes() -> None:
    engine = engines.get("10-20-30")
    assert engine is ENGINE
    assert (engine.slug, engine.title, engine.unit, engine.number_name) == (
        "10-20-30", "10-20-30 (UVa 246)", "deck", "deals")
    assert engine.outcomes == ("win", "loss", "draw")
    assert engine.terminator == "0"
    assert engine.trace_version == 1


def test_doctests() -> None:
    result = doctest.testmod(ttt)
    assert result.failed == 0 and result.attempted > 10


@pytest.mark.parametrize("path", judge_files("10-20-30"), ids=lambda p: p.name)
@pytest.mark.parametrize("trace", [False, True])
def test_judge_files(path: Path, trace: bool) -> None:
    with path.open("rb") as stream:
        warnings: list[Diagnostic] = []
        results = [ENGINE.solve(case, trace=trace) for case in ENGINE.parse(stream, warnings)]
    assert "".join(r.line + "\n" for r in results).encode() == path.with_suffix(".out").read_bytes()
    assert warnings == []
    for index, r in enumerate(results, 1):
        assert ENGINE.judge_line(index, r.outcome, r.number, r.detail) == r.line
        assert (r.trace is not None) == trace
        if r.outcome == "draw":
            assert len(r.detail) == 1 and 7 <= r.detail[0] < r.number
        else:
            assert r.detail == []


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
        outcome, _ = ttt._play(ttt._cards(case.text))
        assert (outcome == ttt._DRAW) == line.startswith("Draw")
        exact = ttt._play_exact(ttt._cards(case.text), False)
        assert ttt._LINES[exact[0]] + str(exact[1]) == line


def test_repeated_decks_play_the_same_as_their_first_copy() -> None:
    cases, _ = parse((GAME / "repeated-decks.in").read_bytes())
    first: dict[str, str] = {}
    repeats = 0
    for case in cases:
        line = ENGINE.solve(case, trace=False).line
        repeats += case.text in first
        assert first.setdefault(case.text, line) == line
    assert repeats == len(cases) // 2


def test_solve_without_trace_has_none() -> None:
    assert ENGINE.solve(Case(1, WIN), trace=False).trace is None


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


def test_text_after_the_terminator_is_ignored_with_a_warning() -> None:
    cases, warnings = parse(f"{WIN}\n0 junk 5\nmore".encode())
    assert len(cases) == 1
    assert [str(w) for w in warnings] == ['line 2, column 3: text after the terminating "0" is ignored']
    cases, warnings = parse(f"{WIN}\n0\n\n   x\n".encode())
    assert [str(w) for w in warnings] == ['line 4, column 4: text after the terminating "0" is ignored']
    cases, warnings = parse(f"{WIN}\n0\n{LOSS}\n0\n".encode())
    assert len(cases) == 1 and len(warnings) == 1


def test_missing_terminator_is_a_warning() -> None:
    cases, warnings = parse(f"{WIN}\n{LOSS}".encode())
    assert len(cases) == 2
    assert [str(w) for w in warnings] == ['no terminating "0" at end of file']


def test_warnings_list_is_optional() -> None:
    assert len(list(ENGINE.parse(io.BytesIO(WIN.encode())))) == 1


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
    text = f"{WIN}\n{LOSS}\n{DRAW}\n\n  " + " ".join(WIN.split()[:17]) + "\n"
    assert error(text.encode()) == "line 5, column 3: deck 4 ends at end of file after 17 of 52 cards"


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


def test_empty_files() -> None:
    assert error(b"") == "the file is empty"
    assert error(b" \n\t\r\n") == "the file has no decks"
    assert error(b"\n  0\n") == "line 2, column 3: the file has no decks"
    assert error(b"00") == "line 1, column 1: the file has no decks"


def test_non_text_bytes() -> None:
    assert error(f"{WIN}\n1 2\xff".encode("latin-1")) == "line 2, column 4: byte 0xff is not text"
    assert error(b"1 2 \x00 3") == "line 1, column 5: byte 0x00 is not text"


def test_a_token_too_long() -> None:
    assert error(b"1 " + b"9" * 100) == "line 1, column 3: a token longer than 64 characters"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_any_bytes_read_or_fail_cleanly(data: bytes) -> None:
    read_all(data)


VALID_FILE = f"{two_lines(WIN)}\n{two_lines(DRAW)}\n0\n".encode()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(VALID_FILE)), st.integers(0, 4), st.binary(max_size=4)),
                max_size=4))
def test_mutated_files_read_or_fail_cleanly(edits: list[tuple[int, int, bytes]]) -> None:
    data = VALID_FILE
    for where, cut, new in edits:
        data = data[:where] + new + data[where + cut :]
    read_all(data)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*map(str, range(12)), "05", "010", "00", " ", "\n", "\r\n", "\t", "x"]),
                max_size=300))
def test_files_of_near_cards_read_or_fail_cleanly(tokens: list[str]) -> None:
    read_all(" ".join(tokens).encode())


def read_all(data: bytes) -> None:
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
    for other in ["accordion", "mahjong"]:
        for path in judge_files(other):
            assert not ENGINE.sniff(path.read_bytes()[:4096]), path
    assert not ENGINE.sniff(b"")
    assert not ENGINE.sniff(b"0\n")
    assert not ENGINE.sniff(b"1 2 3 0 4")
    assert not ENGINE.sniff(b"1 2 11")
    assert not ENGINE.sniff(b"\xff\xfe")


# ------------------------------------------------------------------------ traces


def test_trace_format() -> None:
    r = ENGINE.solve(Case(1, WIN))
    trace = trace_of(WIN)
    assert set(trace) == {"version", "cards", "deals", "after", "picks", "piles", "deck"}
    assert trace["version"] == 1
    assert len(trace["deals"]) == len(trace["after"]) == r.number == 66
    assert len(trace["cards"]) == 52 + 3 * len(trace["picks"])
    assert sum(int(count, 36) for count in trace["after"]) == len(trace["picks"])
    assert trace["cards"][:52] == WIN.replace("10", "T").replace(" ", "")
    assert set(trace["deals"]) <= set("0123456") and set(trace["picks"]) <= set("abc")
    assert trace["deals"][:14] == "01234560123456" and trace["after"][:14] == "0" * 14
    assert trace["piles"] == [""] * 7 and len(trace["deck"]) == 52
    assert json.loads(json.dumps(trace)) == trace
    loss = trace_of(LOSS)
    assert loss["deck"] == "" and sum(len(pile) for pile in loss["piles"]) == 52


def replayed(deck: str) -> tuple[Any, Any]:
    r = ENGINE.solve(Case(7, deck))
    trace = json.loads(json.dumps(r.trace))
    again = ENGINE.replay(deck, trace)
    return r, again


@settings(max_examples=150, deadline=None)
@given(decks)
def test_solve_matches_the_rules_and_the_trace_replays(deck: str) -> None:
    plain = ENGINE.solve(Case(1, deck), trace=False)
    assert (plain.outcome, plain.number) == rules(deck)
    assert plain.line == ENGINE.judge_line(1, plain.outcome, plain.number, plain.detail)
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


def tamperings(trace: dict[str, Any], rng: random.Random) -> Iterator[tuple[str, dict[str, Any]]]:
    def changed(text: str, alphabet: str) -> str:
        k = rng.randrange(len(text))
        return text[:k] + rng.choice([c for c in alphabet if c != text[k]]) + text[k + 1 :]

    def with_(**kw: Any) -> dict[str, Any]:
        return {**trace, **kw}

    yield "a deal's pile", with_(deals=changed(trace["deals"], "0123456"))
    yield "a card", with_(cards=changed(trace["cards"], "123456789T"))
    yield "one deal fewer", with_(deals=trace["deals"][:-1])
    yield "one deal more", with_(deals=trace["deals"] + trace["deals"][-1])
    piles = trace["piles"]
    moved = piles[1:] + piles[:1] if len(set(piles)) > 1 else ["1", *piles[1:]]
    yield "the end piles", with_(piles=moved)
    yield "the end deck", with_(deck=trace["deck"] + "5")
    yield "the version", with_(version=2)
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


@pytest.mark.parametrize("trace", [None, [], {}, {"version": 1}, {"version": 1, "deals": 5},
                                   {"version": 1, "cards": "", "deals": "", "after": "1", "picks": "ab"},
                                   {"version": 1, "cards": "", "deals": "", "after": "", "picks": ""}])
def test_malformed_traces_are_refused(trace: Any) -> None:
    with pytest.raises(TraceError):
        ENGINE.replay(WIN, trace)


def test_replay_of_a_bad_deck_is_a_trace_error() -> None:
    with pytest.raises(TraceError):
        ENGINE.replay("1 2 3", trace_of(WIN))


def test_a_trace_stopping_early_is_refused() -> None:
    trace = trace_of(WIN)
    with pytest.raises(TraceError, match="stops after deal 65"):
        ENGINE.replay(WIN, {**trace, "deals": trace["deals"][:-1], "after": trace["after"][:-1]})


# ------------------------------------------------------------------------ the fast paths


@settings(max_examples=300, deadline=None)
@given(decks)
def test_the_fast_game_agrees_with_the_plain_one(deck: str) -> None:
    fast = ttt._play(ttt._cards(deck))
    exact = ttt._play_exact(ttt._cards(deck), False)
    assert fast[0] == exact[0]
    if fast[0] != ttt._DRAW:
        assert fast[1] == exact[1]


def test_the_fast_game_agrees_on_many_random_decks() -> None:
    rng = random.Random(246)
    outcomes: Counter[int] = Counter()
    for _ in range(1500):
        deck = STANDARD[:]
        rng.shuffle(deck)
        d = ttt._cards(" ".join(map(str, deck)))
        fast, exact = ttt._play(d[:]), ttt._play_exact(d, False)
        assert fast[0] == exact[0] and (fast[0] == ttt._DRAW or fast[1] == exact[1])
        outcomes[exact[0]] += 1
    assert all(outcomes[k] for k in (ttt._WIN, ttt._LOSS, ttt._DRAW))


def test_the_packed_trace_agrees_with_the_plain_one() -> None:
    rng = random.Random(30)
    for _ in range(300):
        deck = STANDARD[:]
        rng.shuffle(deck)
        text = " ".join(map(str, deck))
        result, packed = ENGINE.solve_packed(Case(1, text))
        outcome, n, seen, trace = ttt._play_exact(ttt._cards(text), True)
        assert (result.outcome, result.number, result.detail, result.trace) == (
            ttt.OUTCOMES[outcome], n, [seen] if seen else [], None)
        assert ENGINE.unpack_trace(packed) == ENGINE.solve(Case(1, text)).trace == trace
        # A win or a loss packs to about a byte per card dealt and pick-up, far less than its JSON.
        assert packed[0] == (ord("{") if outcome == ttt._DRAW else 1)
        assert outcome == ttt._DRAW or len(packed) < len(json.dumps(trace)) / 2


def test_a_damaged_packed_trace_is_a_trace_error() -> None:
    rng = random.Random(31)
    _, packed = ENGINE.solve_packed(Case(1, WIN))
    assert ENGINE.unpack_trace(ENGINE.pack_trace(trace_of(LOSS))) == trace_of(LOSS)
    for cut in range(len(packed)):
        with pytest.raises(TraceError):
            ENGINE.unpack_trace(packed[:cut])
    for _ in range(300):
        damaged = bytearray(packed)
        damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        try:
            ENGINE.unpack_trace(bytes(damaged))
        except TraceError:
            pass  # what it must raise, when it notices


# ------------------------------------------------------------------------ constant memory


class ManyDecks(io.RawIOBase):
    """A ~60 MB judge file made on the fly: decks between long runs of blanks, and a
    stretch of decks all on one line."""

    def __init__(self, blocks: int = 200) -> None:
        self.parts = self._parts(blocks)
        self.buffer = b""

    @staticmethod
    def _parts(blocks: int) -> Iterator[bytes]:
        rng = random.Random(5)
        texts = [ENGINE.generate(rng).encode() for _ in range(100)]
        for _ in range(blocks):
            yield b"\n".join(texts) + b"\n"
            yield b" " * 300_000 + b"\n"
        yield (b" ".join(texts).replace(b"\n", b" ") + b" ") * 50 + b"\n"  # 5,000 decks on one line
        yield b"0\n"

    def readable(self) -> bool:
        return True

    def readinto(self, target: bytearray) -> int:  # type: ignore[override]
        while not self.buffer:
            self.buffer = next(self.parts, b"")
            if not self.buffer:
                return 0
        size = min(len(target), len(self.buffer))
        target[:size] = self.buffer[:size]
        self.buffer = self.buffer[size:]
        return size


def test_parsing_a_large_file_takes_little_memory() -> None:
    stream = ManyDecks()
    tracemalloc.start()
    try:
        count = 0
        for _ in ENGINE.parse(stream, []):  # type: ignore[arg-type]
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 25_000
    assert peak < 5 * 1024 * 1024
