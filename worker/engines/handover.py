"""A judge file read in turns: the native core reads the plain stretches (whole decks on lines as the file's
layout says), the Python readers the rest, each handing the file to the other where it stops: the layout
reader (:mod:`.layout`) around trouble, the game's stream reader a file without a layout and the end of
every file. The cases, messages and positions are the same whichever core reads; the memory stays constant.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from types import ModuleType
from typing import IO, Any, cast

from worker.engines.layout import SAMPLE_BYTES, DeckRules, LaidOut, ReaderFrom, learn, previous
from worker.engines.reading import CHUNK_SIZE, Case, Reading

#: A native core's ``read``: (data, at a deck's start, final, line, count, cards a line or 0, flow) → (cases,
#: where it stopped, the line and count there, whether it left a stretch to Python).
NativeReader = Callable[[bytes, int, bool, int, int, int, bool], tuple[list[Case], int, int, int, bool]]


class _Turns:
    """Where both sides go on from: the data not read yet (from ``at``), the line and token a deck starts at
    there, the count of cases before it; the file's layout, learnt from its start."""

    def __init__(self, stream: IO[bytes], reading: Reading, rest: ReaderFrom, rules: DeckRules | None) -> None:
        self.stream = _Counted(stream)
        self.reading, self.rest = reading, rest
        self.data, self.at, self.final = b"", 0, False
        self.line, self.token, self.count = 1, 0, 0
        self.laid: LaidOut | None = None
        self.per_line, self.flow = 0, False
        if rules is not None:
            head: list[bytes] = []  # joined once: a stream may give a byte a read
            while self.stream.taken <= SAMPLE_BYTES and not self.final:
                head.append(self.stream.read(CHUNK_SIZE))
                self.final = not head[-1]
            self.data = b"".join(head)
            layout = learn(self.data, self.final, rules.stops)
            if layout is not None:
                self.laid = LaidOut(layout, rules, reading, rest)
                self.per_line, self.flow = layout.per_line, layout.flow

    def more(self) -> None:
        """The next block after what is left of the data, and the line before it (a doubled line's twin)."""
        chunk = self.stream.read(CHUNK_SIZE)
        keep = previous(self.data, self.at)
        self.data = self.data[keep:] + chunk
        self.at, self.final = self.at - keep, not chunk

    def python(self, native: bool) -> Generator[Case, None, bool]:
        """The Python readers' cases from where the reading is; ``True`` when they give the file back to the
        native core (only when ``native``), ``False`` at its end."""
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
        self.stream.head, self.data, self.at = self.data[self.at + column - 1 :], b"", 0
        return self.rest(cast(IO[bytes], self.stream), self.reading, self.line, self.count, column)

    def go_on(self) -> bool:
        """The native core stopped at the end of the data: the next block after it, or ``False`` where the
        file ended there, without a terminator."""
        if not self.final:
            self.more()
            return True
        self.reading.unended(self.count, empty=not self.stream.taken)
        return False


def read_cases(stream: IO[bytes], reading: Reading, rest: ReaderFrom, rules: DeckRules | None = None,
               native: NativeReader | None = None) -> Iterator[Case]:
    """The cases of a judge file, read by ``native`` and the Python readers in turns, or by the latter
    alone: the same cases, faults and warnings. ``rest`` is the game's stream reader, ``rules`` its decks'
    (``None``: a case a line)."""
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
        elif not turns.go_on():
            return


class InputBlocks:
    """A judge file as blocks ``(texts, count)`` of canonical inputs (:meth:`Engine.read_inputs`): the texts
    of ``count`` consecutive cases of :meth:`Engine.parse`, each followed by ``\\n``, as many as asked but
    cut short at the file's end, an error (raised after the cases before it), a bad case read past or the
    byte limit (one case at least); ``(b"", 0)`` once the file is read. The native core writes its cases
    into one buffer (:class:`.out.Block`), the Python readers theirs as text (:class:`_Texts`)."""

    def __init__(self, stream: IO[bytes], reading: Reading, max_cases: int, max_bytes: int,
                 read: Callable[[IO[bytes], Reading], Iterator[Case]], core: ModuleType | None = None,
                 rest: ReaderFrom | None = None, rules: DeckRules | None = None) -> None:
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
        """The bytes of the stream used: to where the native core is, else what was read (a block ahead)."""
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
        """The next block of at most ``max_cases`` cases and ``max_bytes`` bytes (the iterator's sizes when
        not given)."""
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
        """One case read in Python into ``buffer``; ``False`` when it starts the next block."""
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
        """One step of the native core into ``block``; then more of the file, its end, or the Python readers."""
        turns, native = self._turns, self._native
        assert turns is not None and native is not None
        turns.at, turns.line, turns.count, stopped = native(turns.data, turns.at, turns.final, turns.line,
                                                           turns.count, block, turns.per_line, turns.flow)
        if stopped:
            self._cases = turns.python(True)
        elif not block.full:
            self._done = not turns.go_on()


class _Texts:
    """:class:`worker.engines.out.Block` in Python, for the pure-Python engines."""

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
    """A binary stream that counts the bytes read from it, giving first ``head`` (bytes read before)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream, self.taken, self.head = stream, 0, b""

    def read(self, size: int = -1) -> bytes:
        if self.head:  # whole: read_pieces takes blocks of any size
            head, self.head = self.head, b""
            return head
        data = self.stream.read(size)
        self.taken += len(data)
        return data
