"""The native core against the pure-Python engines, its oracle: the same results, judge
lines and traces (packed byte for byte) on every judge file and on 100,000 random cases
per game, native traces that replay, and no crash on any text.

Both cores are imported explicitly (``native.compiled``, whatever ``DEALER_PURE_PYTHON``
says), so one run tests both. Where no core is built the tests fail if a C compiler is
at hand (the install should have built it) and skip otherwise.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engines.samples import CASES, canonical_hand, parse
from tests.support.paths import ROOT, judge_files
from worker.engines import native
from worker.engines.accordion import CARDS
from worker.engines.accordion.engine import AccordionEngine
from worker.engines.base import Case, Diagnostic, Engine, InputError, Result
from worker.engines.mahjong.engine import MahjongEngine
from worker.engines.ten_twenty_thirty.engine import TenTwentyThirty
from worker.testing.live import DEALER

#: The games with a native core: their engine class and package.
NATIVE: dict[str, tuple[type[Engine], str]] = {
    "10-20-30": (TenTwentyThirty, "worker.engines.ten_twenty_thirty"),
    "accordion": (AccordionEngine, "worker.engines.accordion"),
    "mahjong": (MahjongEngine, "worker.engines.mahjong"),
}
RANDOM_CASES = 100_000
FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


def read(engine: Engine, data: bytes) -> object:
    """What reading ``data`` gives: the cases and the warnings, or the error and the warnings."""
    warnings: list[Diagnostic] = []
    try:
        cases: object = list(engine.parse(io.BytesIO(data), warnings))
    except InputError as error:
        cases = f"InputError: {error}"
    return cases, [str(warning) for warning in warnings]


@games
def test_both_cores_agree_on_every_judge_file(game: str) -> None:
    """What the files read as; results, lines, JSON and packed traces, a whole file as one
    batch (``dealer solve``, with ``--traces`` and without); and every native trace replays
    to its result."""
    pure, fast = cores(game)
    for path in judge_files(game):
        assert read(fast, path.read_bytes()) == read(pure, path.read_bytes()), path.name
        cases, _ = parse(pure, path.read_bytes())
        lines, records = [], []
        for case in cases:
            plain = fast.solve(case, False)
            assert fields(plain) == fields(pure.solve(case, False)), (path.name, case.index)
            traced = fast.solve(case, True)
            assert fields(traced) == fields(pure.solve(case, True)), (path.name, case.index)
            assert fast.solve_packed(case) == pure.solve_packed(case), (path.name, case.index)
            assert traced.trace is not None
            replayed = pure.replay(case.text, traced.trace)  # (a mahjong replay numbers its line 1)
            assert fields(replayed)[:3] == fields(traced)[:3], (path.name, case.index)
            lines.append(plain.line + "\n")
            records.append(pure.record(case, plain, orjson.dumps(traced.trace)) + b"\n")
        assert "".join(lines) == path.with_suffix(".out").read_text(), path.name
        texts = [case.text for case in cases]
        assert fast.solve_batch(texts, 1, False) == pure.solve_batch(texts, 1, False) == ("".join(lines), b"")
        assert fast.solve_batch(texts, 1, True) == pure.solve_batch(texts, 1, True) == ("".join(lines),
                                                                                         b"".join(records))


def _disagreements(game: str, seed: int, count: int) -> list[str]:
    """The cases, of ``count`` random ones from ``seed``, on which the cores differ: in
    their results, judge lines or packed traces, solved one by one and in one batch (and
    their JSON traces and ``--traces`` records, on every tenth)."""
    pure, fast = cores(game)
    rng = random.Random(seed)
    differ, texts, lines = [], [], []
    for index in range(1, count + 1):
        tokens = pure.generate(rng).split()
        case = Case(index, canonical_hand(tokens) if game == "mahjong" else " ".join(tokens))
        result, packed = pure.solve_packed(case)
        if (fast.solve_packed(case) != (result, packed) or fast.solve(case, False) != result
                or index % 10 == 0 and (fields(fast.solve(case, True)) != fields(pure.solve(case, True))
                                        or fast.solve_batch([case.text], index, True)
                                        != pure.solve_batch([case.text], index, True))):
            differ.append(case.text)
        texts.append(case.text)
        lines.append(result.line + "\n")
    batch = fast.solve_batch(texts, 1, False)[0].splitlines(keepends=True)
    differ += [text for text, line, ours in zip(texts, lines, batch) if line != ours]
    return differ if len(batch) == len(lines) else [*differ, f"{len(batch)} lines for {len(lines)} cases"]


@pytest.mark.slow
@games
def test_both_cores_agree_on_100000_random_cases(game: str) -> None:
    cores(game)
    parts = 4  # on a pool of two processes: the pure-Python core is the slow one
    with multiprocessing.get_context("fork").Pool(2) as pool:
        found = pool.starmap(_disagreements, [(game, 20261130 + part, RANDOM_CASES // parts) for part in range(parts)])
    assert [text for texts in found for text in texts] == []


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
    cases, used, line, count, stopped = fast.core.read(data, True, 1, 0)
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
        return fast.solve_one(index, text, traced)

    assert fast.core is not None
    assert fast.core.solve_batch(outer, 1, True, one) == pure.solve_batch(outer, 1, True)
    assert seen == [pure.solve_batch(inner, 1, True)]


@FUZZ
@given(deck=st.permutations(CARDS))
def test_any_order_of_the_cards_plays_alike_on_both_cores(deck: list[str]) -> None:
    pure, fast = cores("accordion")
    case = Case(1, " ".join(deck))
    assert fields(fast.solve(case, True)) == fields(pure.solve(case, True))


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
