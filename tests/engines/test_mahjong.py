"""Chinese Mahjong (UVa 11210): what is particular to this game (``test_contract.py`` checks
what every engine shares): its reading rules and errors, the solver against a brute-force
search, its traces, and the table file against its builder."""

from __future__ import annotations

import json
import random
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engines import samples
from tests.engines.samples import HAND, NOT_READY, hands, random_hand, stream
from tests.engines.samples import canonical_hand as canonical
from tests.support.paths import JUDGE_DATA
from worker.engines.mahjong import ENGINE, TILES, solve, table, tablegen
from worker.engines.mahjong import trace as mahjong_trace
from worker.engines.reading import Case, Diagnostic, InputError
from worker.engines.results import Result, TraceError

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------- helpers


def parse(data: bytes) -> tuple[list[Case], list[Diagnostic]]:
    return samples.parse(ENGINE, data)


def error_of(data: bytes) -> str:
    return str(samples.error(ENGINE, data))


def output_of(data: bytes, trace: bool = False) -> str:
    cases, _ = parse(data)
    return "".join(ENGINE.solve(case, trace).line + "\n" for case in cases)


# The brute-force reference: a plain recursive search over 34 counts, written apart
# from the engine (which uses tables) and from its replay check.


def brute_force_waits(tiles: list[str]) -> list[str]:
    counts = [0] * 34
    for tile in tiles:
        counts[TILES.index(tile)] += 1
    waits = []
    for kind in range(34):
        if counts[kind] == 4:
            continue
        counts[kind] += 1
        if any(_pair_then_melds(counts, eye) for eye in range(34)):
            waits.append(TILES[kind])
        counts[kind] -= 1
    return waits


def _pair_then_melds(counts: list[int], eye: int) -> bool:
    if counts[eye] < 2:
        return False
    counts[eye] -= 2
    found = _all_melds(counts)
    counts[eye] += 2
    return found


def _all_melds(counts: list[int]) -> bool:
    first = next((k for k in range(34) if counts[k]), None)
    if first is None:
        return True
    options = []
    if counts[first] >= 3:
        options.append([first] * 3)
    if first < 27 and first % 9 < 7 and counts[first + 1] and counts[first + 2]:
        options.append([first, first + 1, first + 2])
    for meld in options:
        for k in meld:
            counts[k] -= 1
        found = _all_melds(counts)
        for k in meld:
            counts[k] += 1
        if found:
            return True
    return False





# --------------------------------------------------------------------- samples and crafted hands


def test_the_statement_sample() -> None:
    data = f"{HAND}\n{NOT_READY}\n0\n".encode()
    assert output_of(data) == "Case 1: 1S 4S FA\nCase 2: Not ready\n"
    assert (JUDGE_DATA / "mahjong" / "sample.in").read_bytes() == data


def test_results_and_cases_are_the_plain_dataclasses() -> None:
    # The reader and the solver fill Case and Result without calling them (for speed):
    # what they make must be exactly what the constructors make.
    import pickle

    assert ENGINE.solve(Case(1, HAND), False) == Result("ready", 3, ["1S", "4S", "FA"], "Case 1: 1S 4S FA", None)
    assert ENGINE.solve(Case(2, NOT_READY), False) == Result("not-ready", 0, [], "Case 2: Not ready")
    case = parse(HAND.encode())[0][0]
    assert case == Case(1, HAND, 1, 1) and hash(case) == hash(Case(1, HAND, 1, 1))
    assert pickle.loads(pickle.dumps(case)) == case
    assert pickle.loads(pickle.dumps(ENGINE.solve(case))) == ENGINE.solve(case)


