"""Reading a judge file: what every game's reader shares.

A judge file is read as a stream in constant memory (:func:`read_pieces`, :func:`tokens_with_columns`)
into :class:`Case` values, each game's reader saying what a case is; :class:`Reading` owns what happens
at the file's end (the terminator, text after it, a missing one, a file without cases) and whether a
bad case stops the reading or is read past (:class:`Faults`). What cannot be read is an
:class:`InputError` (a :class:`Diagnostic` with its line and column).

A game with a native core reads its plain lines in C and hands the rest to its own reader
(:func:`read_natively`); :class:`InputBlocks` gives a file's cases as blocks of canonical texts, with
no object per case.

Positions are 1-based; columns count bytes from the start of the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import IO, Any, cast

#: A token longer than this is wrong in every game; capping it keeps memory flat
#: on a file that is one endless word.
MAX_TOKEN = 64

CHUNK_SIZE = 1 << 16
#: The faults of a file named one by one (:class:`Faults`); the rest are only counted, so that a
#: file whose every line is bad costs no more memory than one with a single fault.
FAULTS_KEPT = 100
#: The most cases, and bytes, in a block of :meth:`Engine.read_inputs` unless the caller says.
MAX_CASES = 10_000
MAX_BYTES = 1 << 20

_TOKEN = re.compile(rb"\S+")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """An error or warning about an input file, with where it is when that is known.

    >>> str(Diagnostic('"11" is not a card value (1-10)', 3, 14))
    'line 3, column 14: "11" is not a card value (1-10)'
    >>> str(Diagnostic("the file is empty"))
    'the file is empty'
    """

    message: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        if self.line is None:
            return self.message
        if self.column is None:
            return f"line {self.line}: {self.message}"
        return f"line {self.line}, column {self.column}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"message": self.message, "line": self.line, "column": self.column, "text": str(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagnostic:
        return cls(data["message"], data.get("line"), data.get("column"))


class InputError(ValueError):
    """The judge file cannot be read: ``str(error)`` says what and where."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        self.diagnostic = Diagnostic(message, line, column)
        super().__init__(str(self.diagnostic))

    @property
    def line(self) -> int | None:
        return self.diagnostic.line

    @property
    def column(self) -> int | None:
        return self.diagnostic.column

    @property
    def message(self) -> str:
        return self.diagnostic.message


class Faults:
    """The bad cases of a judge file read on past them (:meth:`Engine.parse` and
    :meth:`Engine.read_inputs` given one): the first :data:`FAULTS_KEPT` with where they are, how
    many in all, and the place among the file's cases of the first bad one (``case``), before
    which every case is good: what a partial judge output holds.

    A bad case keeps its place: the cases after it are numbered as if it were good, so that each
    case's number is its place in the file.

    >>> faults = Faults()
    >>> faults.add(InputError('"11" is not a card value (1-10)', 3, 14), 2)
    >>> faults.count, faults.case, [str(fault) for fault in faults.first]
    (1, 2, ['line 3, column 14: "11" is not a card value (1-10)'])
    """

    __slots__ = ("case", "count", "first")

    def __init__(self) -> None:
        self.first: list[Diagnostic] = []
        self.count = 0
        self.case: int | None = None

    def add(self, error: InputError, case: int) -> None:
        """``error`` stands at case ``case`` (its place among the file's cases), which is skipped."""
        if len(self.first) < FAULTS_KEPT:
            self.first.append(error.diagnostic)
        if self.case is None:
            self.case = case
        self.count += 1

    def __bool__(self) -> bool:
        return bool(self.count)


@dataclass(frozen=True, slots=True)
class Case:
    """One deck or hand of a judge file.

    ``index`` counts cases from 1 in file order; ``text`` is the canonical input
    (tokens joined by single spaces), the same for every way of writing the case;
    ``line`` and ``column`` are where its first token stands in the file.
    """

    index: int
    text: str
    line: int = 1
    column: int = 1

    def __reduce__(self) -> tuple[type[Case], tuple[int, str, int, int]]:
        # Batches of cases go to other processes (``dealer solve --jobs``). A frozen
        # dataclass pickles its state field by field through object.__setattr__, which
        # costs four times its constructor's arguments, and more than solving a case.
        return Case, (self.index, self.text, self.line, self.column)


