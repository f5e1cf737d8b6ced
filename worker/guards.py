"""Checks on an upload outside the engines: what it is (at upload) and how long its lines are (while split).

The engines parse judge files; these guards catch what is not a judge file at all
(a compressed archive, a picture, UTF-16 text) before a job is made of it, and keep a
line from growing without bound while the split reads it.

>>> sniff_upload(b"\\x1f\\x8b\\x08\\x00rest", 100)
'this looks like a gzip file; upload the judge file itself, not a compressed copy'
>>> sniff_upload(b"2 6 5 10 10 4 10", 16) is None
True
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import IO

from worker import engines
from worker.engines.base import Case, Diagnostic, Engine, InputError
from worker.uploads import format_size

#: Signatures of files that are no judge file: (magic bytes, what it is, what to do).
_COMPRESSED = "upload the judge file itself, not a compressed copy"
_NOT_TEXT = "upload the judge file itself (plain text)"
MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"\x1f\x8b", "a gzip file", _COMPRESSED),
    (b"PK\x03\x04", "a zip file", _COMPRESSED),
    (b"PK\x05\x06", "a (empty) zip file", _COMPRESSED),
    (b"BZh", "a bzip2 file", _COMPRESSED),
    (b"\xfd7zXZ\x00", "an xz file", _COMPRESSED),
    (b"\x28\xb5\x2f\xfd", "a zstandard file", _COMPRESSED),
    (b"7z\xbc\xaf\x27\x1c", "a 7-zip file", _COMPRESSED),
    (b"Rar!\x1a\x07", "a RAR file", _COMPRESSED),
    (b"%PDF-", "a PDF document", _NOT_TEXT),
    (b"\x89PNG\r\n\x1a\n", "a PNG image", _NOT_TEXT),
    (b"\xff\xd8\xff", "a JPEG image", _NOT_TEXT),
    (b"GIF8", "a GIF image", _NOT_TEXT),
    (b"\x7fELF", "a program (ELF)", _NOT_TEXT),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office document", _NOT_TEXT),
    (b"\xff\xfe", "UTF-16 text", "save it as plain ASCII or UTF-8 text"),
    (b"\xfe\xff", "UTF-16 text", "save it as plain ASCII or UTF-8 text"),
)
_TAR_MAGIC = (257, b"ustar")
_BOM = b"\xef\xbb\xbf"
_LONG_QUOTE = re.compile(r'"([^"]{61,})"')
log = logging.getLogger("dealer.worker")
#: Control characters (C0, DEL, C1) that a file name keeps out of pages and the database.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def sniff_upload(head: bytes, size: int) -> str | None:
    """Why the start of an upload shows it is no judge file, or ``None`` when it may be one.

    ``head`` is the file's first bytes (a few KiB), ``size`` its full length.

    >>> sniff_upload(b"", 0)
    'the file is empty'
    >>> sniff_upload(b" \\r\\n\\t\\n", 5)
    'the file is empty: it holds only whitespace'
    >>> sniff_upload(b"QD AD\\x00\\x01", 8)  # doctest: +ELLIPSIS
    'this looks like a binary file (byte 0x00 at offset 5), not a judge file; upload the judge file itself...'
    >>> sniff_upload(b"\\xef\\xbb\\xbf2 6 5", 8)  # doctest: +ELLIPSIS
    'the file starts with a byte-order mark (U+FEFF, as some editors write), which judge files never have; ...'
    """
    if size == 0:
        return "the file is empty"
    if size <= len(head) and not head.strip():
        return "the file is empty: it holds only whitespace"
    for magic, what, advice in MAGIC:
        if head.startswith(magic):
            return f"this looks like {what}; {advice}"
    offset, magic = _TAR_MAGIC
    if head[offset:offset + len(magic)] == magic:
        return f"this looks like a tar archive; {_COMPRESSED}"
    if head.startswith(_BOM):
        return ("the file starts with a byte-order mark (U+FEFF, as some editors write), which judge files "
                "never have; save it as plain text without one")
    nul = head.find(b"\x00")
    if nul >= 0:
        return (f"this looks like a binary file (byte 0x00 at offset {nul}), not a judge file; {_NOT_TEXT}")
    return None


def other_game_hint(game: str, head: bytes) -> str:
    """A hint for a file that failed to parse as ``game`` but looks like another game's file, else ``""``.

    >>> other_game_hint("10-20-30", b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\\n0\\n")
    ' (this looks like a mahjong file, not a 10-20-30 file)'
    """
    other = engines.detect(head)
    if other is None or other == game:
        return ""
    return f" (this looks like a {other} file, not a {game} file)"


def clean_filename(name: str, limit: int = 255) -> str:
    """A user's file name as it is stored and shown: control characters and unpaired surrogates replaced,
    cut to ``limit`` characters. It is never used as a path (uploads are stored under their hash).

    >>> clean_filename("../../etc/passwd")
    '../../etc/passwd'
    >>> clean_filename("a\\x00b\\nc\\udcff.in") == "a\\ufffdb\\ufffdc\\ufffd.in"
    True
    """
    name = _CONTROL.sub("\ufffd", name).strip()
    return name[:limit] or "upload"


class LineLimitReader:
    """A binary stream whose lines may be at most ``limit`` bytes long (without their newline).

    Reading past the limit raises :class:`InputError` naming the line. Costs one
    ``count`` and two ``find`` calls per read, so splitting stays as fast as without it.

    >>> import io
    >>> LineLimitReader(io.BytesIO(b"12\\n1234\\n"), 4).read()
    b'12\\n1234\\n'
    >>> LineLimitReader(io.BytesIO(b"12\\n12345\\n"), 4).read()
    Traceback (most recent call last):
    ...
    worker.engines.base.InputError: line 2: the line is longer than the limit of 4 bytes
    """

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self.stream = stream
        self.limit = limit
        self.line = 1  # the line the next byte belongs to
        self.run = 0  # bytes of that line already read

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        if data:
            self._check(data)
        return data

    def _check(self, data: bytes) -> None:
        first = data.find(b"\n")
        if first < 0:
            self.run += len(data)
            if self.run > self.limit:
                self._fail(self.line)
            return
        if self.run + first > self.limit:
            self._fail(self.line)
        newlines = data.count(b"\n")
        if len(data) > self.limit:  # a line inside this piece may be too long on its own
            for offset, part in enumerate(data.split(b"\n")[1:-1], start=1):
                if len(part) > self.limit:
                    self._fail(self.line + offset)
        self.line += newlines
        self.run = len(data) - data.rfind(b"\n") - 1
        if self.run > self.limit:
            self._fail(self.line)

    def _fail(self, line: int) -> None:
        raise InputError(f"the line is longer than the limit of {format_size(self.limit)}", line)


def parse_guarded(engine: Engine, stream: IO[bytes], warnings: list[Diagnostic]) -> Iterator[Case]:
    """``engine.parse``, except that any error other than :class:`InputError` (a bug in a parser)
    or :class:`OSError` (the file cannot be read) becomes an :class:`InputError` that says so:
    the job then fails with a reason instead of its split being retried for ever."""
    cases = engine.parse(stream, warnings)
    while True:
        try:
            case = next(cases)
        except StopIteration:
            return
        except (InputError, OSError):
            raise
        except Exception as error:  # noqa: BLE001 - see the docstring
            log.exception("the %s parser failed", engine.slug)
            raise InputError(f"the {engine.slug} reader failed on this file ({type(error).__name__}); "
                             "this is a bug in Dealer: please report it with the file") from error
        yield case


def readable(message: str) -> str:
    """A parser message with any very long quoted token shortened (a message quotes the bad token).

    >>> readable('line 1, column 7: "' + "1" * 100 + '" is not a card value')
    'line 1, column 7: "11111111111111111111111111111111…1111111111 (100 characters)" is not a card value'
    """
    return _LONG_QUOTE.sub(lambda m: f'"{m[1][:32]}…{m[1][-10:]} ({len(m[1])} characters)"', message)
