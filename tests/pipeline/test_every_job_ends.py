"""Every job ends, whatever fails when: a model-based test of the split, the solve and the sweep.

Hypothesis drives the real work (:mod:`worker.work`, through :class:`tests.support.flaky.FlakyBroker`)
through schedules of its choosing: messages delivered in any order, a worker dying at any step of its
task (before any of its commits or sends, leaving its leases behind), a message delivered again after
its worker died, the broker down (refusing sends) or losing messages, and sweeps after any wait (or
right after an outage of the broker or the database, which send again at once). Once
the faults stop, sweeps with a healthy broker must end every job, each case stored once, the judge
output the engine's, and each job's check judged.

The suite runs :data:`EXAMPLES` schedules (a minute on SQLite on a loaded machine, fewer on PostgreSQL,
whose every commit costs more: the rules are the same code on both); ``DEALER_MODEL_EXAMPLES`` asks for
as many as wanted on each (a long run: ``DEALER_MODEL_EXAMPLES=5000 pytest
tests/pipeline/test_every_job_ends.py -k sqlite``).
"""

from __future__ import annotations

import io
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import select, update

from tests.support.flaky import FlakyBroker
from tests.support.jobs import output
from worker import engines
from worker.checks.queries import CheckQueries
from worker.checks.service import CheckService
from worker.config import Settings
from worker.jobs.queries import JobQueries
from worker.jobs.sweep import Outage
from worker.solving import solve_file
from worker.states import FINISHED
from worker.store.chunks import coverage
from worker.store.database import Database
from worker.store.models import Check, Job, utcnow
from worker.store.uploads import store_stream
from worker.testing.data import random_judge_file

#: Schedules a run of the suite tries on each database (each a few jobs through up to :data:`STEPS` steps).
EXAMPLES = {"sqlite": 40, "postgresql": 10}
STEPS = 25
#: Sweeps (each after the others' messages ran) that every job must have ended within once the faults stop.
ROUNDS = 8
#: Small judge files of each game: a few chunks of the tests' seven cases.
CASES = {"accordion": 17, "10-20-30": 15, "mahjong": 9}


def judge_files(folder: Path) -> dict[str, tuple[bytes, bytes]]:
    """Each game's judge file and its judge output from ``dealer solve``'s code."""
    files = {}
    for seed, (game, count) in enumerate(CASES.items()):
        data = random_judge_file(folder / f"{game}.in", game, count, seed).read_bytes()
        out = io.StringIO()
        solve_file(engines.get(game), io.BytesIO(data), out)
        files[game] = (data, out.getvalue().encode())
    return files


