"""Engine speed, side by side with the seeds' reference solutions (``make bench``).

For each game: 20,000 random cases from a fixed seed, the reference binaries built
with ``../shared/reference/build.sh`` (skipped, with a word, when there is no g++),
then ``dealer solve`` on the same file, traces off and on. Outputs must be identical;
each time is the best of a few runs, and the ratio is to the fastest reference.

``--baseline DIR`` also times another checkout's engines (say the last commit's:
``git archive HEAD | tar -x -C DIR``) against this one's on the same files, both as
``python -m worker.cli solve``, alternating over ``--rounds`` rounds so that a noisy
machine weighs on both alike; outputs and traces must be identical, and the table gives
the best and the median of each.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from worker import engines

ROOT = Path(__file__).resolve().parents[1]

SHARED = ROOT.parent / "shared"
CACHE = ROOT / "bench" / ".cache"
REFERENCES = {
    "10-20-30": ["uva246_seed000", "uva246_seed001"],
    "accordion": ["uva127_seed004"],
    "mahjong": ["uva11210_seed002"],
}
#: (at most this many times the fastest reference, traces on at most this many times traces off)
TARGETS = {"10-20-30": 1 / 3, "accordion": 1.5, "mahjong": 3.0}
TRACE_TARGET = 1.5


def judge_file(slug: str, count: int, seed: int) -> Path:
    """A judge file of ``count`` random cases, made once and kept in bench/.cache."""
    path = CACHE / f"{slug}-{count}-{seed}.in"
    if not path.exists():
        engine = engines.get(slug)
        rng = random.Random(seed)
        CACHE.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".tmp"), "w") as out:
            for _ in range(count):
                out.write(engine.generate(rng) + "\n")
            out.write(engine.terminator + "\n")
        path.with_suffix(".tmp").rename(path)
    return path


def build_references() -> Path | None:
    if shutil.which("g++") is None:
        print("no g++ on this machine: reference solutions skipped")
        return None
    print("building the reference solutions with g++ -O2 …")
    out = subprocess.run(["bash", str(SHARED / "reference" / "build.sh"), str(CACHE / "ref")],
                         check=True, capture_output=True, text=True).stdout
    return Path(out.strip().splitlines()[-1])


def best_time(command: list[str], stdin: Path | None, repeat: int) -> tuple[float, bytes]:
    best, output = float("inf"), b""
    for _ in range(repeat):
        with open(stdin, "rb") if stdin else open("/dev/null", "rb") as source:
            start = time.perf_counter()
            done = subprocess.run(command, stdin=source, capture_output=True, check=True)
            best = min(best, time.perf_counter() - start)
        output = done.stdout
    return best, output


def against_baseline(baseline: Path, slugs: list[str], paths: dict[str, Path], rounds: int) -> int:
    """Time this checkout's and ``baseline``'s ``solve`` alternately; print the table, return the failures."""
    trees = {"baseline": baseline, "this": ROOT}
    for tree in trees.values():  # where PYTHONDONTWRITEBYTECODE is set, neither may compile at every run
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "worker")], check=True,
                       capture_output=True)
    failures = 0
    print(f"\nagainst {baseline}, {rounds} rounds (seconds)")
    print(f"{'game':<10} {'traces':<6} {'base best':>9} {'this best':>9} {'ratio':>6}"
          f" {'base med':>9} {'this med':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as scratch:
        for slug in slugs:
            for traced in (False, True):
                times: dict[str, list[float]] = {name: [] for name in trees}
                outputs: dict[str, set[bytes]] = {name: set() for name in trees}
                for round_ in range(rounds):
                    for name in sorted(trees, reverse=round_ % 2 == 1):  # alternate who goes first
                        command = [sys.executable, "-m", "worker.cli", "solve", slug, str(paths[slug]), "--no-progress"]
                        trace_file = Path(scratch) / f"{name}.jsonl"
                        if traced:
                            command += ["--traces", str(trace_file)]
                        start = time.perf_counter()
                        done = subprocess.run(command, cwd=trees[name], capture_output=True, check=True)
                        times[name].append(time.perf_counter() - start)
                        outputs[name].add(done.stdout + (trace_file.read_bytes() if traced else b""))
                if len(outputs["this"] | outputs["baseline"]) != 1:
                    print(f"{slug}: output{' or traces' if traced else ''} differ from the baseline's")
                    failures += 1
                base, this = times["baseline"], times["this"]
                print(f"{slug:<10} {'on' if traced else 'off':<6} {min(base):>9.3f} {min(this):>9.3f}"
                      f" {min(this) / min(base):>6.3f} {statistics.median(base):>9.3f}"
                      f" {statistics.median(this):>9.3f} {statistics.median(this) / statistics.median(base):>6.3f}")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=246127)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout to time against this one")
    parser.add_argument("--rounds", type=int, default=8, help="alternating rounds against the baseline")
    parser.add_argument("--no-references", action="store_true", help="skip the reference solutions")
    parser.add_argument("games", nargs="*", default=engines.names())
    args = parser.parse_args()
    baseline: Path | None = args.baseline.resolve() if args.baseline else None
    if baseline is not None and not (baseline / "worker" / "cli.py").is_file():
        parser.error(f"{baseline} is not a checkout of this project (no worker/cli.py)")

    dealer = str(Path(sys.executable).with_name("dealer"))
    paths = {slug: judge_file(slug, args.cases, args.seed) for slug in args.games}
    failures = 0
    if args.no_references:
        return against_baseline(baseline, args.games, paths, args.rounds) if baseline else 0
    refdir = build_references()
    print(f"\n{'game':<10} {'reference':>18} {'ref s':>7} {'dealer s':>9} {'ratio':>7} {'target':>8}"
          f" {'traces s':>9} {'ratio':>6}")
    for slug in args.games:
        path = paths[slug]
        ours, output = best_time([dealer, "solve", slug, str(path), "--no-progress"], None, args.repeat)
        with tempfile.NamedTemporaryFile(suffix=".jsonl") as traces:
            traced, traced_output = best_time(
                [dealer, "solve", slug, str(path), "--no-progress", "--traces", traces.name], None, args.repeat)
        if traced_output != output:
            print(f"{slug}: output with traces differs from output without")
            failures += 1
        fastest_name, fastest = "-", None
        for name in REFERENCES[slug] if refdir else []:
            seconds, expected = best_time([str(refdir / name)], path, args.repeat)
            if expected != output:
                print(f"{slug}: output differs from {name}")
                failures += 1
            if fastest is None or seconds < fastest:
                fastest_name, fastest = name, seconds
        ratio = ours / fastest if fastest else float("nan")
        trace_ratio = traced / ours
        target = TARGETS[slug]
        ok = (fastest is None or ratio <= target) and trace_ratio <= TRACE_TARGET
        failures += not ok
        print(f"{slug:<10} {fastest_name:>18} {fastest or float('nan'):>7.3f} {ours:>9.3f} {ratio:>6.2f}x"
              f" {'≤' + format(target, '.2f') + 'x':>8} {traced:>9.3f} {trace_ratio:>5.2f}x"
              f" {'ok' if ok else 'MISSED'}")
    if baseline is not None:
        failures += against_baseline(baseline, args.games, paths, args.rounds)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
