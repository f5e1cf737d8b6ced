"""The pipeline run in-process (no broker): split, solve, store, finish, on SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select

from tests.support.jobs import output, replace_trace, submit
from tests.support.paths import JUDGE_DATA, failing, first_cases
from worker import engines
from worker.jobs.errors import Conflict, Invalid
from worker.jobs.filters import ResultFilter
from worker.jobs.solve import solve_chunk
from worker.jobs.split import split_job
from worker.jobs.sweep import sweep
from worker.jobs.timeouts import CaseTimeout
from worker.store.chunks import coverage
from worker.store.database import Database
from worker.store.models import Chunk, Job

#: A job of many chunks (29 of the tests' seven decks), for the tests that need no more.
DECKS = first_cases("accordion", 200)


@pytest.mark.parametrize("game, name", [("accordion", "random-2000"), ("accordion", "sample")])
def test_job_output_is_byte_exact(service, queries, game: str, name: str) -> None:
    data = (JUDGE_DATA / game / f"{name}.in").read_bytes()
    job = submit(service, data, game)
    job = queries.job(job.id)
    assert job.status == "succeeded", job
    assert output(queries, job.id) == (JUDGE_DATA / game / f"{name}.out").read_bytes()
    assert job.done == job.total == sum(job.counts.values())


def test_game_is_recognised_from_content(service) -> None:
    job = submit(service, (JUDGE_DATA / "accordion" / "sample.in").read_bytes())
    assert job.game == "accordion"


def test_a_start_with_no_good_case_is_refused_with_the_parser_message_and_no_job(service, db: Database, settings) -> None:
    # Both decks bad: nothing of the file could be kept (a bad deck among good ones is kept: below).
    data = (JUDGE_DATA / "accordion" / "sample.in").read_bytes().replace(b"QD AD", b"QD 1D", 1).replace(b"AH", b"1H")
    with pytest.raises(Invalid, match=r'^line 1, column 4: "1D"'):
        submit(service, data, "accordion")
    with db.session() as session:
        assert session.scalar(select(func.count()).select_from(Job)) == 0
        assert session.scalar(select(func.count()).select_from(Chunk)) == 0


def test_a_malformed_line_past_the_start_fails_the_job_and_keeps_the_cases_before_it(service, queries,
                                                                                     db: Database, settings) -> None:
    data, line = failing("accordion")
    job = queries.job(submit(service, data, "accordion").id)
    assert job.status == "failed" and (job.fault_count, job.total, job.done) == (1, 2000, 2000)
    assert job.error.startswith(f"line {line}, column 1:"), job.error
    expected = (JUDGE_DATA / "accordion" / "random-2000.out").read_bytes()
    assert b"".join(queries.output(job.id, partial=True)) == expected
    with pytest.raises(Conflict, match="are its partial output, at"):
        queries.output(job.id)
    with db.session() as session:
        assert session.scalar(select(func.sum(Chunk.count)).where(Chunk.job_id == job.id)) == 2000


def test_chunk_delivered_twice_stores_each_case_once(service, db: Database, settings, dispatcher) -> None:
    job = submit(service, DECKS, "accordion")
    with db.session() as session:
        chunk_ids = session.scalars(select(Chunk.id).where(Chunk.job_id == job.id)).all()
    for chunk_id in chunk_ids[:5]:
        solve_chunk(db, settings, chunk_id)
    with db.session() as session:
        stored = session.get(Job, job.id)
        assert coverage(session, job.id) == (200, 200) and stored.total == stored.done == 200


def test_a_file_solved_before_is_copied_not_solved(service, case_queries, queries, db: Database, settings) -> None:
    """The result cache: a file whose earlier job succeeded gets that job's stored results, copied by the
    database a few chunks at a time, and is indistinguishable from a job that solved them."""
    import dataclasses

    service.settings = service.dispatcher.settings = dataclasses.replace(settings, result_cache=True)
    data = (JUDGE_DATA / "accordion" / "random-2000.in").read_bytes()
    first = queries.job(submit(service, data, "accordion").id)
    second = queries.job(submit(service, data, "accordion", "again.in").id)
    assert second.status == "succeeded" and second.cache_hits == second.total == second.done == 2000
    assert output(queries, second.id) == output(queries, first.id)
    assert (second.counts, queries.distribution(second.id)) == (first.counts, queries.distribution(first.id))
    case = case_queries.case_by_index(second.id, 1999)
    assert case.cached and case.trace == case_queries.case_by_index(first.id, 1999).trace
    assert not case_queries.case_by_index(first.id, 1999).cached
    with db.session() as session:
        assert session.get(Job, second.id).copied_from == first.id
        assert coverage(session, second.id) == (2000, 2000)
    # Another file, or the same one of another game's reading, is solved.
    other = queries.job(submit(service, data.replace(b"#", b"", 1) + b"#\n", "accordion").id)
    assert other.cache_hits == 0 and other.status == "succeeded"


def test_a_copy_whose_source_went_away_is_split_instead(service, queries, db: Database, settings, dispatcher) -> None:
    import dataclasses

    from worker.jobs import split

    settings = service.settings = dispatcher.settings = dataclasses.replace(settings, result_cache=True)

    data = (JUDGE_DATA / "accordion" / "random-2000.in").read_bytes()
    first = submit(service, data, "accordion")
    dispatcher.immediate = False
    second = submit(service, data, "accordion")
    dispatcher.queue.clear()
    with db.session() as session:
        job = session.get(Job, second.id)
        job.status = "splitting"
    # The earlier job is deleted between two batches of the copy.
    assert split._copy(db, settings, second.id, first.id, -1) is split.JobStatus.SUCCEEDED
    with db.session() as session:
        session.execute(Chunk.__table__.delete().where(Chunk.job_id == second.id))
        job = session.get(Job, second.id)
        job.status, job.done, job.cache_hits, job.copied_from = "splitting", 0, 0, None
        session.delete(session.get(Job, first.id))
    assert split._copy(db, settings, second.id, first.id, -1) is False
    with db.session() as session:
        assert session.scalar(select(func.count()).select_from(Chunk).where(Chunk.job_id == second.id)) == 0
    dispatcher.immediate = True
    dispatcher.split(second.id)
    job = queries.job(second.id)
    assert job.status == "succeeded" and job.cache_hits == 0 and job.done == 2000


def test_cancel_stops_remaining_chunks(service, queries, db: Database, settings, dispatcher) -> None:
    dispatcher.immediate = False
    job = submit(service, DECKS, "accordion")
    kind, ident = dispatcher.queue.popleft()
    split_job(db, settings, ident, dispatcher)
    solve_chunk(db, replace(settings, solve_run_seconds=0), dispatcher.queue.popleft()[1])  # one chunk alone
    cancelled = service.cancel(job.id)
    assert cancelled.status == "cancelled"
    dispatcher.drain()
    job = queries.job(job.id)
    assert job.status == "cancelled" and job.done == 7
    with pytest.raises(Conflict):
        service.cancel(job.id)


def test_rerun_creates_a_new_job_from_the_stored_upload(service, queries) -> None:
    first = submit(service, (JUDGE_DATA / "accordion" / "sample.in").read_bytes(), "accordion")
    again = service.rerun(first.id)
    assert again.id != first.id and again.rerun_of == first.id
    assert queries.job(again.id).status == "succeeded"


def test_a_rerun_whose_upload_goes_as_it_is_made_solves_the_stored_cases(service, queries, monkeypatch) -> None:
    # The split leaves the upload (as when its release comes after the job has ended), and the upload goes
    # between the rerun's reading of the job and the new job's making.
    monkeypatch.setattr("worker.jobs.split.release", lambda db, upload_id: None)
    first = submit(service, (JUDGE_DATA / "accordion" / "sample.in").read_bytes(), "accordion")
    monkeypatch.setattr("worker.jobs.service.hold", lambda session, upload_id: False)
    again = service.rerun(first.id)
    assert again.rerun_of == first.id
    assert queries.job(again.id).status == "succeeded"
    assert output(queries, again.id) == (JUDGE_DATA / "accordion" / "sample.out").read_bytes()


def test_sweep_resends_lost_chunks(service, queries, db: Database, settings, dispatcher) -> None:
    dispatcher.immediate = False
    job = submit(service, DECKS, "accordion")
    dispatcher.drain()
    assert queries.job(job.id).status == "succeeded"
    # now lose every message of a new job, as a broker restart would
    job = submit(service, (JUDGE_DATA / "accordion" / "sample.in").read_bytes() + b"", "accordion")
    dispatcher.queue.clear()
    from datetime import timedelta

    from worker.store.models import utcnow

    report = sweep(db, settings, dispatcher, now=utcnow() + timedelta(seconds=settings.stall_seconds + 1))
    assert report["splits"] == 1
    dispatcher.drain()
    assert queries.job(job.id).status == "succeeded"


def test_history_search_by_input(service, case_queries, queries) -> None:
    submit(service, (JUDGE_DATA / "accordion" / "sample.in").read_bytes(), "accordion")
    deck = (JUDGE_DATA / "accordion" / "sample.in").read_text().splitlines()[2:4]
    flt = ResultFilter(game="accordion", input_text="\n".join(deck)).checked()
    page = case_queries.results(flt)
    assert page.total == 1 and page.items[0].number == 1
    with pytest.raises(Invalid, match="unknown outcome"):
        ResultFilter(game="accordion", outcome="drawn").checked()
    assert case_queries.results(ResultFilter(game="accordion", outcome="draw").checked()).total == 0


def test_a_case_over_its_time_budget_fails_alone(service, case_queries, queries, settings, monkeypatch) -> None:
    import dataclasses
    import time as clock

    from worker import engines

    engine = engines.get("accordion")
    original = type(engine).chunk_case  # a case in Python: the native core hands over only odd ones

    stopped = []

    def slow_on_the_second_deck(self, index, text, traced):
        if index == 2:
            try:
                clock.sleep(60)  # 300 times its budget: only the budget ends it
            except CaseTimeout:
                stopped.append(index)
                raise
        return original(self, index, text, traced)

    monkeypatch.setattr(engine, "core", None)
    monkeypatch.setattr(type(engine), "chunk_case", slow_on_the_second_deck)
    service.settings = dataclasses.replace(settings, case_seconds=0.2)
    service.dispatcher.settings = service.settings
    job = queries.job(submit(service, (JUDGE_DATA / "accordion" / "sample.in").read_bytes(), "accordion").id)
    assert stopped == [2]  # the budget stopped the case in the middle, not after it
    # The job fails, saying so: a judge output one line short must never pass for a whole one.
    assert job.status == "failed" and job.error == (
        "1 of 2 decks could not be solved within their time budget (the first is deck 2); the judge output of "
        "the others is kept as the job's partial output")
    assert (job.done, job.failed_cases) == (1, 1)
    failed = case_queries.case_by_index(job.id, 2)
    assert failed.error == "took longer than its time budget of 0.2 s"
    assert failed.outcome is None
    with pytest.raises(Conflict):
        queries.output(job.id)
    assert b"".join(queries.output(job.id, partial=True)) == (
        (JUDGE_DATA / "accordion" / "sample.out").read_bytes().splitlines(True)[0])


def test_a_chunk_over_its_time_budget_fails_its_remaining_cases(service, case_queries, queries, settings, monkeypatch) -> None:
    import dataclasses
    import time as clock

    from worker import engines

    engine = engines.get("accordion")
    original = type(engine).chunk_case

    def slow_first_deck(self, index, text, traced):
        if index == 1:
            clock.sleep(0.4)
        return original(self, index, text, traced)

    monkeypatch.setattr(engine, "core", None)
    monkeypatch.setattr(type(engine), "chunk_case", slow_first_deck)
    service.settings = dataclasses.replace(settings, case_seconds=0, chunk_seconds=0.3)
    service.dispatcher.settings = service.settings
    job = queries.job(submit(service, (JUDGE_DATA / "accordion" / "sample.in").read_bytes(), "accordion").id)
    assert job.status == "failed" and (job.done, job.failed_cases) == (1, 1)
    assert case_queries.case_by_index(job.id, 2).error == (
        "not solved: the chunk used up its time budget of 0.3 s")


def test_traces_are_stored_packed_and_served_as_json(service, case_queries, queries, db: Database, settings) -> None:
    from worker import engines
    from worker.engines.reading import Case
    from worker.store.chunks import read_chunks

    job = submit(service, (JUDGE_DATA / "10-20-30" / "sample.in").read_bytes(), "10-20-30")
    engine = engines.get("10-20-30")
    with db.session() as session:
        chunk = session.scalars(select(Chunk).where(Chunk.job_id == job.id)).one()
        data = read_chunks(session, [chunk.id], traces=True)[chunk.id]
    assert data.facts is not None and data.facts.codes == bytes([1, 2, 3])  # win, loss, draw
    for k, text in enumerate(data.inputs):
        # A win or a loss as the engine packs it (a byte per card and pick-up), a draw as its JSON.
        packed = data.trace(k)
        assert packed is not None and (packed[:1] == b"{" if k == 2 else packed[0] == 1)
        assert case_queries.case_by_index(job.id, k + 1).trace == engine.solve(Case(k + 1, text)).trace


@pytest.mark.parametrize("damage", ["a trace cut short", "blob"])
def test_a_damaged_trace_is_reported_on_its_case(service, case_queries, queries, db: Database, settings, damage) -> None:
    job = submit(service, (JUDGE_DATA / "10-20-30" / "sample.in").read_bytes(), "10-20-30")
    if damage == "blob":
        with db.session() as session:
            chunk = session.scalars(select(Chunk).where(Chunk.job_id == job.id)).one()
            chunk.traces = chunk.traces[:-20]
    else:
        replace_trace(db, job.id, 2, b"\x01 cut short")
    case = case_queries.case_by_index(job.id, 2)
    assert case.trace is None and "damaged" in case.trace_error
    assert case.line == "Loss: 82"


@pytest.mark.parametrize("chunks_too", [True, False], ids=["cancel", "job-row-only"])
def test_a_chunk_finished_after_its_job_was_cancelled_stores_nothing(service, queries, db: Database, settings, dispatcher,
                                                                     chunks_too: bool) -> None:
    from array import array
    from collections import Counter

    from sqlalchemy import update

    from worker.jobs.lifecycle import Progress
    from worker.jobs.solve import store_results
    from worker.store.chunks import Solved

    dispatcher.immediate = False
    job = submit(service, (JUDGE_DATA / "accordion" / "random-2000.in").read_bytes(), "accordion")
    dispatcher.queue.popleft()
    split_job(db, settings, job.id, dispatcher)
    chunk_id = dispatcher.queue.popleft()[1]
    if chunks_too:
        service.cancel(job.id)  # while that chunk's worker was still solving it
    else:  # the job alone: the store must notice it when it locks the job, and take back its rows
        with db.session() as session:
            session.execute(update(Job).where(Job.id == job.id).values(status="cancelled"))
    solved = Solved(1, b"1 pile remaining: 52\n", None, None, b"\x01", array("i", [1]), array("i", [0]),
                    array("I", [5]), array("Q", [12345]), None)
    store_results(db, chunk_id, job.id, "w", solved,
                  Progress(solved=1, numbers=Counter({("win", 1): 1}), solve_us=5))
    with db.session() as session:
        chunk = session.get(Chunk, chunk_id)
        assert chunk.status == ("cancelled" if chunks_too else "pending") and chunk.facts is None
    assert queries.job(job.id).done == 0


def test_chunks_are_sized_from_the_file(service, queries, settings) -> None:
    """A job is cut into about forty chunks, so that its progress moves in steps of a few per cent: a small
    file in one, a large one in forty, a huge one in chunks of at most 10,000 cases."""
    import dataclasses

    from worker.jobs.sizing import CHUNK_BOUNDS, CHUNKS_PER_JOB, chunk_size

    sized = dataclasses.replace(settings, chunk_size=0)
    for game in ("10-20-30", "accordion", "mahjong"):
        case_bytes = engines.get(game).case_bytes
        assert chunk_size(sized, game, 3 * case_bytes) == CHUNK_BOUNDS[0]
        assert chunk_size(sized, game, 200_000 * case_bytes) == 200_000 // CHUNKS_PER_JOB
        assert chunk_size(sized, game, 10**8 * case_bytes) == CHUNK_BOUNDS[1]
    service.settings = sized
    job = queries.job(submit(service, (JUDGE_DATA / "mahjong" / "random-2000.in").read_bytes(), "mahjong").id)
    assert job.chunk_size == CHUNK_BOUNDS[0] and job.status == "succeeded"
    service.settings = dataclasses.replace(settings, chunk_size=250)
    assert queries.job(submit(service, b"1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T\n0\n", "mahjong").id).chunk_size == 250


def test_cases_are_solved_while_the_file_is_still_read(service, queries, db: Database, settings) -> None:
    """The split sends each chunk out as soon as it is stored: with a dispatcher that solves a chunk
    the moment it is sent, results are in while the job is still splitting, its progress says how
    far the file is read, and no count is ever negative or shrinks."""
    from tests.support.inline import InlineDispatcher

    seen: list[tuple[str, int, int, int, bool]] = []

    class Eager(InlineDispatcher):
        def solve(self, chunk_ids):
            for chunk_id in chunk_ids:
                solve_chunk(db, self.settings, chunk_id)
                view = queries.job(job_id)
                seen.append((view.status, view.total, view.done, view.bytes_read, view.total_known))

    service.dispatcher = eager = Eager(db, settings, immediate=False)
    job_id = submit(service, (JUDGE_DATA / "accordion" / "random-2000.in").read_bytes(), "accordion").id
    kind, ident = eager.queue.popleft()
    split_job(db, settings, ident, eager)
    final = queries.job(job_id)
    assert final.status == "succeeded" and final.done == final.total == 2000 and final.total_known
    during = [s for s in seen if s[0] == "splitting"]
    assert during and during[0][2] > 0 and not during[0][4]  # solved cases while the file was being read
    reads = [read for _, _, _, read, _ in during]
    assert 0 < reads[0] < final.size and reads == sorted(reads) and reads[-1] <= final.size
    assert all(0 <= done <= total for _, total, done, _, _ in seen)
    totals = [total for _, total, _, _, _ in seen]
    assert totals == sorted(totals)  # the count of cases read only grows


def test_the_first_chunks_are_small_so_results_come_at_once(service, db: Database, settings, dispatcher) -> None:
    import dataclasses

    service.settings = dataclasses.replace(settings, chunk_size=500)
    dispatcher.settings = service.settings
    job = submit(service, (JUDGE_DATA / "accordion" / "random-2000.in").read_bytes(), "accordion")
    with db.session() as session:
        sizes = session.scalars(select(Chunk.count).where(Chunk.job_id == job.id).order_by(Chunk.seq)).all()
    assert sizes == [31, 62, 125, 250, 500, 500, 500, 32]


@pytest.mark.slow
@pytest.mark.parametrize("game", ["10-20-30", "accordion", "mahjong"])
def test_a_worker_stores_the_same_chunk_on_either_core(service, dispatcher, queries, db: Database, settings, monkeypatch,
                                                       game: str) -> None:
    """A chunk is solved in one call to the engine (``solve_chunk``): on the native core and on the
    pure-Python engines the stored chunks hold the same judge lines, facts, facets, filter and traces."""
    from worker.store.chunks import read_chunks

    engine = engines.get(game)
    if engine.core is None:
        pytest.skip("the native core is not built here")
    data = (JUDGE_DATA / game / "random-2000.in").read_bytes()
    # Chunks of up to 250 cases (31, 62, 125, 250, …: every size of the ramp) rather than the tests' seven:
    # every case still goes through each core's solve_chunk and is compared, in a tenth of the chunks
    # (where a chunk ends is the split's, the same on either core).
    service.settings = dispatcher.settings = replace(settings, chunk_size=250)
    stored = []
    for core in (engine.core, None):
        monkeypatch.setattr(engine, "core", core)
        job = submit(service, data, game)
        assert queries.job(job.id).status == "succeeded"
        assert output(queries, job.id) == (JUDGE_DATA / game / "random-2000.out").read_bytes()
        with db.session() as session:
            rows = session.execute(select(Chunk.id, Chunk.facets, Chunk.bloom).where(Chunk.job_id == job.id)
                                   .order_by(Chunk.seq)).all()
            chunks = read_chunks(session, [row.id for row in rows], traces=True)
            stored.append([(row.facets and sorted(orjson_facets(row.facets)), row.bloom, chunks[row.id].lines,
                            chunks[row.id].facts.codes, list(chunks[row.id].facts.numbers),
                            list(chunks[row.id].facts.extras),
                            [chunks[row.id].trace(k) for k in range(len(chunks[row.id].inputs))]) for row in rows])
    assert stored[0] == stored[1]


def orjson_facets(facets: bytes) -> list[tuple[int, int, int]]:
    """A chunk's facets by number (those by solve time differ from run to run)."""
    import orjson

    return [tuple(entry) for entry in orjson.loads(facets)["n"]]
