"""Engine speed, side by side with the seeds' reference solutions (``make bench``).

For each game: 100,000 random cases from a fixed seed (``--cases``), the reference
binaries built with ``../shared/reference/build.sh`` (``DEALER_REFERENCES`` names another folder;
skipped, with a word, when there is none or no g++), then ``dealer solve`` on the same file on both cores: the pure-Python engines
(``DEALER_PURE_PYTHON=1``) and the native core, traces off, and with ``--traces`` too.
Each figure is the CPU time of the whole process (user + system, Python's start-up
included), the best of ``--repeat`` runs (the native core's, a second or less each: of
``--native-repeat``, traces off and on alternately); outputs must be identical, and ratios
are to the fastest reference. The column ``packed`` is the native core's ``solve_packed`` (the
traces the service stores) over its plain ``solve``, in this process. Last, ``dealer
solve`` with ``--jobs 1`` and ``--jobs 2`` on 1,000,000 decks of 10-20-30 (``--big``), on
both cores, wall and CPU (best of ``--repeat``; with ``--baseline``, its tree's too).

``--baseline DIR`` also times another checkout's engines (say the last commit's:
``git archive HEAD | tar -x -C DIR``) against this one's on the same files, both as
``python -m worker.cli solve``, alternating over ``--rounds`` rounds so that a noisy
machine weighs on both alike; outputs and traces must be identical, and the table gives
the best and the median of each (CPU time of the whole process), and traces on over off.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import figures
from worker import engines
from worker.engines import native

ROOT = Path(__file__).resolve().parents[1]

#: The seeds' reference solutions, kept beside the project by its owner (``DEALER_REFERENCES`` elsewhere):
#: they are not part of the project, and the benchmark runs without them.
REFERENCE_DIR = Path(os.environ.get("DEALER_REFERENCES", ROOT.parent / "shared" / "reference"))
CACHE = ROOT / "bench" / ".cache"
REFERENCES = {
    "10-20-30": ["uva246_seed000", "uva246_seed001"],
    "accordion": ["uva127_seed004"],
    "mahjong": ["uva11210_seed002"],
}
#: The native core: at most this many times the fastest reference, and traces on at most
#: this many times traces off.
TARGETS = {"10-20-30": 0.20, "accordion": 0.30, "mahjong": 1.0}
TRACE_TARGET = 1.2


def judge_file(slug: str, count: int, seed: int) -> Path:
    """A judge file of ``count`` random cases, made once and kept in bench/.cache."""
    path = CACHE / f"{slug}-{count}-{seed}.in"
    if not path.exists():
        engine = engines.get(slug)
        rng = random.Random(seed)
        CACHE.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".tmp"), "w") as out:
            out.writelines(engine.generate(rng) + "\n" for _ in range(count))
            out.write(engine.terminator + "\n")
        path.with_suffix(".tmp").rename(path)
    return path


def build_references() -> Path | None:
    if not (REFERENCE_DIR / "build.sh").is_file():
        print(f"no reference solutions at {REFERENCE_DIR} (set DEALER_REFERENCES): references skipped")
        return None
    if shutil.which("g++") is None:
        print("no g++ on this machine: reference solutions skipped")
        return None
    print("building the reference solutions with g++ -O2 …")
    out = subprocess.run(["bash", str(REFERENCE_DIR / "build.sh"), str(CACHE / "ref")],
                         check=True, capture_output=True, text=True).stdout
    return Path(out.strip().splitlines()[-1])


def best_time(command: list[str], stdin: Path | None, repeat: int, pure: bool = False,
              writes: Path | None = None) -> tuple[float, bytes]:
    """The least CPU time (user + system) of ``repeat`` runs of ``command``, and its output.
    The file ``writes`` is removed before each run: each writes it anew, as a user's run
    would, rather than paying for freeing the last run's pages."""
    env = {**os.environ, native.PURE_PYTHON: "1"} if pure else _without_pure()
    best, output = float("inf"), b""
    for _ in range(repeat):
        if writes is not None:
            writes.unlink(missing_ok=True)
        with open(stdin, "rb") if stdin else open("/dev/null", "rb") as source:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run(command, stdin=source, capture_output=True, check=True, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        output = done.stdout
    return best, output


def _without_pure() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != native.PURE_PYTHON}


