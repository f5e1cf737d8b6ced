"""The fault scenarios end to end on Redis + PostgreSQL, one line each (``make bench-faults``):
cases expected, cases stored, duplicates, output identical to a clean run, the time from the
fault to the job's end, and the time the fault cost: the job's time from upload to end less a
clean run's, of another file of the same size in the same service just before. All with the
shipped defaults (worker/config.py); the target is at most 30 s lost to each fault.

The servers are private to this run (a PostgreSQL cluster and a Redis on free ports), so
restarting them disturbs nothing else on the machine.

``--five-faults`` runs instead one job with five faults in it (the worker killed three times, Redis
restarted, PostgreSQL stopped 5 s: ``scenarios.five_faults``), after a clean run of the same size; the
target is the same 30 s, from the last fault to the end beyond the clean run's time (issue 23 used
``--five-faults --decks 1000000``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench import figures
from worker.config import Settings
from worker.testing import faults as scenarios
from worker.testing.live import live_service
from worker.testing.servers import ServiceMissing

DEFAULTS = Settings.from_env({})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decks", type=int, default=100_000)
    parser.add_argument("--five-faults", action="store_true", help="one job, five faults in it")
    args = parser.parse_args()
    reports: list[scenarios.Report] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        path, expected = scenarios.judge_file(tmp, args.decks)
        (tmp / "clean").mkdir()
        clean_path, _ = scenarios.judge_file(tmp / "clean", args.decks, seed=30_000)
        print(f"{args.decks:,} decks of 10-20-30 per scenario, shipped defaults: heartbeat every "
              f"{DEFAULTS.heartbeat_seconds:g} s, a worker gone after {DEFAULTS.worker_timeout:g} s, sweep every "
              f"{DEFAULTS.sweep_seconds:g} s, stall after {DEFAULTS.stall_seconds:g} s, lease "
              f"{DEFAULTS.lease_seconds:g} s\n")

        def run(name: str, scenario) -> None:  # type: ignore[no-untyped-def]
            folder = tmp / name
            folder.mkdir()
            with scenarios.private_servers() as (postgres, redis):
                with scenarios.production(folder, postgres, redis) as live:
                    clean = scenarios.clean_run(live, clean_path)
                    report = scenario(live, postgres, redis)
            report.lost_seconds = report.total_seconds - clean
            reports.append(report)
            print(report.line(), flush=True)

        if args.five_faults:
            run("five", lambda live, pg, rd: scenarios.five_faults(live, pg, rd, path, expected, args.decks))
            return 0 if all(r.ok and r.in_time for r in reports) else 1
        run("kill", lambda live, pg, rd: scenarios.worker_killed(live, path, expected, args.decks))
        run("redis", lambda live, pg, rd: scenarios.redis_restarted(live, rd, path, expected, args.decks))
        run("postgres", lambda live, pg, rd: scenarios.postgres_restarted(live, pg, path, expected, args.decks))
        run("split", lambda live, pg, rd: scenarios.split_handed_out_while_the_broker_is_down(
            live, rd, path, expected, args.decks))

        folder = tmp / "web"
        folder.mkdir()
        with live_service("embedded", folder) as live:
            partial, jobs = scenarios.web_killed_during_upload(live, path)
        print(f"{'web killed during an upload':<34} partial uploads left {partial}, jobs created {jobs}"
              f"  {'ok' if not partial and not jobs else 'FAILED'}")
        failures = bool(partial or jobs)

        for name, scenario in (("netns", scenarios.worker_cut_off), ("elsewhere", scenarios.worker_elsewhere)):
            folder = tmp / name
            folder.mkdir()
            try:
                with scenarios.other_host() as (net, postgres, redis), scenarios.production(
                        folder, postgres, redis, workers=0 if name == "elsewhere" else 1) as live:
                    # The other host's only worker is the scenario itself: no fault, nothing to lose.
                    clean = scenarios.clean_run(live, clean_path) if name == "netns" else None
                    report = scenario(live, net, postgres, redis, path, expected, args.decks)
            except ServiceMissing as missing:
                print(f"{name:<34} skipped: {missing}")
                continue
            if clean is not None:
                report.lost_seconds = report.total_seconds - clean
            reports.append(report)
            print(report.line(), flush=True)
    slow = [r for r in reports if r.lost_seconds is not None and not r.in_time]
    return 1 if failures or slow or not all(r.ok for r in reports) else 0


if __name__ == "__main__":
    sys.exit(figures.record("faults", main))