class EveryJobEnds(RuleBasedStateMachine):
    def __init__(self, db: Database, settings: Settings, files: dict[str, tuple[bytes, bytes]]) -> None:
        super().__init__()
        self.db, self.settings, self.files = db, settings, files
        self.broker = FlakyBroker(db, settings)
        self.service = CheckService(db, settings, self.broker)
        self.jobs: dict[int, str] = {}  # id: game
        self.checks: list[int] = []
        self.clock = utcnow()

    @initialize(games=st.lists(st.sampled_from(sorted(CASES)), min_size=1, max_size=3, unique=True),
                checked=st.booleans())
    def submit(self, games: list[str], checked: bool) -> None:
        db = self.db
        for game in games:
            data, expected = self.files[game]
            upload = store_stream(db, io.BytesIO(data), self.settings.max_upload_bytes)
            answer = store_stream(db, io.BytesIO(expected), self.settings.max_upload_bytes) if checked else None
            job = self.service.create_job(upload, f"{game}.in", game,
                                          expected=(answer, "judge.out") if answer else None)
            self.jobs[job.id] = game
        if checked:
            with db.session(write=False) as session:
                self.checks = list(session.scalars(select(Check.id).where(Check.job_id.in_(self.jobs))))

    @precondition(lambda self: self.broker.queue)
    @rule(data=st.data(), kill=st.none() | st.integers(0, 12), again=st.booleans())
    def deliver(self, data: st.DataObject, kill: int | None, again: bool) -> None:
        """A worker takes a message (any of the queue's) and runs it, or dies at step ``kill`` of it; the
        broker then delivers the message again (``again``) or has lost it."""
        # Drawn whatever the queue's length, then folded onto it: the queue's length depends on what earlier
        # examples stored (a file solved before is copied, not split), and Hypothesis wants each example's
        # draws to be the same whenever it replays them.
        place = data.draw(st.integers(0, 63), label="place") % len(self.broker.queue)
        message = self.broker.queue[place]
        if not self.broker.deliver(place, kill) and kill is not None and again:
            self.broker.queue.append(message)

    @rule(down=st.booleans())
    def broker_state(self, down: bool) -> None:
        self.broker.down = down

    @rule(keep=st.integers(0, 4))
    def lose_messages(self, keep: int) -> None:
        self.broker.lose(keep)

    @rule(wait=st.sampled_from(["heartbeat", "worker_timeout", "stall"]), kill=st.none() | st.integers(0, 6),
          outage=st.sampled_from([None, "broker", "database"]))
    def sweep(self, wait: str, kill: int | None, outage: str | None = None) -> None:
        """A worker's sweep after ``wait`` (of the settings' timings), dying at step ``kill`` of it; right
        after an ``outage`` of the broker, or of the database (which went away as of the sweep's clock: all
        that is held is handed out again)."""
        waits = {"heartbeat": self.settings.heartbeat_seconds, "worker_timeout": self.settings.worker_timeout,
                 "stall": self.settings.stall_seconds}
        now = self.advance(waits[wait])
        after = None if outage is None else Outage(held_before=now if outage == "database" else None)
        self.broker.sweep(now, kill, after)

    def advance(self, seconds: float) -> datetime:
        """The sweeps' clock, ``seconds`` on (never behind the rows' own, which tasks write in real time:
        every lease a task left behind is a dead one's, since the model's tasks run one at a time)."""
        self.clock = max(self.clock, utcnow()) + timedelta(seconds=seconds + 0.001)
        return self.clock

    def teardown(self) -> None:
        try:
            self.recover()
        finally:
            self.broker.close()

    def recover(self) -> None:
        """The faults stop: a worker runs every message and sweeps; every job must end, right."""
        self.broker.down = False
        queries = JobQueries(self.db)
        for turn in range(ROUNDS):
            self.broker.drain()
            if self.ended(queries):
                break
            if turn == ROUNDS // 2:
                self.leases_run_out()
            self.broker.sweep(self.advance(self.settings.stall_seconds + self.settings.worker_timeout))
        self.broker.drain()
        db = self.db
        for job_id, game in self.jobs.items():
            job = queries.job(job_id)
            assert job.status == "succeeded", (job_id, job.status, job.error)
            with db.session(write=False) as session:
                assert coverage(session, job_id) == (CASES[game], CASES[game])
            assert output(queries, job_id) == self.files[game][1]
        for check_id in self.checks:
            check = CheckQueries(self.db).check(check_id)
            assert check.status == "done" and check.verdict == "accepted", check

    def leases_run_out(self) -> None:
        """The leases of the checks' runs that died run out, as they do ``lease_seconds`` after: a check's
        run is recovered by its lease alone, which its next run reads on the real clock, not the sweeps'."""
        with self.db.session() as session:
            session.execute(update(Check).where(Check.status == "pending", Check.lease_until.is_not(None))
                            .values(lease_until=utcnow() - timedelta(seconds=1)))

    def ended(self, queries: JobQueries) -> bool:
        with self.db.session(write=False) as session:
            statuses = set(session.scalars(select(Job.status).where(Job.id.in_(self.jobs))))
        checks = CheckQueries(self.db)
        return statuses <= FINISHED and all(checks.check(c).status != "pending" for c in self.checks)


def examples(settings: Settings) -> int:
    wanted = os.environ.get("DEALER_MODEL_EXAMPLES")
    if wanted:
        return int(wanted)
    return EXAMPLES["sqlite" if settings.database_url.startswith("sqlite") else "postgresql"]


@pytest.mark.slow
def test_every_job_ends_whatever_fails_when(db: Database, settings: Settings, tmp_path: Path) -> None:
    files = judge_files(tmp_path / "files")
    run_state_machine_as_test(
        lambda: EveryJobEnds(db, settings, files),
        settings=hypothesis_settings(max_examples=examples(settings), stateful_step_count=STEPS, deadline=None,
                                     database=None))


def test_a_dead_task_leaves_its_lease_and_a_queued_message_is_run_again(db: Database, settings: Settings,
                                                                       tmp_path: Path) -> None:
    """The model's own parts do what the model says: a split killed after its first commit leaves the
    job splitting under its lease; a message delivered again runs."""
    files = judge_files(tmp_path / "files")
    machine = EveryJobEnds(db, settings, files)
    try:
        machine.submit(["accordion"], checked=False)
        (job_id,) = machine.jobs
        assert not machine.broker.deliver(0, kill_at=1)
        with db.session(write=False) as session:
            job: Any = session.get(Job, job_id)
            assert job.status == "splitting" and job.lease_until is not None and job.total == 0
        assert not machine.broker.queue
        machine.sweep("worker_timeout", None)
        assert machine.broker.queue == [("split", job_id)]
        machine.recover()
    finally:
        machine.broker.close()
