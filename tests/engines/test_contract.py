"""The contract every registered engine keeps, checked once for all of them.

The registry; each engine's attributes and doctests; its judge files; parse, solve and
the judge line and its inverse (``lines.parse``); the stored trace form (``solve_packed``,
``traces.pack``, ``traces.unpack``); replay; ``generate``, ``canonical`` and ``sniff``; and the
reading protocol that
:class:`worker.engines.reading.Reading` owns (terminator, text after it, a missing one, empty
files). What is particular to one game is tested in its own module.
"""

from __future__ import annotations

import doctest
import importlib
import io
import json
import pickle
import pkgutil
import random
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engines.samples import CASES, SAMPLE, assert_inputs, error, inputs_in_blocks, parse, stream
from tests.support.paths import judge_files
from worker import engines
from worker.engines import UnknownGame
from worker.engines.engine import Engine
from worker.engines.reading import Case, Diagnostic, InputError
from worker.engines.results import TraceError

GAMES = engines.names()
#: (title, unit, number_name, outcomes, terminator) of each game.
EXPECTED = {
    "10-20-30": ("10-20-30 (UVa 246)", "deck", "deals", ("win", "loss", "draw"), "0"),
    "accordion": ("Accordian Patience (UVa 127)", "deck", "piles", ("win", "loss"), "#"),
    "mahjong": ("Chinese Mahjong (UVa 11210)", "hand", "waits", ("ready", "not-ready"), "0"),
}
AFTER = 'text after the terminating "{}" is ignored'
FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
games = pytest.mark.parametrize("game", GAMES)


def engine_of(game: str) -> Engine:
    return engines.get(game)


def file_of(game: str, *cases: str, end: str = "\n{t}\n") -> bytes:
    """A judge file of ``cases`` (one a line) and then ``end`` (``{t}``: the terminator)."""
    return ("\n".join(cases) + end.format(t=engine_of(game).terminator)).encode()


# ----------------------------------------------------------------------------- the registry


def test_the_registry_lists_every_engine_once() -> None:
    assert GAMES == list(EXPECTED)
    assert [engine.slug for engine in engines.all_engines()] == GAMES
    assert all(engines.get(game) is engines.get(game) for game in GAMES)


@pytest.mark.parametrize("slug", ["poker", "", "Mahjong", None, 5, ["mahjong"]])
def test_an_unknown_game_is_one_error_with_one_message(slug: object) -> None:
    message = f"unknown game {slug!r}; expected one of 10-20-30, accordion, mahjong"
    for ask in (engines.get, engines.check):
        with pytest.raises(UnknownGame) as caught:
            ask(slug)  # type: ignore[arg-type]
        assert str(caught.value) == message and caught.value.slug == slug
        assert isinstance(caught.value, KeyError)  # what get() raised before UnknownGame


def test_check_names_a_known_game() -> None:
    assert [engines.check(game) for game in GAMES] == GAMES


def test_every_outcome_keeps_its_stored_code() -> None:
    """A case's outcome is stored as its place in its game's ``outcomes`` (``JudgeLines.code``): a game
    may add outcomes at the end, never reorder them."""
    assert set(engines.outcomes()) == {outcome for engine in engines.all_engines() for outcome in engine.outcomes}
    stored = {"10-20-30": ("win", "loss", "draw"), "accordion": ("win", "loss"), "mahjong": ("ready", "not-ready")}
    for game, outcomes in stored.items():
        assert engines.get(game).outcomes[: len(outcomes)] == outcomes
        assert [engines.get(game).lines.code(o) for o in outcomes] == list(range(1, len(outcomes) + 1))


def test_the_package_exports_what_other_code_uses() -> None:
    for name in ("Case", "Diagnostic", "Engine", "InputError", "Result", "TraceError", "UnknownGame"):
        assert name in engines.__all__ and hasattr(engines, name)


# ----------------------------------------------------------------------------- each engine


