"""The split: a job's upload parsed as a stream into chunks of cases, each sent out as soon as it is stored.

A plain function of (database, settings, job id, dispatcher): :mod:`worker.work` runs it (for the
Celery task and the tests' dispatcher alike), and wakes what the split's end made ready. The database is the source of truth: a
split that died half-way is resumed (chunks already stored are kept; the parse starts
over, so the whole file is still checked), and two splits of one job store each chunk
once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import NamedTuple

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from worker import engines
from worker.config import Settings
from worker.engines.handover import InputBlocks
from worker.engines.reading import Diagnostic, Faults, InputError
from worker.jobs import lifecycle
from worker.jobs.dispatch import Dispatcher, process_name, send_quietly
from worker.jobs.faults import listed
from worker.jobs.intake import SNIFF_BYTES, explain
from worker.jobs.reading import LineLimitReader, take_guarded
from worker.states import JobStatus
from worker.store.chunks import pack_input_texts
from worker.store.database import Database
from worker.store.models import ARRIVING, Chunk, Job, utcnow
from worker.store.uploads import UploadReader, UploadStalled, head, release

#: The split commits (and dispatches) its chunks this many at a time, after the first few.
CHUNKS_PER_COMMIT = 8
#: A chunk's inputs are cut by its count of cases alone (the limit per line bounds a case's bytes).
MAX_CHUNK_BYTES = 1 << 40
#: Chunks of an earlier job of the same file copied per transaction.
CHUNKS_PER_COPY = 16
#: The first chunks (smaller: see :func:`chunk_sizes`), each sent out as soon as it is read.
RAMP = 4
#: The smallest chunk of the ramp (a job of small chunks has no ramp).
MIN_RAMP = 16


def split_job(db: Database, settings: Settings, job_id: int, dispatcher: Dispatcher) -> JobStatus | None:
    """Parse the job's upload into chunks and hand each out as soon as it is stored; the job's status
    after the split (``succeeded`` when every case was answered before the split ended, so that it
    ended the job), ``None`` when there was no split to do or the job stopped meanwhile.

    A bad case is read past (the file is read to its end, every good case stored) and listed among the
    job's faults, with which the job ends failed once its good cases are solved. An error the reading
    cannot go on past (bytes that are not text, a line over the limit) fails the job at once and removes
    every chunk and case it had. A split that fails otherwise
    (the database went away) gives its lease up where it can, so that the sweep sends the split again
    after a stall rather than after the lease.

    A job made while its file arrives (:mod:`worker.jobs.arriving`) is split as the file comes; when the
    split has waited ``split_patience_seconds`` for it in all, it lets the job go, and the file's end sends
    the split again (which reads it from the start, the chunks already stored kept).
    """
    me = process_name()
    try:
        while True:
            try:
                return _split(db, settings, job_id, dispatcher, me)
            except UploadStalled:
                if not _file_arrived(db, job_id, me):
                    return None
    except Exception:
        with contextlib.suppress(Exception):
            with db.session() as session:
                lifecycle.give_up_split(session, job_id, me)
        raise


class _Start(NamedTuple):
    """What the split of a job starts from, read as it takes the job."""

    game: str
    upload_id: int | None
    chunk_size: int
    #: The file is whole (not still arriving).
    whole: bool
    #: An earlier job of the same file whose results are copied instead (the result cache).
    earlier: int | None
    #: The last chunk an earlier split of this job stored (-1: none): the file is read again, those kept.
    stored: int


class _OverLimit(Exception):
    """The file holds more cases than a job may."""


def _split(db: Database, settings: Settings, job_id: int, dispatcher: Dispatcher, me: str) -> JobStatus | None:
    start = _begin(db, settings, job_id, me)
    if start is None:
        return None
    stored = start.stored
    if start.earlier is not None:
        copied = _copy(db, settings, job_id, start.earlier, stored)
        if copied is not False:
            release(db, start.upload_id)
            return copied
        stored = -1
    engine = engines.get(start.game)
    chunks = _Chunks(db, settings, job_id, dispatcher, stored)
    warnings: list[Diagnostic] = []
    faults = Faults()
    try:
        read = _read(db, settings, engine, start, chunks, warnings, faults)
    except _OverLimit as error:
        return _fail(db, job_id, str(error), me)
    except InputError as error:
        return _fail(db, job_id, explain(start.game, error, _head(db, start.upload_id)), me)
    except UploadStalled:
        raise
    except OSError as error:
        return _fail(db, job_id, f"the upload cannot be read: {error.strerror or error}", me)
    if read is None or not chunks.store(read):
        return None
    return _end(db, job_id, start, chunks.total, warnings, faults)


def _begin(db: Database, settings: Settings, job_id: int, me: str) -> _Start | None:
    """Take the job for this split (``me``), or ``None`` when there is no split to do."""
    with db.session() as session:
        job = lifecycle.lock_job(session, job_id)
        if job is None or not lifecycle.begin_split(job, settings.lease_seconds, me):
            return None
        whole = job.sha256 != ARRIVING
        earlier = lifecycle.earlier_results(session, job, settings.store_traces) \
            if settings.result_cache and whole else None
        stored = session.scalar(select(func.coalesce(func.max(Chunk.seq), -1)).where(Chunk.job_id == job_id))
        return _Start(job.game, job.upload_id, job.chunk_size, whole, earlier, stored)


def _read(db: Database, settings: Settings, engine: engines.Engine, start: _Start, chunks: _Chunks,
          warnings: list[Diagnostic], faults: Faults) -> int | None:
    """Read the job's file into ``chunks``, stored as they come; the bytes read, or ``None`` when the job
    stopped meanwhile. A file over the limit of cases raises :class:`_OverLimit`, one that cannot be
    read an :class:`InputError` or an :class:`OSError`."""
    if start.upload_id is None:
        raise FileNotFoundError("the upload is no longer stored")
    limit = settings.max_cases_per_job
    sizes = chunk_sizes(start.chunk_size)
    with UploadReader(db, start.upload_id, patience=None if start.whole else settings.split_patience_seconds) as raw:
        stream = LineLimitReader(raw, settings.max_line_bytes) if settings.max_line_bytes else raw
        # The file is read as blocks of canonical inputs, a chunk's a block: no object a case.
        blocks = engine.read_inputs(stream, warnings, max_bytes=MAX_CHUNK_BYTES, faults=faults)
        while True:
            wanted = next(sizes)
            # One case past the limit is enough to know the file is over it.
            block = _take(engine, blocks, min(wanted, limit + 1 - chunks.total) if limit else wanted)
            if raw.failed is not None:  # the block was cut short where the reading stopped: no chunk
                raise raw.failed
            if block is None:
                return raw.position
            if limit and blocks.cases > limit:
                raise _OverLimit(f"the file has more than {limit:,} {engine.unit}s (the limit per job)")
            if not chunks.add(block, blocks.cases, blocks.bytes_read):
                return None


def _take(engine: engines.Engine, blocks: InputBlocks, cases: int) -> Block | None:
    """The next chunk's cases, ``cases`` of them but at the file's end (``None``: none left). The reader
    ends a block at each bad case it reads past; a chunk goes on past it, the bad case's number one of its
    gaps, so that a file's faults cost no chunks of their own (each is stored, sent and solved alone)."""
    texts, count = take_guarded(engine, blocks, cases)
    if not count:
        return None
    first, pieces, gaps, skipped = blocks.first, [texts], [], 0
    while count < cases:
        texts, more = take_guarded(engine, blocks, cases - count)
        if not more:
            break
        at = first + count + skipped  # the number the block would start at with no case skipped
        if blocks.first > at:  # a run of bad cases: a block holds at least one case, so runs never touch
            gaps.append([at, blocks.first - at])
            skipped += blocks.first - at
        pieces.append(texts)
        count += more
    return Block(first, count, b"".join(pieces) if len(pieces) > 1 else pieces[0], gaps or None)


