"""The screen every judge file passes through as it is read, a block at a time: what makes a file plainly
no judge file, whatever its game, is refused where it is met, before the rest is read or stored.

The service feeds it an upload's blocks as they arrive (``worker/store/uploads.UploadWriter.screen``), and
``dealer solve`` and ``dealer check`` the file they read (:class:`Screened`), so that the same bytes get the
same verdict and the same message (:mod:`worker.jobs.intake`'s wording) everywhere.

Its first MiB is judged whole, once it has come (or the file has ended): what the file looks like (empty,
compressed, an image, binary: ``intake.sniff_upload``), then the limits below in it, then whether its
first line ends within it, then, for a longer file, whether its whole lines read as some game's
(``intake.refuse_no_game``). Every later block is held to the limits as it comes: a NUL byte, a byte that is
no UTF-8, a line longer than ``DEALER_MAX_LINE_BYTES``, a token longer than any game's. Where a block holds
several faults, the first in the file is named, so the verdict does not depend on how the file was cut into
blocks. A file that ends without a byte but whitespace (blank lines, however many) is refused at its end.

>>> screen = JudgeFileScreen(max_line_bytes=100)
>>> screen.feed(b"2 6 5 10\\n4 ")
>>> screen.feed(b"1" * 70)
>>> screen.end()
Traceback (most recent call last):
...
worker.jobs.errors.Invalid: line 2, column 3: a token longer than 64 characters
"""

from __future__ import annotations

import codecs
from typing import IO, Any, cast

from worker.engines.reading import MAX_TOKEN
from worker.jobs.errors import Invalid
from worker.jobs.intake import (binary_file, line_too_long, not_text, position, refuse_no_game, sniff_upload,
                                token_too_long, whitespace_only)

#: The start of a file judged whole: what it looks like, its first line, its game.
HEAD_BYTES = 1 << 20
#: Every whitespace byte (what the readers split tokens on) as a space, every other byte as an ``x``: a
#: token too long is then a run of ``x``, which ``bytes.find`` finds at memory speed.
_TOKEN_BYTES = bytes(32 if byte in b" \t\n\r\x0b\x0c" else 120 for byte in range(256))
_TOO_LONG = b"x" * (MAX_TOKEN + 1)


class Lines:
    """Where a stream read a piece at a time is (its line, and the bytes of that line before the next
    piece), its lines held to a length (``limit``; 0: none)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.line = 1  # the line of the next byte
        self.run = 0  # bytes of that line before it

    def where(self, data: bytes, at: int) -> tuple[int, int]:
        """The line and column of ``data[at]``, ``data`` being the next piece (``at`` < 0: a byte of the
        line before it)."""
        if at < 0 or data.rfind(b"\n", 0, at) < 0:
            return self.line, self.run + at + 1
        line, column = position(data, at)
        return self.line + line - 1, column

    def too_long(self, data: bytes) -> tuple[int, int] | None:
        """The first line of the next piece ``data`` longer than the limit: where in ``data`` that shows (its
        byte past the limit) and the line's number; ``None`` when there is none."""
        limit = self.limit
        if not limit:
            return None
        first = data.find(b"\n")
        if self.run + (len(data) if first < 0 else first) > limit:
            return limit - self.run, self.line
        if first < 0:
            return None
        if len(data) > limit:  # a line inside ``data`` may be too long on its own
            start = first + 1
            for number, part in enumerate(data[start:].split(b"\n"), start=self.line + 1):
                if len(part) > limit:
                    return start + limit, number
                start += len(part) + 1
            return None
        last = data.rfind(b"\n") + 1
        if len(data) - last > limit:
            return last + limit, self.line + data.count(b"\n")
        return None

    def advance(self, data: bytes) -> None:
        """Move past the next piece."""
        newlines = data.count(b"\n")
        self.run = len(data) - data.rfind(b"\n") - 1 + (self.run if not newlines else 0)
        self.line += newlines


