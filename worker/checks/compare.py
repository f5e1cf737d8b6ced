"""Judging an output against the judge output, case by case, in constant memory.

Every game prints one line per case, so case ``k`` of an output is its line ``k``. A case is
``accepted`` when its line is identical, a ``presentation_error`` when it is identical once
all whitespace is removed, else a ``wrong_answer``; a case past the output's end is
``missing``, and a line after the last case is ``extra``. Line endings (LF or CRLF) and a
missing final newline do not matter.

>>> report = judge_text(["Win : 66", "Loss: 40", "Draw: 12"], b"Win : 66\\r\\nLoss:40\\r\\n")
>>> report.verdict, report.counts
('wrong_answer', {'accepted': 1, 'presentation_error': 1, 'wrong_answer': 0, 'missing': 1, 'extra': 0})
>>> report.differences[0]
Difference(index=2, line=2, verdict='presentation_error', expected='Loss: 40', got='Loss:40', column=6)

The judge output comes in blocks (a job keeps its judge lines per chunk, joined by
newlines); a block that the output repeats byte for byte is accepted with one comparison,
so a right output of a million cases is judged at the speed of ``memcmp``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from io import BytesIO
from itertools import islice
from typing import IO

from worker.units import format_size

VERDICTS = ("accepted", "presentation_error", "wrong_answer", "missing", "extra")
ACCEPTED, PRESENTATION_ERROR, WRONG_ANSWER, MISSING, EXTRA = range(len(VERDICTS))
#: Verdicts whose line of the output a check keeps (an accepted one is the judge's own line; a
#: missing case has none).
KEEPS_GOT = frozenset({PRESENTATION_ERROR, WRONG_ANSWER, EXTRA})
#: Lines of the output per stored part of a check.
PART_LINES = 16384
#: The ASCII characters ``str.split()`` splits on: an ASCII line without them is the line without whitespace.
ASCII_SPACE = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
#: Bytes read from the output at a time.
PIECE_BYTES = 1 << 20
#: Lines longer than this are marked from their first difference on instead of character by character
#: (matching is quadratic in the worst case).
MARK_LIMIT = 2000


class OutputError(ValueError):
    """The output is no text (or has a line over the limit); says where, like a parser's error."""

    def __init__(self, message: str, line: int, column: int | None = None) -> None:
        self.message, self.line, self.column = message, line, column
        where = f"line {line}" + (f", column {column}" if column is not None else "")
        super().__init__(f"{where}: {message}")


class LineTooLong(OutputError):
    """A line of the output is longer than the limit (``DEALER_MAX_LINE_BYTES``)."""


def line_verdict(expected: str, got: str) -> int:
    """The verdict of one case's line (an index into :data:`VERDICTS`).

    >>> [VERDICTS[line_verdict("Win : 66", got)] for got in ("Win : 66", "Win :  66", "Win:66", "Win : 67")]
    ['accepted', 'presentation_error', 'presentation_error', 'wrong_answer']
    """
    if got == expected:
        return ACCEPTED
    if "".join(got.split()) == "".join(expected.split()):
        return PRESENTATION_ERROR
    return WRONG_ANSWER


def overall(counts: Sequence[int]) -> str:
    """A check's verdict from its counts (in :data:`VERDICTS` order).

    >>> overall([3, 0, 0, 0, 0]), overall([2, 1, 0, 0, 0]), overall([3, 1, 0, 0, 1])
    ('accepted', 'presentation_error', 'wrong_answer')
    """
    if counts[WRONG_ANSWER] or counts[MISSING] or counts[EXTRA]:
        return "wrong_answer"
    return "presentation_error" if counts[PRESENTATION_ERROR] else "accepted"


def first_column(expected: str, got: str) -> int:
    """The first character (from 1) where two lines differ.

    >>> first_column("Win : 66", "Win : 67"), first_column("Win", "Win : 1")
    (8, 4)
    """
    for column, (a, b) in enumerate(zip(expected, got), start=1):
        if a != b:
            return column
    return min(len(expected), len(got)) + 1


