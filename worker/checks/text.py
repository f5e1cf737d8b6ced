"""Refusing an output that is no text before a check is made of it, saying where.

The whole output is read once, a piece at a time (constant memory), at the speed of the
C decoders: a compressed file or a program, a NUL byte, bytes that are no UTF-8, a line
longer than the limit.

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
import io
from typing import IO

from worker.checks.compare import PIECE_BYTES, LineTooLong, OutputError
from worker.engines.base import InputError
from worker.jobs.intake import MAGIC
from worker.jobs.reading import LineLimitReader


def check_text(stream: IO[bytes], max_line: int) -> None:
    """Raise :class:`OutputError` (:class:`LineTooLong` for a long line) unless ``stream`` is UTF-8 text
    without NUL bytes whose lines are at most ``max_line`` bytes (0: no limit)."""
    limited = LineLimitReader(stream, max_line) if max_line else stream
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, run, first = 1, 0, True  # run: bytes of the current line before this piece
    while True:
        try:
            piece = limited.read(PIECE_BYTES)
        except InputError as error:
            raise LineTooLong(error.diagnostic.message, error.line or line) from None
        if first:
            _check_magic(piece)
            first = False
        bad: tuple[int, str] | None = None
        held = len(decoder.getstate()[0])
        try:
            decoder.decode(piece, final=not piece)
        except UnicodeDecodeError as error:
            at = max(error.start - held, 0)
            byte = piece[at] if at < len(piece) else (error.object[error.start] if error.object else 0)
            bad = (at, f"not UTF-8 text (byte 0x{byte:02x})")
        nul = piece.find(b"\x00")
        if nul >= 0 and (bad is None or nul < bad[0]):
            bad = (nul, "a NUL byte: this is no text file (upload the program's output as plain text)")
        if bad is not None:
            at, message = bad
            start = piece.rfind(b"\n", 0, at) + 1
            column = at - start + 1 + (run if start == 0 else 0)
            raise OutputError(message, line + piece.count(b"\n", 0, at), column)
        if not piece:
            return
        newlines = piece.count(b"\n")
        line += newlines
        run = len(piece) - piece.rfind(b"\n") - 1 + (run if not newlines else 0)


def check_text_start(head: bytes, final: bool, max_line: int) -> None:
    """:func:`check_text` on the start of an output still arriving (``final``: ``head`` is all of it): its
    whole lines, so that a character or a line cut at the end of ``head`` is not blamed.

    >>> check_text_start(b"Win : 66\\nLo\\xc3", False, 100)
    >>> check_text_start(b"Win : 66\\nLo\\xc3", True, 100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    worker.checks.compare.OutputError: line 2, column ...: not UTF-8 text (byte 0xc3)
    """
    if not final:
        # Whole lines; without one, all but a character the end may cut (at most 3 bytes of it).
        head = head[:head.rfind(b"\n") + 1] if b"\n" in head else head[:-3]
    check_text(io.BytesIO(head), max_line)


def _check_magic(head: bytes) -> None:
    for magic, what, _ in MAGIC:
        if head.startswith(magic):
            raise OutputError(f"this looks like {what}, not a program's output: upload the output itself, "
                              "as plain text", 1, 1)
