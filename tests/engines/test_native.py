"""The native core against the pure-Python engines, its oracle: the same results, judge
lines and traces (packed byte for byte) on every judge file and on random cases in bulk
(:data:`RANDOM_CASES` a game), one case at a time, a batch (``solve_batch``) and a stored chunk (``solve_chunk``)
at a time; native traces that replay, and no crash on any text. And the same reading of
judge files: as cases (``parse``) and as blocks of canonical inputs (``read_inputs``), with the
same errors and warnings, on judge files, large random files, the malformed-file corpus and
files Hypothesis writes.

Both cores are imported explicitly (``native.compiled``, whatever ``DEALER_PURE_PYTHON``
says), so one run tests both. Where no core is built the tests fail if a C compiler is
at hand (the install should have built it) and skip otherwise.
"""

from __future__ import annotations

import functools
import io
import itertools
import math
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engines.samples import CASES, Size, assert_inputs, canonical_hand, parse
from tests.support.paths import ROOT, judge_files
from worker.engines import native
from worker.engines.accordion import CARDS
from worker.engines.accordion.engine import AccordionEngine
from worker.engines.chunks import NOT_SOLVED, ChunkSolution, Entry, case_hash
from worker.engines.engine import Engine
from worker.engines.layout import learn
from worker.engines.mahjong.engine import MahjongEngine
from worker.engines.reading import MAX_BYTES, MAX_CASES, Case, Diagnostic, InputError
from worker.engines.results import Result
from worker.engines.ten_twenty_thirty.engine import TenTwentyThirty
from worker.testing.live import DEALER

