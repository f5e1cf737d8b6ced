"""Uploads kept in the database: streamed in as compressed blocks, screened, hashed and size-limited on the way.

The web process writes an upload block by block while the request body arrives (constant
memory, whatever the size); the split task on any worker reads it back the same way.
Nothing is shared on disk, so workers on other hosts need only the database.

This module is an upload's lifecycle (:class:`worker.states.UploadState`): it is ``receiving``
until whole, then ``stored``; an identical upload (same SHA-256) is stored once.
A web process that dies mid-upload leaves a ``receiving`` upload behind, which
:func:`discard_stale` removes (at once for a dead process of this host, else after a day).
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import IO, Protocol

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from worker.states import CheckStatus, UploadState
from worker.store.codecs import compress, decompress
from worker.store.database import Database
from worker.store.models import Check, Job, RefusedBytes, Upload, UploadBlock, utcnow
from worker.units import format_size

#: Bytes of the file per stored block (before compression).
BLOCK_BYTES = 1 << 20
#: How long a ``receiving`` upload of another host may go unseen before it counts as abandoned.
ABANDONED = timedelta(days=1)
#: How often a reader of an upload still arriving looks for its next block at first (a block holds a MiB,
#: which a client on the same host sends in a few milliseconds), and at most (a slow client's).
POLL_SECONDS = (0.005, 0.05)


class UploadTooLarge(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the upload is larger than the limit of {format_size(limit)}")
        self.limit = limit


class Screen(Protocol):
    """What an upload is held to as it arrives (a judge file's, ``worker/jobs/screen.py``; a program's output,
    ``worker/checks/text.py``): told each piece in order, then the end; either raises to refuse the file."""

    def feed(self, data: bytes) -> None: ...

    def end(self) -> None: ...


class Follower(Protocol):
    """What reads an upload while it arrives (a job split from the file's first MiB on,
    ``worker/jobs/arriving.py``): told when the first block is stored, and, in the transaction that
    stores the whole upload or drops it, that it did."""

    def started(self, upload_id: int, head: bytes, head_sha256: str) -> bool:
        """The first block (``head``, a MiB, and its hash) is stored: whether it follows the upload from
        here on (else it is told nothing more); it never raises (the upload goes on regardless)."""

    def stored(self, session: Session, upload: StoredUpload) -> None:
        """The whole upload is stored in ``session``'s transaction (before its row is written: the lock
        order takes the jobs first)."""

    def dropped(self, session: Session) -> None:
        """The upload is refused or abandoned in ``session``'s transaction (before its row is written)."""


class UploadGone(FileNotFoundError):
    """The upload was dropped (refused, abandoned) while it was read."""


class UploadStalled(TimeoutError):
    """No block of an upload still arriving came within a reader's patience."""


@dataclass(frozen=True)
class StoredUpload:
    id: int
    sha256: str
    size: int
    #: The SHA-256 of its first block (of all of it when shorter); ``None`` for a job's upload made before
    #: it was kept (``jobs.head_sha256``).
    head_sha256: str | None