def only_case(cases: Iterable[Case], unit: str) -> Case:
    """The one case of a text that must hold exactly one (:meth:`Engine.canonical`).

    >>> only_case([], "deck")
    Traceback (most recent call last):
    ...
    worker.engines.reading.InputError: expected one deck, found 0
    """
    found = list(cases)
    if len(found) != 1:
        raise InputError(f"expected one {unit}, found {len(found)}")
    return found[0]


#: What :func:`read_pieces` yields; a reader may hand on, in place of the bytes, the
#: :class:`InputError` that stopped its reading (see :meth:`Reading.ended`).
Piece = tuple[int, int, bytes | InputError]


class Reading:
    """How every game's judge file ends, written once for the three readers.

    A file holds cases, then the engine's ``terminator`` where a case would start:

    - a terminator ends the input; a terminator before any case is an error at it
      (``the file has no decks``);
    - text after the terminator is ignored, with one warning at the first text after it,
      and the reader reads no further than that text; bytes that are not text count as
      text here (the warning is at them: what follows the end need not even be text);
    - a file without a terminator is read to its end, with a warning; an empty file is
      an error, and so is one without a case;
    - a bad case is an error (:meth:`fault`), unless the reading keeps :class:`Faults`: it is
      then noted there, and the reader goes on with the next case.

    :meth:`Engine.parse` makes one per file and hands it to the game's reader, which calls
    :meth:`ended` at the terminator or :meth:`unended` at the end of the file. What a case
    is, and what a case cut short says, stays with the game.

    >>> reading = Reading("#", "deck")
    >>> reading.ended(2, 4, 1, [(4, 2, b"  junk"), (5, 1, b"more")])
    >>> [str(w) for w in reading.warnings]
    ['line 4, column 4: text after the terminating "#" is ignored']
    >>> reading.ended(0, 1, 3, [])
    Traceback (most recent call last):
    ...
    worker.engines.reading.InputError: line 1, column 3: the file has no decks
    >>> reading.unended(1); str(reading.warnings[-1])
    'no terminating "#" at end of file'
    """

    __slots__ = ("faults", "terminator", "unit", "warnings")

    def __init__(self, terminator: str, unit: str, warnings: list[Diagnostic] | None = None,
                 faults: Faults | None = None) -> None:
        self.terminator = terminator
        self.unit = unit
        self.warnings: list[Diagnostic] = [] if warnings is None else warnings
        self.faults = faults

    def fault(self, error: InputError, case: int) -> None:
        """Case ``case`` (its place among the file's cases) is bad, as ``error`` says: raised, or
        noted in the reading's :class:`Faults`, after which the reader skips the case."""
        if self.faults is None:
            raise error
        self.faults.add(error, case)

    def no_cases(self, line: int | None = None, column: int | None = None) -> InputError:
        return InputError(f"the file has no {self.unit}s", line, column)

    def ended(self, cases: int, line: int, column: int, rest: Iterable[Piece]) -> None:
        """The terminator, at ``line`` and ``column``, came after ``cases`` cases; ``rest``
        is what follows it, piece by piece (read no further than its first text)."""
        if not cases:
            raise self.no_cases(line, column)
        try:
            for at_line, at_column, piece in rest:
                if isinstance(piece, InputError):
                    self._after(at_line, at_column)
                    return
                text = piece.lstrip()
                if text:
                    self._after(at_line, at_column + len(piece) - len(text))
                    return
        except InputError as error:
            self._after(error.line, error.column)

    def _after(self, line: int | None, column: int | None) -> None:
        self.warnings.append(Diagnostic(f'text after the terminating "{self.terminator}" is ignored', line, column))

    def unended(self, cases: int, empty: bool = False) -> None:
        """The file ended without a terminator after ``cases`` cases (``empty``: without a byte)."""
        if empty:
            raise InputError("the file is empty")
        if not cases:
            raise self.no_cases()
        self.warnings.append(Diagnostic(f'no terminating "{self.terminator}" at end of file'))


