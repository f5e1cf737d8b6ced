"""Recovery driven by events: when a worker's heartbeat reaches the database again, or its consumer the
broker, the sweep runs at once and sends again what the outage may have left behind, without waiting for
a sweep period, a stall period or a lease; whatever is sent twice is stored once."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from tests.pipeline.test_recovery import DECKS, assert_solved_once, claim, heartbeat, statuses
from tests.support import jobs
from worker.testing.waiting import until
from worker.config import Settings
from worker.jobs.sweep import Outage, sweep
from worker.runner.heartbeat import Heartbeat, PoolTrouble
from worker.states import ChunkStatus
from worker.store.database import Database
from worker.store.models import utcnow

#: Periods far longer than any test: what happens in one comes from an event, not from a timer.
HOURS = {"sweep_seconds": 3600.0, "stall_seconds": 3600, "worker_timeout": 3600.0}
#: A database no heartbeat reaches (nothing listens on port 1).
AWAY = "postgresql+psycopg://dealer@127.0.0.1:1/dealer"


def test_after_an_outage_the_pending_chunks_are_sent_again_whatever_the_queue_holds(
        service: Any, db: Database, settings: Settings, dispatcher: Any) -> None:
    _, chunks = jobs.split_only(service, settings, dispatcher, DECKS)
    dispatcher.solve(chunks[:1])  # the queue is not empty: the plain sweep waits for it
    assert sweep(db, settings, dispatcher)["chunks"] == 0
    report = sweep(db, settings, dispatcher, outage=Outage())
    assert report["chunks"] == len(chunks)
    assert {ident for kind, ident in dispatcher.queue} == set(chunks)


def test_after_a_database_outage_what_was_held_from_before_it_is_handed_out_again(
        service: Any, db: Database, settings: Settings, dispatcher: Any) -> None:
    settings = replace(settings, **HOURS)
    job_id, chunks = jobs.split_only(service, settings, dispatcher, DECKS)
    claim(db, settings, chunks[0])  # before the outage: its task may have failed in it
    went_away = utcnow()
    claim(db, settings, chunks[1], worker="elsewhere:4242:4244")  # after it: taken by a task that runs on
    heartbeat(db, "elsewhere:4242", utcnow() + timedelta(hours=1))  # its worker beats on
    assert sweep(db, settings, dispatcher)["chunks"] == 0  # no period is over: the plain sweep leaves both
    report = sweep(db, settings, dispatcher, outage=Outage(held_before=went_away))
    assert statuses(db, job_id)[chunks[0]] == ChunkStatus.PENDING
    assert statuses(db, job_id)[chunks[1]] == ChunkStatus.RUNNING
    assert report["chunks"] == len(chunks) - 1 and ("solve", chunks[1]) not in dispatcher.queue
    dispatcher.drain()
    done = statuses(db, job_id)
    assert [ident for ident in chunks if done[ident] != ChunkStatus.DONE] == [chunks[1]]


def test_a_broker_outage_hands_out_nothing_a_living_worker_holds(
        service: Any, db: Database, settings: Settings, dispatcher: Any) -> None:
    settings = replace(settings, **HOURS)
    job_id, chunks = jobs.split_only(service, settings, dispatcher, DECKS)
    claim(db, settings, chunks[0])
    heartbeat(db, "elsewhere:4242", utcnow() + timedelta(hours=1))
    report = sweep(db, settings, dispatcher, now=utcnow() + timedelta(seconds=1), outage=Outage())
    assert statuses(db, job_id)[chunks[0]] == ChunkStatus.RUNNING
    assert report["chunks"] == len(chunks) - 1 and ("solve", chunks[0]) not in dispatcher.queue


def beating(db: Database, settings: Settings, dispatcher: Any, trouble: PoolTrouble | None = None) -> Heartbeat:
    beat = Heartbeat(db, replace(settings, heartbeat_seconds=0.05, **HOURS), dispatcher, 1, trouble=trouble)
    beat.start()
    # Its first beat runs the first sweep: what comes after is what the test is about.
    until(lambda: beat.name_in_db in workers(db), bool, "the first heartbeat")
    return beat


def workers(db: Database) -> set[str]:
    from sqlalchemy import select

    from worker.store.models import WorkerRow

    with db.session(write=False) as session:
        return set(session.scalars(select(WorkerRow.name)))


def test_the_first_beat_that_reaches_the_database_again_sweeps_at_once(
        service: Any, queries: Any, db: Database, settings: Settings, dispatcher: Any,
        caplog: pytest.LogCaptureFixture) -> None:
    """A chunk whose task failed while the database was away (it could not be given back) is sent again
    as soon as the heartbeat reaches the database again, its lease, the worker timeout, the stall and the
    sweep's period hours away."""
    job_id, chunks = jobs.split_only(service, settings, dispatcher, DECKS)
    claim(db, settings, chunks[0])
    heartbeat(db, "elsewhere:4242", utcnow() + timedelta(hours=1))
    beat = beating(db, settings, dispatcher)
    before = len(dispatcher.sent)
    try:
        with caplog.at_level(logging.ERROR, logger="dealer.worker"):
            there, beat.db = beat.db, Database(replace(settings, database_url=AWAY))
            until(lambda: caplog.text.count("heartbeat failed"), lambda n: n >= 2, "the heartbeat to fail")
            assert ("solve", chunks[0]) not in dispatcher.sent[before:]
            beat.db = there
        until(lambda: dispatcher.sent[before:], lambda sent: ("solve", chunks[0]) in sent,
              "the chunk to be sent again")
    finally:
        beat.stop()
        beat.join(10)
    assert statuses(db, job_id)[chunks[0]] == ChunkStatus.PENDING
    dispatcher.drain()
    assert_solved_once(db, queries, job_id, DECKS, "accordion")


def test_an_outage_no_beat_saw_is_told_by_the_task_that_met_it(
        service: Any, queries: Any, db: Database, settings: Settings, dispatcher: Any) -> None:
    """The database was away for less than a beat: a pool process's task met it (and is retried), which
    the heartbeat hears of at its next beat, with when: what was held from before then is sent again."""
    job_id, chunks = jobs.split_only(service, settings, dispatcher, DECKS)
    claim(db, settings, chunks[0])
    heartbeat(db, "elsewhere:4242", utcnow() + timedelta(hours=1))
    trouble = PoolTrouble()
    beat = beating(db, settings, dispatcher, trouble)
    before = len(dispatcher.sent)
    try:
        trouble.tell()
        until(lambda: dispatcher.sent[before:], lambda sent: ("solve", chunks[0]) in sent,
              "the chunk to be sent again")
    finally:
        beat.stop()
        beat.join(10)
    assert statuses(db, job_id)[chunks[0]] == ChunkStatus.PENDING
    dispatcher.drain()
    assert_solved_once(db, queries, job_id, DECKS, "accordion")


def test_the_broker_back_sweeps_at_once(service: Any, queries: Any, db: Database, settings: Settings,
                                        dispatcher: Any) -> None:
    """The broker lost every message (restarted): once the worker's consumer has it again, the pending
    chunks are sent again at once, the stall and the sweep's period hours away."""
    job_id, chunks = jobs.split_only(service, settings, dispatcher, DECKS)  # their messages lost
    beat = beating(db, settings, dispatcher)
    try:
        assert not dispatcher.queue
        beat.broker_back()
        until(lambda: {ident for kind, ident in dispatcher.queue}, lambda sent: sent == set(chunks),
              "the chunks to be sent again")
    finally:
        beat.stop()
        beat.join(10)
    dispatcher.drain()
    assert_solved_once(db, queries, job_id, DECKS, "accordion")