def _receiver() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class UploadWriter:
    """A writable file object for one upload (Werkzeug writes form files into it)."""

    def __init__(self, db: Database, limit: int, owner: str | None = None) -> None:
        self.db = db
        self.limit = limit
        #: Who sends it (the upload's ``owner``): counted from its first block, refused or not.
        self.owner = owner
        self.size = 0
        self.committed = False
        self.upload_id: int | None = None
        self._hash = hashlib.sha256()
        self._buffer = bytearray()
        self._blocks = 0
        self._head_sha256 = ""
        #: Fed every piece before it is stored: it raises to refuse the file.
        self.screen: Screen | None = None
        #: Called before each block is stored with the bytes received that its row does not count yet: it
        #: raises to refuse the file (an owner's quota, ``worker/jobs/quotas.py``).
        self.quota: Callable[[int], None] | None = None
        #: Told of the first block stored, and reads the upload from there on if it says so (see
        #: :class:`Follower`); :attr:`following` once it does.
        self.follower: Follower | None = None
        self.following: Follower | None = None

    def write(self, data: bytes) -> int:
        self.size += len(data)
        if self.size > self.limit:
            raise UploadTooLarge(self.limit)
        if self.screen is not None:
            self.screen.feed(data)
        self._hash.update(data)
        self._buffer += data
        # A block is stored once a byte past it has come: a screen judges a file's first MiB with the byte
        # after it, so a file it refuses there leaves nothing stored.
        while len(self._buffer) > BLOCK_BYTES:
            block = bytes(self._buffer[:BLOCK_BYTES])
            self._put(block)
            del self._buffer[:BLOCK_BYTES]
            if self._blocks == 1 and self.follower is not None:
                assert self.upload_id is not None
                if self.follower.started(self.upload_id, block, self._head_sha256):
                    self.following = self.follower
        return len(data)

    def copy_from(self, stream: IO[bytes], chunk_size: int = BLOCK_BYTES) -> None:
        while chunk := stream.read(chunk_size):
            self.write(chunk)

    def _put(self, block: bytes) -> None:
        if self.quota is not None:
            self.quota(self.size - self._blocks * BLOCK_BYTES)
        # One short transaction per block: an upload of minutes holds no lock the workers wait for.
        with self.db.session() as session:
            if self.upload_id is None:
                upload = Upload(state=UploadState.RECEIVING, receiver=_receiver(), owner=self.owner)
                session.add(upload)
                session.flush()
                self.upload_id = upload.id
            session.add(UploadBlock(upload_id=self.upload_id, seq=self._blocks, data=compress(block)))
            if not self._blocks:
                self._head_sha256 = hashlib.sha256(block).hexdigest()
            # Its size so far, for what an owner's uploads still arriving count (``worker/jobs/quotas.py``).
            session.execute(update(Upload).where(Upload.id == self.upload_id).values(
                seen_at=utcnow(), size=self._blocks * BLOCK_BYTES + len(block)))
        self._blocks += 1

    # Werkzeug's FileStorage treats us as a file: it may seek back to the start and flush.
    def seek(self, offset: int, whence: int = 0) -> int:
        return 0

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        """Blocks are written as they fill; the rest goes in at :meth:`commit`."""

    def close(self) -> None:
        """Werkzeug closes form files when the request ends; the upload is kept until commit or discard."""

    def commit(self) -> StoredUpload:
        """The whole upload, stored (an identical one of the same owner already stored is used instead:
        each owner's uploads are its own, for what it keeps to count)."""
        if self.screen is not None:
            self.screen.end()
        if self._buffer or self.upload_id is None:
            self._put(bytes(self._buffer))
            self._buffer.clear()
        self.committed = True
        digest = self._hash.hexdigest()
        assert self.upload_id is not None
        with self.db.session() as session:
            # Read while it arrived, it is the one its follower reads: never swapped for an identical one.
            same = None if self.following is not None else session.scalar(select(Upload.id).where(
                Upload.sha256 == digest, Upload.state == UploadState.STORED, Upload.size == self.size,
                Upload.owner.is_not_distinct_from(self.owner)).limit(1))
            if self.following is not None:
                self.following.stored(session, StoredUpload(self.upload_id, digest, self.size, self._head_sha256))
            if same is not None:
                drop(session, self.upload_id)  # its blocks go in the background
                self.upload_id = same
            else:
                session.execute(update(Upload).where(Upload.id == self.upload_id).values(
                    state=UploadState.STORED, sha256=digest, size=self.size, blocks=self._blocks, seen_at=utcnow()))
        return StoredUpload(self.upload_id, digest, self.size, self._head_sha256)

    def discard(self) -> None:
        """Drop what was stored of an upload refused or abandoned; its bytes count against its owner's
        quota for an hour all the same (:func:`count_refused`)."""
        if self.upload_id is None and not (self.owner and self.size):
            return
        with self.db.session() as session:
            if self.upload_id is not None:
                if self.following is not None:
                    self.following.dropped(session)
                drop(session, self.upload_id)
            count_refused(session, self.owner, self.size)
        self.upload_id = None


