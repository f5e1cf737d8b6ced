"""A judge file read as the service's split reads it, the old way and the new (``python -m bench.reading``).

For each game, a judge file of ``--cases`` random cases (1,000,000 by default; from
``bench.engines.judge_file``, made once and kept in bench/.cache) is read in this process,
from memory, into chunks of ``--chunk`` cases, each chunk's canonical inputs as one ``bytes``
(what the split compresses and stores):

- ``parse + join``: ``Engine.parse``, a ``Case`` a case, and ``"\\n".join`` of a chunk's texts,
  encoded (the split's path before ``read_inputs``);
- ``read_inputs``: ``Engine.read_inputs(...).take(chunk)``, the texts written in C into one
  buffer a chunk, with no object per case.

Before timing, the blocks are checked against ``parse``'s texts, byte for byte. Each figure is
CPU seconds (``time.process_time``) for the whole file, the best and the median of ``--rounds``
rounds, the two ways taken in turn, in a different order each round, so that a busy moment of
a shared machine weighs on both alike.

``--baseline DIR`` also times ``parse + join`` with another checkout's engines (say ``main``'s:
``git archive main | tar -x -C DIR``, then ``python setup.py build_ext --inplace`` there for
its native core), in a child process each round, alternating with this tree's.
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bench import figures
from bench.chunks import measure
from bench.engines import judge_file
from worker import engines
from worker.engines import native
from worker.engines.engine import Engine

#: ``parse + join`` of a file in another checkout's interpreter state: its CPU seconds on stdout.
BASELINE = """
import io, sys, time
from worker import engines
engine = engines.get(sys.argv[1])
data = open(sys.argv[2], "rb").read()
chunk = int(sys.argv[3])
start = time.process_time()
texts = []
for case in engine.parse(io.BytesIO(data), []):
    texts.append(case.text)
    if len(texts) == chunk:
        "\\n".join(texts).encode()
        texts = []
"\\n".join(texts).encode()
print(time.process_time() - start, engine.core_name)
"""


def parse_and_join(engine: Engine, data: bytes, chunk: int) -> int:
    """The split's reading before ``read_inputs``: a chunk's inputs joined from its cases' texts."""
    texts: list[str] = []
    cases = 0
    for case in engine.parse(io.BytesIO(data), []):
        texts.append(case.text)
        if len(texts) == chunk:
            "\n".join(texts).encode()
            cases += len(texts)
            texts = []
    "\n".join(texts).encode()
    return cases + len(texts)


def read_inputs(engine: Engine, data: bytes, chunk: int) -> int:
    """The split's reading with ``read_inputs``: a chunk's inputs as the reader gives them."""
    blocks = engine.read_inputs(io.BytesIO(data), [])
    while blocks.take(chunk)[1]:
        pass
    return blocks.cases


def check(engine: Engine, data: bytes, chunk: int) -> int:
    """The blocks are parse's texts (raises AssertionError); the number of cases."""
    texts = [case.text.encode() + b"\n" for case in engine.parse(io.BytesIO(data), [])]
    blocks = list(engine.read_inputs(io.BytesIO(data), [], max_cases=chunk))
    assert [count for _, count in blocks[:-1]] == [chunk] * (len(blocks) - 1), "blocks of other sizes"
    assert b"".join(block for block, _ in blocks) == b"".join(texts), "texts differ"
    return len(texts)


def baseline(directory: Path, slug: str, path: Path, chunk: int) -> float:
    """CPU seconds of ``parse + join`` with the engines of ``directory``, in a child process."""
    done = subprocess.run([sys.executable, "-c", BASELINE, slug, str(path), str(chunk)], cwd=directory,
                          env={"PYTHONPATH": str(directory), "PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, check=True)
    seconds, core = done.stdout.split()
    if core != "native":
        raise SystemExit(f"the baseline in {directory} has no native core for {slug}: build it there first")
    return float(seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=246127)
    parser.add_argument("--chunk", type=int, default=2000, help="cases a chunk")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--baseline", type=Path, help="another checkout, its native core built")
    parser.add_argument("games", nargs="*", default=engines.names())
    args = parser.parse_args()
    print(native.summary())
    print(f"\n{args.cases:,} cases a game, {args.chunk:,} a chunk, read from memory; CPU seconds, "
          f"best (median) of {args.rounds} rounds")
    for slug in args.games:
        engine = engines.get(slug)
        path = judge_file(slug, args.cases, args.seed)
        data = path.read_bytes()
        cases = check(engine, data, args.chunk)
        ways: dict[str, Callable[[], object]] = {
            "parse + join": lambda engine=engine, data=data: parse_and_join(engine, data, args.chunk),
            "read_inputs": lambda engine=engine, data=data: read_inputs(engine, data, args.chunk),
        }
        if args.baseline:
            ways["baseline parse + join"] = lambda slug=slug, path=path: baseline(args.baseline, slug, path,
                                                                                  args.chunk)
        times = measure(ways, args.rounds)
        new = min(times["read_inputs"])
        print(f"\n{slug} ({engine.core_name} core; {cases:,} cases, {len(data) / 1e6:.1f} MB)")
        for name, seconds in times.items():
            best = min(seconds)
            print(f"  {name:<22} {best:>7.3f} s ({statistics.median(seconds):.3f})  {best / cases * 1e6:>6.3f} µs a case"
                  f"  {len(data) / best / 1e6:>6.0f} MB/s  {best / new:>5.2f}x read_inputs")
    return 0


if __name__ == "__main__":
    sys.exit(figures.record("reading", main))
