"""`dealer solve` and `dealer games`, run as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.paths import JUDGE_DATA, judge_files
from worker import engines
from worker.cli import main

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
    for record in records[:50]:
        replayed = engine.replay(record["input"], record["trace"])
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
    assert done.stderr.decode() == (f"dealer: error: {bad}: line 2, column 4: "
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


def test_games_lists_every_engine() -> None:
    result = CliRunner().invoke(main, ["games"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert [line.split()[0] for line in lines] == engines.names()


def test_bad_input_on_several_processes_still_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.in"
    good = (JUDGE_DATA / "accordion" / "random-2000.in").read_bytes().rsplit(b"#", 1)[0]
    bad.write_bytes(good + b"QD XX\n#\n")
    done = subprocess.run([*DEALER, "solve", "accordion", str(bad), "--jobs", "2"], capture_output=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode().endswith('line 4001, column 4: "XX" is not a card (rank A23456789TJQK, suit CDHS)\n')
    assert done.stdout == (JUDGE_DATA / "accordion" / "random-2000.out").read_bytes()