@games
def test_attributes(game: str) -> None:
    engine = engine_of(game)
    title, unit, number_name, outcomes, terminator = EXPECTED[game]
    assert (engine.slug, engine.title, engine.unit, engine.number_name) == (game, title, unit, number_name)
    assert (engine.outcomes, engine.terminator) == (outcomes, terminator)
    assert engine.traces.version == (1 if game == "mahjong" else 2)
    assert engine.summary and isinstance(engine.case_bytes, int) and engine.case_bytes > 0


@games
def test_the_texts_the_web_ui_shows(game: str) -> None:
    engine = engine_of(game)
    for text in (engine.input_help, engine.number_help, engine.detail_label, engine.detail_text):
        assert text.strip() == text and text and text.count("`") % 2 == 0, text
    assert engine.input_help.endswith(".") and engine.number_help.endswith(".")
    assert engine.detail_text.count("{}") == 1


def modules_of(engine: Engine) -> list[ModuleType]:
    """The engine's package and every module in it."""
    package = importlib.import_module(type(engine).__module__.rpartition(".")[0])
    return [package] + [importlib.import_module(f"{package.__name__}.{info.name}")
                        for info in pkgutil.iter_modules(package.__path__)]


def test_a_case_pickles_to_an_equal_case() -> None:
    case = Case(7, "AC 2C", 3, 5)
    assert pickle.loads(pickle.dumps(case)) == case
    assert pickle.loads(pickle.dumps([case, case], 5)) == [case, case]


@games
def test_doctests(game: str) -> None:
    # pytest runs them from worker/ too; here they run with tests/engines alone. The count guards that
    # a game's teaching examples are found at all (9 or more each); answers are pinned by the tests.
    results = [doctest.testmod(module, optionflags=doctest.ELLIPSIS) for module in modules_of(engine_of(game))]
    assert sum(r.failed for r in results) == 0 and sum(r.attempted for r in results) >= 8


@games
@pytest.mark.parametrize("trace", [False, True])
def test_judge_files(game: str, trace: bool, judge_data: Path) -> None:
    engine = engine_of(game)
    paths = judge_files(game)
    assert paths
    for path in paths:
        with path.open("rb") as judge_file:
            warnings: list[Diagnostic] = []
            results = [engine.solve(case, trace=trace) for case in engine.parse(judge_file, warnings)]
        assert "".join(r.line + "\n" for r in results).encode() == path.with_suffix(".out").read_bytes(), path.name
        assert warnings == []
        for index, r in enumerate(results, 1):
            assert r.outcome in engine.outcomes
            assert engine.lines.make(index, r.outcome, r.number, r.detail) == r.line
            assert (r.trace is not None) == trace


@games
def test_packed_traces_unpack_to_the_solved_ones(game: str) -> None:
    engine = engine_of(game)
    rng = random.Random(7)
    for index in range(1, 201):
        case = Case(index, engine.canonical(engine.generate(rng)))
        solved = engine.solve(case)
        result, packed = engine.solve_packed(case)
        assert result.trace is None and isinstance(packed, bytes)
        assert (result.outcome, result.number, result.detail, result.line) == (
            solved.outcome, solved.number, solved.detail, solved.line)
        assert solved.trace is not None and solved.trace["version"] == engine.traces.version
        assert engine.traces.unpack(packed) == solved.trace
        assert engine.traces.unpack(engine.traces.pack(solved.trace)) == solved.trace


@games
@pytest.mark.parametrize("junk", [b"", b"\x00", b"\x01\x02", b"[1, 2]", b"{\"version\": 1", b"\xff" * 40])
def test_bytes_that_are_no_trace_are_a_trace_error(game: str, junk: bytes) -> None:
    with pytest.raises(TraceError):
        engine_of(game).traces.unpack(junk)


@pytest.mark.slow
@games
@FAST
@given(data=st.data())
def test_solve_judge_line_and_replay_agree(game: str, data: st.DataObject) -> None:
    engine = engine_of(game)
    text = data.draw(CASES[game])
    index = data.draw(st.integers(1, 10_000))
    plain, full = engine.solve(Case(index, text), trace=False), engine.solve(Case(index, text))
    assert plain.trace is None and full.trace is not None
    assert (plain.outcome, plain.number, plain.detail, plain.line) == (full.outcome, full.number, full.detail, full.line)
    assert engine.lines.make(index, full.outcome, full.number, full.detail) == full.line
    trace = json.loads(json.dumps(full.trace))
    again = engine.replay(text, trace)
    assert (again.outcome, again.number, again.detail) == (full.outcome, full.number, full.detail)
    assert again.line == engine.lines.make(1, full.outcome, full.number, full.detail) and again.trace == trace
    assert engine.canonical(text) == text