def packed_ratio(slug: str, path: Path) -> float:
    """The native core's ``solve_packed`` over its plain ``solve``, CPU time in this process."""
    engine = engines.get(slug)
    with open(path, "rb") as source:
        cases = list(engine.parse(source, []))
    times = []
    for solve in (lambda case: engine.solve(case, False), engine.solve_packed):
        start = time.process_time()
        for case in cases:
            solve(case)
        times.append(time.process_time() - start)
    return times[1] / times[0]


def big_run(decks: int, seed: int, repeat: int, baseline: Path | None) -> int:
    """``dealer solve`` on ``decks`` decks of 10-20-30 with ``--jobs 1`` and ``--jobs 2``, on
    both cores (and in ``baseline`` too): the least wall and the least CPU time of ``repeat`` runs."""
    path = judge_file("10-20-30", decks, seed)
    trees = {"this": ROOT} if baseline is None else {"baseline": baseline, "this": ROOT}
    outputs = set()
    print(f"\ndealer solve 10-20-30, {decks:,} decks, best of {repeat} (seconds)")
    print(f"{'tree':<9} {'core':<12} {'jobs 1 wall':>11} {'CPU':>6} {'jobs 2 wall':>11} {'CPU':>6} {'speed-up':>8}")
    for name, tree in trees.items():
        for pure in (True, False):
            env = {**os.environ, native.PURE_PYTHON: "1"} if pure else _without_pure()
            best: dict[int, tuple[float, float]] = {}
            for _ in range(repeat):
                for jobs in (1, 2):
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    start = time.perf_counter()
                    done = subprocess.run([sys.executable, "-m", "worker.cli", "solve", "10-20-30", str(path),
                                           "--jobs", str(jobs), "--no-progress"], cwd=tree, env=env,
                                          capture_output=True, check=True)
                    wall = time.perf_counter() - start
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                    least = best.get(jobs, (wall, cpu))
                    best[jobs] = min(least[0], wall), min(least[1], cpu)
                    outputs.add(done.stdout)
            (wall1, cpu1), (wall2, cpu2) = best[1], best[2]
            print(f"{name:<9} {'pure-Python' if pure else 'native':<12} {wall1:>11.2f} {cpu1:>6.2f} {wall2:>11.2f}"
                  f" {cpu2:>6.2f} {wall1 / wall2:>7.2f}x")
    if len(outputs) != 1:
        print("  the outputs differ")
    return len(outputs) - 1


