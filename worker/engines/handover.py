"""A judge file read in turns: the native core reads the plain decks and hands, the game's readers
in Python the rest, each handing the file to the other where it stops.

The native core (``read`` and ``read_inputs`` of a game's ``core``) reads lines as judge files
write them, in the file's layout when it has one (:mod:`worker.engines.layout`); at a line it
does not take, the Python readers go on from the start of its stretch (the lines from a deck's
start to the first line end that is also a deck's end): the layout reader
(:class:`~worker.engines.layout.LaidOut`) reads past what is wrong there and gives the file back
to the core at the next line where a deck starts after a good one, so that faults cost what good
cases cost; the game's stream reader (its :data:`ReaderFrom`) reads a file without a layout to its
end, and the end of every file. Every message and position is the Python readers', and so are the
cases (the core reads the same decks the same way), whichever core reads.

Neither side holds more than a block of the file and a few lines: the memory stays constant.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from types import ModuleType
from typing import IO, Any, cast

from worker.engines.layout import SAMPLE_BYTES, DeckRules, LaidOut, ReaderFrom, learn, previous
from worker.engines.reading import CHUNK_SIZE, Case, Reading

#: A game's native reader (``read`` of its core): given the file's data from a deck's start ``at``,
#: whether the data ends the file, the line and the count of cases there, and the file's layout (cards
#: a line, 0 for none; whether decks run on across lines), it returns the cases of the plain lines
#: it takes, where it stopped, the line and the count there, and whether it stopped at a stretch it
#: leaves to Python.
NativeReader = Callable[[bytes, int, bool, int, int, int, bool], tuple[list[Case], int, int, int, bool]]


class _Turns:
    """Where the reading of a file is, which both sides go on from: the data of the file not read
    yet (from ``at``, a block at a time), the line and the token a deck starts at there, the count
    of cases before it; and the file's layout, learnt from its start."""

    def __init__(self, stream: IO[bytes], reading: Reading, rest: ReaderFrom, rules: DeckRules | None) -> None:
        self.stream = _Counted(stream)
        self.reading, self.rest = reading, rest
        self.data, self.at, self.final = b"", 0, False
        self.line, self.token, self.count = 1, 0, 0
        self.laid: LaidOut | None = None
        self.per_line, self.flow = 0, False
        if rules is not None:
            head = [self.data]
            size = 0
            while size <= SAMPLE_BYTES and not self.final:  # (joined once: a stream may give a byte a read)
                chunk = self.stream.read(CHUNK_SIZE)
                head.append(chunk)
                size += len(chunk)
                self.final = not chunk
            self.data = b"".join(head)
            layout = learn(self.data, self.final, rules.stops)
            if layout is not None:
                self.laid = LaidOut(layout, rules, reading, rest)
                self.per_line, self.flow = layout.per_line, layout.flow

    def more(self) -> None:
        """The next block of the file after what is left of the data, and the line with tokens
        before it (that a doubled line repeats)."""
        chunk = self.stream.read(CHUNK_SIZE)
        keep = previous(self.data, self.at)
        self.data = self.data[keep:] + chunk
        self.at, self.final = self.at - keep, not chunk

    def python(self, native: bool) -> Generator[Case, None, bool]:
        """The cases the Python readers read from where the reading is; ``True`` when they give
        the file back to the native core (only when ``native``), ``False`` at its end."""
        if self.laid is None:
            yield from self._stream(1)
            return False
        while True:
            step = yield from self.laid.read(self.data, self.at, self.final, self.line, self.token, self.count, native)
            self.at, self.line, self.token, self.count = step.at, step.line, step.token, step.count
            if step.how == "native":
                return True
            if step.how == "more":
                self.more()
                continue
            yield from self._stream(step.column)
            return False

    def _stream(self, column: int) -> Iterator[Case]:
        rest = _Rejoined(self.data[self.at + column - 1 :], self.stream)
        self.data, self.at = b"", 0
        return self.rest(cast(IO[bytes], rest), self.reading, self.line, self.count, column)

    def unended(self) -> None:
        """The file ended where the native core stopped, without a terminator."""
        self.reading.unended(self.count, empty=not self.stream.taken)