def marks(expected: str, got: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both lines cut into runs of characters, each run marked when the other line does not have it.

    >>> marks("Win : 66", "Win : 67")
    ([('Win : 6', False), ('6', True)], [('Win : 6', False), ('7', True)])
    >>> marks("Loss: 40", "Loss:  40")
    ([('Loss: 40', False)], [('Loss: ', False), (' ', True), ('40', False)])
    """
    if max(len(expected), len(got)) > MARK_LIMIT:
        at = first_column(expected, got) - 1
        return _runs([(expected[:at], False), (expected[at:], True)]), _runs([(got[:at], False), (got[at:], True)])
    left: list[tuple[str, bool]] = []
    right: list[tuple[str, bool]] = []
    for tag, a1, a2, b1, b2 in SequenceMatcher(None, expected, got, autojunk=False).get_opcodes():
        left.append((expected[a1:a2], tag != "equal"))
        right.append((got[b1:b2], tag != "equal"))
    return _runs(left), _runs(right)


def _runs(parts: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """Runs without empty ones, neighbours of the same mark joined."""
    runs: list[tuple[str, bool]] = []
    for text, marked in parts:
        if not text:
            continue
        if runs and runs[-1][1] == marked:
            runs[-1] = (runs[-1][0] + text, marked)
        else:
            runs.append((text, marked))
    return runs


@dataclass(frozen=True)
class Difference:
    """A case (or an extra line) that is not accepted."""

    #: The case's number, from 1; ``None`` for a line after the last case.
    index: int | None
    #: Its line in the output, from 1 (where a missing case's line would be).
    line: int
    verdict: str
    expected: str | None
    got: str | None
    #: The first character where the lines differ, from 1; ``None`` for a missing case or an extra line.
    column: int | None


@dataclass(frozen=True)
class Part:
    """The verdicts of :data:`PART_LINES` lines of the output in a row (fewer in the last part)."""

    seq: int
    #: Its first line, from 1.
    first: int
    #: One byte per line: its verdict's index in :data:`VERDICTS`.
    verdicts: bytes
    #: The output's lines whose verdict is in :data:`KEEPS_GOT`, in order (UTF-8).
    got: list[bytes]

    def counts(self) -> list[int]:
        return [self.verdicts.count(code) for code in range(len(VERDICTS))]


@dataclass
class Report:
    #: Lines by verdict, in :data:`VERDICTS` order.
    tally: list[int]
    cases: int
    lines: int
    differences: list[Difference] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return overall(self.tally)

    @property
    def counts(self) -> dict[str, int]:
        return dict(zip(VERDICTS, self.tally, strict=True))


class OutputLines:
    """An output's lines from a binary stream, read a piece at a time: CRLF is read as LF, and a
    line that is no UTF-8 text, holds a NUL byte or is longer than ``max_line`` bytes is an
    :class:`OutputError` naming its line and column.

    >>> lines = OutputLines(BytesIO(b"Win : 66\\r\\nLoss: 9"))
    >>> lines.next_line(), lines.next_line(), lines.next_line()
    ('Win : 66', 'Loss: 9', None)
    >>> lines = OutputLines(BytesIO(b"ok\\nWin \\xff 66\\n"))
    >>> lines.next_line()
    'ok'
    >>> lines.next_line()
    Traceback (most recent call last):
    ...
    worker.checks.compare.OutputError: line 2, column 5: not UTF-8 text (byte 0xff)
    """

    def __init__(self, stream: IO[bytes], max_line: int = 1 << 20, piece: int = PIECE_BYTES) -> None:
        self.stream = stream
        self.max_line = max_line or 1 << 62
        self.piece = piece
        #: Lines taken so far.
        self.line = 0
        self._buf = b""
        self._pos = 0
        self._eof = False
        self._cr = b""  # a CR that ended the last piece read: its LF may start the next one

    @property
    def exhausted(self) -> bool:
        return self._eof and self._pos >= len(self._buf)

    def _more(self) -> None:
        data = self.stream.read(self.piece)
        if not data:
            self._eof = True
            data, self._cr = self._cr, b""
        else:
            data, self._cr = self._cr + data, b""
            if data.endswith(b"\r"):
                data, self._cr = data[:-1], b"\r"
            data = data.replace(b"\r\n", b"\n")
        self._buf = self._buf[self._pos:] + data
        self._pos = 0

    def take_block(self, block: bytes, count: int) -> bool:
        """Take the next ``count`` lines if they are ``block`` (lines joined by LF) byte for byte."""
        need = len(block) + 1
        while len(self._buf) - self._pos < need and not self._eof:
            self._more()
        if self.exhausted or not self._buf.startswith(block, self._pos):
            return False
        end = self._pos + len(block)
        if end < len(self._buf):
            if self._buf[end] != 10:
                return False
            end += 1
        self._pos = end
        self.line += count
        return True

    def take_lines(self, count: int, hint: int) -> list[bytes]:
        """The next ``count`` lines as they are (fewer at the end of the output); ``hint``: about how many
        bytes they take."""
        size = max(hint, 64)
        while True:
            while len(self._buf) - self._pos < size and not self._eof:
                self._more()
            window = self._buf[self._pos:self._pos + size]
            if window.count(b"\n") >= count:
                lines = window.split(b"\n", count)
                self._pos += len(window) - len(lines.pop())
                break
            if self._eof and len(window) == len(self._buf) - self._pos:
                lines = window.split(b"\n")
                if not lines[-1]:
                    lines.pop()
                self._pos = len(self._buf)
                break
            if len(window) - window.rfind(b"\n") - 1 > self.max_line:
                self.line += window.count(b"\n")
                self._too_long()
            size *= 2
        if lines and max(map(len, lines)) > self.max_line:
            self.line += next(k for k, line in enumerate(lines) if len(line) > self.max_line)
            self._too_long()
        self.line += len(lines)
        return lines

    def text(self, raw: bytes, line: int) -> str:
        """Line ``line`` of the output as text, or the :class:`OutputError` that says why it is none."""
        nul = raw.find(b"\x00")
        if nul >= 0:
            raise OutputError("a NUL byte: this is no text file (upload the program's output as plain text)",
                              line, nul + 1)
        try:
            return raw.decode()
        except UnicodeDecodeError as error:
            raise OutputError(f"not UTF-8 text (byte 0x{raw[error.start]:02x})", line, error.start + 1) from None

    def next_line(self) -> str | None:
        """The next line (without its line ending), or ``None`` after the last one."""
        while (end := self._buf.find(b"\n", self._pos)) < 0:
            if self._eof:
                if self._pos >= len(self._buf):
                    return None
                end = len(self._buf)
                break
            if len(self._buf) - self._pos > self.max_line:
                self._too_long()
            self._more()
        raw = self._buf[self._pos:end]
        self._pos = end + 1
        self.line += 1
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > self.max_line:
            self.line -= 1
            self._too_long()
        return self.text(raw, self.line)

    def _too_long(self) -> None:
        raise LineTooLong(f"the line is longer than the limit of {format_size(self.max_line)}", self.line + 1)


class Judge:
    """Judges an output (:class:`OutputLines`) against judge lines handed to :meth:`expect` in blocks.

    Each full :class:`Part` of verdicts goes to ``on_part`` as soon as it is made; the
    first ``keep`` differences are kept for the report.
    """

    def __init__(self, output: OutputLines, on_part: Callable[[Part], None] | None = None, keep: int = 1,
                 part_lines: int = PART_LINES) -> None:
        self.output = output
        self.on_part = on_part
        self.keep = keep
        self.part_lines = part_lines
        self.tally = [0] * len(VERDICTS)
        self.cases = 0
        self.differences: list[Difference] = []
        self._verdicts = bytearray()
        self._got: list[bytes] = []
        self._seq = 0
        self._first = 1

    def expect(self, block: bytes, count: int) -> None:
        """The next ``count`` cases' judge lines, joined by LF (as a job's chunk keeps them)."""
        output = self.output
        if output.take_block(block, count):
            self._run(ACCEPTED, count)
        elif output.exhausted and len(self.differences) >= self.keep:
            self._run(MISSING, count)
        else:
            self._compare(block.split(b"\n"), output.take_lines(count, len(block) + count + 64))
        self.cases += count

    def _compare(self, expected: list[bytes], got: list[bytes]) -> None:
        """Judge lines against the output's (fewer when it ended): the lines equal byte for byte are found in
        one pass, and only the others are looked at one by one."""
        verdicts, places, lines = self._judge_lines(expected, got)
        if len(self.differences) < self.keep:
            self._keep_differences(expected, verdicts, dict(zip(places, lines)))
        for code in range(len(VERDICTS)):
            self.tally[code] += verdicts.count(code)
        self._extend(verdicts, places, lines)

    def _judge_lines(self, expected: list[bytes], got: list[bytes]) -> tuple[bytearray, list[int], list[bytes]]:
        """The verdict of each line, and the places (in the run) and the output's lines of those not accepted."""
        first_line = self.output.line - len(got) + 1
        verdicts = bytearray(len(expected))
        places: list[int] = []  # of each line not accepted, and the output's line there
        lines: list[bytes] = []
        differ = [k for k, (want, line) in enumerate(zip(expected, got)) if want != line]
        others = b"\n".join([got[k] for k in differ] + [expected[k] for k in differ])
        if others.isascii() and b"\x00" not in others and b"\r" not in others:
            # What line_verdict says, without decoding: judge lines are ASCII, and so are nearly all outputs.
            for k in differ:
                same = got[k].translate(None, ASCII_SPACE) == expected[k].translate(None, ASCII_SPACE)
                verdicts[k] = PRESENTATION_ERROR if same else WRONG_ANSWER
            places, lines = differ, [got[k] for k in differ]
        else:
            for k in differ:
                raw = got[k]
                if raw[-1:] == b"\r":  # a CR that was not part of a CRLF (those are read as LF)
                    raw = raw[:-1]
                verdict = line_verdict(expected[k].decode(), self.output.text(raw, first_line + k))
                if verdict:
                    verdicts[k] = verdict
                    places.append(k)
                    lines.append(raw)
        verdicts[len(got):] = bytes([MISSING]) * (len(expected) - len(got))
        return verdicts, places, lines

    def _keep_differences(self, expected: list[bytes], verdicts: bytearray, by_place: dict[int, bytes]) -> None:
        """Keep the run's first differences for the report, up to ``keep`` in all (``by_place``: the output's
        line at each place not accepted)."""
        start = self._first + len(self._verdicts)
        for k in (k for k, verdict in enumerate(verdicts) if verdict):
            if len(self.differences) >= self.keep:
                break
            want, raw = expected[k].decode(), by_place.get(k)
            line = raw.decode() if raw is not None else None
            column = first_column(want, line) if line is not None else None
            self.differences.append(Difference(start + k, start + k, VERDICTS[verdicts[k]], want, line, column))

    def _extend(self, verdicts: bytearray, places: list[int], lines: list[bytes]) -> None:
        """Add a run of lines' verdicts to the parts, with the output's ``lines`` of those not accepted
        (at ``places`` in the run, in order)."""
        at, taken = 0, 0
        while at < len(verdicts):
            take = min(len(verdicts) - at, self.part_lines - len(self._verdicts))
            self._verdicts += verdicts[at:at + take]
            upto = bisect_left(places, at + take, taken)
            self._got += lines[taken:upto]
            taken = upto
            at += take
            if len(self._verdicts) == self.part_lines:
                self._flush()

    def finish(self) -> Report:
        """The lines after the last case are extra; the report of the whole output."""
        while (got := self.output.next_line()) is not None:
            self._put(EXTRA, None, got)
        self._flush()
        return Report(self.tally, self.cases, self.output.line, self.differences)

    def _put(self, verdict: int, expected: str | None, got: str | None) -> None:
        self.tally[verdict] += 1
        if verdict != ACCEPTED and len(self.differences) < self.keep:
            line = self._first + len(self._verdicts)
            column = first_column(expected, got) if verdict in (PRESENTATION_ERROR, WRONG_ANSWER) else None
            self.differences.append(Difference(None if verdict == EXTRA else line, line, VERDICTS[verdict],
                                               expected, got, column))  # type: ignore[arg-type]
        self._verdicts.append(verdict)
        if verdict in KEEPS_GOT:
            self._got.append(got.encode())  # type: ignore[union-attr]
        if len(self._verdicts) == self.part_lines:
            self._flush()

    def _run(self, verdict: int, count: int) -> None:
        """``count`` lines in a row with the same verdict (accepted, or missing and already reported)."""
        self.tally[verdict] += count
        while count:
            take = min(count, self.part_lines - len(self._verdicts))
            self._verdicts += bytes([verdict]) * take
            count -= take
            if len(self._verdicts) == self.part_lines:
                self._flush()

    def _flush(self) -> None:
        if not self._verdicts:
            return
        part = Part(self._seq, self._first, bytes(self._verdicts), self._got)
        self._seq += 1
        self._first += len(self._verdicts)
        self._verdicts, self._got = bytearray(), []
        if self.on_part is not None:
            self.on_part(part)


def blocks(lines: Iterable[str], size: int = 1000) -> Iterator[tuple[bytes, int]]:
    """Judge lines as :meth:`Judge.expect` takes them: ``(lines joined by LF, how many)``."""
    iterator = iter(lines)
    while batch := list(islice(iterator, size)):
        yield "\n".join(batch).encode(), len(batch)


def judge_stream(expected: Iterable[str], output: IO[bytes], keep: int = 1, max_line: int = 1 << 20) -> Report:
    """Judge an output stream against judge lines."""
    return judge_blocks(blocks(expected), output, keep, max_line)


def judge_blocks(expected: Iterable[tuple[bytes, int]], output: IO[bytes], keep: int = 1,
                 max_line: int = 1 << 20) -> Report:
    """Judge an output stream against blocks of judge lines as :func:`blocks` makes them (what ``dealer
    check`` does, a block a chunk its engine solved)."""
    judge = Judge(OutputLines(output, max_line), keep=keep)
    for block, count in expected:
        judge.expect(block, count)
    return judge.finish()


def judge_text(expected: Iterable[str], output: bytes, keep: int = 1) -> Report:
    """:func:`judge_stream` of an output held in memory."""
    return judge_stream(expected, BytesIO(output), keep)