#: The games with a native core: their engine class and package.
NATIVE: dict[str, tuple[type[Engine], str]] = {
    "10-20-30": (TenTwentyThirty, "worker.engines.ten_twenty_thirty"),
    "accordion": (AccordionEngine, "worker.engines.accordion"),
    "mahjong": (MahjongEngine, "worker.engines.mahjong"),
}
#: Random cases a game the bulk differential solves on both cores. 3,000 run the pure-Python
#: engines' branches exactly as 10,000 and 100,000 do (measured 2026-12-07 with coverage.py on each game's
#: modules but the core: the same arcs taken and the same lines missed at 2,000, 3,000 and 10,000, as
#: 10,000 against 100,000 before), and each of the two parts still spans a full chunk and a part of one
#: (:data:`CHUNK`); ``make bench`` runs 100,000 (``DEALER_DIFFERENTIAL_CASES``).
RANDOM_CASES = int(os.environ.get("DEALER_DIFFERENTIAL_CASES", "3000"))
#: Examples a property test draws: Hypothesis' default, 100, in the suite; 250 in ``make bench``
#: (``DEALER_PROPERTY_EXAMPLES``). No failure of these tests is recorded (none is kept as an
#: ``@example``), so no larger size is known to find more.
EXAMPLES = int(os.environ.get("DEALER_PROPERTY_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
games = pytest.mark.parametrize("game", list(NATIVE))


def cores(game: str) -> tuple[Engine, Engine]:
    """The game's engine on the pure-Python core and on the native one."""
    cls, package = NATIVE[game]
    core = native.compiled(package)
    if core is None:
        if shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc"):
            pytest.fail(f"the native core of {game} is not built, though there is a C compiler: run make install")
        pytest.skip("no native core and no C compiler to build one")
    return cls(None), cls(core)


def fields(result: Result) -> tuple[object, ...]:
    return result.outcome, result.number, result.detail, result.line, result.trace


def outcome_of(solve: Callable[[], object]) -> object:
    """What a call returns, or the error it raises."""
    try:
        return solve()
    except Exception as error:  # noqa: BLE001  (the cores must fail alike, whatever the failure)
        return f"{type(error).__name__}: {error}"


def chunk_fields(solution: ChunkSolution) -> tuple[object, ...]:
    """All of a solved chunk but its solve times, which no two runs share."""
    return (solution.count, solution.started, solution.lines, solution.traces, solution.offsets.tolist(),
            solution.outcomes, solution.numbers.tolist(), solution.extras.tolist(), solution.hashes.tolist())


def expected_chunk(engine: Engine, texts: list[str], solved: list[tuple[Result, bytes]],
                   traced: bool) -> tuple[object, ...]:
    """What :func:`chunk_fields` must be for ``texts``, made from each case's ``solve_packed``."""
    results = [result for result, _ in solved]
    traces = [packed if traced else b"" for _, packed in solved]
    codes = bytes(engine.lines.code(r.outcome) for r in results)
    return (len(texts), len(texts), "".join(r.line + "\n" for r in results).encode(), b"".join(traces),
            [0, *itertools.accumulate(map(len, traces))], codes, [r.number for r in results],
            [engine.lines.extra(r.outcome, r.number, r.detail) for r in results], list(map(case_hash, texts)))


def solve_chunk(engine: Engine, texts: list[str], first: int, traced: bool,
                **options: object) -> ChunkSolution:
    """``engine.solve_chunk`` of ``texts``, its solve times checked: one a case, together no
    more than the call took (the same monotonic clock)."""
    start = time.monotonic_ns()
    solution = engine.solve_chunk("\n".join(texts).encode(), first, traced, **options)  # type: ignore[arg-type]
    took = (time.monotonic_ns() - start) // 1000
    assert len(solution.solve_us) == solution.count == len(texts) and sum(solution.solve_us) <= took
    assert all(us == 0 for us in solution.solve_us[solution.started :])
    assert (solution.offsets.typecode, solution.numbers.typecode, solution.extras.typecode,
            solution.solve_us.typecode, solution.hashes.typecode) == ("I", "i", "i", "I", "Q")
    return solution


def _cores_in_a_fresh_process(env: dict[str, str]) -> list[str]:
    """Each game's core in a process built as the ``dealer`` commands build theirs (from the settings)."""
    done = subprocess.run([*DEALER, "games"], env=env, capture_output=True, text=True, check=True)
    return [line.split()[1] for line in done.stdout.splitlines()]


def test_the_registry_uses_the_native_core_where_it_is_built() -> None:
    for game in NATIVE:
        cores(game)
    env = {name: value for name, value in os.environ.items() if name != native.PURE_PYTHON}
    assert _cores_in_a_fresh_process(env) == ["native"] * 3


def test_dealer_pure_python_forces_the_fallback() -> None:
    env = {**os.environ, native.PURE_PYTHON: "1"}
    assert _cores_in_a_fresh_process(env) == ["python"] * 3
    summary = subprocess.run([*DEALER, "games", "--cores"], env=env, capture_output=True, text=True, check=True)
    assert summary.stdout == f"dealer: native core off ({native.PURE_PYTHON} is set): every game solves in " \
                             "pure Python (slower, same answers)\n"


def layout_of(engine: Engine, data: bytes) -> tuple[int, bool]:
    """The layout the native core is given for ``data``: cards a line (0 for none), and whether decks run on."""
    layout = None if engine.judge_file.rules is None else learn(data, True, engine.judge_file.rules.stops)
    return (0, False) if layout is None else (layout.per_line, layout.flow)


def read(engine: Engine, data: bytes) -> object:
    """What reading ``data`` gives: the cases and the warnings, or the error and the warnings."""
    warnings: list[Diagnostic] = []
    try:
        cases: object = list(engine.parse(io.BytesIO(data), warnings))
    except InputError as error:
        cases = f"InputError: {error}"
    return cases, [str(warning) for warning in warnings]


@games
def test_an_empty_batch_is_empty_on_both_cores(game: str) -> None:
    for engine in cores(game):
        assert engine.solve_batch([], 1, False) == engine.solve_batch([], 1, True) == ("", b"")


@pytest.mark.slow
@games
def test_both_cores_agree_on_every_judge_file(game: str) -> None:
    """What the files read as; results, lines, JSON and packed traces, a whole file as one
    batch (``dealer solve``, with ``--traces`` and without); and every native trace replays
    to its result."""
    pure, fast = cores(game)
    for path in judge_files(game):
        assert read(fast, path.read_bytes()) == read(pure, path.read_bytes()), path.name
        cases, _ = parse(pure, path.read_bytes())
        lines, records, solved = [], [], []
        for case in cases:
            plain = fast.solve(case, False)
            assert fields(plain) == fields(pure.solve(case, False)), (path.name, case.index)
            traced = fast.solve(case, True)
            assert fields(traced) == fields(pure.solve(case, True)), (path.name, case.index)
            solved.append(pure.solve_packed(case))
            assert fast.solve_packed(case) == solved[-1], (path.name, case.index)
            assert traced.trace is not None
            replayed = pure.replay(case.text, traced.trace)  # (a mahjong replay numbers its line 1)
            assert fields(replayed)[:3] == fields(traced)[:3], (path.name, case.index)
            lines.append(plain.line + "\n")
            records.append(pure.traces.record(case, plain, orjson.dumps(traced.trace)) + b"\n")
        assert "".join(lines) == path.with_suffix(".out").read_text(), path.name
        texts = [case.text for case in cases]
        assert fast.solve_batch(texts, 1, False) == pure.solve_batch(texts, 1, False) == ("".join(lines), b"")
        assert fast.solve_batch(texts, 1, True) == pure.solve_batch(texts, 1, True) == ("".join(lines),
                                                                                         b"".join(records))
        for chunk_traced in (False, True):
            expected = expected_chunk(pure, texts, solved, chunk_traced)
            ours, theirs = (solve_chunk(engine, texts, 1, chunk_traced) for engine in (fast, pure))
            assert chunk_fields(ours) == chunk_fields(theirs) == expected, path.name
        assert ours.lines == "".join(lines).encode()
        answers = zip(ours.lines.decode().splitlines(), ours.extras, solved, strict=True)
        for index, (line, extra, (r, _)) in enumerate(answers, 1):
            assert fast.lines.parse(index, line, extra) == (r.outcome, r.number, r.detail), line


#: Cases a chunk of the random cases holds.
CHUNK = 1000


def _disagreements(game: str, seed: int, count: int) -> list[str]:
    """The cases, of ``count`` random ones from ``seed``, on which the cores differ: in
    their results, judge lines or packed traces, solved one by one, in one batch and in
    stored chunks (and their JSON traces and ``--traces`` records, on every tenth); and the
    chunks whose buffers differ from their cases' ``solve_packed``, or whose lines do not
    parse back to their results."""
    pure, fast = cores(game)
    rng = random.Random(seed)
    differ, texts, lines, solved = [], [], [], []
    for index in range(1, count + 1):
        tokens = pure.generate(rng).split()
        case = Case(index, canonical_hand(tokens) if game == "mahjong" else " ".join(tokens))
        result, packed = pure.solve_packed(case)
        solved.append((result, packed))
        if (fast.solve_packed(case) != (result, packed) or fast.solve(case, False) != result
                or index % 10 == 0 and (fields(fast.solve(case, True)) != fields(pure.solve(case, True))
                                        or fast.solve_batch([case.text], index, True)
                                        != pure.solve_batch([case.text], index, True))):
            differ.append(case.text)
        texts.append(case.text)
        lines.append(result.line + "\n")
    batch = fast.solve_batch(texts, 1, False)[0].splitlines(keepends=True)
    differ += [text for text, line, ours in zip(texts, lines, batch) if line != ours]
    for start in range(0, count, CHUNK):
        part, first = slice(start, start + CHUNK), start + 1
        for engine, traced in ((fast, True), (fast, False), (pure, True)):
            solution = solve_chunk(engine, texts[part], first, traced)
            if chunk_fields(solution) != expected_chunk(pure, texts[part], solved[part], traced):
                differ.append(f"the chunk from case {first}, {engine.core_name} core, traced: {traced}")
            for index, line, extra, (result, _) in zip(itertools.count(first), solution.lines.decode().splitlines(),
                                                       solution.extras, solved[part]):
                if engine.lines.parse(index, line, extra) != (result.outcome, result.number, result.detail):
                    differ.append(f"case {index}'s line {line!r} parses back otherwise ({engine.core_name})")
    return differ if len(batch) == len(lines) else [*differ, f"{len(batch)} lines for {len(lines)} cases"]


@pytest.mark.slow
@games
def test_both_cores_agree_on_random_cases_in_bulk(game: str) -> None:
    cores(game)
    parts = 2  # on a pool of two processes: the pure-Python core is the slow one
    with multiprocessing.get_context("fork").Pool(2) as pool:
        found = pool.starmap(_disagreements, [(game, 20261130 + part, RANDOM_CASES // parts) for part in range(parts)])
    assert [text for texts in found for text in texts] == []


@pytest.mark.slow
@games
@FUZZ
@given(data=st.data())
def test_both_cores_agree_on_random_cases_as_hypothesis_draws_them(game: str, data: st.DataObject) -> None:
    pure, fast = cores(game)
    case = Case(1, data.draw(CASES[game]))
    assert fields(fast.solve(case, True)) == fields(pure.solve(case, True))
    assert fast.solve_packed(case) == pure.solve_packed(case)
    assert fast.solve_batch([case.text], 7, True) == pure.solve_batch([case.text], 7, True)


#: Near misses of a case's text: the characters cases are made of, and a few others.
_ALPHABET = {"10-20-30": "0123456789 \t\n+-x", "accordion": "A23456789TJQKCDHS acdhs1#\t\n",
             "mahjong": "123456789TSWDONGAXIBEZHF 0t\t\n"}


def _mutated(game: str) -> st.SearchStrategy[str]:
    """A case's text with a few characters changed, dropped or added."""
    alphabet = st.sampled_from(_ALPHABET[game])
    edits = st.lists(st.tuples(st.integers(0, 160), st.integers(0, 3), st.text(alphabet, max_size=3)), max_size=3)

    def edit(pair: tuple[str, list[tuple[int, int, str]]]) -> str:
        text, changes = pair
        for at, cut, insert in changes:
            text = text[:at] + insert + text[at + cut :]
        return text

    return st.tuples(CASES[game], edits).map(edit)


@pytest.mark.slow
@games
@FUZZ
@given(data=st.data())
def test_the_native_core_takes_any_text_as_the_pure_one_does(game: str, data: st.DataObject) -> None:
    """Whatever text a case holds, the native engine answers, or refuses, as the pure one."""
    pure, fast = cores(game)
    anything = st.text(st.characters(codec=None, exclude_categories=()), max_size=200)  # surrogates too
    text = data.draw(st.one_of(_mutated(game), anything, st.text(_ALPHABET[game], max_size=200)))
    case = Case(data.draw(st.integers(1, 10**12)), text)
    for trace in (False, True):
        ours = outcome_of(lambda trace=trace: fields(fast.solve(case, trace)))
        assert ours == outcome_of(lambda trace=trace: fields(pure.solve(case, trace)))
    assert outcome_of(lambda: fast.solve_packed(case)) == outcome_of(lambda: pure.solve_packed(case))


#: What may follow the cases of a file: the ends of a file, and the errors of each game.
_TAILS = ["", "\n", "{t}\n", "{t}", "\n{t}\nmore text\n", "{t} junk", "\n\n  \n", "\r\n{t}\r\n", "\x00\n{t}",
          "{t}\n\xff", "1T 2T\n{t}\n", "QD AD\n{t}\n", "5 5 5\n{t}\n", "ac 2D\n", "x" * 70, "05 10 1\n", "#tail"]


@pytest.mark.slow
@games
@FUZZ
@given(data=st.data())
def test_both_cores_read_any_file_alike(game: str, data: st.DataObject) -> None:
    """Cases in any layout, then any ending, with a few bytes changed: the native reader
    and its hand-over to the game's own reader say what the pure one says, to the column."""
    pure, fast = cores(game)
    cases = data.draw(st.lists(CASES[game], max_size=12))
    tokens = " ".join(cases).split()
    widths = data.draw(st.lists(st.integers(1, 60), min_size=1, max_size=4))
    lines, at = [], 0
    while at < len(tokens):
        width = widths[len(lines) % len(widths)]
        lines.append(data.draw(st.sampled_from([" ", "  ", "\t", " \r"])).join(tokens[at : at + width]))
        at += width
    text = "\n".join(lines) + "\n" + data.draw(st.sampled_from(_TAILS)).format(t=pure.terminator)
    body = bytearray(text.encode("utf-8", "surrogateescape"))
    for _ in range(data.draw(st.integers(0, 2))):
        if body:
            where = data.draw(st.integers(0, len(body) - 1))
            body[where : where + data.draw(st.integers(0, 3))] = data.draw(st.binary(max_size=3))
    assert read(fast, bytes(body)) == read(pure, bytes(body))


@games
@FUZZ
@given(data=st.binary(max_size=300))
def test_both_cores_read_any_bytes_alike(game: str, data: bytes) -> None:
    pure, fast = cores(game)
    assert read(fast, data) == read(pure, data)


@games
def test_both_cores_read_large_files_alike_across_blocks(game: str) -> None:
    """A file of many blocks, its lines cut at every place by the blocks, ending in an error
    deep inside: the native reader hands over where the pure one finds it."""
    pure, fast = cores(game)
    rng = random.Random(7)
    body = "\n".join(pure.generate(rng) for _ in range(3000))
    for tail in ("\n" + pure.terminator + "\nafter\n", "\nbad tokens here\n", "\n" + body[:40]):
        assert read(fast, (body + tail).encode()) == read(pure, (body + tail).encode())


@games
def test_the_native_reader_takes_judge_files_whole(game: str) -> None:
    """Cases written as judge files write them never leave the native reader: it reads them
    all, to the end of the file, with their positions."""
    pure, fast = cores(game)
    rng = random.Random(11)
    data = ("\n".join(pure.generate(rng) for _ in range(500)) + "\n").encode()
    assert fast.core is not None
    per_line, flow = layout_of(fast, data)
    cases, used, line, count, stopped = fast.core.read(data, 0, True, 1, 0, per_line, flow)
    assert (cases, used, line, count, stopped) == (parse(pure, data)[0], len(data), data.count(b"\n") + 1, 500, False)


@games
@pytest.mark.parametrize("text", ["", " ", "x\udc80", "\udc80" * 155, "é" * 155, "AC " * 52, "10 " * 52, "1T " * 13,
                                  "\x00" * 155, "0", "#"])
def test_the_native_core_takes_odd_texts_as_the_pure_one_does(game: str, text: str) -> None:
    pure, fast = cores(game)
    for trace in (False, True):
        ours = outcome_of(lambda trace=trace: fields(fast.solve(Case(1, text), trace)))
        assert ours == outcome_of(lambda trace=trace: fields(pure.solve(Case(1, text), trace)))
    assert outcome_of(lambda: fast.solve_packed(Case(1, text))) == outcome_of(lambda: pure.solve_packed(Case(1, text)))


@pytest.mark.slow
@FUZZ
@given(values=st.lists(st.integers(1, 10), min_size=52, max_size=52))
def test_any_52_card_values_play_alike_on_both_cores(values: list[int]) -> None:
    """Decks of any 52 values (not only standard ones) are games too: the cores agree."""
    pure, fast = cores("10-20-30")
    case = Case(1, " ".join(map(str, values)))
    assert fields(fast.solve(case, True)) == fields(pure.solve(case, True))
    assert fast.solve_packed(case) == pure.solve_packed(case)
    assert fast.solve_batch([case.text], 1, True) == pure.solve_batch([case.text], 1, True)


#: Texts of no case: the engine refuses them (its core leaves them to its Python code).
_REFUSED = {"10-20-30": ["1 2 3", "0 " * 52], "accordion": ["AC AC", "ZZ " * 52],
            "mahjong": ["ZZ " * 13, "1T 1T QQ 1S"]}


def _left_to_python(text: str) -> list[str]:
    """A case written otherwise than canonically: its core leaves it to its Python code."""
    return [text + " ", text.replace(" ", "  ", 3)]


@games
@pytest.mark.parametrize("traced", [False, True])
def test_a_batch_leaves_what_its_core_does_not_read_to_python(game: str, traced: bool) -> None:
    """Texts the core does not take, between cases it does: the batch's lines and records
    are still in order and the same as the pure core's; a text the engine refuses raises
    its error, and the next batch starts afresh."""
    pure, fast = cores(game)
    rng = random.Random(5)
    good = [parse(pure, pure.generate(rng).encode())[0][0].text for _ in range(3)]
    texts = [good[0], *_left_to_python(good[1]), good[1], good[2]]
    assert fast.solve_batch(texts, 41, traced) == pure.solve_batch(texts, 41, traced)
    for text in _REFUSED[game]:
        error = outcome_of(lambda text=text: pure.solve_batch([good[0], text], 1, traced))
        assert str(error).startswith(("InputError", "ValueError")), error
        assert outcome_of(lambda text=text: fast.solve_batch([good[0], text], 1, traced)) == error
        assert fast.solve_batch(good, 1, traced) == pure.solve_batch(good, 1, traced)


@games
def test_a_batch_inside_another_writes_into_buffers_of_its_own(game: str) -> None:
    """While a batch waits for Python to solve a case, another (a thread's, say) may run:
    each writes its own lines and records."""
    pure, fast = cores(game)
    rng = random.Random(6)
    inner = [parse(pure, pure.generate(rng).encode())[0][0].text for _ in range(5)]
    outer = [parse(pure, pure.generate(rng).encode())[0][0].text for _ in range(5)]
    outer[2] = _left_to_python(outer[2])[0]
    seen = []

    def one(index: int, text: str, traced: bool) -> tuple[str, bytes]:
        seen.append(fast.solve_batch(inner, 1, True))
        return fast._batch_case(index, text, traced)

    assert fast.core is not None
    assert fast.core.solve_batch(outer, 1, True, one) == pure.solve_batch(outer, 1, True)
    assert seen == [pure.solve_batch(inner, 1, True)]


@FUZZ
@given(deck=st.permutations(CARDS))
def test_any_order_of_the_cards_plays_alike_on_both_cores(deck: list[str]) -> None:
    pure, fast = cores("accordion")
    case = Case(1, " ".join(deck))
    assert fields(fast.solve(case, True)) == fields(pure.solve(case, True))


# ----------------------------------------------------------------------------- a stored chunk at a time


def _canonical(game: str, rng: random.Random, count: int) -> list[str]:
    pure, _ = cores(game)
    return [parse(pure, pure.generate(rng).encode())[0][0].text for _ in range(count)]


@pytest.mark.slow
@games
@FUZZ
@given(data=st.data())
def test_both_cores_solve_any_chunk_alike(game: str, data: st.DataObject) -> None:
    """A chunk of any length (none, one case, several) of canonical cases and of texts
    written otherwise: the same buffers on both cores, and the native core hands Python
    exactly the texts that are not canonical, in their place."""
    pure, fast = cores(game)
    odd = CASES[game].flatmap(lambda text: st.sampled_from(_left_to_python(text)))
    texts = data.draw(st.lists(st.one_of(CASES[game], odd), max_size=6))
    first, traced = data.draw(st.integers(1, 10**9)), data.draw(st.booleans())
    handed: list[int] = []

    def fallback(index: int, text: str, traced: bool) -> Entry:
        handed.append(index)
        return fast.chunk_case(index, text, traced)

    ours = solve_chunk(fast, texts, first, traced, fallback=fallback)
    assert chunk_fields(ours) == chunk_fields(solve_chunk(pure, texts, first, traced))
    assert handed == [first + k for k, text in enumerate(texts) if pure.canonical(text) != text]
    solved = [pure.solve_packed(Case(first + k, text)) for k, text in enumerate(texts)]
    assert chunk_fields(ours) == expected_chunk(pure, texts, solved, traced)


@games
def test_an_empty_chunk_holds_no_case(game: str) -> None:
    for engine in cores(game):
        empty = solve_chunk(engine, [], 5, True)
        assert chunk_fields(empty) == (0, 0, b"", b"", [0], b"", [], [], [])
        assert empty.count == len(engine.solve_chunk(b"", 5, False).hashes) == 0


@games
@pytest.mark.parametrize("traced", [False, True])
def test_a_chunk_with_a_text_the_engine_refuses_fails_alike_and_the_next_starts_afresh(game: str,
                                                                                       traced: bool) -> None:
    pure, fast = cores(game)
    good = _canonical(game, random.Random(5), 3)
    for text in _REFUSED[game]:
        error = outcome_of(lambda text=text: pure.solve_chunk(f"{good[0]}\n{text}".encode(), 1, traced))
        assert str(error).startswith(("InputError", "ValueError")), error
        data = "\n".join([good[0], text]).encode()
        assert outcome_of(lambda data=data: fast.solve_chunk(data, 1, traced)) == error
        again = [chunk_fields(solve_chunk(engine, good, 1, traced)) for engine in (fast, pure)]
        assert again[0] == again[1]
    not_text = good[0].encode() + b"\n\xff\xfe"  # (the store keeps UTF-8: no chunk holds this)
    error = outcome_of(lambda: pure.solve_chunk(not_text, 1, traced))
    assert str(error).startswith("UnicodeDecodeError")
    assert outcome_of(lambda: fast.solve_chunk(not_text, 1, traced)) == error


@games
def test_a_chunk_inside_another_writes_into_buffers_of_its_own(game: str) -> None:
    """While a chunk waits for Python to solve a case, another chunk or batch (a thread's, say)
    may run: each writes its own buffers."""
    pure, fast = cores(game)
    rng = random.Random(6)
    inner, outer = _canonical(game, rng, 5), _canonical(game, rng, 5)
    outer[2] = _left_to_python(outer[2])[0]
    seen = []

    def fallback(index: int, text: str, traced: bool) -> Entry:
        seen.append((chunk_fields(fast.solve_chunk("\n".join(inner).encode(), 1, True)),
                     fast.solve_batch(inner, 1, True)))
        return fast.chunk_case(index, text, traced)

    assert chunk_fields(solve_chunk(fast, outer, 1, True, fallback=fallback)) == chunk_fields(
        solve_chunk(pure, outer, 1, True))
    assert seen == [(chunk_fields(pure.solve_chunk("\n".join(inner).encode(), 1, True)),
                     pure.solve_batch(inner, 1, True))]


@games
def test_a_case_the_fallback_gives_up_on_is_not_solved(game: str) -> None:
    """The fallback (where a caller bounds a case's time) may give a case up: it is stored as
    not solved, its line empty and its trace none; an outcome code beyond a byte is an error."""
    pure, fast = cores(game)
    good = _canonical(game, random.Random(8), 3)
    texts = [good[0], _left_to_python(good[1])[0], good[2]]
    solution = solve_chunk(fast, texts, 1, True, fallback=lambda index, text, traced: NOT_SOLVED)
    solved = [pure.solve_packed(Case(1 + k, text)) for k, text in enumerate(texts)]
    assert (solution.outcomes[1], solution.numbers[1], solution.extras[1]) == (0, 0, 0)
    assert solution.trace(1) == b""
    assert solution.lines.split(b"\n") == [solved[0][0].line.encode(), b"", solved[2][0].line.encode(), b""]
    assert (solution.trace(0), solution.trace(2), solution.started) == (solved[0][1], solved[2][1], 3)
    # The pure core hands every case to its fallback.
    given_up = solve_chunk(pure, texts, 1, True, fallback=lambda index, text, traced: NOT_SOLVED)
    assert chunk_fields(given_up)[:-1] == (3, 3, b"\n\n\n", b"", [0] * 4, bytes(3), [0] * 3, [0] * 3)
    for engine in (pure, fast):
        with pytest.raises(ValueError, match="an outcome code is 0..255, not 256"):
            engine.solve_chunk("\n".join(texts).encode(), 1, True, fallback=lambda *_: (256, 0, 0, "", b""))


@games
def test_no_case_starts_after_the_deadline(game: str) -> None:
    pure, fast = cores(game)
    good = _canonical(game, random.Random(9), 3)
    hashes = [case_hash(text) for text in good]
    for engine in (pure, fast):
        past = solve_chunk(engine, good, 1, True, deadline=time.monotonic())
        assert chunk_fields(past) == (3, 0, b"\n\n\n", b"", [0] * 4, bytes(3), [0] * 3, [0] * 3, hashes)
        assert solve_chunk(engine, good, 1, True, deadline=time.monotonic() + 3600).started == 3
        for deadline, started in ((-math.inf, 0), (-5, 0), (math.inf, 3), (math.nan, 3), (1e300, 3)):
            assert engine.solve_chunk("\n".join(good).encode(), 1, False, deadline).started == started
        # The second case is Python's, which sleeps past the deadline: the third does not start
        # (nor, where this process waited that long, an earlier one).
        texts = [good[0], _left_to_python(good[1])[0], good[2]]
        deadline = time.monotonic() + 0.05

        def slow(index: int, text: str, traced: bool, engine: Engine = engine) -> Entry:
            if index == 2:
                time.sleep(max(0.0, deadline - time.monotonic()) + 0.01)
            return engine.chunk_case(index, text, traced)

        late = solve_chunk(engine, texts, 1, True, deadline=deadline, fallback=slow)
        started = late.started
        assert started <= 2 and all(late.outcomes[:started]) and late.outcomes[started:] == bytes(3 - started)
        lines = late.lines.split(b"\n")
        assert len(lines) == 4 and all(lines[:started]) and lines[started:] == [b""] * (4 - started)
        assert late.offsets[started:].tolist() == [len(late.traces)] * (4 - started)
        assert late.hashes.tolist() == [case_hash(text) for text in texts]
        if started == 2:
            assert late.solve_us[1] >= 10_000  # the case's time is measured around the fallback's sleep


@FUZZ
@given(data=st.binary(max_size=80))
def test_the_native_hash_is_the_python_one(data: bytes) -> None:
    cores("mahjong")
    from worker.engines import out  # the compiled module, as the cores are built

    assert out.case_hash(data) == case_hash(data) < 2**64


@games
@FUZZ
@given(data=st.data())
def test_a_judge_line_parses_back_to_its_result_on_both_cores(game: str, data: st.DataObject) -> None:
    pure, fast = cores(game)
    case = Case(data.draw(st.integers(1, 10**12)), data.draw(CASES[game]))
    for engine in (pure, fast):
        result = engine.solve(case, False)
        extra = engine.lines.extra(result.outcome, result.number, result.detail)
        parsed = engine.lines.parse(case.index, result.line, extra)
        assert parsed == (result.outcome, result.number, result.detail)


@pytest.mark.slow
def test_without_a_compiler_the_install_goes_on_and_says_so(tmp_path: Path) -> None:
    """Built as pip builds it (an isolated build with Cython), from a clean copy of the
    sources, with a compiler that fails."""
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".*", "build", "*.so", "*.egg-info", "__pycache__", "bench", "data", "test-output"))
    env = {**os.environ, "CC": "/bin/false", "LDSHARED": "/bin/false"}
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--wheel-dir", str(tmp_path), str(source)],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    said = [line.strip() for line in (done.stdout + done.stderr).splitlines() if "dealer: native core" in line]
    assert len(said) == 1 and said[0].startswith("dealer: native core not built (")
    assert said[0].endswith("the pure-Python engines will solve")
    (wheel,) = tmp_path.glob("dealer-*.whl")
    assert ".so" not in str(zipfile.ZipFile(wheel).namelist())


# ----------------------------------------------------------------------------- a judge file as blocks of inputs

#: Block sizes (most cases, most bytes) taken in turn: one case at a time, a few, the split's ramp
#: of chunks, the default, and bounds in bytes (tighter than one case, a few cases, many).
SIZES: list[list[Size]] = [[(1, MAX_BYTES)], [(2, MAX_BYTES)], [(7, MAX_BYTES)], [(1000, MAX_BYTES)],
                           [(MAX_CASES, MAX_BYTES)], [(31, MAX_BYTES), (62, MAX_BYTES), (125, MAX_BYTES), (250, 10**9)],
                           [(MAX_CASES, 1)], [(MAX_CASES, 500)], [(5, 400), (3, 10**9), (9, 100)],
                           [(MAX_CASES, 70_000)]]


def _sizes(rng: random.Random) -> list[Size]:
    return [(rng.choice([1, 2, 3, 8, 50, 333]), rng.choice([10**9, 1, 160, 1000, 20_000])) for _ in range(20)]


def _both_read_inputs_alike(game: str, data: bytes, sizes: list[Size]) -> None:
    """Both cores give parse's texts, error and warnings, in the same blocks."""
    pure, fast = cores(game)
    assert assert_inputs(fast, data, sizes) == assert_inputs(pure, data, sizes)


@pytest.mark.slow
@games
def test_inputs_of_every_judge_file_are_its_texts_in_blocks_of_any_size(game: str) -> None:
    rng = random.Random(22)
    for path in judge_files(game):
        for sizes in [*SIZES, _sizes(rng)]:
            _both_read_inputs_alike(game, path.read_bytes(), sizes)


@pytest.mark.slow
@games
def test_inputs_of_large_random_files_on_both_cores(game: str) -> None:
    """Files of many 64 KiB blocks of random cases, written as judge files write them (and one
    case a line, and all on one line after a while), with and without a terminator."""
    pure, _ = cores(game)
    rng = random.Random(23)
    cases = [pure.generate(rng) for _ in range(6000)]
    bodies = ["\n".join(cases), "\n".join(" ".join(case.split()) for case in cases),
              "\n".join(cases[:3000]) + "\n" + " ".join(cases[3000:3100]).replace("\n", " ")]
    for body in bodies:
        for end in (f"\n{pure.terminator}\n", "\n", f"\n{pure.terminator}\nafter\n"):
            for sizes in ([(2000, MAX_BYTES)], [(31, MAX_BYTES), (62, MAX_BYTES), (5000, MAX_BYTES)],
                          [(MAX_CASES, 1 << 16)], _sizes(rng)):
                _both_read_inputs_alike(game, (body + end).encode(), sizes)


#: Where the malformed files are (tests/badinput/corpus: a directory a game, and one for all).
CORPUS = ROOT / "tests" / "badinput" / "corpus"


@games
def test_inputs_of_every_malformed_file_fail_as_parse_does(game: str) -> None:
    """The corpus of malformed files: the same cases, then the same error (message, line and
    column) or warnings, on both cores and for any block size."""
    rng = random.Random(24)
    paths = sorted((CORPUS / game).iterdir()) + sorted((CORPUS / "any").iterdir())
    assert len(paths) > 15
    for path in paths:
        for sizes in [[(1, MAX_BYTES)], [(3, MAX_BYTES)], [(MAX_CASES, MAX_BYTES)], _sizes(rng)]:
            _both_read_inputs_alike(game, path.read_bytes(), sizes)


#: What may follow the cases of a file (as ``_TAILS``), and a repeated terminator and a missing one.
_ENDS = [*_TAILS, "{t}\n{t}\n", "{t}\r\n\r\n{t}", "\x00", "\n\xc3(\n", "9" * 65 + "\n"]


@pytest.mark.slow
@games
@FUZZ
@given(data=st.data())
def test_inputs_of_any_file_are_its_texts_on_both_cores(game: str, data: st.DataObject) -> None:
    """Cases in any layout (whitespace of every kind, CRLF, a case over several lines or several
    on one), then any ending (none, a terminator, twice, text after it, NUL bytes, bytes that are
    no UTF-8, tokens too long), a few bytes changed: any block sizes give parse's texts and error."""
    pure, _ = cores(game)
    cases = data.draw(st.lists(CASES[game], max_size=12))
    tokens = " ".join(cases).split()
    widths = data.draw(st.lists(st.integers(1, 60), min_size=1, max_size=4))
    lines: list[str] = []
    at = 0
    while at < len(tokens):
        width = widths[len(lines) % len(widths)]
        lines.append(data.draw(st.sampled_from([" ", "  ", "\t", " \r", "\x0b", "\x0c"])).join(tokens[at : at + width]))
        at += width
    newline = data.draw(st.sampled_from(["\n", "\r\n", "\n\n", "\n  \n"]))
    text = newline.join(lines) + newline + data.draw(st.sampled_from(_ENDS)).format(t=pure.terminator)
    body = bytearray(text.encode("utf-8", "surrogateescape"))
    for _ in range(data.draw(st.integers(0, 2))):
        if body:
            where = data.draw(st.integers(0, len(body) - 1))
            body[where : where + data.draw(st.integers(0, 3))] = data.draw(st.binary(max_size=3))
    sizes = data.draw(st.lists(st.tuples(st.integers(1, 5), st.sampled_from([1, 150, 400, MAX_BYTES])), min_size=1,
                               max_size=6))
    _both_read_inputs_alike(game, bytes(body), sizes)


@games
@FUZZ
@given(data=st.binary(max_size=300), most=st.integers(1, 3))
def test_inputs_of_any_bytes_are_parses_on_both_cores(game: str, data: bytes, most: int) -> None:
    _both_read_inputs_alike(game, data, [(most, MAX_BYTES)])


class _Failing(io.BytesIO):
    """A stream that fails once ``limit`` bytes were read from it."""

    def __init__(self, data: bytes, limit: int, error: Exception) -> None:
        super().__init__(data)
        self.limit, self.error = limit, error

    def read(self, size: int | None = -1) -> bytes:
        if self.tell() >= self.limit:
            raise self.error
        return super().read(size)


@games
@pytest.mark.parametrize("error", [OSError(5, "Input/output error"), InputError("the line is too long", 900)])
def test_a_stream_that_fails_fails_the_reading_after_the_cases_before(game: str, error: Exception) -> None:
    """What the stream raises (a read that fails, a line too long for the split's reader) comes
    after the cases read before it, as from parse."""
    pure, _ = cores(game)
    rng = random.Random(25)
    data = ("\n".join(pure.generate(rng) for _ in range(2000)) + "\n").encode()
    for engine in cores(game):
        cases, raised = _until_failure(iter(engine.parse(_Failing(data, len(data) * 2 // 3, error))))
        assert cases
        for most in (1, 7, 500, MAX_CASES):
            reader = engine.read_inputs(_Failing(data, len(data) * 2 // 3, error))
            blocks, our_error = _until_failure(iter(functools.partial(reader.take, most), (b"", 0)))
            assert b"".join(texts for texts, _ in blocks) == b"".join(case.text.encode() + b"\n" for case in cases)
            assert (type(our_error), str(our_error)) == (type(raised), str(raised))


def _until_failure(items: Iterator[Any]) -> tuple[list[Any], Exception]:
    """The items before the first error, and the error."""
    read = []
    with pytest.raises(Exception) as raised:
        for item in items:
            read.append(item)  # noqa: PERF402 - one at a time: those before the error are kept
    return read, raised.value


@games
def test_the_native_reader_writes_judge_files_whole_into_a_block(game: str) -> None:
    """Cases written as judge files write them never leave the native reader: it writes their
    texts to the end of the file; a full block stops it at the end of a stretch of lines, and
    it goes on from there."""
    pure, fast = cores(game)
    rng = random.Random(11)
    data = ("\n".join(pure.generate(rng) for _ in range(500)) + "\n").encode()
    texts = [case.text.encode() + b"\n" for case in parse(pure, data)[0]]
    assert fast.core is not None
    block = fast.core.InputBlock()
    block.start(MAX_CASES, MAX_BYTES)
    per_line, flow = layout_of(fast, data)
    assert fast.core.read_inputs(data, 0, True, 1, 0, block, per_line, flow) == (len(data), data.count(b"\n") + 1, 500, False)
    assert not block.full and block.cut() == (b"".join(texts), 500)
    at, line, count, taken = 0, 1, 0, []
    while count < 500:
        block.start(3, MAX_BYTES)
        at, line, count, stopped = fast.core.read_inputs(data, at, True, line, count, block, per_line, flow)
        assert not stopped and block.full == (count < 500) and data[at - 1 : at] == b"\n"
        taken.append(block.cut())
    assert [count for _, count in taken] == [3] * 166 + [2] and b"".join(t for t, _ in taken) == b"".join(texts)


@pytest.mark.slow
@given(steps=st.lists(st.one_of(st.tuples(st.integers(1, 4), st.integers(0, 40)),
                                st.binary(max_size=12).filter(lambda b: b"\n" not in b), st.none()), max_size=30))
@FUZZ
def test_the_native_block_cuts_as_the_python_one(steps: list[tuple[int, int] | bytes | None]) -> None:
    """``out.Block``, which the native core fills, and the pure-Python engines' buffer take the
    same cases into a block and leave the same ones for the next."""
    cores("mahjong")
    from worker.engines.handover import _Texts
    from worker.engines.out import Block

    ours, theirs = Block(), _Texts()
    for buffer in (ours, theirs):
        buffer.start(1, 0)
    for step in steps:  # a block's start, a case's text, or its cut
        if isinstance(step, tuple):
            ours.start(*step)
            theirs.start(*step)
        elif isinstance(step, bytes):
            ours.add(step)
            theirs.add(step)
        else:
            assert ours.cut() == theirs.cut()
        assert (ours.full, ours.taken) == (theirs.full, theirs.taken)
    for buffer in (ours, theirs):
        with pytest.raises(ValueError, match="a block holds at least one case, not 0"):
            buffer.start(0, 10)