def _end(db: Database, job_id: int, start: _Start, total: int, warnings: list[Diagnostic],
         faults: Faults) -> JobStatus | None:
    """End the split of a file read to its end, with its faults listed, if this split still holds the job;
    the job's status then (``None``: it stopped meanwhile). The upload is released either way."""
    found = _listed(db, start.game, start.upload_id, faults) if faults and start.upload_id is not None else None
    status = None
    with db.session() as session:
        job = lifecycle.lock_job(session, job_id)
        if job is not None and job.status == JobStatus.SPLITTING:
            lifecycle.end_split(session, job, total, [w.to_dict() for w in warnings], found)
            status = JobStatus(job.status)
    release(db, start.upload_id)
    return status


def _file_arrived(db: Database, job_id: int, me: str) -> bool:
    """A split that waited too long for its file: whether the file is whole by now (the split goes on),
    else it lets the job go (for the file's end to send it again), if it still holds it."""
    with db.session() as session:
        # The job's lock orders this with the transaction that stores the file (``lifecycle.file_arrived``):
        # either the file is whole here, or that transaction finds the split let go and sends it again.
        job = lifecycle.lock_job(session, job_id)
        if job is None or job.status != JobStatus.SPLITTING or job.splitter != me:
            return False
        if job.sha256 != ARRIVING:
            return True
        lifecycle.give_up_split(session, job_id, me)
        return False


def _copy(db: Database, settings: Settings, job_id: int, earlier: int, stored: int) -> JobStatus | None | bool:
    """Copy the results of an earlier job of the same file, :data:`CHUNKS_PER_COPY` chunks a transaction
    (so that an embedded database's other writers wait for none long); ``succeeded``, ``None`` when the
    job stopped meanwhile, ``False`` when the earlier job went away meanwhile (what was copied is
    dropped: the job is split from its upload instead)."""
    with db.session(write=False) as session:
        last = session.scalar(select(func.coalesce(func.max(Chunk.seq), -1)).where(Chunk.job_id == earlier))
    for first in range(stored + 1, last + 1, CHUNKS_PER_COPY):
        with db.session() as session:
            job, old = lifecycle.lock_job(session, job_id), session.get(Job, earlier)
            if job is None or job.status != JobStatus.SPLITTING:
                return None
            if old is None:
                lifecycle.drop_chunks(session, job)
                return False
            lifecycle.copy_results(session, job, old, (first, first + CHUNKS_PER_COPY - 1), settings.lease_seconds)
    with db.session() as session:
        job, old = lifecycle.lock_job(session, job_id), session.get(Job, earlier)
        if job is None or job.status != JobStatus.SPLITTING:
            return None
        if old is None or not lifecycle.end_copy(job, old):
            lifecycle.drop_chunks(session, job)
            return False
    return JobStatus.SUCCEEDED


