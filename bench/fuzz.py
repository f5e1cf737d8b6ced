"""Coverage-guided fuzzing of the three readers with atheris (libFuzzer).

    python bench/fuzz.py                      # every game, 20,000 runs or 60 s each
    python bench/fuzz.py --game accordion --runs 0 --seconds 600

Each game is fuzzed in a process of its own (libFuzzer ends its process when done),
starting from that game's judge files, with inputs of up to ``--max-len`` bytes. An input
on which ``parse()`` raises anything but ``InputError``, or takes longer than
``--timeout`` seconds, is a finding: libFuzzer saves it under ``--artifacts`` and this
script prints its path and exits with status 1. One line per game otherwise::

    10-20-30   ok   20000 runs in 4.1 s, 812 coverage features

``tests/badinput/test_atheris.py`` runs a short round of this in the test suite.
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

JUDGE_DATA = ROOT.parent / "shared" / "judge-data"
MODULES = {"10-20-30": "ten_twenty_thirty", "accordion": "accordion", "mahjong": "mahjong"}


def fuzz_one(game: str, args: argparse.Namespace, corpus: Path) -> None:
    """In the child process: instrument the engine and hand it to libFuzzer (which exits)."""
    import atheris

    with atheris.instrument_imports(include=["worker"]):
        from worker import engines
        from worker.engines.reading import InputError

        engine = engines.get(game)

    def one_input(data: bytes) -> None:
        try:
            for _ in engine.parse(io.BytesIO(data), []):
                pass
        except InputError:
            pass

    argv = [sys.argv[0], f"-runs={args.runs}" if args.runs else "-runs=-1", f"-max_total_time={args.seconds}",
            f"-max_len={args.max_len}", f"-timeout={args.timeout}", f"-artifact_prefix={args.artifacts}/",
            "-print_final_stats=1", f"-seed={args.seed}", str(corpus)]
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


def seed_corpus(game: str, into: Path) -> None:
    """The game's small judge files, cut to a few KiB, as libFuzzer's starting points."""
    for path in sorted((JUDGE_DATA / game).glob("*.in")):
        (into / path.name).write_bytes(path.read_bytes()[:4096])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=[*MODULES, "all"], default="all")
    parser.add_argument("--runs", type=int, default=20_000, help="inputs per game (0: no limit)")
    parser.add_argument("--seconds", type=int, default=60, help="time per game at most")
    parser.add_argument("--max-len", type=int, default=4096)
    parser.add_argument("--timeout", type=int, default=5, help="seconds one input may take")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--artifacts", type=Path, default=ROOT / "test-output" / "fuzz")
    parser.add_argument("--child", choices=list(MODULES), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        fuzz_one(args.child, args, args.corpus)
        return 0
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("atheris is not installed (pip install atheris): nothing to do", file=sys.stderr)
        return 0
    args.artifacts.mkdir(parents=True, exist_ok=True)
    status = 0
    for game in MODULES if args.game == "all" else [args.game]:
        with tempfile.TemporaryDirectory(prefix=f"fuzz-{game}-") as tmp:
            corpus = Path(tmp)
            seed_corpus(game, corpus)
            command = [sys.executable, __file__, "--child", game, "--corpus", str(corpus),
                       "--runs", str(args.runs), "--seconds", str(args.seconds), "--max-len", str(args.max_len), "--timeout",
                       str(args.timeout), "--seed", str(args.seed), "--artifacts", str(args.artifacts)]
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, cwd=tmp,
                                  timeout=args.seconds + 120)
            elapsed = time.perf_counter() - started
        log = done.stdout + done.stderr
        runs = re.findall(r"stat::number_of_executed_units: (\d+)", log)
        features = re.findall(r"ft: (\d+)", log)
        if done.returncode == 0:
            print(f"{game:<10} ok   {runs[-1] if runs else '?'} runs in {elapsed:.1f} s, "
                  f"{features[-1] if features else '?'} coverage features")
            continue
        status = 1
        found = re.findall(r"Test unit written to (\S+)", log)
        print(f"{game:<10} FOUND a problem (exit {done.returncode}): {found[-1] if found else 'no artifact'}")
        print("\n".join(log.splitlines()[-40:]), file=sys.stderr)
    if not any(args.artifacts.iterdir()):
        args.artifacts.rmdir()
    return status


if __name__ == "__main__":
    sys.exit(main())
