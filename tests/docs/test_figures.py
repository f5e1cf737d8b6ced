"""``bench/figures.py``: a benchmark's figure is written with what produced it, and only when it succeeded."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import figures


def test_a_run_that_succeeds_writes_its_output_under_what_produced_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(figures, "FIGURES", tmp_path)
    monkeypatch.setattr("sys.argv", ["engines.py", "--cases", "10"])
    monkeypatch.setenv("DEALER_CHUNK_SIZE", "500")
    monkeypatch.setenv("DEALER_API_KEY", "secret-token-never-written")

    def bench() -> int:
        print("game  ratio\n10-20-30  0.02x")
        return 0

    assert figures.record("engines", bench) == 0
    text = (tmp_path / "engines.md").read_text()
    assert "`python -m bench.engines --cases 10`" in text
    assert "`DEALER_CHUNK_SIZE=500`" in text and "secret-token" not in text
    assert f"{figures.os.cpu_count()} CPUs" in text and "load average" in text
    assert "10-20-30  0.02x" in text and "**Exit status**: 0 (every target met)" in text


def test_a_missed_target_is_a_figure_that_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(figures, "FIGURES", tmp_path)
    assert figures.record("faults", lambda: 1) == 1
    assert "**Exit status**: 1 (a target missed" in (tmp_path / "faults.md").read_text()


def test_a_run_that_raises_leaves_the_last_figure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(figures, "FIGURES", tmp_path)
    (tmp_path / "faults.md").write_text("the last figure")

    def broken() -> int:
        raise RuntimeError("the private servers did not start")

    with pytest.raises(RuntimeError):
        figures.record("faults", broken)
    assert (tmp_path / "faults.md").read_text() == "the last figure"


def test_no_secret_on_another_process_command_line_is_written_down() -> None:
    shown = figures.SECRET.sub(r"\1…", "dealer submit decks.in --api-key s3cr3t-token --url http://h")
    assert "s3cr3t" not in shown and "--url http://h" in shown
    assert "hunter2" not in figures.SECRET.sub(r"\1…", "psql --password=hunter2 -h db")
