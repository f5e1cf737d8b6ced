"""Checks through the service layer, on SQLite and PostgreSQL: no lost wakeup when a check is made just as
its job ends, a lost message sent again by the sweep, a run that died half-way, a stored job of many cases."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from functools import partial
from typing import Any

import pytest
from sqlalchemy import delete, select

from tests.support.jobs import chunk_ids, submit
from tests.support.paths import judge
from worker import work
from worker.checks import lifecycle
from worker.checks.compare import Part, Report
from worker.checks.run import run_check
from worker.store.database import Database
from worker.store.models import Check, CheckPart, Upload, utcnow
from worker.store.uploads import store_stream

OUT = judge("accordion", "sample").with_suffix(".out").read_bytes()


def _output(service: Any, data: bytes = OUT) -> Any:
    return store_stream(service.db, io.BytesIO(data), service.settings.max_upload_bytes)


def _at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls on threads of their own, let go at the same moment; what each returned."""
    start = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(k: int) -> None:
        start.wait()
        results[k] = calls[k]()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_a_check_made_as_its_job_ends_is_judged(db: Database, settings: Any, dispatcher: Any, service: Any, queries: Any,
                                                 checks: Any, check_queries: Any) -> None:
    """The last chunk is stored while the check is made, in either order: the check is judged either way."""
    dispatcher.immediate = False
    for attempt in range(6):
        job = submit(service, judge("accordion", "sample").read_bytes(), "accordion", f"race-{attempt}.in")
        kind, job_id = dispatcher.queue.popleft()
        assert kind == "split"
        work.split(db, settings, job_id, dispatcher)
        solves = chunk_ids(db, job_id)
        dispatcher.queue.clear()
        alone = replace(settings, solve_run_seconds=0)  # a chunk a task: the last one is left for the race
        for chunk_id in solves[:-1]:
            work.solve(db, alone, chunk_id, dispatcher)
        assert queries.job(job.id).status == "solving"
        last_chunk = partial(work.solve, db, alone, solves[-1], dispatcher)
        new_check = partial(checks.create_check, job.id, _output(service), "out.txt")
        made = _at_once(last_chunk, new_check) if attempt % 2 else _at_once(new_check, last_chunk)[::-1]
        assert queries.job(job.id).status == "succeeded"
        # Sent once, or twice when the check was made after the job ended but before its ender looked:
        # a second run finds it judged.
        assert {message for message in dispatcher.queue} == {("check", made[1].id)}
        dispatcher.drain()
        check = check_queries.check(made[1].id)
        assert check.status == "done" and check.verdict == "accepted", (attempt, check)


def test_the_sweep_sends_a_lost_check_again(db: Database, settings: Any, dispatcher: Any, service: Any, checks: Any,
                                            check_queries: Any) -> None:
    job = submit(service, judge("accordion", "sample").read_bytes(), "accordion")
    dispatcher.immediate = False
    check = checks.create_check(job.id, _output(service), "out.txt")
    assert dispatcher.queue.popleft() == ("check", check.id)  # and lost on the way
    later = utcnow() + timedelta(seconds=settings.stall_seconds + 1)
    assert work.sweep(db, settings, dispatcher, now=utcnow())["checks"] == 0  # the job ended just now: not lost yet
    assert work.sweep(db, settings, dispatcher, now=later)["checks"] == 1
    dispatcher.drain()
    assert check_queries.check(check.id).status == "done"
    assert work.sweep(db, settings, dispatcher, now=later)["checks"] == 0


def test_a_run_that_died_half_way_is_replaced(db: Database, settings: Any, dispatcher: Any, service: Any, checks: Any,
                                             check_queries: Any) -> None:
    job = submit(service, judge("accordion", "sample").read_bytes(), "accordion")
    dispatcher.immediate = False
    check = checks.create_check(job.id, _output(service, OUT.replace(b"piles", b"pile")), "out.txt")
    dispatcher.queue.clear()
    died = lifecycle.claim(db, check.id, lease_seconds=300)
    assert died is not None and died.attempt == 1
    lifecycle.save_parts(db, check.id, died.attempt, [Part(0, 1, bytes(5), [])], lease_seconds=300)
    run_check(db, settings, check.id)  # the first run holds it still
    assert check_queries.check(check.id).status == "pending"
    with db.session() as session:  # its lease runs out
        row = session.get(Check, check.id)
        assert row is not None
        row.lease_until = utcnow() - timedelta(seconds=1)
    run_check(db, settings, check.id)
    done = check_queries.check(check.id)
    assert done.status == "done" and done.verdict == "wrong_answer"
    with db.session(write=False) as session:
        assert set(session.scalars(select(CheckPart.attempt).where(CheckPart.check_id == check.id))) == {2}
    # The first run, back from the dead, finds the check ended: it stores nothing and removes its parts.
    lifecycle.save_parts(db, check.id, died.attempt, [Part(1, 6, bytes(5), [])], lease_seconds=300)
    assert not lifecycle.finish(db, check.id, died.attempt, Report([5, 0, 0, 0, 0], 5, 5))
    assert check_queries.check(check.id) == done
    with db.session(write=False) as session:
        assert set(session.scalars(select(CheckPart.attempt).where(CheckPart.check_id == check.id))) == {2}


def test_a_run_that_fails_lets_the_next_one_in_at_once(db: Database, settings: Any, dispatcher: Any, service: Any, checks: Any,
                                                      check_queries: Any,
                                                      monkeypatch: Any) -> None:
    job = submit(service, judge("accordion", "sample").read_bytes(), "accordion")
    dispatcher.immediate = False
    check = checks.create_check(job.id, _output(service), "out.txt")
    dispatcher.queue.clear()

    def database_gone(*_: Any) -> Any:
        raise ConnectionError("the database went away")

    monkeypatch.setattr("worker.checks.run.judge_blocks", database_gone)
    with pytest.raises(ConnectionError):
        run_check(db, settings, check.id)
    monkeypatch.undo()
    run_check(db, settings, check.id)  # Celery's retry: not held up by the lease of the run that failed
    assert check_queries.check(check.id).verdict == "accepted"


def test_a_check_whose_output_is_lost_fails_saying_so(db: Database, settings: Any, dispatcher: Any, service: Any, checks: Any,
                                                       check_queries: Any) -> None:
    job = submit(service, judge("accordion", "sample").read_bytes(), "accordion")
    dispatcher.immediate = False
    output = _output(service, b"something else\n")
    check = checks.create_check(job.id, output, "out.txt")
    with db.session() as session:
        session.execute(delete(Upload).where(Upload.id == output.id))
    dispatcher.drain()
    failed = check_queries.check(check.id)
    assert (failed.status, failed.verdict) == ("failed", None)
    assert failed.error == "the output is no longer stored: send it again"


def test_a_check_of_a_stored_job_of_many_chunks(settings: Any, dispatcher: Any, service: Any, checks: Any,
                                                check_queries: Any) -> None:
    data = judge("10-20-30", "random-2000").read_bytes()
    lines = judge("10-20-30", "random-2000").with_suffix(".out").read_bytes().splitlines(keepends=True)
    job = submit(service, data, "10-20-30")
    lines[1500] = b"Win : 1\n"
    check = checks.create_check(job.id, _output(service, b"".join(lines).replace(b"\n", b"\r\n")), "o.txt")
    check = check_queries.check(check.id)
    assert check.counts.accepted == 1999 and check.counts.wrong_answer == 1
    assert check.first_difference is not None and check.first_difference.index == 1501
    page = check_queries.check_cases(check.id, "wrong_answer")
    assert [item.index for item in page.items] == [1501] and page.total == 1
