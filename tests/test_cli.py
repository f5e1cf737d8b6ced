"""`dealer solve` and `dealer games`, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from tests.support.paths import JUDGE_DATA, judge_files
from worker import engines
from worker.cli import main
from worker.engines import native

DEALER = [sys.executable, "-m", "worker.cli"]


@pytest.mark.parametrize("game", engines.names())
def test_solve_prints_byte_exact_output_for_every_judge_file(game: str) -> None:
    runner = CliRunner()
    for path in judge_files(game):
        result = runner.invoke(main, ["solve", game, str(path)])
        assert result.exit_code == 0, (path, result.output)
        assert result.stdout_bytes == path.with_suffix(".out").read_bytes(), path


@pytest.mark.parametrize("game", engines.names())
def test_solve_on_several_processes_keeps_the_order(game: str, tmp_path: Path) -> None:
    path = JUDGE_DATA / game / "random-2000.in"
    traces = tmp_path / "traces.jsonl"
    done = subprocess.run([*DEALER, "solve", game, str(path), "--jobs", "2", "--traces", str(traces)],
                          capture_output=True, check=True)
    assert done.stdout == path.with_suffix(".out").read_bytes()
    records = [json.loads(line) for line in traces.read_text().splitlines()]
    assert [r["index"] for r in records] == list(range(1, 2001))
    engine = engines.get(game)
    with open(path, "rb") as stream:
        cases = list(engine.parse(stream, []))
    for case, record in zip(cases[:50], records, strict=False):
        replayed = engine.replay(case.text, record["trace"])
        assert (replayed.outcome, replayed.number, replayed.detail) == (
            record["outcome"], record["number"], record["detail"])


def test_solve_reads_standard_input() -> None:
    data = (JUDGE_DATA / "mahjong" / "sample.in").read_bytes()
    done = subprocess.run([*DEALER, "solve", "mahjong", "-"], input=data, capture_output=True, check=True)
    assert done.stdout == (JUDGE_DATA / "mahjong" / "sample.out").read_bytes()


def test_bad_input_exits_2_with_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.in"
    bad.write_bytes(b"QD AD 8H\n5S XX\n#\n")
    done = subprocess.run([*DEALER, "solve", "accordion", str(bad)], capture_output=True)
    assert done.returncode == 2
    assert done.stderr.decode() == (f"dealer: error: {bad} is no valid judge file (1 fault, named below): no deck "
                                    "comes before the first fault, so no judge output is printed\n"
                                    f"dealer: error: {bad}: line 2, column 4: "
                                    '"XX" is not a card (rank A23456789TJQK, suit CDHS)\n')


def test_missing_terminator_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "open.in"
    path.write_bytes((JUDGE_DATA / "10-20-30" / "sample.in").read_bytes().replace(b"\n0\n", b"\n"))
    done = subprocess.run([*DEALER, "solve", "10-20-30", str(path)], capture_output=True)
    assert done.returncode == 0
    assert done.stdout == (JUDGE_DATA / "10-20-30" / "sample.out").read_bytes()
    assert "warning" in done.stderr.decode() and "terminating" in done.stderr.decode()


def test_unknown_game_is_refused() -> None:
    result = CliRunner().invoke(main, ["solve", "poker", "-"])
    assert result.exit_code == 2 and "poker" in result.output


def test_games_lists_every_engine_in_aligned_columns() -> None:
    result = CliRunner().invoke(main, ["games"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert [line.split()[0] for line in lines] == engines.names()
    # Each column starts at the same place on every line: the core, the title, the summary (a sentence).
    for engine, line in zip(engines.all_engines(), lines, strict=True):
        assert line.endswith(engine.summary) and engine.summary[:1].isupper() and engine.summary.endswith(".")
    for cell in ("core_name", "title", "summary"):
        starts = {line.index(getattr(engine, cell), len(engine.slug)) for engine, line
                  in zip(engines.all_engines(), lines, strict=True)}
        assert len(starts) == 1, (cell, result.output)


@pytest.mark.parametrize("command", ["solve", "check"])
def test_a_file_of_another_game_says_which_game_it_looks_like(command: str, tmp_path: Path) -> None:
    accordion = JUDGE_DATA / "accordion" / "sample.in"
    args = [command, "10-20-30", str(accordion)] + ([str(accordion.with_suffix(".out"))] if command == "check" else [])
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    first = next(line for line in result.output.splitlines() if "line 1, column 1: " in line)
    assert first.endswith("(this looks like an accordion file, not a 10-20-30 file)"), result.output


def test_bad_input_on_several_processes_still_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.in"
    good = (JUDGE_DATA / "accordion" / "random-2000.in").read_bytes().rsplit(b"#", 1)[0]
    bad.write_bytes(good + b"QD XX\n#\n")
    done = subprocess.run([*DEALER, "solve", "accordion", str(bad), "--jobs", "2"], capture_output=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode().endswith('line 4001, column 4: "XX" is not a card (rank A23456789TJQK, suit CDHS)\n')
    assert done.stdout == (JUDGE_DATA / "accordion" / "random-2000.out").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("game", engines.names())
def test_traces_are_the_records_dicts_as_orjson_writes_them_on_either_core(game: str, tmp_path: Path) -> None:
    """Records are laid out without a dict per case: the bytes must stay those of the dict,
    on one process and on several, on the native core and on the pure-Python one."""
    path = JUDGE_DATA / game / "random-2000.in"
    engine = engines.get(game)
    with open(path, "rb") as stream:
        cases = list(engine.parse(stream, []))
    expected = b"".join(
        orjson.dumps({"index": case.index, "outcome": result.outcome, "number": result.number,
                      "detail": result.detail, "trace": result.trace}) + b"\n"
        for case in cases for result in [engine.solve(case)])
    for pure in ("1", "0"):
        for jobs in ("1", "2"):
            traces = tmp_path / f"traces-{pure}-{jobs}.jsonl"
            subprocess.run([*DEALER, "solve", game, str(path), "--jobs", jobs, "--traces", str(traces)],
                           capture_output=True, check=True, env={**os.environ, native.PURE_PYTHON: pure})
            assert traces.read_bytes() == expected, (pure, jobs)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_bad_input_keeps_the_traces_of_the_cases_before_it(jobs: str, tmp_path: Path) -> None:
    """Records are buffered a MiB at a time: what is gathered when the file turns out bad still lands."""
    bad = tmp_path / "bad.in"
    good = (JUDGE_DATA / "mahjong" / "random-2000.in").read_bytes().rsplit(b"\n0", 1)[0]
    bad.write_bytes(good + b"\n1S 2S XX\n0\n")
    traces = tmp_path / "traces.jsonl"
    done = subprocess.run([*DEALER, "solve", "mahjong", str(bad), "--jobs", jobs, "--traces", str(traces)],
                          capture_output=True, timeout=60)
    assert done.returncode == 2
    records = [json.loads(line) for line in traces.read_bytes().splitlines()]
    assert [r["index"] for r in records] == list(range(1, 2001))


def test_a_traces_file_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    path = JUDGE_DATA / "mahjong" / "sample.in"
    where = tmp_path / "missing" / "traces.jsonl"
    done = subprocess.run([*DEALER, "solve", "mahjong", str(path), "--traces", str(where)], capture_output=True)
    assert done.returncode == 2
    assert done.stderr.decode() == f"dealer: error: {where}: No such file or directory\n"


def test_bad_input_on_several_processes_says_what_one_process_says(tmp_path: Path) -> None:
    """With --jobs the file is still read in one process: the same message, warnings and output."""
    bad = tmp_path / "bad.in"
    good = (JUDGE_DATA / "10-20-30" / "random-2000.in").read_bytes().rsplit(b"\n0", 1)[0]
    bad.write_bytes(good + b"\n1 2 11\n0\n")
    runs = [subprocess.run([*DEALER, "solve", "10-20-30", str(bad), "--jobs", jobs], check=False, capture_output=True,
                           timeout=60) for jobs in ("1", "2")]
    assert runs[0].returncode == runs[1].returncode == 2
    assert runs[0].stderr == runs[1].stderr and b"line 4001, column 5" in runs[0].stderr
    assert runs[0].stdout == runs[1].stdout == (JUDGE_DATA / "10-20-30" / "random-2000.out").read_bytes()
