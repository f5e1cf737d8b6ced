"""Refusing an output that is no text before a check is made of it, saying where: while it arrives
(:class:`TextScreen`, an upload's screen) or once stored (:func:`check_text`).

It is read once, a piece at a time (constant memory), at the speed of the C decoders: a
compressed file or a program, a NUL byte, bytes that are no UTF-8, a line longer than the limit.

>>> import io
>>> check_text(io.BytesIO(b"Win : 66\\r\\nLoss: 40\\n"), 100)
>>> check_text(io.BytesIO(b"Win : 66\\nLoss: \\x0040\\n"), 100)
Traceback (most recent call last):
...
worker.checks.compare.OutputError: line 2, column 7: a NUL byte: this is no text file (upload the program's output as plain text)
>>> check_text(io.BytesIO(b"Win : 66\\nLo\\xe9ss\\n"), 100)
Traceback (most recent call last):
...
worker.checks.compare.OutputError: line 2, column 3: not UTF-8 text (byte 0xe9)
>>> check_text(io.BytesIO(b"\\x1f\\x8b\\x08\\x00"), 100)
Traceback (most recent call last):
...
worker.checks.compare.OutputError: line 1, column 1: this looks like a gzip file, not a program's output: upload the output itself, as plain text
"""

from __future__ import annotations

import codecs
from typing import IO

from worker.checks.compare import PIECE_BYTES, LineTooLong, OutputError
from worker.jobs.intake import MAGIC
from worker.jobs.screen import Lines
from worker.units import format_size

#: The longest signature of :data:`MAGIC`: the start an output is looked at for one.
_MAGIC_BYTES = max(len(magic) for magic, _, _ in MAGIC)


def check_text(stream: IO[bytes], max_line: int) -> None:
    """Raise :class:`OutputError` (:class:`LineTooLong` for a long line) unless ``stream`` is UTF-8 text
    without NUL bytes whose lines are at most ``max_line`` bytes (0: no limit)."""
    screen = TextScreen(max_line)
    while piece := stream.read(PIECE_BYTES):
        screen.feed(piece)
    screen.end()


class TextScreen:
    """An output held to :func:`check_text`'s rules while it arrives, a piece at a time (a
    ``worker.store.uploads.Screen``): each piece is refused where its first fault is.

    >>> screen = TextScreen(100)
    >>> screen.feed(b"Win : 66\\nLo\\xc3")
    >>> screen.end()
    Traceback (most recent call last):
    ...
    worker.checks.compare.OutputError: line 2, column 3: not UTF-8 text (byte 0xc3)
    """

    def __init__(self, max_line: int) -> None:
        self.lines = Lines(max_line)
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._start: bytes | None = b""  # until it is long enough to say what the output looks like

    def feed(self, data: bytes) -> None:
        if self._start is not None:
            self._start += data
            if len(self._start) >= _MAGIC_BYTES:
                self._judge_start()
            return
        self._screen(data)

    def end(self) -> None:
        if self._start is not None:
            self._judge_start()
        try:
            self._decoder.decode(b"", final=True)
        except UnicodeDecodeError as error:  # a character cut short by the end of the output
            held = error.object
            raise OutputError(f"not UTF-8 text (byte 0x{held[error.start]:02x})",
                              *self.lines.where(b"", error.start - len(held))) from None

    def _judge_start(self) -> None:
        start, self._start = self._start or b"", None
        for magic, what, _ in MAGIC:
            if start.startswith(magic):
                raise OutputError(f"this looks like {what}, not a program's output: upload the output itself, "
                                  "as plain text", 1, 1)
        self._screen(start)

    def _screen(self, data: bytes) -> None:
        faults: list[tuple[int, OutputError]] = []
        long = self.lines.too_long(data)
        if long is not None:
            faults.append((long[0], LineTooLong(f"the line is longer than the limit of "
                                                f"{format_size(self.lines.limit)}", long[1])))
        held = len(self._decoder.getstate()[0])
        try:
            self._decoder.decode(data)
        except UnicodeDecodeError as error:
            at = error.start - held
            faults.append((at, OutputError(f"not UTF-8 text (byte 0x{error.object[error.start]:02x})",
                                           *self.lines.where(data, at))))
        nul = data.find(b"\x00")
        if nul >= 0:
            faults.append((nul, OutputError("a NUL byte: this is no text file (upload the program's output as "
                                            "plain text)", *self.lines.where(data, nul))))
        if faults:
            raise min(faults, key=lambda fault: fault[0])[1]
        self.lines.advance(data)
