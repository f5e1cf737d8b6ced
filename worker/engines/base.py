"""What every engine shares: cases, results, diagnostics, the streaming reader and the
reading protocol.

An engine turns a judge file into :class:`Case` values (``parse``), or into blocks of their
canonical texts with no object per case (``read_inputs``, :class:`InputBlocks`), solves one case
into a :class:`Result` (``solve``) and re-checks a stored trace (``replay``). Traces
are stored as bytes (``solve_packed``, ``unpack_trace``) and served as JSON-ready
dicts; a stored chunk of cases is solved in one call into a few buffers
(``solve_chunk``, :class:`ChunkSolution`). Engines are pure Python: they know nothing
of Celery, Flask or SQL.

Every game reads its judge file the same way around its own cases: :func:`read_pieces`
streams the file, and :class:`Reading` owns what happens at its end (the terminator,
text after it, a missing one, a file without cases).

Positions are 1-based; columns count bytes from the start of the line.
"""

from __future__ import annotations

import dataclasses
import io
import random
import re
import struct
import time
from abc import ABC, abstractmethod
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import IO, Any, ClassVar, cast

import orjson

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


class TraceError(ValueError):
    """A stored trace does not replay to the result it claims."""


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


@dataclass(slots=True)
class Result:
    """The answer for one case.

    ``outcome`` is one of the engine's ``outcomes``; ``number`` is the figure the game
    is judged by (deals, piles left, waited tiles); ``detail`` holds the rest of the
    answer (pile sizes, waited tiles) as JSON-ready values; ``line`` is the exact judge
    output line without its newline; ``trace`` is ``None`` when not asked for.
    """

    outcome: str
    number: int
    detail: list[Any]
    line: str
    trace: dict[str, Any] | None = field(default=None)


#: How :func:`case_hash` starts (times the length), mixes each word in, and finishes:
#: 2**64 / the golden ratio, and MurmurHash3's two finaliser constants.
HASH_START = 0x9E3779B97F4A7C15
HASH_MIX = 0xFF51AFD7ED558CCD
HASH_FINISH = 0xC4CEB9FE1A85EC53
_MASK64 = (1 << 64) - 1


def case_hash(text: str | bytes) -> int:
    """A 64-bit hash of a case's canonical input (its UTF-8 bytes), as
    :meth:`Engine.solve_chunk` gives it for every case of a chunk (``ChunkSolution.hashes``):
    what a search for one deck hashes its query with.

    ``h = len * HASH_START``; then for each word of eight bytes, little-endian, the last one
    padded with zeros: ``h = (h ^ word) * HASH_MIX; h ^= h >> 32``; then MurmurHash3's
    finaliser (``h ^= h >> 33; h *= HASH_MIX; h ^= h >> 33; h *= HASH_FINISH; h ^= h >> 33``),
    all modulo 2**64. Every step is a bijection of ``h``, so two texts of one length that
    differ in a single word never collide. The native core computes the same in C
    (``worker/engines/out.py``); the value is stored, so it never changes.

    >>> hex(case_hash("1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T")), hex(case_hash(b"x")), case_hash("")
    ('0x3abd89b318171854', '0xdd54286755cf9de3', 0)
    """
    data = text.encode() if isinstance(text, str) else text
    h = len(data) * HASH_START & _MASK64
    for (word,) in struct.iter_unpack("<Q", data + bytes(-len(data) % 8)):
        h = (h ^ word) * HASH_MIX & _MASK64
        h ^= h >> 32
    h ^= h >> 33
    h = h * HASH_MIX & _MASK64
    h ^= h >> 33
    h = h * HASH_FINISH & _MASK64
    return h ^ (h >> 33)


#: One case of :meth:`Engine.solve_chunk` solved in Python (:meth:`Engine.solve_entry`):
#: its outcome's code, number, extra, judge line (no newline) and packed trace (``b""``
#: untraced); ``(0, 0, 0, "", b"")`` for a case not solved.
Entry = tuple[int, int, int, str, bytes]
NOT_SOLVED: Entry = (0, 0, 0, "", b"")