def test_crafted_hands() -> None:
    four_dong = "DONG DONG DONG DONG 1T 2T 3T 4S 5S 6S 7S 8S 9S"
    thirteen_orphans = "1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI"
    nine_gates = "1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T"
    assert ENGINE.solve(Case(1, four_dong), False).line == "Case 1: Not ready"  # no kongs
    assert ENGINE.solve(Case(2, thirteen_orphans), False).line == "Case 2: Not ready"
    result = ENGINE.solve(Case(3, nine_gates), False)
    assert (result.outcome, result.number, result.detail) == ("ready", 9, [f"{r}T" for r in range(1, 10)])
    honours = "DONG DONG DONG NAN NAN NAN XI XI XI BEI BEI BEI ZHONG"
    assert ENGINE.solve(Case(4, honours), False).line == "Case 4: ZHONG"
    # A kind the hand holds four of is never waited for, even when a fifth would win.
    four_ones = "1T 1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T"
    assert "1T" not in ENGINE.solve(Case(5, four_ones), False).detail


# --------------------------------------------------------------------- tiles


def test_the_tiles_in_judge_order() -> None:
    assert " ".join(TILES) == (
        "1T 2T 3T 4T 5T 6T 7T 8T 9T 1S 2S 3S 4S 5S 6S 7S 8S 9S 1W 2W 3W 4W 5W 6W 7W 8W 9W "
        "DONG NAN XI BEI ZHONG FA BAI")


# --------------------------------------------------------------------- reading


def test_canonical_text_sorts_tiles_in_judge_order() -> None:
    cases, warnings = parse(b"FA 9S 1S 2S 3S 1S 2S 3S 2S 7S 8S 3S FA\n0\n")
    assert cases == [Case(1, HAND, 1, 1)]
    assert warnings == []
    text = "BAI FA ZHONG BEI XI NAN DONG 1W 9S 1S 9T 1T 5T"
    assert parse(text.encode())[0][0].text == "1T 5T 9T 1S 9S 1W DONG NAN XI BEI ZHONG FA BAI"


@SETTINGS
@given(hands, st.randoms(use_true_random=False))
def test_canonical_text_does_not_depend_on_the_order(tiles: list[str], rng: random.Random) -> None:
    shuffled = tiles.copy()
    rng.shuffle(shuffled)
    first = parse(" ".join(tiles).encode())[0][0].text
    assert parse(" ".join(shuffled).encode())[0][0].text == first == canonical(tiles)
    assert ENGINE.canonical("\t".join(shuffled)) == first


def test_reading_rules_whitespace_crlf_blank_lines() -> None:
    data = f"\n  {HAND}\t\r\n\r\n\t{NOT_READY}  \r\n\n0\r\n".encode()
    cases, warnings = parse(data)
    expected = [(1, HAND, 2, 3), (2, canonical(NOT_READY.split()), 4, 2)]
    assert [(c.index, c.text, c.line, c.column) for c in cases] == expected
    assert warnings == []


def test_lines_cut_into_pieces_read_the_same() -> None:
    # 64 KiB chunks: with lines of varying length some hands straddle a chunk boundary,
    # and one hand spreads its tiles over 200 KB of blanks.
    rng = random.Random(5)
    lines = [" ".join(random_hand(rng)) + " " * rng.randrange(30) for _ in range(6000)]
    lines.insert(3000, (" " * 50_000 + "\t").join(HAND.split()))
    data = ("\n".join(lines) + "\n0\n").encode()
    assert len(data) > 4 * 65536
    cases, warnings = parse(data)
    assert [c.text for c in cases] == [canonical(line.split()) for line in lines]
    assert [c.line for c in cases] == list(range(1, len(lines) + 1))
    assert cases[3000].column == 1 and warnings == []
    # An error in a line cut in pieces is still found at its place.
    bad = lines[:3000] + [lines[3000].replace("FA", "FAA")]
    column = lines[3000].index("FA") + 1
    assert error_of("\n".join(bad).encode()) == f"line 3001, column {column}: " + unknown("FAA")


def unknown(token: str, hint: str = "") -> str:
    return f'unknown tile "{token}" (tiles are 1T-9T, 1S-9S, 1W-9W, DONG, NAN, XI, BEI, ZHONG, FA or BAI{hint})'


