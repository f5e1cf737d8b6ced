"""Checking outputs against a stored job of a million cases, side by side with the job's own time
(``python -m bench.check``; target: a check takes at most 0.1× the job's solve time).

1. A random judge file of ``--cases`` cases (1,000,000 by default) is solved as a job by the
   real pipeline in this process (split, solve tasks, storage) on a fresh PostgreSQL database
   (``--sqlite``: an embedded one): its time from the split's start to its end is the job's
   solve time; the sum of its solving loops' CPU time is printed too.
2. Outputs of it are checked as the service checks them: stored as an upload and read back for
   the text check (what the web request does), then judged from the database by
   ``worker.checks.run`` (what a worker does): the right output, the same with CRLF line
   endings, one with 1 % of its lines wrong or spaced differently, and one missing its first
   line (so that every case is wrong and every line of it is kept).
3. The Python heap's peak while judging (``tracemalloc``, in a separate run) shows that the
   memory a check takes does not grow with the output.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import figures
from worker import work
from worker.checks.queries import CheckQueries
from worker.checks.run import run_check
from worker.checks.service import CheckService
from worker.config import Settings
from worker.jobs.queries import JobQueries
from worker.jobs.service import JobService
from worker.store.database import Database
from worker.store.migrate import upgrade
from worker.store.uploads import store_stream
from worker.testing.data import random_judge_file

TARGET = 0.1


class Here:
    """Runs the work where it is sent, in this process (as one worker process would, without a broker)."""

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db, self.settings = db, settings
        self.queue: list[tuple[str, int]] = []
        self.checks: list[int] = []

    def split(self, job_id: int) -> None:
        self.queue.append(("split", job_id))

    def solve(self, chunk_ids: Sequence[int]) -> None:
        self.queue += [("solve", chunk_id) for chunk_id in chunk_ids]

    def check(self, check_id: int) -> None:
        self.checks.append(check_id)

    def queue_depth(self) -> int | None:
        return len(self.queue)

    def drain(self) -> None:
        while self.queue:
            kind, ident = self.queue.pop(0)
            (work.split if kind == "split" else work.solve)(self.db, self.settings, ident, self)


def _variants(right: bytes, seed: int) -> dict[str, bytes]:
    lines = right.split(b"\n")[:-1]
    rng = random.Random(seed)
    for k in rng.sample(range(len(lines)), len(lines) // 100):
        lines[k] = lines[k].replace(b" ", b"  ", 1) if k % 2 else lines[k][:-1] + b"?"
    return {"right output": right, "right output, CRLF": right.replace(b"\n", b"\r\n"),
            "1 % of lines wrong or spaced": b"\n".join(lines) + b"\n",
            "first line missing (all wrong)": right.split(b"\n", 1)[1]}


def _check(service: CheckService, here: Here, job_id: int, output: bytes) -> tuple[float, float, Any]:
    """(seconds to take the output in, seconds to judge it, the check)."""
    start = time.perf_counter()
    upload = store_stream(service.db, io.BytesIO(output), service.settings.max_upload_bytes)
    created = service.create_check(job_id, upload, "output.txt")
    taken = time.perf_counter() - start
    assert here.checks == [created.id]
    here.checks.clear()
    start = time.perf_counter()
    run_check(service.db, service.settings, created.id)
    judged = time.perf_counter() - start
    return taken, judged, created.id


def run(settings: Settings, game: str, cases: int, folder: Path) -> int:
    with contextlib.closing(Database(settings)) as db:
        return _run(db, settings, game, cases, folder)


def _run(db: Database, settings: Settings, game: str, cases: int, folder: Path) -> int:
    upgrade(db)
    here = Here(db, settings)
    service, queries = JobService(db, settings, here), JobQueries(db)
    checks, check_queries = CheckService(db, settings, here, service), CheckQueries(db)
    print(f"{cases:,} {game} cases on {db.dialect}: solving them as a job (one process)…",
          flush=True)
    path = random_judge_file(folder / "cases.in", game, cases, seed=246)
    with open(path, "rb") as stream:
        upload = store_stream(service.db, stream, settings.max_upload_bytes)
    job = service.create_job(upload, path.name, game)
    start = time.perf_counter()
    here.drain()
    wall = time.perf_counter() - start
    view = queries.job(job.id)
    assert view.status == "succeeded" and view.total == cases, view
    timings = queries.timings(job.id)
    solve_s = view.elapsed_seconds
    cpu_s = timings.solve_us_total / 1e6
    right = b"".join(queries.output(job.id))
    print(f"  job: {solve_s:.1f} s from split to end ({wall:.1f} s in all here), of which solving {cpu_s:.1f} s; "
          f"output {len(right) / 1e6:.1f} MB\n")
    print(f"  {'output':<32} {'verdict':<20} {'take in':>8} {'judge':>8} {'check':>8} {'÷ job':>7} {'÷ solving':>9}")
    worst = 0.0
    variants = _variants(right, cases)
    for name, output in variants.items():
        taken, judged, check_id = _check(checks, here, job.id, output)
        check = check_queries.check(check_id)
        total = taken + judged
        ratio = total / solve_s
        worst = max(worst, ratio)
        print(f"  {name:<32} {check.verdict or check.status:<20} {taken:7.2f}s {judged:7.2f}s {total:7.2f}s "
              f"{ratio:6.3f}× {total / cpu_s:8.3f}×", flush=True)
    print()
    for name in ("1 % of lines wrong or spaced", "first line missing (all wrong)"):
        tracemalloc.start()
        _check(checks, here, job.id, variants[name])
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"  Python heap peak while taking in and judging the output \"{name}\" "
              f"({len(variants[name]) / 1e6:.1f} MB): {peak / 1e6:.1f} MB")
    print(f"  worst check ÷ job: {worst:.3f}× (target ≤ {TARGET}×) {'ok' if worst <= TARGET else 'MISSED'}")
    return 0 if worst <= TARGET else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--game", default="10-20-30")
    parser.add_argument("--sqlite", action="store_true", help="an embedded database instead of PostgreSQL")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dealer-bench-check-") as tmp:
        folder = Path(tmp)
        if args.sqlite:
            return run(Settings.from_env({}, data_dir=folder / "data"), args.game, args.cases, folder)
        from worker.testing.servers import create_postgres_database, drop_postgres_database

        url = create_postgres_database()
        try:
            return run(Settings.from_env({"DEALER_DATABASE_URL": url}, data_dir=folder / "data"), args.game,
                       args.cases, folder)
        finally:
            drop_postgres_database(url)


if __name__ == "__main__":
    sys.exit(figures.record("check", main))