def read_cases(stream: IO[bytes], reading: Reading, rest: ReaderFrom, rules: DeckRules | None = None,
               native: NativeReader | None = None) -> Iterator[Case]:
    """The cases of a judge file: with ``native``, read by the native core and the Python readers in
    turns (see the module); else by the Python readers alone, the same cases, faults and warnings.
    ``rest`` is the game's stream reader; ``rules`` what the layout reader needs of a deck game
    (``None``: a game of one case a line)."""
    turns = _Turns(stream, reading, rest, rules)
    if native is None:
        yield from turns.python(False)
        return
    while True:
        cases, turns.at, turns.line, turns.count, stopped = native(
            turns.data, turns.at, turns.final, turns.line, turns.count, turns.per_line, turns.flow)
        yield from cases
        if stopped:
            if not (yield from turns.python(True)):
                return
        elif turns.final:
            turns.unended()
            return
        else:
            turns.more()


class _Rejoined:
    """A binary stream that gives ``head`` first, then the rest of ``stream``."""

    def __init__(self, head: bytes, stream: IO[bytes] | _Counted) -> None:
        self.head, self.stream = head, stream

    def read(self, size: int = -1) -> bytes:
        if self.head:  # whole: read_pieces takes blocks of any size
            head, self.head = self.head, b""
            return head
        return self.stream.read(size)


class InputBlocks:
    """A judge file read as blocks of canonical inputs (:meth:`Engine.read_inputs`): an iterator
    of ``(texts, count)``, ``texts`` being the canonical texts of ``count`` consecutive cases,
    each followed by ``\\n`` (``b"".join(case.text.encode() + b"\\n" for case in cases)`` of
    :meth:`Engine.parse`'s cases).

    :meth:`take` gives the next block of at most the cases and bytes asked for; iterating takes
    blocks of the sizes given to :meth:`Engine.read_inputs`. A block holds as many cases as
    asked, but for the last block of the file, the block just before an error, and a block the
    next case would take past its bytes (a block holds at least one case, whatever its size).
    The cases read before an error come in blocks first, then the error is raised: the same
    error, warnings and cases as :meth:`Engine.parse`'s. The file has been read to its end, and
    every warning given, once :meth:`take` gives ``(b"", 0)`` (iterating then stops).

    ``cases`` counts the cases given so far, ``first`` is the number of the last block's first
    case (its place among the file's cases: ``cases - count + 1`` but after a bad case read past,
    see :class:`~worker.engines.reading.Faults`, which also ends a block) and ``bytes_read`` the
    bytes of the stream used (see there).

    The native core reads plain lines in C, writing each case's text into one buffer
    (:class:`worker.engines.out.Block`); where it stops the Python readers read, as in
    :func:`read_cases`, their cases going into the buffer as text, until they give the file back.
    On the pure-Python engines the blocks are :meth:`Engine.parse`'s cases.
    """

    def __init__(self, stream: IO[bytes], reading: Reading, max_cases: int, max_bytes: int,
                 read: Callable[[IO[bytes], Reading], Iterator[Case]], core: ModuleType | None = None,
                 rest: ReaderFrom | None = None, rules: DeckRules | None = None) -> None:
        """``read`` is the game's whole reader (the pure-Python engines'), ``core`` its native core,
        ``rest`` its stream reader and ``rules`` its decks' (see :func:`read_cases`)."""
        self.max_cases, self.max_bytes = max_cases, max_bytes
        #: The cases given in blocks so far.
        self.cases = 0
        #: The number of the last block's first case.
        self.first = 1
        self._next = 1  # the number of the next block's first case
        self._held: Case | None = None  # a case after a bad one, read when the block before it was not cut yet
        self._native: Callable[..., tuple[int, int, int, bool]] | None = getattr(core, "read_inputs", None)
        # What reads in Python: the Python readers where the native core stopped, until they give the
        # file back (their generator returns True); on the pure-Python engines, parse's.
        self._cases: Generator[Case, None, bool | None] | None = None
        self._buffer: Any = _Texts()
        self._turns: _Turns | None = None
        self._stream = _Counted(stream)  # (the pure-Python engines': the native core reads through _turns)
        if self._native is None or rest is None:
            self._native = None
            self._cases = cast(Generator[Case, None, None], read(cast(IO[bytes], self._stream), reading))
        else:
            self._turns = _Turns(stream, reading, rest, rules)
            self._buffer = cast(ModuleType, core).InputBlock()
        self._done = False  # the reading ended: at the end of the file, or at an error
        self._error: Exception | None = None  # an error that comes after the cases in the buffer

    @property
    def bytes_read(self) -> int:
        """The bytes of the stream used so far: on the native core, to where the reading is (at a
        case's end) or, once the game's stream reader reads the file's end, what was read from the
        stream; on the pure-Python engines, what was read from the stream (at most a block of 64 KiB
        ahead of the cases)."""
        turns = self._turns
        if turns is None:
            return self._stream.taken
        return turns.stream.taken - len(turns.data) + turns.at

    def __iter__(self) -> InputBlocks:
        return self

    def __next__(self) -> tuple[bytes, int]:
        block = self.take()
        if not block[1]:
            raise StopIteration
        return block

    def take(self, max_cases: int | None = None, max_bytes: int | None = None) -> tuple[bytes, int]:
        """The next block: the texts of at most ``max_cases`` cases (at least one) and, unless
        its first case alone is longer, ``max_bytes`` bytes (the iterator's sizes when not
        given); ``(b"", 0)`` once the file is read. Raises what :meth:`Engine.parse` raises, once
        the cases before it are given."""
        buffer = self._buffer
        buffer.start(self.max_cases if max_cases is None else max_cases,
                     self.max_bytes if max_bytes is None else max_bytes)
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        while not buffer.full and not self._done:
            try:
                if self._cases is None:
                    self._read_natively(buffer)
                    continue
                if not self._next_case(buffer):
                    break
            except Exception as error:  # raised in its place: after the cases before it
                self._done = True
                if not buffer.taken:
                    raise
                self._error = error
        texts, count = buffer.cut()
        self.cases += count
        self.first, self._next = self._next, self._next + count
        return texts, count

    def _next_case(self, buffer: Any) -> bool:
        """One case read in Python into ``buffer``; ``False`` when it starts the next block (bad cases
        were skipped before it)."""
        assert self._cases is not None
        try:
            case, self._held = self._held or next(self._cases), None
        except StopIteration as stop:  # the Python readers gave the file back, or it ended
            self._cases = None
            self._done = not stop.value
            return True
        if case.index != self._next + buffer.taken:  # bad cases were skipped before it
            if buffer.taken:  # a block holds consecutive cases: this one starts the next
                self._held = case
                return False
            self._next = case.index
        buffer.add(case.text.encode())
        return True

    def _read_natively(self, block: Any) -> None:
        """One step of the native core: it reads into ``block`` from where the reading is; then,
        unless it filled the block, more of the file, the end of the file, or the Python readers."""
        turns, native = self._turns, self._native
        assert turns is not None and native is not None
        turns.at, turns.line, turns.count, stopped = native(turns.data, turns.at, turns.final, turns.line,
                                                           turns.count, block, turns.per_line, turns.flow)
        if stopped:
            self._cases = turns.python(True)
        elif block.full:
            return
        elif turns.final:
            self._done = True
            turns.unended()
        else:
            turns.more()