#: A game's native reader (``read`` of its core, see :func:`read_natively`): given a block
#: of the file, whether it ends the file, and the line and the count of cases the block
#: starts at, it returns the cases of the block's plain lines, the bytes it used, the line
#: and the count after them, and whether it stopped at a line it leaves to the game's reader.
NativeReader = Callable[[bytes, bool, int, int], tuple[list[Case], int, int, int, bool]]
#: A game's reader started at a line of the file, after a count of cases (see :func:`read_natively`).
ReaderFrom = Callable[[IO[bytes], Reading, int, int], Iterator[Case]]


def read_natively(native: NativeReader, stream: IO[bytes], reading: Reading, rest: ReaderFrom) -> Iterator[Case]:
    """The cases of a judge file, read by the native core while its lines are plain (as
    judge files are written), and from the first line that is not by ``rest``, the game's
    own reader: it takes the file from the start of that line on, and says what is wrong
    there, or where and how the file ends, as it does for a whole file.

    The native reader never has more than a block and one line at hand, so the memory
    stays constant.
    """
    line, count, carry, seen = 1, 0, b"", False
    while True:
        chunk = stream.read(CHUNK_SIZE)
        data = carry + chunk if carry else chunk
        seen = seen or bool(data)
        cases, used, line, count, stopped = native(data, not chunk, line, count)
        yield from cases
        if stopped:
            yield from rest(cast(IO[bytes], _Rejoined(data[used:], stream)), reading, line, count)
            return
        if not chunk:
            reading.unended(count, empty=not seen)
            return
        carry = data[used:]


class _Rejoined:
    """A binary stream that gives ``head`` first, then the rest of ``stream``."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
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
    see :class:`Faults`, which also ends a block) and ``bytes_read`` the bytes of the stream used
    (see there).

    The native core reads plain lines in C, writing each case's text into one buffer
    (:class:`worker.engines.out.Block`); from the first line that is not plain the game's own
    reader (:attr:`Engine.reader`) reads the file on, as in :func:`read_natively`, and its cases
    go into the buffer as text. On the pure-Python engines the blocks are :meth:`Engine.parse`'s
    cases.
    """

    def __init__(self, stream: IO[bytes], reading: Reading, max_cases: int, max_bytes: int,
                 read: Callable[[IO[bytes], Reading], Iterator[Case]], core: ModuleType | None = None,
                 rest: ReaderFrom | None = None) -> None:
        """``read`` is the game's whole reader (the pure-Python engines'), ``core`` its native core and
        ``rest`` its reader from a line on, to which the core hands over (both or neither)."""
        self.max_cases, self.max_bytes = max_cases, max_bytes
        #: The cases given in blocks so far.
        self.cases = 0
        #: The number of the last block's first case.
        self.first = 1
        self._next = 1  # the number of the next block's first case
        self._held: Case | None = None  # a case after a bad one, read when the block before it was not cut yet
        self._stream = _Counted(stream)
        self._reading = reading
        self._native: Callable[..., tuple[int, int, int, bool]] | None = getattr(core, "read_inputs", None)
        self._rest = rest
        # What reads in Python: the game's reader after the native core handed over; on the
        # pure-Python engines, parse's.
        self._cases: Iterator[Case] | None = None
        self._buffer: Any = _Texts()
        if self._native is None:
            self._cases = read(cast(IO[bytes], self._stream), reading)
        else:
            self._buffer = cast(ModuleType, core).InputBlock()
        self._data, self._at, self._final, self._line, self._count = b"", 0, False, 1, 0
        self._done = False  # the reading ended: at the end of the file, or at an error
        self._error: Exception | None = None  # an error that comes after the cases in the buffer

    @property
    def bytes_read(self) -> int:
        """The bytes of the stream used so far: to the end of the last case read, while the native
        core reads; past the core's hand-over to the game's own reader, and on the pure-Python
        engines, what was read from the stream (at most a block of 64 KiB ahead of the cases)."""
        if self._cases is None:
            return self._stream.taken - len(self._data) + self._at
        return self._stream.taken

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
                case, self._held = self._held or next(self._cases), None
                if case.index != self._next + buffer.taken:  # bad cases were skipped before it
                    if buffer.taken:  # a block holds consecutive cases: this one starts the next
                        self._held = case
                        break
                    self._next = case.index
                buffer.add(case.text.encode())
            except StopIteration:
                self._done = True
            except Exception as error:  # raised in its place: after the cases before it
                self._done = True
                if not buffer.taken:
                    raise
                self._error = error
        texts, count = buffer.cut()
        self.cases += count
        self.first, self._next = self._next, self._next + count
        return texts, count

    def _read_natively(self, block: Any) -> None:
        """One step of the native core (see :func:`read_natively`): it reads into ``block`` from
        where it stopped; then, unless it filled the block, more of the file, the end of the file,
        or the hand-over to the game's own reader."""
        assert self._native is not None
        at, self._line, self._count, stopped = self._native(self._data, self._at, self._final, self._line,
                                                            self._count, block)
        if stopped:
            rest = _Rejoined(self._data[at:], cast(IO[bytes], self._stream))
            self._data, self._at = b"", 0
            assert self._rest is not None
            self._cases = self._rest(cast(IO[bytes], rest), self._reading, self._line, self._count)
        elif block.full:
            self._at = at
        elif self._final:
            self._reading.unended(self._count, empty=not self._stream.taken)
            raise StopIteration
        else:
            chunk = self._stream.read(CHUNK_SIZE)
            self._data = self._data[at:] + chunk if at < len(self._data) else chunk
            self._at, self._final = 0, not chunk


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


