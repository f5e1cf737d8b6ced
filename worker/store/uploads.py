"""Uploads streamed to disk: hashed on the way, size-limited, stored under their sha256.

A file is written to ``uploads/incoming/`` under a generated name and only moved to
``uploads/ab/abcdef…`` once complete, so a broken upload never looks like a stored one
and a user's file name never becomes a path.
"""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

#: Host names may hold dashes; partial upload names split on them.
_HOST = socket.gethostname().replace("-", "_")


class UploadTooLarge(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the upload is larger than the limit of {format_size(limit)}")
        self.limit = limit


def format_size(size: int) -> str:
    """A byte count as people read it.

    >>> format_size(4 << 30), format_size(1536), format_size(12)
    ('4 GiB', '1.5 KiB', '12 bytes')
    """
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            if unit == "bytes":
                return f"{int(value)} bytes"
            return f"{value:.1f}".rstrip("0").rstrip(".") + f" {unit}"
        value /= 1024
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class StoredUpload:
    path: Path
    sha256: str
    size: int


class UploadWriter:
    """A writable file object for one upload (Werkzeug writes form files into it)."""

    def __init__(self, upload_dir: Path, limit: int) -> None:
        incoming = upload_dir / "incoming"
        incoming.mkdir(parents=True, exist_ok=True)
        self.upload_dir = upload_dir
        self.limit = limit
        self.size = 0
        self.committed = False
        self._hash = hashlib.sha256()
        fd, name = tempfile.mkstemp(dir=incoming, prefix=f"upload-{_HOST}-{os.getpid()}-")
        self.temp_path = Path(name)
        self._file: IO[bytes] = os.fdopen(fd, "w+b")

    def write(self, data: bytes) -> int:
        self.size += len(data)
        if self.size > self.limit:
            raise UploadTooLarge(self.limit)
        self._hash.update(data)
        return self._file.write(data)

    def copy_from(self, stream: IO[bytes], chunk_size: int = 1 << 20) -> None:
        while chunk := stream.read(chunk_size):
            self.write(chunk)

    # Werkzeug's FileStorage treats us as a file: let it seek, read and flush.
    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def read(self, size: int = -1) -> bytes:
        return self._file.read(size)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        """Werkzeug closes form files when the request ends; the data is kept until commit or discard."""

    def commit(self) -> StoredUpload:
        """Move the finished file to its content address (an identical upload is stored once)."""
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self.committed = True
        digest = self._hash.hexdigest()
        target = self.upload_dir / digest[:2] / digest
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            self.temp_path.unlink()
        else:
            os.replace(self.temp_path, target)
        return StoredUpload(target, digest, self.size)

    def discard(self) -> None:
        self._file.close()
        self.temp_path.unlink(missing_ok=True)


def store_stream(upload_dir: Path, stream: IO[bytes], limit: int) -> StoredUpload:
    """Store a whole binary stream as an upload (for the CLI and tests)."""
    writer = UploadWriter(upload_dir, limit)
    try:
        writer.copy_from(stream)
    except BaseException:
        writer.discard()
        raise
    return writer.commit()


def discard_stale(upload_dir: Path, older_than: float = 86400) -> int:
    """Remove partial uploads whose process died mid-upload; return how many.

    A partial upload is named after its host and process, so one of this host whose
    process is gone is removed at once; any other only once it is ``older_than`` old
    (another host may still be writing it).
    """
    removed = 0
    cutoff = time.time() - older_than
    for path in (upload_dir / "incoming").glob("upload-*"):
        try:
            host, pid = path.name.split("-")[1:3]
            orphan = host == _HOST and not _alive(int(pid))
        except ValueError:
            orphan = False
        try:
            if orphan or path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            pass
    return removed


def _alive(pid: int) -> bool:
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
