"""The faults of a judge file read past (:class:`worker.engines.reading.Faults`) as a job lists them:
each with its message in intake's wording and the lines around it, as the upload page shows an
error."""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, Any

from worker.engines.reading import CHUNK_SIZE, Diagnostic, Faults, InputError
from worker.jobs.intake import explain

#: Lines shown before and after a fault's own line.
CONTEXT_LINES = 2
#: The characters of a line a context shows.
CONTEXT_CHARS = 200


def listed(game: str, faults: Faults, head: bytes, stream: IO[bytes]) -> list[dict[str, Any]]:
    """The faults a job lists (the first :data:`~worker.engines.reading.FAULTS_KEPT`, in file order): each
    ``{"line", "column", "message", "context"}``. ``head`` is the file's start (which the message's hint
    reads, see ``intake.explain``), ``stream`` the file again, read no further than the last context.

    >>> import io
    >>> faults = Faults()
    >>> faults.add(InputError("hand has 2 tiles, expected 13", 2, 1), 2)
    >>> [fault] = listed("mahjong", faults, b"", io.BytesIO(b"a\\n1S 2S\\nc\\nd\\ne\\n"))
    >>> fault["message"], [(line["line"], line["text"]) for line in fault["context"]]
    ('line 2, column 1: hand has 2 tiles, expected 13', [(1, 'a'), (2, '1S 2S'), (3, 'c'), (4, 'd')])
    """
    near = {line for fault in faults.first if fault.line is not None
            for line in range(fault.line - CONTEXT_LINES, fault.line + CONTEXT_LINES + 1)}
    texts = lines_of(stream, near)
    return [{"line": fault.line, "column": fault.column, "message": explain(game, _error(fault), head),
             "context": [{"line": line, "text": texts[line]} for line in range(
                 fault.line - CONTEXT_LINES, fault.line + CONTEXT_LINES + 1) if line in texts]
             if fault.line is not None else []}
            for fault in faults.first]


def lines_of(stream: IO[bytes], wanted: Iterable[int]) -> dict[int, str]:
    """The ``wanted`` lines of a file (numbered from 1) that it has, each cut to :data:`CONTEXT_CHARS`
    characters, read as far as the last of them in constant memory: a line is only ever kept cut.

    >>> import io
    >>> lines_of(io.BytesIO(b"a\\r\\nb" + b"c" * 300 + b"\\n\\xffd"), {0, 1, 3, 9})
    {1: 'a', 3: '\\ufffdd'}
    """
    wanted = set(wanted)
    last = max(wanted, default=0)
    cap = CONTEXT_CHARS * 4  # bytes enough for the characters shown: a character is at most four
    found: dict[int, str] = {}
    line, start = 1, b""  # the line read, and the start of it so far when it is wanted
    while line <= last and (chunk := stream.read(CHUNK_SIZE)):
        parts = chunk.split(b"\n")
        for k, part in enumerate(parts):
            if line in wanted:
                start += part[: max(cap - len(start), 0)]
            if k == len(parts) - 1:  # the line goes on in the next chunk
                break
            if line in wanted:
                found[line] = _shown(start)
            line, start = line + 1, b""
    if line in wanted and start:  # the last line, without a newline
        found[line] = _shown(start)
    return found


def _shown(data: bytes) -> str:
    return data.rstrip(b"\r").decode("utf-8", "replace")[:CONTEXT_CHARS]


def _error(fault: Diagnostic) -> InputError:
    return InputError(fault.message, fault.line, fault.column)