def against_baseline(baseline: Path, slugs: list[str], paths: dict[str, Path], rounds: int) -> int:
    """Time this checkout's and ``baseline``'s ``solve`` alternately; print the table, return the failures."""
    trees = {"baseline": baseline, "this": ROOT}
    for tree in trees.values():  # where PYTHONDONTWRITEBYTECODE is set, neither may compile at every run
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "worker")], check=True,
                       capture_output=True)
    failures = 0
    print(f"\nagainst {baseline}, {rounds} rounds (CPU seconds of the whole process; traces: on over off)")
    print(f"{'game':<10} {'traces':<6} {'base best':>9} {'this best':>9} {'ratio':>6}"
          f" {'base med':>9} {'this med':>9} {'ratio':>6} {'traces base':>11} {'this':>6}")
    with tempfile.TemporaryDirectory() as scratch:
        for slug in slugs:
            untraced: dict[str, float] = {}
            for traced in (False, True):
                times: dict[str, list[float]] = {name: [] for name in trees}
                outputs: dict[str, set[bytes]] = {name: set() for name in trees}
                for round_ in range(rounds):
                    for name in sorted(trees, reverse=round_ % 2 == 1):  # alternate who goes first
                        command = [sys.executable, "-m", "worker.cli", "solve", slug, str(paths[slug]), "--no-progress"]
                        trace_file = Path(scratch) / f"{name}.jsonl"
                        if traced:
                            command += ["--traces", str(trace_file)]
                        before = resource.getrusage(resource.RUSAGE_CHILDREN)
                        done = subprocess.run(command, cwd=trees[name], capture_output=True, check=True)
                        after = resource.getrusage(resource.RUSAGE_CHILDREN)
                        times[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                        outputs[name].add(done.stdout + (trace_file.read_bytes() if traced else b""))
                if len(outputs["this"] | outputs["baseline"]) != 1:
                    print(f"{slug}: output{' or traces' if traced else ''} differ from the baseline's")
                    failures += 1
                base, this = times["baseline"], times["this"]
                on_over_off = (f" {min(base) / untraced['baseline']:>10.2f}x {min(this) / untraced['this']:>5.2f}x"
                               if traced else "")
                untraced = {name: min(times[name]) for name in trees}
                print(f"{slug:<10} {'on' if traced else 'off':<6} {min(base):>9.3f} {min(this):>9.3f}"
                      f" {min(this) / min(base):>6.3f} {statistics.median(base):>9.3f}"
                      f" {statistics.median(this):>9.3f} {statistics.median(this) / statistics.median(base):>6.3f}"
                      f"{on_over_off}")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=246127)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--native-repeat", type=int, default=40,
                        help="runs of the native core, traces off and on alternately")
    parser.add_argument("--big", type=int, default=1_000_000, help="decks of the --jobs 2 run (0: none)")
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
    refdir = None if args.no_references else build_references()
    print(native.summary())
    print(f"\n{args.cases:,} cases a game, CPU seconds of the whole process, best of {args.repeat}"
          f" (native: of {args.native_repeat}, traces off and on alternately)")
    print(f"{'game':<10} {'reference':>17} {'ref s':>7} {'python s':>9} {'ratio':>6} {'native s':>9} {'ratio':>6}"
          f" {'target':>7} {'traces s':>9} {'ratio':>6} {'packed':>6}")
    for slug in args.games:
        path = paths[slug]
        command = [dealer, "solve", slug, str(path), "--no-progress"]
        pure, pure_output = best_time(command, None, args.repeat, pure=True)
        ours = traced = float("inf")
        with tempfile.TemporaryDirectory() as scratch:
            traces = Path(scratch) / "traces.jsonl"
            # Less than a second each: alternated, and more often, so that a busy moment
            # weighs on both alike.
            for _ in range(args.native_repeat):
                seconds, output = best_time(command, None, 1)
                ours = min(ours, seconds)
                seconds, traced_output = best_time([*command, "--traces", str(traces)], None, 1, writes=traces)
                traced = min(traced, seconds)
        for name, other in (("the pure-Python core's", pure_output), ("with traces", traced_output)):
            if other != output:
                print(f"{slug}: output {name} differs from the native core's")
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
        print(f"{slug:<10} {fastest_name:>17} {fastest or float('nan'):>7.3f} {pure:>9.3f}"
              f" {pure / fastest if fastest else float('nan'):>5.2f}x {ours:>9.3f} {ratio:>5.2f}x"
              f" {'≤' + format(target, '.2f') + 'x':>7} {traced:>9.3f} {trace_ratio:>5.2f}x"
              f" {packed_ratio(slug, path):>5.2f}x {'ok' if ok else 'MISSED'}")
    print(f"(targets: the native core at most the ratio shown, with traces at most {TRACE_TARGET:.1f}x without)")
    if args.big and "10-20-30" in args.games:
        failures += big_run(args.big, args.seed, args.repeat, baseline)
    if baseline is not None:
        failures += against_baseline(baseline, args.games, paths, args.rounds)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(figures.record("engines", main))
