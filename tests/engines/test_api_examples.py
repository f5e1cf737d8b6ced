"""Examples of the engines' API, each pinning one answer (once doctests of the modules they use)."""

from __future__ import annotations

import io
from array import array

import pytest

from worker.engines import Case, UnknownGame, check, get
from worker.engines.accordion import CARDS
from worker.engines.accordion.cards import masks_of
from worker.engines.chunks import ChunkSolution, case_hash, joined
from worker.engines.reading import InputError
from worker.engines.results import TraceError
from worker.engines.ten_twenty_thirty.rules import Game
from worker.engines.ten_twenty_thirty.trace import walk_trace

MAHJONG_READY = "1S 2S 3S 4S 4S 4S 5S 6S 7S 7S 8S 8S 9S"
NOT_READY = "1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI"
WIN_66 = ("2 6 5 10 10 4 10 10 10 4 5 10 4 5 10 9 7 6 1 7 6 9 5 3 10 10 4 10 9 2 1 "
          "10 1 10 10 10 3 10 9 8 10 8 7 1 2 8 6 7 3 3 8 2")
DRAW_73 = ("10 5 4 3 5 7 10 8 2 3 9 10 8 4 5 1 7 6 7 2 6 9 10 2 3 10 3 4 4 9 "
           "10 1 1 10 5 10 10 1 8 10 7 8 10 6 10 10 10 9 6 2 10 10")


def test_an_unknown_game_says_which_there_are() -> None:
    with pytest.raises(UnknownGame) as caught:
        check("chess")
    assert str(caught.value) == "unknown game 'chess'; expected one of 10-20-30, accordion, mahjong"


def test_read_inputs_gives_blocks_of_canonical_texts() -> None:
    hands = b"FA 1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA\n" * 3 + b"0\n"
    blocks = get("mahjong").read_inputs(io.BytesIO(hands), max_cases=2)
    assert ([count for texts, count in blocks], blocks.cases, blocks.bytes_read) == ([2, 1], 3, 119)


def test_a_batch_and_a_chunk() -> None:
    mahjong = get("mahjong")
    assert mahjong.solve_batch([MAHJONG_READY] * 2, 7, False) == (
        "Case 7: 3S 5S 6S 8S 9S\nCase 8: 3S 5S 6S 8S 9S\n", b"")
    solution = mahjong.solve_chunk(f"{MAHJONG_READY}\n{NOT_READY}".encode(), 7, True)
    assert (solution.lines, solution.outcomes, list(solution.numbers), solution.started) == (
        b"Case 7: 3S 5S 6S 8S 9S\nCase 8: Not ready\n", b"\x01\x02", [5, 0], 2)
    assert solution.trace(1) == b'{"version":1,"proofs":[]}'


def test_chunk_solutions_join() -> None:
    part = ChunkSolution(1, 1, b"a\n", b"xy", array("I", [0, 2]), b"\x01", array("i", [5]), array("i", [0]),
                         array("I", [7]), array("Q", [9]))
    both = joined([part, part])
    assert (both.count, both.started, both.lines, both.trace(1), list(both.numbers), list(both.offsets)) == (
        2, 2, b"a\na\n", b"xy", [5, 5], [0, 2, 4])
    assert (both.outcomes, list(both.hashes), both.hashes.typecode) == (b"\x01\x01", [9, 9], "Q")


def test_the_stored_case_hash_never_changes() -> None:
    assert hex(case_hash("1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T")) == "0x3abd89b318171854"
    assert (hex(case_hash(b"x")), case_hash("")) == ("0xdd54286755cf9de3", 0)


def test_judge_lines() -> None:
    assert (get("10-20-30").lines.code("draw"), get("mahjong").lines.code("not-ready")) == (3, 2)
    with pytest.raises(ValueError, match=r"^not a 10-20-30 judge line of case 4: 'Win : 066'$"):
        get("10-20-30").lines.parse(4, "Win : 066")
    assert get("accordion").lines.parse(4, "3 piles remaining: 50 1 1") == ("loss", 3, [50, 1, 1])
    mahjong = get("mahjong").lines
    assert mahjong.parse(7, "Case 7: 5W 6W") == ("ready", 2, ["5W", "6W"])
    assert mahjong.parse(8, "Case 8: Not ready") == ("not-ready", 0, [])


def test_a_traces_record() -> None:
    mahjong, case = get("mahjong"), Case(4, NOT_READY)
    record = mahjong.traces.record(case, mahjong.solve(case, False), b'{"version":1,"proofs":[]}')
    assert record == (b'{"index":4,"outcome":"not-ready","number":0,"detail":[],'
                      b'"trace":{"version":1,"proofs":[]}}')


def test_accordion_refuses_a_trace_that_stops_moving() -> None:
    stops = "^after deal 2 the trace makes no move, but AD can move from pile 1 to pile 0$"
    with pytest.raises(TraceError, match=stops):
        get("accordion").replay(" ".join(CARDS), {"version": 2, "play": "+" * 52})
    with pytest.raises(InputError, match=r'^"1C" is not a card \(rank A23456789TJQK, suit CDHS\)$'):
        masks_of("AC 2C 1C")


def test_a_10_20_30_draw_and_its_packed_trace() -> None:
    engine = get("10-20-30")
    r = engine.solve(Case(1, DRAW_73), trace=False)
    assert (r.outcome, r.number, r.detail, r.line, engine.lines.extra(r.outcome, r.number, r.detail)) == (
        "draw", 73, [55], "Draw: 73", 55)
    game = Game([int(value) % 10 for value in DRAW_73.split()]).play()
    assert (game.outcome, game.dealt, game.seen, bytes(game.picks[:3]), game.when[:3]) == (
        2, 73, 55, b"\x00\x01\x02", [21, 40, 43])
    result, packed = engine.solve_packed(Case(1, WIN_66))
    assert (result.line, len(packed), engine.traces.unpack(packed)["picks"][:5]) == ("Win : 66", 212, "babab")


def test_a_10_20_30_replay_walks_deal_by_deal() -> None:
    sample = ("4 3 2 10 8 10 6 8 9 5 8 10 5 3 5 4 6 9 9 1 7 6 3 5 10 10 8 10 9 10 10 7 "
              "2 6 10 10 4 10 1 3 10 1 1 10 2 2 10 4 10 7 7 10")
    steps = list(walk_trace(sample, get("10-20-30").solve(Case(1, sample)).trace))  # type: ignore[arg-type]
    n, piles, deck = steps[0]
    assert (n, piles, deck[:5], len(deck)) == (1, [[4], [], [], [], [], [], []], [3, 2, 10, 8, 10], 51)
    assert (len(steps), steps[-1][2]) == (82, [])


def test_a_mahjong_trace_must_prove_every_wait() -> None:
    hand = "1W 1W 1W 1W 2W 3W 4W 5W 6W 7W 8W 9W 9W"
    with pytest.raises(TraceError, match="^the hand waits for 3W 6W 9W, the trace proves 9W$"):
        get("mahjong").replay(
            hand, {"version": 1, "proofs": ["9W|9W 9W|1W 1W 1W|1W 2W 3W|4W 5W 6W|7W 8W 9W"]})
