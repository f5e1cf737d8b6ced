"""``dealer generate``, measured (``make bench-generate``): speed, the mix it promises, memory,
and what the ``--cover`` files cover.

1. The mix: ``--cases`` (100,000) decks of 10-20-30 with ``--mix win=1,loss=1,draw=1``,
   ``--jobs 1`` and ``--jobs 2`` (target: at most 10 s), the file then solved by ``dealer
   solve``: each outcome within 1 % of a third (the counts are exact: they must be the
   largest-remainder shares of the cases).
2. Without a mix: ``--big`` (1,000,000) decks made by ``dealer generate`` and solved by
   ``dealer solve`` from the file it made, side by side, ``--jobs 1`` and ``--jobs 2``
   (target: making them takes at most the time solving them does).
3. Memory: the peak RSS of ``dealer generate`` writing ``--stream`` (10,000,000) decks to
   ``/dev/null``, beside that of 100,000: a few blocks, whatever the size of the file.
4. The ``--cover`` files: the rule branches each runs on the pure-Python engine (target:
   every branch a game can take).

Wall seconds, best of ``--repeat``, of whole processes (Python's start-up included). The
machine's load average is printed before and after: other work on it slows everything.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench import figures
from worker.engines import native
from worker.generating.cover import cover_text
from worker.generating.cover.branches import RULES, measure
from worker.generating.mix import apportion

DEALER = [sys.executable, "-m", "worker.cli"]
MIX = "win=1,loss=1,draw=1"
MIX_TARGET = 10.0


def run(command: list[str], stdout: Path | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of ``command``, its output to ``stdout`` (or nowhere)."""
    with open(stdout or os.devnull, "wb") as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        error = process.stderr.read() if process.stderr else b""
    if status:
        raise SystemExit(f"{' '.join(command)} failed: {error.decode()}")
    return wall, usage.ru_maxrss


def best(command: list[str], repeat: int, stdout: Path | None = None) -> float:
    return min(run(command, stdout)[0] for _ in range(repeat))


def load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def mix_run(cases: int, repeat: int, folder: Path) -> int:
    print(f"\n1. {cases:,} decks of 10-20-30, --mix {MIX} (wall seconds, best of {repeat})")
    path = folder / "mix.in"
    failures = 0
    for jobs in (1, 2):
        seconds = best([*DEALER, "generate", "10-20-30", "--cases", str(cases), "--seed", "1", "--mix", MIX,
                        "--jobs", str(jobs), "--no-progress"], repeat, path)
        ok = seconds <= MIX_TARGET
        failures += not ok
        print(f"   --jobs {jobs}: {seconds:6.2f} s  (target ≤ {MIX_TARGET:.0f} s) {'ok' if ok else 'MISSED'}")
    solved = subprocess.run([*DEALER, "solve", "10-20-30", str(path), "--jobs", "2", "--no-progress"],
                            capture_output=True, check=True).stdout.decode().splitlines()
    counts = Counter(line.split(":")[0].strip().lower() for line in solved)
    expected = dict(zip(("win", "loss", "draw"), apportion(cases, [1, 1, 1]), strict=True))
    for outcome in ("win", "loss", "draw"):
        share = counts[outcome] / cases
        ok = abs(share - 1 / 3) <= 0.01 and counts[outcome] == expected[outcome]
        failures += not ok
        print(f"   solved: {outcome:<4} {counts[outcome]:>7,} = {100 * share:6.3f} %  (asked 33.333 %, ±1 %) "
              f"{'ok' if ok else 'MISSED'}")
    return failures


def big_run(decks: int, repeat: int, folder: Path) -> int:
    print(f"\n2. {decks:,} decks of 10-20-30 without a mix: made, and solved from the file made (wall seconds, "
          f"best of {repeat})")
    path = folder / "big.in"
    failures = 0
    for jobs in (1, 2):
        made = best([*DEALER, "generate", "10-20-30", "--cases", str(decks), "--seed", "2", "--jobs", str(jobs),
                     "--no-progress"], repeat, path)
        solved = best([*DEALER, "solve", "10-20-30", str(path), "--jobs", str(jobs), "--no-progress"], repeat)
        ok = made <= solved
        failures += not ok
        print(f"   --jobs {jobs}: generate {made:6.2f} s, solve {solved:6.2f} s: {made / solved:5.2f}x "
              f"(target ≤ 1) {'ok' if ok else 'MISSED'}")
    return failures


def stream_run(decks: int) -> None:
    print("\n3. peak RSS of dealer generate 10-20-30 to /dev/null (one process)")
    for count in (100_000, decks):
        seconds, rss = run([*DEALER, "generate", "10-20-30", "--cases", str(count), "--seed", "3", "--no-progress"])
        print(f"   {count:>12,} decks: {rss / 1024:6.1f} MB in {seconds:6.2f} s")


def cover_run() -> int:
    print("\n4. the --cover files: rule branches run on the pure-Python engine (coverage.py)")
    failures = 0
    for game in RULES:
        data = cover_text(game)
        for measured in measure(game, data):
            ok = not measured.missing
            failures += not ok
            print(f"   {game:<9} {measured.module:<28} {measured.covered:>3} of {measured.total:>3} branches "
                  f"{measured.percent:6.1f} % {'ok' if ok else 'MISSED'}")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=100_000, help="decks of the mixed file")
    parser.add_argument("--big", type=int, default=1_000_000, help="decks of the file without a mix (0: none)")
    parser.add_argument("--stream", type=int, default=10_000_000, help="decks of the memory run (0: none)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(native.summary())
    print(f"{os.cpu_count()} CPUs, {load()}")
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        failures += mix_run(args.cases, args.repeat, folder)
        if args.big:
            failures += big_run(args.big, args.repeat, folder)
    if args.stream:
        stream_run(args.stream)
    failures += cover_run()
    print(f"\n{load()}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(figures.record("generate", main))