class JudgeFileScreen:
    """A judge file's screen (the module's docstring says what it refuses): :meth:`feed` it every block in
    order, then :meth:`end`; either raises :class:`Invalid` with the message of the first fault."""

    def __init__(self, max_line_bytes: int) -> None:
        #: The longest line (0: no limit, but for the first line's MiB), and where the screen is.
        self.lines = Lines(max_line_bytes)
        self._head: bytearray | None = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._token = 0  # bytes of the token the screened bytes end in
        self._token_at = (1, 1)  # where it starts
        self._blank = True  # nothing but whitespace screened so far

    def feed(self, data: bytes) -> None:
        if self._head is None:
            self._screen(data)
            return
        room = HEAD_BYTES - len(self._head)
        self._head += data[:room]
        # The head is judged once a byte past it has come, which says that its last line goes on.
        if len(data) > room:
            self._judge_head(data[room:])

    def end(self) -> None:
        if self._head is not None:
            self._judge_head(b"")
        if self._blank:  # a file of whitespace past its first MiB (a shorter one is refused with it)
            raise Invalid(whitespace_only(self.lines.line - (self.lines.run == 0)))
        try:
            self._decoder.decode(b"", final=True)
        except UnicodeDecodeError as error:  # a character cut short by the end of the file
            held = error.object
            raise Invalid(not_text(held[error.start], *self.lines.where(b"", error.start - len(held)))) from None

    def _judge_head(self, rest: bytes) -> None:
        assert self._head is not None
        head, self._head = bytes(self._head), None
        problem = sniff_upload(head, None if rest else len(head))
        if problem is not None:
            raise Invalid(problem)
        self._screen(head)
        if rest:
            if b"\n" not in head and rest[:1] != b"\n":
                raise Invalid(line_too_long(1, HEAD_BYTES))
            refuse_no_game(head)
            self._screen(rest)

    def _screen(self, data: bytes) -> None:
        """Hold ``data``, the bytes that follow those screened so far, to the limits."""
        if not data:
            return
        faults = [fault for fault in (self._binary(data), self._long_line(data), self._long_token(data)) if fault]
        if faults:
            raise Invalid(min(faults)[1])
        self.lines.advance(data)
        if self._blank and data.strip():
            self._blank = False

    # Each fault of ``data`` as (where in it it shows, its message), or None.

    def _binary(self, data: bytes) -> tuple[int, str] | None:
        nul = data.find(b"\x00")
        held = len(self._decoder.getstate()[0])
        try:
            self._decoder.decode(data)
        except UnicodeDecodeError as error:
            at = error.start - held
            if nul < 0 or at < nul:
                return at, not_text(error.object[error.start], *self.lines.where(data, at))
        if nul >= 0:
            return nul, binary_file(*self.lines.where(data, nul))
        return None

    def _long_line(self, data: bytes) -> tuple[int, str] | None:
        found = self.lines.too_long(data)
        return None if found is None else (found[0], line_too_long(found[1], self.lines.limit))

    def _long_token(self, data: bytes) -> tuple[int, str] | None:
        marks = data.translate(_TOKEN_BYTES)
        # The token the bytes before ``data`` end in goes on into it.
        going_on = len(marks) - len(marks.lstrip(b"x"))
        if self._token and self._token + going_on > MAX_TOKEN:
            return MAX_TOKEN - self._token, token_too_long(*self._token_at)
        found = marks.find(_TOO_LONG, going_on if self._token else 0)
        if found >= 0:
            return found + MAX_TOKEN, token_too_long(*self.lines.where(data, found))
        ending = len(marks) - len(marks.rstrip(b"x"))
        if ending == len(marks) and self._token:
            self._token += ending
        elif ending:
            self._token, self._token_at = ending, self.lines.where(data, len(data) - ending)
        else:
            self._token = 0
        return None


class Screened:
    """A binary stream read through a :class:`JudgeFileScreen`: its first MiB is judged before any of it is
    handed on, each later read before it is (so a reader meets no byte the screen refuses), and the screen
    is told the end when the stream gives no more. It passes for the stream: :meth:`reading` is it as
    ``IO[bytes]``."""

    def __init__(self, stream: IO[bytes], screen: JudgeFileScreen) -> None:
        self.stream = stream
        self.screen = screen
        self._ahead: bytes | None = None  # the head, read before anything is handed on...
        self._at = 0  # ... and how much of it has been
        self._ended = False

    def read(self, size: int = -1) -> bytes:
        if self._ahead is None:
            self._ahead = self._read_head()
        if self._at < len(self._ahead):
            end = len(self._ahead) if size < 0 else self._at + size
            data, self._at = self._ahead[self._at:end], min(end, len(self._ahead))
            return data + self.read() if size < 0 else data
        data = self.stream.read(size)
        if data:
            self.screen.feed(data)
        elif not self._ended:
            self._ended = True
            self.screen.end()
        return data

    def _read_head(self) -> bytes:
        """The head and a byte past it (what the screen judges it with), or the whole stream."""
        pieces, got = [], 0
        while got <= HEAD_BYTES and (piece := self.stream.read(HEAD_BYTES + 1 - got)):
            pieces.append(piece)
            got += len(piece)
        data = b"".join(pieces)
        self.screen.feed(data)
        if got <= HEAD_BYTES:
            self._ended = True
            self.screen.end()
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def reading(self) -> IO[bytes]:
        return cast(IO[bytes], self)