@dataclass(frozen=True, slots=True)
class ChunkSolution:
    """A chunk's cases solved in one call (:meth:`Engine.solve_chunk`): a few buffers, no
    object per case. Case ``k`` (from 0) is the chunk's ``first + k``; every per-case array
    has ``count`` items.

    - ``lines``: each case's judge line ending in ``\\n`` (``\\n`` alone for a case not solved);
    - ``traces``: the packed traces (:meth:`Engine.solve_packed`'s bytes) one after another,
      ``b""`` when not traced; case ``k``'s is ``traces[offsets[k]:offsets[k + 1]]``
      (:meth:`trace`), ``offsets`` being ``count + 1`` unsigned 32-bit offsets from 0;
    - ``outcomes``: a byte a case, its outcome's code (:meth:`Engine.outcome_code`): 1 + its
      place in ``Engine.outcomes``, 0 for a case not solved;
    - ``numbers`` (``Result.number``) and ``extras`` (:meth:`Engine.extra_of`: what the judge
      line leaves out, 0 but for a 10-20-30 draw), signed 32-bit, 0 for a case not solved;
    - ``solve_us``: microseconds from the case's start to the next's, its hash and its
      writing included (0 for a case not started), unsigned 32-bit;
    - ``hashes``: :func:`case_hash` of each case's text, unsigned 64-bit;
    - ``started``: how many cases, from the first, were started; the rest were not, as the
      deadline had passed (``count`` when every case was).
    """

    count: int
    started: int
    lines: bytes
    traces: bytes
    offsets: array[int]
    outcomes: bytes
    numbers: array[int]
    extras: array[int]
    solve_us: array[int]
    hashes: array[int]

    def trace(self, k: int) -> bytes:
        """The packed trace of case ``k`` (from 0); ``b""`` when not traced or not solved."""
        return self.traces[self.offsets[k] : self.offsets[k + 1]]


def plain(cls: type, names: tuple[str, ...]) -> bool:
    """Whether the dataclass ``cls`` is just the fields ``names``, with nothing run on
    creation: then filling its slots directly makes the same object as calling it.

    The readers make a Case per case and the solvers a Result; their dataclass
    ``__init__`` (for Case, four ``object.__setattr__`` calls, as it is frozen) would
    cost a quarter of the reader's time and a tenth of the solver's. Checked once at
    import, so that a change to either class brings the constructor calls back instead
    of half-filled objects.
    """
    return tuple(field.name for field in dataclasses.fields(cls)) == names and not hasattr(cls, "__post_init__")