def read_pieces(stream: IO[bytes], chunk_size: int = CHUNK_SIZE, line: int = 1) -> Iterator[tuple[int, int, bytes]]:
    """Read a binary stream as ``(line, column, piece)`` in constant memory (the stream's
    first line being ``line`` of the file).

    A piece lies within one line and never cuts a token in two, so
    ``piece.split()`` gives whole tokens; ``column`` is where the piece starts.
    A line may come as several pieces. Bytes that are not text (invalid UTF-8 or
    NUL) raise :class:`InputError` at their position, as does a token longer than
    :data:`MAX_TOKEN`.

    >>> import io
    >>> list(read_pieces(io.BytesIO(b"1 2\\r\\n 3")))
    [(1, 1, b'1 2\\r'), (2, 1, b' '), (2, 2, b'3')]
    """
    column = 1
    carry = b""
    while True:
        chunk = stream.read(chunk_size)
        if not chunk:
            break
        data = carry + chunk if carry else chunk
        parts = data.split(b"\n")
        last = parts.pop()
        for part in parts:
            _check_text(part, line, column)
            yield line, column, part
            line += 1
            column = 1
        cut = max(last.rfind(b" "), last.rfind(b"\t"), last.rfind(b"\r"), last.rfind(b"\x0b"), last.rfind(b"\x0c"))
        if cut >= 0:
            head, carry = last[: cut + 1], last[cut + 1 :]
            _check_text(head, line, column)
            yield line, column, head
            column += len(head)
        else:
            carry = last
        if len(carry) > MAX_TOKEN:
            _check_text(carry[:MAX_TOKEN], line, column)
            raise InputError(f"a token longer than {MAX_TOKEN} characters", line, column)
    if carry:
        _check_text(carry, line, column)
        yield line, column, carry


def _check_text(piece: bytes, line: int, column: int) -> None:
    if piece.isascii() and 0 not in piece:  # (an int test: "b'\\0' in" is several times slower)
        return
    nul = piece.find(b"\x00")
    try:
        piece.decode("utf-8")
        bad = nul
    except UnicodeDecodeError as error:
        bad = error.start if nul < 0 else min(nul, error.start)
    if bad >= 0:
        raise InputError(f"byte 0x{piece[bad]:02x} is not text", line, column + bad)


def tokens_with_columns(piece: bytes, column: int) -> list[tuple[bytes, int]]:
    """The tokens of a piece with the column each starts at (for messages and case starts).

    >>> tokens_with_columns(b" 10  9", 5)
    [(b'10', 6), (b'9', 10)]
    """
    return [(m.group(), column + m.start()) for m in _TOKEN.finditer(piece)]


def show(token: bytes) -> str:
    """A token as a message quotes it: ``"10T"`` (the service shortens very long ones)."""
    return '"' + token.decode("utf-8", "replace") + '"'
