"""A running job's time left, on a fake clock: the work left over the job's recent rate (what its
stored chunks say, each weighed by its age: ``lifecycle.recent_rate``), so it shrinks as work is done at
a steady pace, follows a change of pace within seconds, counts down while nothing is stored (it never
climbs between two chunks), and gives way to "stalled" when nothing has been for a while. The chunks are stored as a worker stores them
(``lifecycle.add_progress``) and the job is read as the API and the pages read it (``queries.job_view``),
at the times the test says: no figure here depends on how fast the machine is.

The browser test (tests/browser/test_ui_live.py) checks that a page shows these figures as the API
gives them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from worker.config import Settings
from worker.jobs.lifecycle import RATE_SECONDS, Progress, add_progress, new_job
from worker.jobs.queries import STALLED_AFTER, job_view
from worker.jobs.views import JobView
from worker.store.database import Database
from worker.store.models import Job

START = datetime(2026, 12, 1, 12, tzinfo=UTC)
TOTAL = 100_000
#: A steady pace: chunks of 500 cases every half second.
CHUNK, EVERY, PACE = 500, 0.5, 1000.0


class Run:
    """A job of ``TOTAL`` cases, its file read, being solved from ``START`` on."""

    def __init__(self, db: Database, settings: Settings, status: str = "solving", **columns: object) -> None:
        self.db = db
        with self.db.session() as session:
            job = new_job(game="10-20-30", filename="big.in", sha256="0" * 64, size=12_000_000,
                          chunk_size=CHUNK)
            job.status, job.total, job.started_at, job.progress_at = status, TOTAL, START, None
            job.split_at = START if status == "solving" else None
            for name, value in columns.items():
                setattr(job, name, value)
            session.add(job)
            session.flush()
            self.id = job.id
        self.stored = 0

    def store(self, cases: int, at: float) -> None:
        """A chunk of ``cases`` stored ``at`` seconds after the start."""
        with self.db.engine.begin() as connection:
            assert add_progress(connection, self.id, Progress(solved=cases), START + timedelta(seconds=at))
        self.stored += cases

    def steady(self, since: float, until: float, pace: float = PACE) -> None:
        """Chunks of ``CHUNK`` cases at ``pace`` cases a second, from ``since`` to ``until``."""
        at = since
        while (at := at + CHUNK / pace) <= until + 1e-9:
            self.store(CHUNK, at)

    def view(self, at: float) -> JobView:
        """The job as the API shows it ``at`` seconds after the start."""
        with self.db.session(write=False) as session:
            job = session.get(Job, self.id)
            assert job is not None
            return job_view(job, START + timedelta(seconds=at))


def steady_error(view: JobView, left: int, pace: float = PACE) -> float:
    """How far a time left is from the work left over the pace, as a share of the latter."""
    assert view.eta_seconds is not None, view
    return abs(view.eta_seconds - left / pace) / (left / pace)


def test_at_a_steady_pace_the_time_left_is_the_work_left_over_the_pace_and_shrinks(
        db: Database, settings: Settings) -> None:
    run = Run(db, settings)
    at_stores = []
    for k in range(1, 81):  # 40 s
        run.store(CHUNK, k * EVERY)
        left = TOTAL - run.stored
        # From the first chunk on there is an estimate; once the job has run a few RATE_SECONDS, at any
        # moment (at a store, or just before the next) it is within a few per cent of the work left over
        # the pace.
        for offset in (0.0, EVERY / 2, EVERY * 0.98):
            view = run.view(k * EVERY + offset)
            assert view.status == "solving" and not view.stalled, view
            assert view.eta_seconds is not None and view.eta_seconds > 0, view
            if k * EVERY >= 3 * RATE_SECONDS:
                assert steady_error(view, left) <= 0.06, (k * EVERY + offset, view.eta_seconds, left / PACE)
        at_stores.append(run.view(k * EVERY).eta_seconds)
    settled = at_stores[int(3 * RATE_SECONDS / EVERY):]
    assert all(later < earlier for earlier, later in zip(settled, settled[1:])), settled
    # 25 s of work done at the pace took 25 s off the time left.
    assert abs((settled[0] - settled[-1]) - (len(settled) - 1) * EVERY) <= 0.06 * settled[0], settled


def test_the_time_left_follows_the_recent_pace_not_the_average(db: Database, settings: Settings) -> None:
    run = Run(db, settings)
    run.steady(0, 20, pace=3 * PACE)
    run.steady(20, 20 + 4 * RATE_SECONDS, pace=PACE)
    view = run.view(20 + 4 * RATE_SECONDS)
    # Within the chunks' sawtooth (5 %) and what is left of the old pace (2,000 cases a second more,
    # weighed by e⁻⁴: 4 %); the average pace so far (2,000 cases a second) would say half the time left.
    assert abs(view.rate - PACE) <= 0.1 * PACE, view
    assert steady_error(view, TOTAL - run.stored) <= 0.1, view


def test_the_time_left_counts_down_while_nothing_is_stored_then_gives_way_to_stalled(db: Database, settings: Settings) -> None:
    run = Run(db, settings)
    run.steady(0, 20)
    last = 20.0
    stored = run.view(last)
    waiting = [run.view(last + seconds) for seconds in (1, 5, STALLED_AFTER.total_seconds() - 0.5)]
    assert not any(view.stalled for view in waiting) and stored.eta_seconds is not None
    assert all(view.done == stored.done and view.rate == stored.rate for view in waiting)
    # Between two chunks nothing new is known: the time left counts down, second for second (never
    # below none), and the rate stays the one the last chunk gave.
    for seconds, view in zip((1, 5, STALLED_AFTER.total_seconds() - 0.5), waiting, strict=True):
        assert view.eta_seconds == round(max(stored.eta_seconds - seconds, 0.0), 1), (seconds, view)
    stalled = run.view(last + STALLED_AFTER.total_seconds() + 0.5)
    assert stalled.stalled and stalled.eta_seconds is None and stalled.status == "solving", stalled
    # Work again: no longer stalled, and a time left again.
    run.store(CHUNK, last + 30)
    moving = run.view(last + 30)
    assert not moving.stalled and moving.eta_seconds is not None and moving.eta_seconds > 0, moving


def test_at_a_steady_pace_the_time_left_never_jumps_back_up(db: Database, settings: Settings) -> None:
    """Looked at often, at a steady pace in chunks: each figure is at most the one before (less the time
    between the two) plus the noise of the rate, a few per cent of the time left."""
    run = Run(db, settings)
    shown: list[tuple[float, float]] = []
    for k in range(1, 81):
        run.store(CHUNK, k * EVERY)
        for offset in (0.0, EVERY / 3, 2 * EVERY / 3):
            at = k * EVERY + offset
            eta = run.view(at).eta_seconds
            assert eta is not None
            shown.append((at, eta))
    settled = [(at, eta) for at, eta in shown if at >= 3 * RATE_SECONDS]
    for (before, earlier), (at, later) in zip(settled, settled[1:]):
        assert later <= earlier - (at - before) + 0.02 * earlier + 0.1, (before, earlier, at, later)


def test_while_the_file_is_read_the_work_left_counts_the_cases_not_read_yet(db: Database, settings: Settings) -> None:
    # A quarter of the file read: 25,000 cases so far, 100,000 expected.
    run = Run(db, settings, status="splitting", total=TOTAL // 4, bytes_read=3_000_000)
    run.steady(0, 20)
    view = run.view(20)
    assert view.total == TOTAL // 4 and not view.total_known
    assert steady_error(view, TOTAL - run.stored) <= 0.06, view


@pytest.mark.parametrize("status", ["succeeded", "failed", "cancelled"])
def test_a_finished_job_has_no_time_left(db: Database, settings: Settings, status: str) -> None:
    run = Run(db, settings)
    run.steady(0, 10)
    with run.db.session() as session:
        job = session.get(Job, run.id)
        assert job is not None
        job.status, job.finished_at = status, START + timedelta(seconds=10)
    view = run.view(11)
    assert view.eta_seconds is None and not view.stalled, view