class Engine(ABC):
    """One game. Subclasses fill in the class attributes and the abstract methods."""

    slug: ClassVar[str]
    #: Human name, e.g. ``"10-20-30 (UVa 246)"``.
    title: ClassVar[str]
    #: One line for ``dealer games`` and the web UI.
    summary: ClassVar[str]
    #: What one case is called in messages: ``"deck"`` or ``"hand"``.
    unit: ClassVar[str]
    #: What ``Result.number`` counts: ``"deals"``, ``"piles"``, ``"waits"``.
    number_name: ClassVar[str]
    # The texts the web UI shows of the game (``GET /api/games`` serves them to scripts). In each,
    # text between backticks is shown as code.
    #: What a judge file holds, as the upload page says it: one sentence.
    input_help: ClassVar[str]
    #: What ``Result.number`` counts, as one sentence under the job page's chart of numbers.
    number_help: ClassVar[str]
    #: What ``Result.detail`` holds, as the case page labels it.
    detail_label: ClassVar[str]
    #: How the case page shows ``Result.detail``: ``{}`` stands for its values joined by spaces.
    detail_text: ClassVar[str] = "`{}`"
    #: Every value ``Result.outcome`` can take, in the order the UI lists them. Stored cases keep an
    #: outcome as its place here (:meth:`outcome_code`): a game adds outcomes at the end, never reorders.
    outcomes: ClassVar[tuple[str, ...]]
    #: The line that ends a judge file (``"0"`` or ``"#"``).
    terminator: ClassVar[str]
    trace_version: ClassVar[int]
    #: About how many bytes a case takes in a judge file written as the problem writes it: the
    #: service sizes a job's chunks from its upload's size (``worker.jobs.sizing``).
    case_bytes: ClassVar[int]
    #: The game's own reader, from a line of the file on (a :data:`ReaderFrom`, as a staticmethod):
    #: where its native core hands a file over (:meth:`read_inputs`). ``None`` for a game without
    #: a native core.
    reader: ClassVar[Callable[..., Iterator[Case]] | None] = None

    def __init__(self, core: ModuleType | None = None) -> None:
        #: The game's compiled solving core (:mod:`worker.engines.native`), or ``None`` to
        #: solve in pure Python. Both give the same results, lines and traces.
        self.core = core

    @property
    def core_name(self) -> str:
        """Which core solves: ``"native"`` or ``"python"`` (``dealer games`` shows it)."""
        return "native" if self.core is not None else "python"

    def parse(self, stream: IO[bytes], warnings: list[Diagnostic] | None = None,
              faults: Faults | None = None) -> Iterator[Case]:
        """Yield the cases of a judge file read from a binary stream, in constant memory.

        Raises :class:`InputError` for what the judge would choke on; appends
        warnings (missing terminator, text after it) to ``warnings``. Given ``faults``, a bad
        case is added there instead and skipped, and the reading goes on with the next case (see
        :class:`Faults`); what no next case can be found after (bytes that are not text) is
        still raised.
        """
        return self.read(stream, Reading(self.terminator, self.unit, warnings, faults))

    def read_inputs(self, stream: IO[bytes], warnings: list[Diagnostic] | None = None,
                    max_cases: int = MAX_CASES, max_bytes: int = MAX_BYTES,
                    faults: Faults | None = None) -> InputBlocks:
        """A judge file read from a binary stream as blocks of canonical inputs, in constant
        memory: :meth:`parse`'s cases, errors and warnings, with no object per case.

        A block is ``(texts, count)``: the canonical texts of ``count`` consecutive cases, each
        followed by ``\\n``. Iterating gives blocks of ``max_cases`` cases, and
        :meth:`InputBlocks.take` a block of the size asked for; see :class:`InputBlocks`.

        >>> from worker.engines import get
        >>> hands = b"FA 1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA\\n" * 3 + b"0\\n"
        >>> blocks = get("mahjong").read_inputs(io.BytesIO(hands), max_cases=2)
        >>> [count for texts, count in blocks], blocks.cases, blocks.bytes_read
        ([2, 1], 3, 119)
        """
        return InputBlocks(self, stream, Reading(self.terminator, self.unit, warnings, faults), max_cases, max_bytes)

    @abstractmethod
    def read(self, stream: IO[bytes], reading: Reading) -> Iterator[Case]:
        """The game's reader behind :meth:`parse`: its cases, with ``reading`` told where the
        file ends (see :class:`Reading`)."""

    @abstractmethod
    def solve(self, case: Case, trace: bool = True) -> Result:
        """Solve one case; with ``trace`` the result carries the moves that led to it."""

    def solve_packed(self, case: Case) -> tuple[Result, bytes]:
        """Solve one case with its trace in the stored form (``trace`` of the result is
        ``None``): ``unpack_trace`` of those bytes is ``solve(case).trace``.

        This is what a worker stores. Engines with a cheaper compact form of their
        moves override it, together with :meth:`unpack_trace`.
        """
        result = self.solve(case, True)
        packed = self.pack_trace(result.trace or {})
        result.trace = None
        return result, packed

    def solve_batch(self, texts: list[str], first: int, traced: bool) -> tuple[str, bytes]:
        """Solve consecutive cases, numbered from ``first``, by their canonical texts: their
        judge lines and, with ``traced``, their ``dealer solve --traces`` records
        (:meth:`record`), each line ending in a newline (the records ``b""`` untraced).

        The native core writes a whole batch in C, leaving to :meth:`solve_one` only what
        it does not finish; the pure-Python engines go case by case.

        >>> from worker.engines import get
        >>> get("mahjong").solve_batch(["1S 2S 3S 4S 4S 4S 5S 6S 7S 7S 8S 8S 9S"] * 2, 7, False)
        ('Case 7: 3S 5S 6S 8S 9S\\nCase 8: 3S 5S 6S 8S 9S\\n', b'')
        """
        if self.core is not None:
            return self.core.solve_batch(texts, first, traced, self.solve_one)  # type: ignore[no-any-return]
        lines: list[str] = []
        records: list[bytes] = []
        for index, text in enumerate(texts, first):
            line, record = self.solve_one(index, text, traced)
            lines.append(line)
            records.append(record)
        return "\n".join(lines) + "\n", b"\n".join(records) + b"\n" if traced else b""

    def solve_one(self, index: int, text: str, traced: bool) -> tuple[str, bytes]:
        """One case of :meth:`solve_batch`, in Python: its judge line (no newline) and,
        with ``traced``, its record (else ``b""``)."""
        case = Case(index, text)
        if not traced:
            return self.solve(case, False).line, b""
        result = self.solve(case, True)
        return result.line, self.record(case, result, orjson.dumps(result.trace))

    def solve_chunk(self, inputs: bytes, first: int, traced: bool, deadline: float | None = None,
                    fallback: Callable[[int, str, bool], Entry] | None = None) -> ChunkSolution:
        """Solve a stored chunk in one call: ``inputs`` is its canonical texts joined by ``\\n``
        (what ``worker.store.codecs.pack_inputs`` compresses; ``b""`` holds no case), numbered
        from ``first``; with ``traced`` each case's packed trace too. See :class:`ChunkSolution`.

        The native core solves the chunk in C, writing its buffers with no Python object per
        case; what it does not finish (a text that is not canonical, a 10-20-30 game too long
        for its buffers: the history of cards outgrows 65,535) it hands to ``fallback``
        (:meth:`solve_entry` unless given) in its place, which returns :data:`NOT_SOLVED` for
        a case it gives up on. A caller that bounds a case's time (a signal can interrupt only
        Python code) does it there. The pure-Python engines hand it every case.

        No case is started once ``time.monotonic()`` reaches ``deadline``: ``started`` says
        how many were. A case in C never runs long: at most 65,535 cards pass through a
        10-20-30 game (at most 65,535 deals and 21,828 pick-ups, under 10 ms; random decks
        take at most about 1,700 deals), an accordion deck makes at most 1,326 moves, and a
        mahjong hand is four look-ups and at most 34 proofs.

        >>> from worker.engines import get
        >>> solution = get("mahjong").solve_chunk(b"1S 2S 3S 4S 4S 4S 5S 6S 7S 7S 8S 8S 9S\\n"
        ...                                       b"1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI", 7, True)
        >>> solution.lines, solution.outcomes, list(solution.numbers)
        (b'Case 7: 3S 5S 6S 8S 9S\\nCase 8: Not ready\\n', b'\\x01\\x02', [5, 0])
        >>> solution.trace(1), solution.started, solution.hashes[1] == case_hash("1T 9T 1S 9S 1W 9W DONG NAN "
        ...                                                                       "XI BEI ZHONG FA BAI")
        (b'{"version":1,"proofs":[]}', 2, True)
        """
        one = self.solve_entry if fallback is None else fallback
        if self.core is not None:
            return ChunkSolution(*self.core.solve_chunk(inputs, first, traced, deadline, one))
        texts = inputs.split(b"\n") if inputs else []
        count = started = len(texts)
        lines = [""] * count
        traces = [b""] * count
        outcomes = bytearray(count)
        numbers, extras, solve_us = (array(code, bytes(4 * count)) for code in "iiI")
        stop = float("inf") if deadline is None else deadline * 1e9
        now = time.monotonic_ns()
        for k, text in enumerate(texts):
            if now >= stop:
                started = k
                break
            code, number, extra, line, packed = one(first + k, text.decode(), traced)
            if not 0 <= code <= 255:
                raise ValueError(f"an outcome code is 0..255, not {code}")
            if code:
                outcomes[k], numbers[k], extras[k], lines[k] = code, number, extra, line
                traces[k] = packed if traced else b""
            then = time.monotonic_ns()
            solve_us[k] = (then - now) // 1000
            now = then
        offsets = array("I", [0] * (count + 1))
        for k, packed in enumerate(traces):
            offsets[k + 1] = offsets[k] + len(packed)
        return ChunkSolution(count, started, "".join(line + "\n" for line in lines).encode(), b"".join(traces),
                             offsets, bytes(outcomes), numbers, extras, solve_us, array("Q", map(case_hash, texts)))

    def solve_entry(self, index: int, text: str, traced: bool) -> Entry:
        """One case of :meth:`solve_chunk` solved in Python: an :data:`Entry`."""
        case = Case(index, text)
        result, packed = self.solve_packed(case) if traced else (self.solve(case, False), b"")
        return (self.outcome_code(result.outcome), result.number,
                self.extra_of(result.outcome, result.number, result.detail), result.line, packed)

    def outcome_code(self, outcome: str) -> int:
        """An outcome's code in :class:`ChunkSolution`: 1 + its place in :attr:`outcomes`
        (0 is a case not solved).

        >>> from worker.engines import get
        >>> get("10-20-30").outcome_code("draw"), get("mahjong").outcome_code("not-ready")
        (3, 2)
        """
        return self.outcomes.index(outcome) + 1

    def extra_of(self, outcome: str, number: int, detail: list[Any]) -> int:
        """What a result holds beyond its judge line, as one number (``ChunkSolution.extras``):
        :meth:`parse_line` needs it to give the detail back. 0 unless the game says otherwise."""
        return 0

    def parse_line(self, index: int, line: str, extra: int = 0) -> tuple[str, int, list[Any]]:
        """The ``(outcome, number, detail)`` of case ``index``'s judge line, given the extra
        stored beside it (:meth:`extra_of`): the exact inverse of :meth:`judge_line`, so that a
        store keeps the line and no detail. Raises :class:`ValueError` for a line (or an extra)
        that no result of this game makes.

        >>> from worker.engines import get
        >>> get("accordion").parse_line(4, "3 piles remaining: 50 1 1")
        ('loss', 3, [50, 1, 1])
        >>> get("10-20-30").parse_line(4, "Win : 066")
        Traceback (most recent call last):
        ...
        ValueError: not a 10-20-30 judge line of case 4: 'Win : 066'
        """
        fields = self.line_fields(index, line, extra)
        if fields is None or self.judge_line(index, *fields) != line or self.extra_of(*fields) != extra:
            raise ValueError(f"not a {self.slug} judge line of case {index}: {line!r}"
                             + (f" with extra {extra}" if extra else ""))
        return fields

    @abstractmethod
    def line_fields(self, index: int, line: str, extra: int) -> tuple[str, int, list[Any]] | None:
        """What the judge line ``line`` says, as :meth:`parse_line` gives it, or ``None`` when it
        cannot be read (:meth:`parse_line` then checks that :meth:`judge_line` makes it again)."""

    def record(self, case: Case, result: Result, trace: bytes) -> bytes:
        """A line of ``dealer solve --traces`` (without its newline): ``orjson.dumps`` of the
        case's index, its result and its trace, given as JSON bytes, in this order.

        The case itself is not repeated: its index is its place in the file solved (the
        first case is 1), and every byte of a record is written for every case.

        >>> from worker.engines import get
        >>> mahjong = get("mahjong")
        >>> case = Case(4, "1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI")
        >>> print(mahjong.record(case, mahjong.solve(case, False), b'{"version":1,"proofs":[]}').decode())
        {"index":4,"outcome":"not-ready","number":0,"detail":[],"trace":{"version":1,"proofs":[]}}
        """
        return orjson.dumps({"index": case.index, "outcome": result.outcome, "number": result.number,
                             "detail": result.detail, "trace": orjson.Fragment(trace)})

    def pack_trace(self, trace: dict[str, Any]) -> bytes:
        """A trace as bytes; :meth:`unpack_trace` is its exact inverse."""
        return orjson.dumps(trace)

    def unpack_trace(self, packed: bytes) -> dict[str, Any]:
        """The trace from :meth:`pack_trace` or :meth:`solve_packed` bytes.

        Raises :class:`TraceError` for bytes that are neither.
        """
        try:
            trace = orjson.loads(packed)
        except orjson.JSONDecodeError:
            raise TraceError(f"not a stored {self.slug} trace") from None
        if not isinstance(trace, dict):
            raise TraceError(f"not a stored {self.slug} trace")
        return trace

    @abstractmethod
    def judge_line(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        """The judge output line for a stored result (used when a result is reused for
        another case index)."""

    @abstractmethod
    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        """Re-play ``trace`` from the canonical input ``text`` and return the result it
        leads to; raises :class:`TraceError` where the trace breaks the rules."""

    @abstractmethod
    def generate(self, rng: random.Random) -> str:
        """A random case written as the judge file writes it (lines without the terminator)."""

    @abstractmethod
    def sniff(self, head: bytes) -> bool:
        """Whether the start of a file looks like this game's judge file."""

    def canonical(self, text: str) -> str:
        """The canonical form of one case written as text (for searching the history).

        Raises :class:`InputError` when ``text`` is not exactly one case.
        """
        return only_case(self.parse(io.BytesIO(text.encode()), []), self.unit).text


def only_case(cases: Iterable[Case], unit: str) -> Case:
    """The one case of a text that must hold exactly one (:meth:`Engine.canonical`).

    >>> only_case([], "deck")
    Traceback (most recent call last):
    ...
    worker.engines.base.InputError: expected one deck, found 0
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
    worker.engines.base.InputError: line 1, column 3: the file has no decks
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

    def __init__(self, engine: Engine, stream: IO[bytes], reading: Reading, max_cases: int, max_bytes: int) -> None:
        self.max_cases, self.max_bytes = max_cases, max_bytes
        #: The cases given in blocks so far.
        self.cases = 0
        #: The number of the last block's first case.
        self.first = 1
        self._next = 1  # the number of the next block's first case
        self._held: Case | None = None  # a case after a bad one, read when the block before it was not cut yet
        self._stream = _Counted(stream)
        self._reading = reading
        self._native: Callable[..., tuple[int, int, int, bool]] | None = (
            getattr(engine.core, "read_inputs", None) if engine.reader is not None else None)
        self._rest = engine.reader
        # What reads in Python: the game's reader after the native core handed over; on the
        # pure-Python engines, parse's.
        self._cases: Iterator[Case] | None = None
        self._buffer: Any = _Texts()
        if self._native is None:
            self._cases = engine.read(cast(IO[bytes], self._stream), reading)
        else:
            self._buffer = cast(ModuleType, engine.core).InputBlock()
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