@pytest.mark.parametrize(("game", "line", "extra", "fields"), [
    ("10-20-30", "Draw: 73", 55, ("draw", 73, [55])),
    ("10-20-30", "Win : 66", 0, ("win", 66, [])),
    ("10-20-30", "Win : 66", 5, None),  # only a draw has an extra
    ("10-20-30", "Win : 066", 0, None),
    ("10-20-30", "Win : +66", 0, None),
    ("10-20-30", "Win :66", 0, None),
    ("10-20-30", "Tie : 66", 0, None),
    ("accordion", "1 pile remaining: 52", 0, ("win", 1, [52])),
    ("accordion", "2 piles remaining: 51 1", 0, ("loss", 2, [51, 1])),
    ("accordion", "2 piles remaining: 50 1", 0, None),  # not 52 cards
    ("accordion", "2 piles remaining: 52 0", 0, None),
    ("accordion", "3 piles remaining: 51 1", 0, None),
    ("accordion", "1 piles remaining: 52", 0, None),
    ("accordion", "1 pile remaining: 52", 3, None),
    ("mahjong", "Case 4: 1S 4S FA", 0, ("ready", 3, ["1S", "4S", "FA"])),
    ("mahjong", "Case 4: Not ready", 0, ("not-ready", 0, [])),
    ("mahjong", "Case 5: 1S 4S FA", 0, None),  # another case's line
    ("mahjong", "Case 4: 1S 1S", 0, None),
    ("mahjong", "Case 4: QQ", 0, None),
    ("mahjong", "Case 4: ", 0, None),
    ("mahjong", "Case 4: Not ready", 1, None),
])
def test_parse_line_reads_exactly_the_lines_judge_line_writes(
        game: str, line: str, extra: int, fields: tuple[str, int, list[object]] | None) -> None:
    engine = engine_of(game)
    if fields is None:
        with pytest.raises(ValueError, match=f"^not a {game} judge line of case 4: "):
            engine.lines.parse(4, line, extra)
    else:
        assert engine.lines.parse(4, line, extra) == fields
        assert engine.lines.make(4, *fields) == line and engine.lines.extra(*fields) == extra


@games
@FAST
@given(data=st.data())
def test_parse_line_gives_back_a_result_and_refuses_anything_else(game: str, data: st.DataObject) -> None:
    """A solved case's line and extra parse back to its result; any other text either is a line
    :meth:`JudgeLines.make` writes or is refused with a ValueError (never another error)."""
    engine = engine_of(game)
    index = data.draw(st.integers(1, 10**9))
    result = engine.solve(Case(index, data.draw(CASES[game])), trace=False)
    extra = engine.lines.extra(result.outcome, result.number, result.detail)
    assert engine.lines.parse(index, result.line, extra) == (result.outcome, result.number, result.detail)
    cut = data.draw(st.integers(0, len(result.line)))
    line = data.draw(st.one_of(st.text(max_size=40), st.text("0123456789 :-+Tps", max_size=4).map(
        lambda inserted: result.line[:cut] + inserted + result.line[cut + 1 :])))
    extra = data.draw(st.sampled_from([0, extra, 7]))
    try:
        fields = engine.lines.parse(index, line, extra)
    except ValueError as error:
        assert str(error).startswith(f"not a {game} judge line of case {index}: ")
        return
    assert engine.lines.make(index, *fields) == line and engine.lines.extra(*fields) == extra


@games
def test_replay_of_a_text_that_is_no_case_is_a_trace_error(game: str) -> None:
    engine = engine_of(game)
    trace = engine.solve(Case(1, SAMPLE[game])).trace
    assert trace is not None
    with pytest.raises(TraceError):
        engine.replay(SAMPLE[game][:-3], trace)