class _Texts:
    """:class:`worker.engines.out.Block` in Python (the pure-Python engines' buffer): the texts
    written, each with its newline; a block takes at most ``want`` of them and, but for its
    first, none ending past ``room`` bytes; the rest starts the next block."""

    def __init__(self) -> None:
        self.texts: list[bytes] = []
        self.size = self.want = self.room = self.taken = 0
        self.full = False

    def start(self, want: int, room: int) -> None:
        if want < 1:
            raise ValueError(f"a block holds at least one case, not {want}")
        left, self.texts, self.size = self.texts, [], 0
        self.want, self.room, self.taken, self.full = want, room, 0, False
        for text in left:
            self._put(text)

    def add(self, text: bytes) -> None:
        self._put(text + b"\n")

    def _put(self, text: bytes) -> None:
        self.texts.append(text)
        self.size += len(text)
        if not self.full:
            if self.size <= self.room or not self.taken:
                self.taken += 1
                self.full = self.taken == self.want
            else:
                self.full = True

    def cut(self) -> tuple[bytes, int]:
        block, self.texts = b"".join(self.texts[: self.taken]), self.texts[self.taken :]
        count, self.taken, self.full = self.taken, 0, True
        return block, count


class _Counted:
    """A binary stream that counts the bytes read from it."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream, self.taken = stream, 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.taken += len(data)
        return data
