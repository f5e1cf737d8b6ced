"""A short round of coverage-guided fuzzing (bench/fuzz.py, atheris) of each reader, half its mutations layout
faults, each input read past its faults.

Skipped where atheris is not installed (it has wheels for Linux x86-64; pyproject.toml
installs it there).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris is not installed")
def test_atheris_finds_nothing_in_a_short_run(tmp_path: Path) -> None:
    # The round ends by its count of runs: its time limit is only a bound against a hang (a loaded machine
    # makes fewer runs in a given time, and the count is what is asserted).
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "fuzz.py"), "--runs", "2000", "--seconds", "150",
                           "--artifacts", str(tmp_path / "found")],
                          capture_output=True, text=True, timeout=3 * 150 + 120, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [["10-20-30", "ok"], ["accordion", "ok"], ["mahjong", "ok"]]
    assert all("2000 runs" in line for line in lines), lines
