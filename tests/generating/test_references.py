"""The proof that a ``--cover`` file catches a wrong solution: the seeds' reference solutions
(``../shared/reference``, or ``DEALER_REFERENCES``; not part of the project) on the cover
files. ``uva246_seed000`` keeps its seen states from one deck to the next: its output
differs from Dealer's, at the cases that carry state over; every accepted solution's is
Dealer's, byte for byte."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from worker import engines
from worker.generating.cover import cover_text, entries
from worker.solving import solve_file

REFERENCE_DIR = Path(os.environ.get("DEALER_REFERENCES", ROOT.parent / "shared" / "reference"))
ACCEPTED = {"10-20-30": ["uva246_seed001"], "accordion": ["uva127_seed004"], "mahjong": ["uva11210_seed002"]}


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (REFERENCE_DIR / "build.sh").is_file():
        pytest.skip(f"no reference solutions at {REFERENCE_DIR} (set DEALER_REFERENCES to their folder)")
    if shutil.which("g++") is None:
        pytest.skip("no g++ to build the reference solutions")
    built = subprocess.run(["bash", str(REFERENCE_DIR / "build.sh"), str(tmp_path_factory.mktemp("references"))],
                           check=True, capture_output=True, text=True).stdout
    return Path(built.strip().splitlines()[-1])


def dealer(game: str) -> bytes:
    out = io.StringIO()
    solve_file(engines.get(game), io.BytesIO(cover_text(game)), out)
    return out.getvalue().encode()


def run(binary: Path, data: bytes) -> bytes:
    return subprocess.run([str(binary)], input=data, capture_output=True, check=True, timeout=120).stdout


@pytest.mark.slow
@pytest.mark.parametrize("game", list(ACCEPTED))
def test_accepted_solutions_agree_with_dealer_on_the_cover_file(references: Path, game: str) -> None:
    for name in ACCEPTED[game]:
        assert run(references / name, cover_text(game)) == dealer(game), name


@pytest.mark.slow
def test_the_wrong_solution_is_caught_where_state_carries_over(references: Path) -> None:
    got = run(references / "uva246_seed000", cover_text("10-20-30")).decode().splitlines()
    expected = dealer("10-20-30").decode().splitlines()
    wrong = [k for k, (a, b) in enumerate(zip(got, expected, strict=True), 1) if a != b]
    purposes = [entries("10-20-30")[k - 1].purpose for k in wrong]
    assert wrong and all("again" in p or "passes through" in p or "that state" in p for p in purposes), purposes
