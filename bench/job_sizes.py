"""A job's fixed costs: files of 1,000 to 1,000,000 random 10-20-30 decks through the service, the first
job after a start and later ones, beside ``dealer solve --jobs 2 --traces`` on the same file.

For each mode (production: private PostgreSQL and Redis servers; embedded: SQLite and the file broker)
and each size, a service is started afresh (one worker of 2 pool processes, traces stored, the shipped
defaults) and sent a file as soon as it says it is ready (the first job), then ``--later`` other files
of the same size (later jobs: other decks, so that none is copied from an earlier job). Right before each
job the CLI solves the same file, so that both meet the same load. Each job prints its time from upload
to ``succeeded`` (the job's own ``finished_at``) over the CLI's, and where it went: until the job row
existed (``made``: a file over 1 MiB has its job made from its first MiB, and split while the rest arrives)
and until the whole file was sent (``sent``: the upload's answer came), ``queued`` and ``split`` (``GET
/api/jobs/<id>/timings``), the solving after the split ended, the engines' own solving time (summed over
cases) and the chunks. Outputs are compared byte for
byte with the CLI's.

Targets (verdicts printed): 100,000 decks at most 1.5x the CLI, the first job after a start included;
1,000,000 at most 1.3x; 10,000 within 0.3 s from upload to ``succeeded``; later jobs no slower than the
first (their median, within the spread of the CLI's own times over the same runs: one run's noise); every
output identical.

    python -m bench.job_sizes                                   # every size, both modes
    python -m bench.job_sizes --sizes 1000,10000,100000 --modes embedded
    python -m bench.job_sizes --record                          # and write docs/figures/job_sizes.md
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from bench import figures
from bench.engines import judge_file
from bench.service import servers, solve_locally
from worker.store.models import Chunk
from worker.testing.live import LiveService, live_service
from worker.testing.servers import ServiceMissing

SIZES = (1_000, 10_000, 100_000, 1_000_000)
MODES = ("production", "embedded")
#: Upload to ``succeeded`` over ``dealer solve --jobs 2 --traces``, by size.
RATIO_TARGETS = {100_000: 1.5, 1_000_000: 1.3}
#: Upload to ``succeeded``, in seconds, by size.
SECONDS_TARGETS = {10_000: 0.3}
#: The seed of the first size's first file; later jobs take the next ones, other sizes others.
SEED = 246


@dataclass
class Run:
    """One job beside the CLI on the same file."""

    label: str
    cli: float
    total: float
    made: float
    sent: float
    queued: float
    split: float
    after_split: float
    engine: float
    chunks: int
    identical: bool

    @property
    def ratio(self) -> float:
        return self.total / self.cli

    def line(self) -> str:
        return (f"  {self.label:<6} {self.total:7.3f} s = {self.ratio:5.2f}x the CLI's {self.cli:6.3f} s | made "
                f"{self.made:6.3f}, sent {self.sent:6.3f}, queued {self.queued:6.3f}, split {self.split:6.3f}, after the split "
                f"{self.after_split:6.3f}; engines {self.engine:6.3f} s over {self.chunks} chunks; output "
                f"{'identical' if self.identical else 'DIFFERS'}")


def _moment(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def one_job(live: LiveService, path: Path, label: str) -> Run:
    cli, _, expected = solve_locally(path, traces=True)
    start = time.time()
    job: dict[str, Any] = live.submit(path, "10-20-30")
    sent = time.time()
    while job["status"] not in ("succeeded", "failed", "cancelled"):
        # The end is read from the job's own clock (finished_at), so polling gently costs no accuracy.
        time.sleep(0.1)
        job = live.client.job(job["id"])
    assert job["status"] == "succeeded", job
    timings = live.client._json("GET", f"/api/jobs/{job['id']}/timings")
    with live.db.session(write=False) as session:
        chunks = session.scalar(select(func.count()).select_from(Chunk).where(Chunk.job_id == job["id"])) or 0
    created, finished = _moment(job["created_at"]), _moment(job["finished_at"])
    return Run(label=label, cli=cli, total=finished - start, made=created - start, sent=sent - start,
               queued=timings["queued_seconds"] or 0.0, split=timings["split_seconds"] or 0.0,
               after_split=finished - _moment(job["split_at"]), engine=timings["solve_us_total"] / 1e6,
               chunks=chunks, identical=live.output(job["id"]) == expected)


def verdicts(size: int, runs: list[Run]) -> list[str]:
    """What the targets say of a size's runs (the first job first); each line ends ``ok`` or ``MISSED``."""
    said = []

    def verdict(text: str, met: bool) -> None:
        said.append(f"  {text}  {'ok' if met else 'MISSED'}")

    if size in RATIO_TARGETS:
        worst = max(runs, key=lambda run: run.ratio)
        verdict(f"every job ≤ {RATIO_TARGETS[size]:.1f}x the CLI (worst: {worst.label}, {worst.ratio:.2f}x)",
                worst.ratio <= RATIO_TARGETS[size])
    if size in SECONDS_TARGETS:
        slowest = max(runs, key=lambda run: run.total)
        verdict(f"every job within {SECONDS_TARGETS[size]:.1f} s (slowest: {slowest.label}, {slowest.total:.3f} s)",
                slowest.total <= SECONDS_TARGETS[size])
    if len(runs) > 1:
        # "No slower" within the noise of one run, which the CLI's own times over the same runs show.
        later = statistics.median(run.total for run in runs[1:])
        noise = max(run.cli for run in runs) / min(run.cli for run in runs) - 1
        verdict(f"later jobs no slower than the first (median {later:.3f} s against {runs[0].total:.3f} s, "
                f"within the CLI's spread of {noise:.0%})", later <= runs[0].total * (1 + noise))
    verdict("outputs identical to the CLI's", all(run.identical for run in runs))
    return said


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        type=lambda text: [int(size) for size in text.split(",")], help="decks, comma-separated")
    parser.add_argument("--modes", default=",".join(MODES), type=lambda text: text.split(","),
                        help="production and/or embedded, comma-separated")
    parser.add_argument("--later", type=int, default=2, help="jobs after the first, each on another file")
    parser.add_argument("--record", action="store_true", help="write the output to docs/figures/job_sizes.md")
    args = parser.parse_args()
    if args.record:
        return figures.record("job_sizes", lambda: measure(args))
    return measure(args)


def measure(args: argparse.Namespace) -> int:
    # A plain `kill` must still stop the private servers and live processes (their finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # A seed of its own for every file: files of one seed start with the same decks, and a file whose first
    # MiB is that of a file solved before makes its job once whole (worker/jobs/arriving.py).
    files = {size: [judge_file("10-20-30", size, SEED + 100 * n + k) for k in range(args.later + 1)]
             for n, size in enumerate(args.sizes)}
    missed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes:
            try:
                with servers(mode) as found:
                    for size in args.sizes:
                        # A service of its own per size: its first job is the first after a start.
                        with live_service(mode, Path(tmp) / f"{mode}-{size}", concurrency=2,
                                          database_url=found.postgres.url if found.postgres else None,
                                          broker_url=found.redis.url if found.redis else None) as live:
                            runs = [one_job(live, path, "first" if k == 0 else f"later{k}")
                                    for k, path in enumerate(files[size])]
                        print(f"{mode}, {size:,} decks (load average {os.getloadavg()[0]:.1f}):")
                        for run in runs:
                            print(run.line())
                        said = verdicts(size, runs)
                        print("\n".join(said))
                        missed += sum(line.endswith("MISSED") for line in said)
                        sys.stdout.flush()
            except ServiceMissing as missing:
                print(f"{mode}: skipped: {missing}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