@games
@pytest.mark.parametrize("trace", [None, [], {}, {"version": 2}, {"version": 1}])
def test_malformed_traces_are_refused(game: str, trace: object) -> None:
    with pytest.raises(TraceError):
        engine_of(game).replay(SAMPLE[game], trace)  # type: ignore[arg-type]


@games
def test_generate_writes_one_case_and_repeats_for_a_seed(game: str) -> None:
    engine = engine_of(game)
    texts = [engine.generate(random.Random(seed)) for seed in range(50)]
    assert texts == [engine.generate(random.Random(seed)) for seed in range(50)]
    assert len(set(texts)) == 50
    cases, warnings = parse(engine, file_of(game, *texts))
    assert [case.text for case in cases] == [engine.canonical(text) for text in texts] and warnings == []


@games
def test_canonical_needs_exactly_one_case(game: str) -> None:
    engine = engine_of(game)
    unit = engine.unit
    with pytest.raises(InputError, match=f"^expected one {unit}, found 2$"):
        engine.canonical(SAMPLE[game] + "\n" + SAMPLE[game])
    with pytest.raises(InputError):
        engine.canonical("")


@games
def test_sniff_and_detect(game: str, judge_data: Path) -> None:
    engine = engine_of(game)
    for other in GAMES:
        for path in judge_files(other):
            head = path.read_bytes()[:4096]
            assert engine.sniff(head) == (other == game), (game, path)
            assert engines.detect(head) == other
    assert not engine.sniff(b"")
    assert not engine.sniff(engine.terminator.encode() + b"\n")
    assert not engine.sniff(b"\xff\xfe")


@games
@FAST
@given(data=st.binary(max_size=400))
def test_any_bytes_read_or_fail_cleanly(game: str, data: bytes) -> None:
    read_all(engine_of(game), data)


@games
@FAST
@given(edits=st.lists(st.tuples(st.integers(0, 600), st.integers(0, 4), st.binary(max_size=4)), max_size=4))
def test_mutated_files_read_or_fail_cleanly(game: str, edits: list[tuple[int, int, bytes]]) -> None:
    engine = engine_of(game)
    data = file_of(game, *(engine.generate(random.Random(seed)) for seed in range(2)))
    for where, cut, new in edits:
        data = data[:where] + new + data[where + cut :]
    read_all(engine, data)


def read_all(engine: Engine, data: bytes) -> None:
    """Read ``data``: an :class:`InputError`, or cases in canonical text that solve."""
    try:
        cases, _ = parse(engine, data)
    except InputError:
        return
    for index, case in enumerate(cases, 1):
        assert case.index == index and engine.canonical(case.text) == case.text
        engine.solve(case, trace=False)


def large_file(game: str) -> Iterator[bytes]:
    """A file of about 50 MB, made as it is read: 15,000 cases between long runs of blanks."""
    rng = random.Random(5)
    block = b"\n".join(engine_of(game).generate(rng).encode() for _ in range(100)) + b"\n"
    for _ in range(150):
        yield block
        yield b" " * 300_000 + b"\n"
    yield file_of(game, end="{t}\n")


@pytest.mark.slow
@games
def test_parsing_a_large_file_takes_little_memory(game: str) -> None:
    engine = engine_of(game)
    tracemalloc.start()
    try:
        count = sum(1 for _ in engine.parse(stream(large_file(game)), []))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 15_000
    assert peak < 5 * 1024 * 1024, f"peak {peak} bytes"


@pytest.mark.slow
@games
def test_reading_a_large_file_as_blocks_of_inputs_takes_little_memory(game: str) -> None:
    """``read_inputs`` holds no more than a block of texts and a block of the file: the split
    reads a file of a million cases with it."""
    engine = engine_of(game)
    tracemalloc.start()
    try:
        blocks = engine.read_inputs(stream(large_file(game)), [], max_cases=2000)
        counts = [count for _, count in blocks]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert counts == [2000] * 7 + [1000] and blocks.cases == 15_000
    assert peak < 5 * 1024 * 1024, f"peak {peak} bytes"


# ----------------------------------------------------------------------------- how a file ends


