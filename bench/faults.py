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

``--three-faults`` runs issue 40's job instead: 1,000,000 decks (``--decks``) with a worker killed, Redis
down 15 s and PostgreSQL restarted in it (``scenarios.three_faults``), the worker on the pure-Python
engines (``DEALER_PURE_PYTHON=1``) so that the job lasts through them. It prints the seconds from each
fault's end to the job being solved again (a task has taken one of its chunks, or more cases are
answered), and from the last fault to ``succeeded``, against the
targets: solving again within 5 s of the broker's or the database's return, the job ended within 15 s
of the last fault (its figure: ``docs/figures/faults_recovery.md``).
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
    parser.add_argument("--decks", type=int, help="decks a job (100,000; 1,000,000 with --three-faults)")
    parser.add_argument("--five-faults", action="store_true", help="one job, five faults in it")
    parser.add_argument("--three-faults", action="store_true",
                        help="issue 40's job: three faults, the worker on the pure-Python engines")
    args = parser.parse_args()
    args.decks = args.decks or (1_000_000 if args.three_faults else 100_000)
    reports: list[scenarios.Report] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        path, expected = scenarios.judge_file(tmp, args.decks)
        if args.three_faults:
            return three_faults(tmp, path, expected, args.decks)
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


def three_faults(tmp: Path, path: Path, expected: bytes, decks: int) -> int:
    """Issue 40's run (``--three-faults``): its line, then each target met or missed."""
    print(f"{decks:,} decks of 10-20-30, one worker of 2 pool processes on the pure-Python engines, shipped "
          f"defaults; Redis down {scenarios.REDIS_DOWN_SECONDS:g} s, PostgreSQL down "
          f"{scenarios.OUTAGE_SECONDS:g} s\n")
    with scenarios.private_servers() as (postgres, redis), \
            scenarios.production(tmp, postgres, redis, workers=0) as live:
        live.env["DEALER_PURE_PYTHON"] = "1"  # the workers' only: the web's screening stays as shipped
        live.start_worker()
        live.wait_for_own_workers()
        report = scenarios.three_faults(live, postgres, redis, path, expected, decks)
    print(report.line())
    met = report.ok and len(report.resumed) == 3
    for name, seconds in report.resumed:
        if name.startswith(("redis", "postgresql")):
            ok = seconds is not None and seconds <= scenarios.RESUME_TARGET_SECONDS
            met &= ok
            took = "never" if seconds is None else f"{seconds:5.1f} s"
            print(f"  solving again after {name + ':':<22} {took}  (target ≤ "
                  f"{scenarios.RESUME_TARGET_SECONDS:g} s)  {'met' if ok else 'missed'}")
    ended = report.recovery_seconds <= scenarios.END_TARGET_SECONDS
    met &= ended
    print(f"  last fault to {report.status + ':':<18} {report.recovery_seconds:5.1f} s  (target ≤ "
          f"{scenarios.END_TARGET_SECONDS:g} s)  {'met' if ended else 'missed'}")
    return 0 if met else 1


if __name__ == "__main__":
    if "--three-faults" in sys.argv:
        sys.exit(figures.record("faults_recovery", main))
    sys.exit(figures.record("faults", main))
