"""Faults cost what good cases cost (issue 42): a judge file of 1,000,000 decks of 10-20-30 (``--decks``), clean,
and the same file with 5,000 of its lines cut short (``--faults``: one deck in every 200 has its second line
six cards short, a line of the clean file mutated as ``worker/testing/mutations.py`` makes a short line),
side by side in one run:

- ``dealer solve`` (one process): its time and its peak memory (the process's RSS). It answers the decks
  before the first fault and reads the rest of the file for its faults only (``worker/solving.py``): what it
  shows is that reading past faults costs less than solving;
- a live service with the shipped defaults (Redis + PostgreSQL, private servers started for the run, one
  worker of 2 pool processes): the time from upload to the job's end, and the peak memory of its web and
  worker processes (their RSS, sampled while the job runs).

Each line gives the faulty file's time over the clean one's (target: at most 1.5x) and its peak memory against
the clean one's (flat: within 25 % + 32 MB). The readings are checked too: the faulty file gives one fault per
short line and keeps every other deck, through both.

    python -m bench.layout_faults                              # the figure in docs/performance.md
    python -m bench.layout_faults --decks 20000 --faults 100   # a quick try (no figure written)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench import figures
from bench.churn import tree_rss
from bench.engines import judge_file
from bench.service import servers
from worker.testing.live import DEALER, LiveService, live_service
from worker.testing.mutations import edit_line

TARGET = 1.5
#: Peak memory is flat when the faulty file's is within this share of the clean one's, plus :data:`SLACK`.
FLAT, SLACK = 1.25, 32 << 20
MB = 1 << 20


def with_short_lines(clean: Path, into: Path, decks: int, faults: int) -> Path:
    """``clean`` (two lines a deck) with the second line of one deck in every ``decks // faults`` cut short,
    spread through the file, a line at a time."""
    step = decks // faults
    short = {2 * (step * k + step // 2) + 2 for k in range(faults)}  # the second line of each deck picked
    with open(clean, "rb") as source, open(into, "wb") as out:
        for number, line in enumerate(source, 1):
            out.write(edit_line(line, "short-line") if number in short else line)
    return into


def by_command_line(path: Path) -> tuple[float, int, int]:
    """``dealer solve`` of ``path``: its seconds, its peak RSS (bytes) and the faults it counted."""
    started = time.perf_counter()
    with open(os.devnull, "wb") as nowhere, tempfile.TemporaryFile() as errors:
        process = subprocess.Popen([*DEALER, "solve", "10-20-30", str(path), "--no-progress"], stdout=nowhere,
                                   stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        errors.seek(0)
        said = errors.read().decode()
    counted = re.search(r"\(([\d,]+) faults?, named below\)", said)
    assert os.waitstatus_to_exitcode(status) in (0, 2), said[-2000:]
    return seconds, usage.ru_maxrss * 1024, int(counted[1].replace(",", "")) if counted else 0


@contextmanager
def peak_rss(live: LiveService) -> Iterator[list[int]]:
    """The service's web and worker processes' summed RSS at its highest over the block (in the list)."""
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            assert live.web is not None
            peak[0] = max(peak[0], tree_rss(live.web.pid) + sum(tree_rss(worker.pid) for worker in live.workers))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()


def by_service(live: LiveService, path: Path) -> tuple[float, int, dict[str, int]]:
    """A job of ``path``: seconds from upload to its end, the service's peak RSS, and the job's counts."""
    with peak_rss(live) as peak:
        started = time.perf_counter()
        job = live.wait(live.submit(path, "10-20-30")["id"], timeout=3600)
        seconds = time.perf_counter() - started
    return seconds, peak[0], {"faults": job["fault_count"], "kept": job["done"]}


def line(what: str, clean: tuple[float, int], faulty: tuple[float, int]) -> bool:
    """Print one path's figures, and say whether its targets are met."""
    ratio = faulty[0] / clean[0]
    flat = faulty[1] <= clean[1] * FLAT + SLACK
    print(f"{what:<34} clean {clean[0]:7.2f} s {clean[1] / MB:6.0f} MB   with faults {faulty[0]:7.2f} s "
          f"{faulty[1] / MB:6.0f} MB   {ratio:4.2f}x (target ≤ {TARGET:g}x) {'met' if ratio <= TARGET else 'MISSED'}, "
          f"memory {'flat' if flat else 'NOT FLAT'}")
    return ratio <= TARGET and flat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decks", type=int, default=1_000_000)
    parser.add_argument("--faults", type=int, default=5_000, help="short lines, spread through the file")
    args = parser.parse_args()
    clean = judge_file("10-20-30", args.decks, 42)
    met = True
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        faulty = with_short_lines(clean, tmp / "faulty.in", args.decks, args.faults)
        print(f"{args.decks:,} decks of 10-20-30, two lines a deck; with faults: {args.faults:,} of its lines six "
              f"cards short, spread through the file\n")
        solved = {name: by_command_line(path) for name, path in (("clean", clean), ("faulty", faulty))}
        met &= line("dealer solve", solved["clean"][:2], solved["faulty"][:2])
        counts = {"faults": solved["faulty"][2]}
        with servers("production") as found, live_service(
                "production", tmp / "service", concurrency=2, database_url=found.postgres.url,  # type: ignore[union-attr]
                broker_url=found.redis.url) as live:  # type: ignore[union-attr]
            # The faulty file first: what the first job after a start pays is then counted against it.
            served = {name: by_service(live, path) for name, path in (("faulty", faulty), ("clean", clean))}
        met &= line("service (Redis + PostgreSQL)", served["clean"][:2], served["faulty"][:2])
    expected = {"faults": args.faults, "kept": args.decks - args.faults}
    read = counts == {"faults": args.faults} and served["faulty"][2] == expected
    print(f"\none fault per short line, every other deck kept: dealer solve {counts['faults']:,} faults, the service "
          f"{served['faulty'][2]['faults']:,} faults and {served['faulty'][2]['kept']:,} decks kept "
          f"(expected {args.faults:,} and {args.decks - args.faults:,}): {'yes' if read else 'NO'}")
    return 0 if met and read else 1


if __name__ == "__main__":
    # The figure is the full size's: a quick try prints, and leaves the guide's figure as it is.
    quick = any(arg.startswith(("--decks", "--faults")) for arg in sys.argv[1:])
    sys.exit(main() if quick else figures.record("layout_faults", main))