@games
def test_the_terminator_ends_the_input(game: str) -> None:
    engine, sample = engine_of(game), SAMPLE[game]
    for end in ["\n{t}", "\n{t}\n", "\r\n{t}\r\n", "\n\n  {t}\n\n"]:
        cases, warnings = parse(engine, file_of(game, sample, end=end))
        assert [c.text for c in cases] == [sample] and warnings == [], repr(end)
    cases, warnings = parse(engine, file_of(game, sample, end="\n{t}\n" + sample + "\n{t}\n"))
    assert len(cases) == 1 and [(w.line, w.column) for w in warnings] == [(3, 1)]


@games
@pytest.mark.parametrize(("end", "line", "column"), [
    ("\n{t} junk 5\nmore", 2, 3),
    ("\n{t}\n\n   junk\n", 4, 4),
    ("\n{t}\t\t x", 2, 5),
    ("\n{t}" + " " * 70_000 + "x\n", 2, 70_002),  # the terminator's line read in pieces
    ("\n{t}\n" + "\n" * 5 + " " * 70_000 + "x", 8, 70_001),
])
def test_text_after_the_terminator_is_ignored_with_a_warning(game: str, end: str, line: int, column: int) -> None:
    engine = engine_of(game)
    cases, warnings = parse(engine, file_of(game, SAMPLE[game], end=end))
    assert [c.text for c in cases] == [SAMPLE[game]]
    assert [(w.message, w.line, w.column) for w in warnings] == [(AFTER.format(engine.terminator), line, column)]


@games
@pytest.mark.parametrize(("tail", "line", "column"), [
    (b"\n\xff\xfe", 3, 1), (b" \xff\xfe", 2, 3), (b"\n\n  x \xff", 4, 3), (b"\n\x00 binary", 3, 1)])
def test_what_follows_the_terminator_need_not_be_text(game: str, tail: bytes, line: int, column: int) -> None:
    engine = engine_of(game)
    cases, warnings = parse(engine, file_of(game, SAMPLE[game], end="\n{t}") + tail)
    assert len(cases) == 1
    assert [(w.message, w.line, w.column) for w in warnings] == [(AFTER.format(engine.terminator), line, column)]


@games
def test_reading_stops_at_the_first_text_after_the_terminator(game: str) -> None:
    def endless() -> Iterator[bytes]:
        yield file_of(game, SAMPLE[game])
        while True:
            yield b"x" * 65536

    warnings: list[Diagnostic] = []
    assert len(list(engine_of(game).parse(stream(endless()), warnings))) == 1
    assert [w.line for w in warnings] == [3]


@games
@pytest.mark.parametrize("tail", ["", "\n", "\n\n  \n", "\r\n"])
def test_a_missing_terminator_is_a_warning(game: str, tail: str) -> None:
    engine = engine_of(game)
    cases, warnings = parse(engine, (SAMPLE[game] + tail).encode())
    assert [c.text for c in cases] == [SAMPLE[game]]
    assert [(w.message, w.line, w.column) for w in warnings] == [
        (f'no terminating "{engine.terminator}" at end of file', None, None)]


@games
def test_empty_files_and_files_without_cases(game: str) -> None:
    engine = engine_of(game)
    t, none = engine.terminator, f"the file has no {engine.unit}s"
    assert (str(error(engine, b"")), error(engine, b"").line) == ("the file is empty", None)
    for blank in [b"\n", b" \n\t\r\n", b" " * 100_000]:
        assert (str(error(engine, blank)), error(engine, blank).line) == (none, None)
    assert str(error(engine, f"\n  {t}\n".encode())) == f"line 2, column 3: {none}"
    assert str(error(engine, f"{t}\n{SAMPLE[game]}\n".encode())) == f"line 1, column 1: {none}"


@games
def test_bytes_that_are_not_text_and_tokens_too_long(game: str) -> None:
    engine, sample = engine_of(game), SAMPLE[game]
    first = sample.split()[0]
    for end in ["", "\n"]:
        assert str(error(engine, f"{sample}\n{first} \xff{end}".encode("latin-1"))) == (
            f"line 2, column {len(first) + 2}: byte 0xff is not text")
    assert str(error(engine, f"{sample}\n\x00".encode())) == "line 2, column 1: byte 0x00 is not text"
    assert str(error(engine, f"{sample}\n{'9' * 100}".encode())) == (
        "line 2, column 1: a token longer than 64 characters")