def chunk_sizes(size: int) -> Iterator[int]:
    """The cases in each chunk, in order: a job starts with small chunks, so that its first results
    come at once and every worker process has work from the start, then goes on at ``size``.

    >>> from itertools import islice
    >>> list(islice(chunk_sizes(500), 6)), list(islice(chunk_sizes(7), 2))
    ([31, 62, 125, 250, 500, 500], [7, 7])
    """
    for shift in range(RAMP, 0, -1):
        if size >> shift >= MIN_RAMP:
            yield size >> shift
    while True:
        yield size


def _listed(db: Database, game: str, upload_id: int, faults: Faults) -> lifecycle.FileFaults:
    """A file's faults as the job keeps them, the lines around each read from its upload again."""
    with UploadReader(db, upload_id) as raw:
        return lifecycle.FileFaults(listed(game, faults, _head(db, upload_id), raw), faults.count, faults.case)


def _head(db: Database, upload_id: int | None) -> bytes:
    """The start of a job's file, which the message of a reading error needs (``intake.explain``)."""
    try:
        return head(db, upload_id, SNIFF_BYTES) if upload_id is not None else b""
    except OSError:
        return b""


class Block(NamedTuple):
    """A chunk's cases as the split reads them: the first's index, how many, their texts (each followed
    by a newline), and the numbers they skip (``Chunk.gaps``)."""

    first: int
    count: int
    texts: bytes
    gaps: list[list[int]] | None = None


class _Chunks:
    """The chunks a split reads, stored a run at a time: the first ones each at once (the first results
    show in a blink), later ones :data:`CHUNKS_PER_COMMIT` at a time, which costs fewer transactions.
    Those an earlier split of the job stored (up to ``stored``) are read again, not stored again."""

    def __init__(self, db: Database, settings: Settings, job_id: int, dispatcher: Dispatcher, stored: int) -> None:
        self.db, self.settings, self.job_id, self.dispatcher = db, settings, job_id, dispatcher
        self.stored = stored
        self.pending: list[Block] = []
        self.seq = 0
        #: The cases read so far.
        self.total = 0

    def add(self, block: Block, total: int, bytes_read: int) -> bool:
        """The next chunk read (``total`` cases and ``bytes_read`` read with it); ``False``: the job is gone
        or stopped."""
        self.total = total
        if self.seq > self.stored:
            self.pending.append(block)
        self.seq += 1
        if len(self.pending) >= (1 if self.seq <= RAMP else CHUNKS_PER_COMMIT):
            return self.store(bytes_read)
        return True

    def store(self, bytes_read: int) -> bool:
        """Store the chunks read and not stored yet; ``False``: the job is gone or stopped."""
        pending, self.pending = self.pending, []
        return _store_chunks(self.db, self.settings, self.job_id, self.seq - len(pending), pending, self.total,
                             bytes_read, self.dispatcher)


def _store_chunks(db: Database, settings: Settings, job_id: int, first_seq: int, batches: list[Block],
                  total: int, bytes_read: int, dispatcher: Dispatcher) -> bool:
    """Commit a run of chunks (numbered from ``first_seq``) with how far the split has read, renew
    its lease, then dispatch them. ``False``: the job is gone or stopped."""
    try:
        with db.session() as session:
            job = lifecycle.lock_job(session, job_id)
            if job is None or not lifecycle.renew_split(job, settings.lease_seconds, total, bytes_read):
                return False
            now = utcnow()
            chunks = [lifecycle.new_chunk(job_id, first_seq + k, block.first, block.count, block.gaps,
                                          pack_input_texts(block.texts), now)
                      for k, block in enumerate(batches)]
            session.add_all(chunks)
            session.flush()
            ids = [chunk.id for chunk in chunks]
    except IntegrityError:
        return False  # a second split of this job got there first; it carries on alone
    if ids:
        # One message for the run: it wakes a worker, whose task takes the chunks one after the other
        # (``solve.solve_chunk``). Stored is enough: a send the broker refused is made again by the
        # sweep (the chunks are pending since ``dispatched_at``), and the split reads on meanwhile.
        send_quietly(lambda: dispatcher.solve(ids[:1]))
    return True


def _fail(db: Database, job_id: int, reason: str, me: str) -> JobStatus | None:
    """Fail the job for ``reason`` if this split (``me``) still holds it: ``failed``, else ``None``. A split
    delivered twice runs twice: the one whose job another split took over, or ended (its upload then
    released, so that what it reads next is gone), fails nothing."""
    with db.session() as session:
        return JobStatus.FAILED if lifecycle.fail(session, job_id, reason, splitter=me) else None
