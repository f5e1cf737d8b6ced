"""What every game's reader of judge files shares: a stream read in constant memory into :class:`Case`
values, how a file ends (:class:`Reading`), bad cases read past (:class:`Faults`), and errors with their
line and column (:class:`InputError`; both 1-based, columns in bytes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

#: A token longer than this is wrong in every game: memory stays flat on one endless word.
MAX_TOKEN = 64

CHUNK_SIZE = 1 << 16
#: The faults of a file named one by one (:class:`Faults`); the rest are only counted, in flat memory.
FAULTS_KEPT = 100
#: The most cases, and bytes, in a block of :meth:`Engine.read_inputs` unless the caller says.
MAX_CASES = 10_000
MAX_BYTES = 1 << 20

_TOKEN = re.compile(rb"\S+")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """An error or warning about an input file, with where it is when known.

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
        self.message, self.line, self.column = message, line, column
        super().__init__(str(self.diagnostic))


class Faults:
    """The bad cases of a file read past: the first :data:`FAULTS_KEPT` with where they are, how many, and
    the place of the first (``case``). A bad case keeps its place (its number).

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
        if len(self.first) < FAULTS_KEPT:
            self.first.append(error.diagnostic)
        if self.case is None:
            self.case = case
        self.count += 1

    def __bool__(self) -> bool:
        return bool(self.count)


@dataclass(frozen=True, slots=True)
class Case:
    """One deck or hand: ``index`` from 1 in file order, ``text`` canonical (single spaces), ``line`` and
    ``column`` where its first token stands."""

    index: int
    text: str
    line: int = 1
    column: int = 1

    @staticmethod
    def new(index: int, text: str, line: int, column: int) -> Case:
        """``Case(index, text, line, column)``, made at a third of the cost."""
        case = object.__new__(Case)
        _SET_INDEX(case, index)
        _SET_TEXT(case, text)
        _SET_LINE(case, line)
        _SET_COLUMN(case, column)
        return case

    def __reduce__(self) -> tuple[type[Case], tuple[int, str, int, int]]:
        # Batches go to other processes (``dealer solve --jobs``): a frozen dataclass unpickles
        # field by field through object.__setattr__, which costs more than solving the case.
        return Case, (self.index, self.text, self.line, self.column)


# A frozen __init__ costs a reader a quarter of its time: Case.new fills the slots (a new field fails here).
_SET_INDEX, _SET_TEXT, _SET_LINE, _SET_COLUMN = (getattr(Case, name).__set__ for name in Case.__slots__)


def only_case(cases: Iterable[Case], unit: str) -> Case:
    """The one case of a text that must hold exactly one (:meth:`Engine.canonical`)."""
    found = list(cases)
    if len(found) != 1:
        raise InputError(f"expected one {unit}, found {len(found)}")
    return found[0]


#: What :func:`read_pieces` yields; or, for the bytes, the InputError that stopped a reader.
Piece = tuple[int, int, bytes | InputError]


class Reading:
    """How every game's judge file ends: text after the ``terminator`` gets one warning (even bytes that are
    not text), a file without it a warning; a file without a case is an error, and so is a bad case unless
    the reading keeps :class:`Faults`."""

    __slots__ = ("faults", "terminator", "unit", "warnings")

    def __init__(self, terminator: str, unit: str, warnings: list[Diagnostic] | None = None,
                 faults: Faults | None = None) -> None:
        self.terminator = terminator
        self.unit = unit
        self.warnings: list[Diagnostic] = [] if warnings is None else warnings
        self.faults = faults

    def fault(self, error: InputError, case: int) -> None:
        """Case ``case`` is bad, as ``error`` says: raised, or noted in the :class:`Faults`."""
        if self.faults is None:
            raise error
        self.faults.add(error, case)

    def no_cases(self, line: int | None = None, column: int | None = None) -> InputError:
        return InputError(f"the file has no {self.unit}s", line, column)

    def ended(self, cases: int, line: int, column: int, rest: Iterable[Piece]) -> None:
        """The terminator, at ``line`` and ``column``, came after ``cases`` cases; ``rest``: what follows."""
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


def read_pieces(stream: IO[bytes], chunk_size: int = CHUNK_SIZE, line: int = 1,
                column: int = 1) -> Iterator[tuple[int, int, bytes]]:
    """A binary stream as ``(line, column, piece)`` in constant memory, a piece within a line cutting no token;
    :class:`InputError` for bytes that are not text and a token over :data:`MAX_TOKEN`.

    >>> import io
    >>> list(read_pieces(io.BytesIO(b"1 2\\r\\n 3")))
    [(1, 1, b'1 2\\r'), (2, 1, b' '), (2, 2, b'3')]
    """
    carry = b""
    while True:
        chunk = stream.read(chunk_size)
        if not chunk:
            break
        data = carry + chunk if carry else chunk
        parts = data.split(b"\n")
        last = parts.pop()
        for part in parts:
            check_text(part, line, column)
            yield line, column, part
            line += 1
            column = 1
        cut = max(last.rfind(b" "), last.rfind(b"\t"), last.rfind(b"\r"), last.rfind(b"\x0b"), last.rfind(b"\x0c"))
        if cut >= 0:
            head, carry = last[: cut + 1], last[cut + 1 :]
            check_text(head, line, column)
            yield line, column, head
            column += len(head)
        else:
            carry = last
        if len(carry) > MAX_TOKEN:
            check_text(carry[:MAX_TOKEN], line, column)
            raise InputError(f"a token longer than {MAX_TOKEN} characters", line, column)
    if carry:
        check_text(carry, line, column)
        yield line, column, carry


def check_text(piece: bytes, line: int, column: int) -> None:
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
    """The tokens of a piece with the column each starts at.

    >>> tokens_with_columns(b" 10  9", 5)
    [(b'10', 6), (b'9', 10)]
    """
    return [(m.group(), column + m.start()) for m in _TOKEN.finditer(piece)]


def show(token: bytes) -> str:
    """A token as a message quotes it: ``"10T"`` (the service shortens very long ones)."""
    return '"' + token.decode("utf-8", "replace") + '"'