def count_refused(session: Session, owner: str | None, size: int) -> None:
    """Add ``size`` bytes to what ``owner`` had refused this hour (``refused_bytes``)."""
    if not owner or size <= 0:
        return
    hour = utcnow().replace(minute=0, second=0, microsecond=0)
    # One statement that adds to the hour's row or makes it: refusals of one owner racing in a new hour
    # both found no row to add to, and the second to make it failed on the first's.
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    counted = dialect.insert(RefusedBytes).values(owner=owner, hour=hour, bytes=size)
    session.execute(counted.on_conflict_do_update(index_elements=[RefusedBytes.owner, RefusedBytes.hour],
                                                  set_={"bytes": RefusedBytes.bytes + counted.excluded.bytes}))


def store_stream(db: Database, stream: IO[bytes], limit: int) -> StoredUpload:
    """Store a whole binary stream as an upload (for the CLI and tests)."""
    writer = UploadWriter(db, limit)
    try:
        writer.copy_from(stream)
    except BaseException:
        writer.discard()
        raise
    return writer.commit()


class UploadReader:
    """A stored upload as a binary stream, read block by block (one short read per block).

    With ``patience`` (seconds), it reads an upload still arriving as well: past the blocks stored so far
    it waits for the next (polling, less often the longer it waits: :data:`POLL_SECONDS`), and raises :class:`UploadStalled` once it
    has waited that long in all, :class:`UploadGone` when the upload was dropped meanwhile.
    """

    def __init__(self, db: Database, upload_id: int, patience: float | None = None) -> None:
        self.db = db
        self.upload_id = upload_id
        self.patience = patience
        self.position = 0
        self._seq = 0
        self._block = b""
        self._at = 0
        self._waited = 0.0
        #: What stopped the reading, once something did (an engine's reader gives the cases read before
        #: it first: a block it cut short looks like the file's last).
        self.failed: OSError | None = None
        with db.session(write=False) as session:
            upload = session.get(Upload, upload_id)
            arriving = upload is not None and upload.state == UploadState.RECEIVING and patience is not None
            if upload is None or not (upload.state == UploadState.STORED or arriving):
                raise FileNotFoundError(f"upload {upload_id} is not stored")
            #: ``None`` until the upload is whole.
            self.size: int | None = None if arriving else upload.size
            self._blocks: int | None = None if arriving else upload.blocks

    def read(self, size: int = -1) -> bytes:
        pieces = []
        wanted = size if size >= 0 else -1
        while wanted != 0:
            if self._at == len(self._block):
                try:
                    block = self._next()
                except OSError as error:
                    self.failed = error
                    raise
                if block is None:
                    break
                self._block, self._at = block, 0
                continue
            piece = self._block[self._at:] if wanted < 0 else self._block[self._at:self._at + wanted]
            self._at += len(piece)
            wanted -= len(piece) if wanted > 0 else 0
            pieces.append(piece)
        data = b"".join(pieces)
        self.position += len(data)
        return data

    def _next(self) -> bytes | None:
        """The next block, ``None`` past the last."""
        pause = POLL_SECONDS[0]
        while True:
            if self._blocks is not None and self._seq >= self._blocks:
                return None
            upload = None
            with self.db.session(write=False) as session:
                blob = session.scalar(select(UploadBlock.data).where(UploadBlock.upload_id == self.upload_id,
                                                                     UploadBlock.seq == self._seq))
                if blob is None and self._blocks is None:
                    upload = session.execute(select(Upload.state, Upload.size, Upload.blocks)
                                             .where(Upload.id == self.upload_id)).one_or_none()
            if blob is not None:
                self._seq += 1
                return decompress(blob)
            if self._blocks is not None:
                raise FileNotFoundError(f"upload {self.upload_id} has lost its block {self._seq}")
            if upload is None or upload.state == UploadState.DELETING:
                raise UploadGone(f"upload {self.upload_id} was dropped while it arrived")
            if upload.state == UploadState.STORED:
                self.size, self._blocks = upload.size, upload.blocks
                continue
            assert self.patience is not None
            if self._waited >= self.patience:
                raise UploadStalled(f"upload {self.upload_id} did not arrive whole within {self.patience:g} s")
            slept = time.monotonic()
            time.sleep(min(pause, self.patience - self._waited))
            self._waited += time.monotonic() - slept
            pause = min(pause * 2, POLL_SECONDS[1])

    def __enter__(self) -> UploadReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self._block = b""


