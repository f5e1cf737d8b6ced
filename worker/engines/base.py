"""What every engine shares: results, traces, chunks solved in one call, and the engine itself.

An engine turns a judge file into :class:`Case` values (``parse``), or into blocks of their
canonical texts with no object per case (``read_inputs``, :class:`InputBlocks`), solves one case
into a :class:`Result` (``solve``) and re-checks a stored trace (``replay``). Traces
are stored as bytes (``solve_packed``, ``unpack_trace``) and served as JSON-ready
dicts; a stored chunk of cases is solved in one call into a few buffers
(``solve_chunk``, :class:`ChunkSolution`). Engines are pure Python: they know nothing
of Celery, Flask or SQL.

How a judge file is read into cases, and what is said of a bad one, is :mod:`worker.engines.reading`.
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

from worker.engines.handover import InputBlocks
from worker.engines.layout import DeckRules
from worker.engines.reading import MAX_BYTES, MAX_CASES, Case, Diagnostic, Faults, Reading, only_case


class TraceError(ValueError):
    """A stored trace does not replay to the result it claims."""


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
    #: What the layout reader needs of the game's decks (:mod:`worker.engines.layout`); ``None`` for a
    #: game of one case a line.
    rules: ClassVar[DeckRules | None] = None

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
        return InputBlocks(stream, Reading(self.terminator, self.unit, warnings, faults), max_cases, max_bytes,
                           self.read, self.core, self.reader, self.rules)

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
