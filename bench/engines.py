"""Engine speed, side by side with the seeds' reference solutions (``make bench``).

For each game: 20,000 random cases from a fixed seed, the reference binaries built
with ``../shared/reference/build.sh`` (skipped, with a word, when there is no g++),
then ``dealer solve`` on the same file, traces off and on. Outputs must be identical;
each time is the best of a few runs, and the ratio is to the fastest reference.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from worker import engines  # noqa: E402

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=246127)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("games", nargs="*", default=engines.names())
    args = parser.parse_args()

    dealer = str(Path(sys.executable).with_name("dealer"))
    refdir = build_references()
    failures = 0
    print(f"\n{'game':<10} {'reference':>18} {'ref s':>7} {'dealer s':>9} {'ratio':>7} {'target':>8}"
          f" {'traces s':>9} {'ratio':>6}")
    for slug in args.games:
        path = judge_file(slug, args.cases, args.seed)
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
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
