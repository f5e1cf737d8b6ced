"""The fault scenarios end to end on Redis + PostgreSQL, one line each (``make bench-faults``):
cases expected, cases stored, duplicates, output identical to a clean run, time to recover.

The servers are private to this run (a PostgreSQL cluster and a Redis on free ports), so
restarting them disturbs nothing else on the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from worker.testing import faults as scenarios
from worker.testing.servers import PrivatePostgres, PrivateRedis
from worker.testing.live import live_service


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decks", type=int, default=20_000)
    args = parser.parse_args()
    reports: list[scenarios.Report] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        path, expected = scenarios.judge_file(tmp, args.decks)
        print(f"{args.decks:,} decks of 10-20-30 per scenario\n")

        def run(name: str, scenario) -> None:  # type: ignore[no-untyped-def]
            folder = tmp / name
            folder.mkdir()
            with scenarios.private_servers() as (postgres, redis):
                with scenarios.production(folder, postgres, redis) as live:
                    report = scenario(live, postgres, redis)
            reports.append(report)
            print(report.line(), flush=True)

        run("kill", lambda live, pg, rd: scenarios.worker_killed(live, path, expected, args.decks))
        run("redis", lambda live, pg, rd: scenarios.redis_restarted(live, rd, path, expected, args.decks))
        run("postgres", lambda live, pg, rd: scenarios.postgres_restarted(live, pg, path, expected, args.decks))

        folder = tmp / "web"
        folder.mkdir()
        with live_service("embedded", folder) as live:
            partial, jobs = scenarios.web_killed_during_upload(live, path)
        print(f"{'web killed during an upload':<34} partial files left {len(partial)}, jobs created {jobs}"
              f"  {'ok' if not partial and not jobs else 'FAILED'}")
        failures = bool(partial or jobs)

        why_not = scenarios.NetworkNamespace.available()
        if why_not:
            print(f"{'worker cut off from the network':<34} skipped: {why_not}")
        else:
            net = scenarios.NetworkNamespace()
            try:
                postgres, redis = PrivatePostgres(also_on=(net.host_ip,)), PrivateRedis(also_on=(net.host_ip,))
                postgres.start()
                redis.start()
                folder = tmp / "netns"
                folder.mkdir()
                try:
                    with scenarios.production(folder, postgres, redis) as live:
                        report = scenarios.worker_cut_off(live, net, postgres, redis, path, expected, args.decks)
                    reports.append(report)
                    print(report.line())
                finally:
                    redis.stop()
                    postgres.destroy()
            finally:
                net.remove()
    return 1 if failures or not all(r.ok for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
