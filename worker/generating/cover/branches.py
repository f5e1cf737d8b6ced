"""Which rule branches a judge file runs: coverage.py's branch coverage of each game's rules
modules while the pure-Python engine does with the file what Dealer does (parse, solve,
solve with traces, replay each trace).

The measure runs in a fresh process, so that the rules modules are imported, and their
tables built, under measure too. It needs ``coverage`` (the ``test`` extra).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

_ENGINES = Path(__file__).resolve().parents[2] / "engines"
#: The modules that hold each game's rules: the rules as written (10-20-30's ``rules``,
#: which plays draws and replays traces) and as played fast (``play``; mahjong's ``solve``).
RULES = {
    "10-20-30": ("ten_twenty_thirty/rules.py", "ten_twenty_thirty/play.py"),
    "accordion": ("accordion/play.py",),
    "mahjong": ("mahjong/solve.py",),
}

_RUNNER = """
import json, sys, coverage
cov = coverage.Coverage(branch=True, include=json.loads(sys.argv[2]), data_file=None, config_file=False)
cov.start()
from worker import engines
engines.use_native_core(False)
from worker.generating.cover.branches import exercise
exercise(sys.argv[1], sys.stdin.buffer.read())
cov.stop()
cov.json_report(outfile=sys.argv[3])
"""


@dataclass(frozen=True)
class Branches:
    """One module's branch coverage: ``missing`` lists the branches not taken, as ``(line, to)``
    (``to`` negative: leaving the function)."""

    module: str
    total: int
    covered: int
    missing: tuple[tuple[int, int], ...]

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.total if self.total else 100.0

    def __str__(self) -> str:
        missing = "" if not self.missing else " (not taken: " + ", ".join(f"{a}->{b}" for a, b in self.missing) + ")"
        return f"{self.module}: {self.covered} of {self.total} branches, {self.percent:.1f} %{missing}"


def measure(game: str, data: bytes) -> list[Branches]:
    """The branch coverage of ``game``'s rules modules by the judge file ``data``."""
    files = [str(_ENGINES / module) for module in RULES[game]]
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "coverage.json"
        subprocess.run([sys.executable, "-c", _RUNNER, game, json.dumps(files), str(report)], input=data,
                       check=True, capture_output=True)
        # (coverage names a file relative to the working folder when it lies inside it)
        found = {os.path.abspath(name): data for name, data in json.loads(report.read_text())["files"].items()}
    measured = []
    for module, path in zip(RULES[game], files, strict=True):
        summary = found[path]["summary"] if path in found else {"num_branches": 0, "covered_branches": 0}
        missing = found[path].get("missing_branches", []) if path in found else []
        measured.append(Branches(module, summary["num_branches"], summary["covered_branches"],
                                 tuple((a, b) for a, b in missing)))
    return measured


def exercise(game: str, data: bytes) -> None:
    """What Dealer does with a judge file, on the engine of this process: read its cases (a
    batch at a time, as ``dealer solve`` does: here the whole file), then solve each, solve it
    again with its trace (as the service stores it) and replay the trace."""
    from worker import engines

    engine = engines.get(game)
    for case in list(engine.parse(io.BytesIO(data), [])):
        engine.solve(case, False)
        traced = engine.solve(case, True)
        engine.replay(case.text, traced.trace or {})