def head(db: Database, upload_id: int, size: int = 8192) -> bytes:
    """The first bytes of an upload, stored or arriving (to sniff what it is; the first block holds a MiB)."""
    return UploadReader(db, upload_id, patience=0).read(size)


def hold(session: Session, upload_id: int) -> bool:
    """Keep a stored upload from being removed until this session's transaction ends (a job is being
    made for it); whether it is still there."""
    upload = session.get(Upload, upload_id, with_for_update={"read": True})
    return upload is not None and upload.state == UploadState.STORED


def release(db: Database, upload_id: int | None) -> None:
    """Remove an upload that no job needs to read any more (every job using it has been split, every
    check of it judged)."""
    if upload_id is None:
        return
    with db.session() as session:
        # The lock order (ARCHITECTURE.md, "Lock order"): the jobs of the upload first, as a job that
        # ends holds its row and then takes the upload's key (PostgreSQL checks the key of a row its
        # transaction writes twice). ``FOR NO KEY UPDATE``, the lock the update below takes.
        session.execute(select(Job.id).where(Job.upload_id == upload_id).order_by(Job.id)
                        .with_for_update(key_share=True))
        # Then the upload: a job being made for it holds it shared (see ``hold``) until it is stored, so
        # it is either counted here or finds the upload gone.
        if session.get(Upload, upload_id, with_for_update=True) is None:
            return
        waiting = session.scalar(select(func.count()).select_from(Job).where(
            Job.upload_id == upload_id, Job.split_at.is_(None))) or 0
        # An output waiting to be checked may be the same file (uploads are stored once per content).
        waiting += session.scalar(select(func.count()).select_from(Check).where(
            Check.upload_id == upload_id, Check.status == CheckStatus.PENDING)) or 0
        if not waiting:
            session.execute(update(Job).where(Job.upload_id == upload_id).values(upload_id=None))
            drop(session, upload_id)


def drop(session: Session, upload_id: int) -> None:
    """Delete an upload for every reader at once; the purge removes its blocks a few at a time
    (:mod:`worker.store.purge`)."""
    session.execute(update(Upload).where(Upload.id == upload_id).values(state=UploadState.DELETING,
                                                                          sha256=None))


def discard_stale(db: Database) -> int:
    """Remove uploads whose receiving web process died mid-upload; return how many.

    One of this host whose process is gone is removed at once, any other once it has not
    been seen for :data:`ABANDONED` (another host may still be writing it).
    """
    host = socket.gethostname()
    removed = []
    with db.session(write=False) as session:
        receiving = session.execute(select(Upload.id, Upload.receiver, Upload.seen_at)
                                    .where(Upload.state == UploadState.RECEIVING)).all()
    cutoff = utcnow() - ABANDONED
    for upload_id, receiver, seen_at in receiving:
        name, _, pid = (receiver or "").rpartition(":")
        orphan = name == host and pid.isdigit() and not process_alive(int(pid))
        if orphan or seen_at < cutoff:
            removed.append(upload_id)
    if removed:
        with db.session() as session:
            session.execute(update(Upload).where(Upload.id.in_(removed), Upload.state == UploadState.RECEIVING)
                            .values(state=UploadState.DELETING))
    return len(removed)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (a zombie, dead and not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed process whose parent died too may linger as a zombie nobody reaps
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