def test_unknown_tiles() -> None:
    assert error_of(f"{HAND}\n1S 1S 10T\n".encode()) == "line 2, column 7: " + unknown("10T")
    assert error_of(b"1s 1S\n") == "line 1, column 1: " + unknown("1s", "; tiles are written in upper case")
    assert error_of(f"{HAND}\n1S 0\n".encode()) == "line 2, column 4: " + unknown(
        "0", '; "0" ends the input only as the first token of a line')
    # the unknown tile is found before the line is counted
    assert error_of(b"1S 2S QD\n") == "line 1, column 7: " + unknown("QD")


def test_hands_of_the_wrong_size() -> None:
    assert error_of(f"{HAND}\n  1S 2S 3S 4S 5S 6S 7S 8S 9S 1T 2T 3T\n".encode()) == (
        "line 2, column 3: hand has 12 tiles, expected 13")
    assert error_of(f"{HAND} BAI\n".encode()) == "line 1, column 1: hand has 14 tiles, expected 13"
    assert error_of(b"BAI\n0\n") == "line 1, column 1: hand has 1 tile, expected 13"


def test_five_copies_of_a_kind() -> None:
    data = b"3S 1T 3S 3S 2T 3S 4T 3S 5T 6T 7T 8T 9T\n"
    assert error_of(data) == "line 1, column 22: 5 copies of 3S in one hand (at most 4)"