@games
def test_the_warnings_list_is_optional(game: str) -> None:
    assert [c.text for c in engine_of(game).parse(io.BytesIO(SAMPLE[game].encode()))] == [SAMPLE[game]]


#: Files that end in every way the tests above read them: ``{s}`` is the sample case, ``{t}`` the terminator.
_ENDINGS = ["{s}\n{t}", "{s}\r\n{t}\r\n", "{s}\n\n  {t}\n\n", "{s}\n{t}\n{s}\n{t}\n", "{s}\n{t} junk 5\nmore",
            "{s}\n{t}" + " " * 70_000 + "x\n", "{s}\n{t}\n" + "\n" * 5 + " " * 70_000 + "x", "{s}\n{t}\n\xff\xfe",
            "{s}\n{t}\n\x00 binary", "{s}", "{s}\n\n  \n", "", "\n", " " * 100_000, "\n  {t}\n", "{t}\n{s}\n",
            "{s}\n1 \xff", "{s}\n\x00", "{s}\n" + "9" * 100, "{s}\n{s}\n{s}\n{t}\n"]


@games
@pytest.mark.parametrize("ending", _ENDINGS)
def test_blocks_of_inputs_end_as_the_cases_do(game: str, ending: str) -> None:
    """``read_inputs`` reads every ending of a file as ``parse`` does: the same texts, then the
    same warnings, or the same error (message, line and column) after the same cases."""
    engine = engine_of(game)
    data = ending.format(s=SAMPLE[game], t=engine.terminator).encode("latin-1")
    for most in (1, 2, 1000):
        assert_inputs(engine, data, [(most, 1 << 20)])


@games
def test_blocks_of_inputs_say_how_far_they_read(game: str) -> None:
    """``cases`` counts the cases given; ``bytes_read`` goes up to the file's size, and while the
    native core reads a file written plainly it stops at the end of the block's last case."""
    engine = engine_of(game)
    rng = random.Random(26)
    lines = [" ".join(engine.generate(rng).split()) for _ in range(400)]
    data = ("\n".join(lines) + "\n" + engine.terminator + "\n").encode()
    blocks = engine.read_inputs(io.BytesIO(data), max_cases=150)
    seen = []
    for texts, count in blocks:
        seen.append((count, blocks.cases, blocks.bytes_read))
    assert [(count, cases) for count, cases, _ in seen] == [(150, 150), (150, 300), (100, 400)]
    assert seen[-1][2] == len(data)
    if engine.core is not None:
        assert [read for _, _, read in seen[:2]] == [sum(len(line) + 1 for line in lines[:n]) for n in (150, 300)]
    taken, ending, warnings = inputs_in_blocks(engine, io.BytesIO(data), [(7, 1 << 20)], len(data))
    assert (sum(count for _, count, _ in taken), ending, warnings) == (400, None, [])


@games
def test_blocks_of_inputs_are_as_large_as_asked(game: str) -> None:
    """Iterating gives blocks of ``max_cases`` (which may change between blocks) and ``max_bytes``;
    ``take`` a block of the size asked; a block holds at least one case."""
    engine = engine_of(game)
    data = file_of(game, *[SAMPLE[game]] * 10)
    size = len(SAMPLE[game]) + 1
    blocks = engine.read_inputs(io.BytesIO(data), max_cases=4)
    assert next(blocks) == ((SAMPLE[game] + "\n").encode() * 4, 4)
    blocks.max_cases, blocks.max_bytes = 10, 2 * size
    assert next(blocks)[1] == 2
    assert blocks.take(1) == ((SAMPLE[game] + "\n").encode(), 1)
    assert blocks.take(5, 1) == ((SAMPLE[game] + "\n").encode(), 1)
    assert [count for _, count in blocks] == [2]
    assert blocks.take() == (b"", 0) and blocks.cases == 10
    with pytest.raises(ValueError, match="a block holds at least one case, not 0"):
        engine.read_inputs(io.BytesIO(data)).take(0)