def generated_file(hands: int, blanks: int) -> Iterator[bytes]:
    """A large judge file: ``hands`` hands, then one whose tiles are far apart (13 tokens in
    a line of ``blanks`` bytes)."""
    block = "\n".join([HAND, NOT_READY, "  " + "\t".join(reversed(HAND.split()))] * 1000) + "\n"
    for _ in range(hands // 3000):
        yield block.encode()
    gap = b" \t" * (1 << 15)
    for k, tile in enumerate(HAND.split()):
        for _ in range(blanks // 12 // len(gap) if k else 0):
            yield gap
        yield tile.encode()
    yield b"\n0\n"


def test_a_hand_spread_over_a_long_line_is_read_in_constant_memory() -> None:
    file = stream(generated_file(hands=60_000, blanks=60_000_000))
    tracemalloc.start()
    try:
        count = sum(1 for _ in ENGINE.parse(file, []))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 60_001
    assert peak < 5_000_000, f"peak {peak} bytes"


# --------------------------------------------------------------------- solving


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(hands)
def test_the_engine_agrees_with_a_brute_force_search(tiles: list[str]) -> None:
    result = ENGINE.solve(Case(1, canonical(tiles)), trace=False)
    assert result.detail == brute_force_waits(tiles)


def test_many_random_hands_agree_with_the_brute_force_search() -> None:
    rng = random.Random(11210)
    ready = 0
    for index in range(1, 1501):
        tiles = random_hand(rng)
        result = ENGINE.solve(Case(index, canonical(tiles)), trace=False)
        expected = brute_force_waits(tiles)
        assert result.detail == expected, tiles
        assert result.line == f"Case {index}: " + (" ".join(expected) or "Not ready")
        ready += bool(expected)
    assert 500 < ready < 1400  # the mix is biased towards ready hands, but not only


def test_rare_table_entries_take_the_slow_path_correctly() -> None:
    solve.make_solver()
    assert solve._rare
    rng = random.Random(3)
    checked = 0
    for key in sorted(solve._rare)[::7]:
        counts = [key // 5**r % 5 for r in range(9)]
        if sum(counts) > 13:
            continue
        suit = rng.choice("TSW")
        tiles = [f"{r + 1}{suit}" for r in range(9) for _ in range(counts[r])]
        while len(tiles) < 13:  # pad with honour pongs and pairs to vary the case
            tiles += [rng.choice(["DONG", "NAN", "XI", "BEI", "ZHONG", "FA", "BAI"])] * min(13 - len(tiles), 3)
        if max(Counter(tiles).values()) > 4:
            continue
        assert ENGINE.solve(Case(1, canonical(tiles)), False).detail == brute_force_waits(tiles)
        checked += 1
    assert checked > 20


def test_solving_in_any_order_or_from_copies_gives_the_same_results() -> None:
    # parse() hands its keys to solve() through a queue matched by identity: any other
    # order, or a copy of the text, must still solve right.
    rng = random.Random(8)
    data = ("\n".join(" ".join(random_hand(rng)) for _ in range(300)) + "\n0\n").encode()
    expected = [ENGINE.solve(case, False).line for case in parse(data)[0]]
    cases = parse(data)[0]
    assert [ENGINE.solve(case, False).line for case in reversed(cases)] == expected[::-1]
    copies = [Case(c.index, "".join(list(c.text)), c.line, c.column) for c in parse(data)[0]]
    assert [ENGINE.solve(case, False).line for case in copies] == expected
    assert [ENGINE.solve(case, False).line for case in parse(data)[0][::2]] == expected[::2]


def test_solve_refuses_a_text_that_is_not_a_hand() -> None:
    with pytest.raises(InputError, match="unknown tile"):
        ENGINE.solve(Case(1, "1S 2S 10T"), False)


@SETTINGS
@given(hands)
def test_judge_line_rebuilds_the_solved_line(tiles: list[str]) -> None:
    result = ENGINE.solve(Case(42, canonical(tiles)), trace=False)
    assert ENGINE.lines.make(42, result.outcome, result.number, result.detail) == result.line
    assert result.number == len(result.detail)
    assert result.outcome == ("ready" if result.detail else "not-ready")


# --------------------------------------------------------------------- traces


@SETTINGS
@given(hands)
def test_each_proof_uses_exactly_the_hand_and_its_waited_tile(tiles: list[str]) -> None:
    result = ENGINE.solve(Case(1, canonical(tiles)))
    assert result.trace is not None and result.trace["version"] == 1
    proofs = result.trace["proofs"]
    assert [proof.split("|")[0] for proof in proofs] == result.detail
    for proof in proofs:
        wait, eye, *melds = [group.split(" ") for group in proof.split("|")]
        assert len(wait) == 1 and len(eye) == 2 and eye[0] == eye[1] and len(melds) == 4
        assert Counter(eye + [t for meld in melds for t in meld]) == Counter(tiles + wait)
        for meld in melds:
            kinds = [TILES.index(t) for t in meld]
            assert kinds[0] == kinds[1] == kinds[2] or (
                kinds[0] < 27 and kinds[0] % 9 < 7 and kinds[1:] == [kinds[0] + 1, kinds[0] + 2])


@SETTINGS
@given(hands)
def test_replay_reproduces_the_result_after_a_json_round_trip(tiles: list[str]) -> None:
    text = canonical(tiles)
    result = ENGINE.solve(Case(1, text))
    trace = json.loads(json.dumps(result.trace))
    replayed = ENGINE.replay(text, trace)
    assert (replayed.outcome, replayed.number, replayed.detail, replayed.line) == (
        result.outcome, result.number, result.detail, result.line)
    assert replayed.trace == trace


def tamperings(proofs: list[str], text: str) -> Iterator[tuple[str, object]]:
    yield "drop a proof", {"version": 1, "proofs": proofs[1:]}
    yield "wrong version", {"version": 2, "proofs": proofs}
    yield "not a list", {"version": 1, "proofs": "1T"}
    yield "claim a tile not waited for", {"version": 1, "proofs": proofs + [proofs[0]]}
    first = proofs[0]
    groups = first.split("|")
    yield "swap a tile", {"version": 1, "proofs": [first.replace(groups[2], _shift(groups[2]), 1)] + proofs[1:]}
    yield "split the eye", {"version": 1, "proofs": ["|".join([groups[0], "1T 2T"] + groups[2:])] + proofs[1:]}
    yield "a wrap-around chow", {"version": 1, "proofs": ["|".join(groups[:2] + ["8T 9T 1S"] + groups[3:])]}
    yield "a bad tile", {"version": 1, "proofs": [first.replace(groups[0], "10T", 1)] + proofs[1:]}
    yield "melds out of order", {"version": 1, "proofs": ["|".join(groups[:2] + groups[2:][::-1])] + proofs[1:]}


def _shift(meld: str) -> str:
    tiles = meld.split(" ")
    kind = TILES.index(tiles[0])
    return " ".join([TILES[(kind + 1) % 34]] + tiles[1:])


@pytest.mark.slow
@SETTINGS
@given(hands.filter(lambda tiles: len(brute_force_waits(tiles)) >= 2))
def test_a_tampered_trace_raises_trace_error(tiles: list[str]) -> None:
    text = canonical(tiles)
    proofs = ENGINE.solve(Case(1, text)).trace["proofs"]  # type: ignore[index]
    for what, trace in tamperings(proofs, text):
        with pytest.raises(TraceError):
            ENGINE.replay(text, trace)  # type: ignore[arg-type]
            pytest.fail(f"{what}: not caught")


def test_a_not_ready_hand_has_no_proofs_and_claims_none() -> None:
    assert ENGINE.solve(Case(1, NOT_READY)).trace == {"version": 1, "proofs": []}
    proof = ENGINE.solve(Case(1, HAND)).trace["proofs"][0]  # type: ignore[index]
    with pytest.raises(TraceError):
        ENGINE.replay(NOT_READY, {"version": 1, "proofs": [proof]})
    with pytest.raises(TraceError, match="cannot be replayed"):
        ENGINE.replay("1S 2S", {"version": 1, "proofs": []})
    # a pong of a kind the hand holds four of plus an eye of it: five, never a wait
    four = "1T 1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T"
    with pytest.raises(TraceError, match="all four 1T"):
        ENGINE.replay(four, {"version": 1, "proofs": ["1T|1T 1T|1T 1T 1T|2T 3T 4T|5T 6T 7T|8T 9T 9T"]})


# --------------------------------------------------------------------- files and tables


def test_generate_writes_valid_varied_hands() -> None:
    rng = random.Random(246127)
    texts = [ENGINE.generate(rng) for _ in range(300)]
    cases, _ = parse(("\n".join(texts) + "\n0\n").encode())
    assert len(cases) == 300
    ready = sum(ENGINE.solve(case, False).outcome == "ready" for case in cases)
    assert 60 < ready < 280


def test_sniff() -> None:
    for path in sorted((JUDGE_DATA / "mahjong").glob("*.in")):
        assert ENGINE.sniff(path.read_bytes()[:50]), path.name  # cut mid-line
    assert not ENGINE.sniff(b"1S 2S 3S\n4S 5S\n")  # lines of the wrong size
    assert ENGINE.sniff(b"1S 2S 3S 4S 5S 6S 7S 8S 9S 1T 1T 1T 5")


@pytest.mark.slow
def test_the_shipped_table_is_what_the_builder_makes() -> None:
    assert Path(table.TABLE_FILE).parent == Path(solve.__file__).parent  # package data, beside the code
    assert table.read_table_file() == tablegen.build_table()
    assert tablegen.main(["--check"]) == 0


def test_the_traces_split_every_suit_key_that_the_builder_finds_splitting() -> None:
    # Traces split a group greedily, where the builder searches: they must agree on which keys split.
    only_melds, with_eye = tablegen._suit_sets()
    for key in only_melds | with_eye:
        split = mahjong_trace._split(0, tablegen._base5(key))
        assert split is not None
        eye, melds = split
        assert bool(eye) == (key in with_eye)
        assert (len(melds.split("|")) if melds else 0) == sum(tablegen._counts(key)) // 3


@pytest.mark.slow
def test_the_builder_writes_a_table_that_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "table.bin"
    tablegen.write_table(str(path))
    assert table.read_table_file(str(path)) == table.read_table_file()
    assert tablegen.is_current(str(path))
    path.write_bytes(b"not a table")
    with pytest.raises(ValueError):
        table.read_table_file(str(path))


def test_solving_never_imports_the_builder() -> None:
    import subprocess
    import sys

    code = ("import sys; from worker import engines; from worker.engines.reading import Case; "
            f"engine = engines.get('mahjong'); engine.solve(Case(1, {HAND!r})); engine.solve_packed(Case(1, {HAND!r})); "
            "print('worker.engines.mahjong.tablegen' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
