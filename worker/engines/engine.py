"""The :class:`Engine`: one game, from judge file to results, traces and stored chunks.

An engine reads a judge file into cases (``parse``) or blocks of canonical texts
(``read_inputs``), solves a case into a :class:`.results.Result` (``solve``), a batch
(``solve_batch``) or a stored chunk (``solve_chunk``), stores traces as bytes
(``solve_packed``, ``unpack_trace``) and replays them (``replay``). Engines know nothing of
Celery, Flask or SQL.
"""

from __future__ import annotations

import io
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import IO, Any, ClassVar, cast

import orjson

from worker.engines.chunks import ChunkSolution, Entry, solve_in_python
from worker.engines.reading import (
    MAX_BYTES,
    MAX_CASES,
    Case,
    Diagnostic,
    Faults,
    InputBlocks,
    ReaderFrom,
    Reading,
    only_case,
    read_natively,
)
from worker.engines.results import Result, TraceError


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
    # What the web UI (and ``GET /api/games``) says of the game; text between backticks shows as code.
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
    #: About how many bytes a case takes in a judge file: the service sizes chunks by it (``worker.jobs.sizing``).
    case_bytes: ClassVar[int]
    #: The game's own reader (a :data:`.reading.ReaderFrom`, as a staticmethod): the whole file on the
    #: pure-Python core, the rest of it where the native core hands over.
    reader: ClassVar[Callable[..., Iterator[Case]] | None] = None

    def __init__(self, core: ModuleType | None = None) -> None:
        #: The game's compiled core (:mod:`worker.engines.native`), or ``None`` to solve in pure
        #: Python: the same results, lines and traces.
        self.core = core

    @property
    def core_name(self) -> str:
        """Which core solves: ``"native"`` or ``"python"`` (``dealer games`` shows it)."""
        return "native" if self.core is not None else "python"

    def parse(self, stream: IO[bytes], warnings: list[Diagnostic] | None = None,
              faults: Faults | None = None) -> Iterator[Case]:
        """The cases of a judge file, in constant memory. :class:`.reading.InputError` for what the
        judge would choke on; warnings (no terminator, text after it) go to ``warnings``. Given
        ``faults``, a bad case is noted there and skipped (see :class:`.reading.Faults`)."""
        return self.read(stream, Reading(self.terminator, self.unit, warnings, faults))

    def read_inputs(self, stream: IO[bytes], warnings: list[Diagnostic] | None = None,
                    max_cases: int = MAX_CASES, max_bytes: int = MAX_BYTES,
                    faults: Faults | None = None) -> InputBlocks:
        """:meth:`parse` as blocks ``(texts, count)`` of canonical texts each ending in ``\\n``, with
        no object per case (see :class:`.reading.InputBlocks`).

        >>> from worker.engines import get
        >>> hands = b"FA 1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA\\n" * 3 + b"0\\n"
        >>> blocks = get("mahjong").read_inputs(io.BytesIO(hands), max_cases=2)
        >>> [count for texts, count in blocks], blocks.cases, blocks.bytes_read
        ([2, 1], 3, 119)
        """
        return InputBlocks(stream, Reading(self.terminator, self.unit, warnings, faults), max_cases, max_bytes,
                           self.read, self.core if self.reader is not None else None, self.reader)

    def read(self, stream: IO[bytes], reading: Reading) -> Iterator[Case]:
        """The cases behind :meth:`parse`: the native core's while lines are plain, then :attr:`reader`'s."""
        reader = cast(ReaderFrom, self.reader)  # every game has one (a test's toy engine reads for itself)
        if self.core is None:
            return reader(stream, reading, 1, 0)
        return read_natively(self.core.read, stream, reading, reader)

    @abstractmethod
    def solve(self, case: Case, trace: bool = True) -> Result:
        """Solve one case; with ``trace`` the result carries the moves that led to it."""

    def solve_packed(self, case: Case) -> tuple[Result, bytes]:
        """Solve one case with its trace stored as bytes (what a worker stores): ``unpack_trace``
        of them is ``solve(case).trace``. A game with a compact form overrides both."""
        result = self.solve(case, True)
        packed = self.pack_trace(result.trace or {})
        result.trace = None
        return result, packed

    def solve_batch(self, texts: list[str], first: int, traced: bool) -> tuple[str, bytes]:
        """The judge lines of cases numbered from ``first``, and with ``traced`` their ``dealer
        solve --traces`` records (:meth:`record`), each ending in a newline. The native core
        writes the batch in C, leaving to :meth:`solve_one` what it does not finish.

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
        """One case of :meth:`solve_batch` in Python: its judge line and record (``b""`` untraced)."""
        case = Case(index, text)
        if not traced:
            return self.solve(case, False).line, b""
        result = self.solve(case, True)
        return result.line, self.record(case, result, orjson.dumps(result.trace))

    def solve_chunk(self, inputs: bytes, first: int, traced: bool, deadline: float | None = None,
                    fallback: Callable[[int, str, bool], Entry] | None = None) -> ChunkSolution:
        """A stored chunk (canonical texts joined by ``\\n``) solved in one call, its cases numbered
        from ``first``, none started once ``time.monotonic()`` reaches ``deadline``. The native core
        solves it in C and hands what it does not finish (a text not canonical, a 10-20-30 game
        past 65,535 cards) to ``fallback`` (:meth:`solve_entry` unless given), where a caller can
        bound a case's time; in C a case takes at most about 10 ms.

        >>> from worker.engines import get
        >>> solution = get("mahjong").solve_chunk(b"1S 2S 3S 4S 4S 4S 5S 6S 7S 7S 8S 8S 9S\\n"
        ...                                       b"1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI", 7, True)
        >>> solution.lines, solution.outcomes, list(solution.numbers), solution.trace(1), solution.started
        (b'Case 7: 3S 5S 6S 8S 9S\\nCase 8: Not ready\\n', b'\\x01\\x02', [5, 0], b'{"version":1,"proofs":[]}', 2)
        >>> from worker.engines.chunks import case_hash
        >>> solution.hashes[1] == case_hash("1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI")
        True
        """
        one = self.solve_entry if fallback is None else fallback
        if self.core is not None:
            return ChunkSolution(*self.core.solve_chunk(inputs, first, traced, deadline, one))
        return solve_in_python(inputs, first, traced, deadline, one)

    def solve_entry(self, index: int, text: str, traced: bool) -> Entry:
        """One case of :meth:`solve_chunk` solved in Python."""
        case = Case(index, text)
        result, packed = self.solve_packed(case) if traced else (self.solve(case, False), b"")
        return (self.outcome_code(result.outcome), result.number,
                self.extra_of(result.outcome, result.number, result.detail), result.line, packed)

    def outcome_code(self, outcome: str) -> int:
        """An outcome's code in a :class:`.chunks.ChunkSolution`: 1 + its place in :attr:`outcomes`.

        >>> from worker.engines import get
        >>> get("10-20-30").outcome_code("draw"), get("mahjong").outcome_code("not-ready")
        (3, 2)
        """
        return self.outcomes.index(outcome) + 1

    def extra_of(self, outcome: str, number: int, detail: list[Any]) -> int:
        """What a result holds beyond its judge line, as one number (0 unless the game says otherwise)."""
        return 0

    def parse_line(self, index: int, line: str, extra: int = 0) -> tuple[str, int, list[Any]]:
        """The ``(outcome, number, detail)`` of case ``index``'s judge line and stored extra: the
        exact inverse of :meth:`judge_line`, so a store keeps lines, not details.

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
        """What a judge line says, or ``None`` (:meth:`parse_line` checks the line is made again)."""

    def record(self, case: Case, result: Result, trace: bytes) -> bytes:
        """A line of ``dealer solve --traces`` (no newline): the case's index (its place in the
        file), its result and its trace, given as JSON bytes.

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
        """The trace of :meth:`pack_trace` or :meth:`solve_packed` bytes; :class:`.results.TraceError` else."""
        try:
            trace = orjson.loads(packed)
        except orjson.JSONDecodeError:
            raise TraceError(f"not a stored {self.slug} trace") from None
        if not isinstance(trace, dict):
            raise TraceError(f"not a stored {self.slug} trace")
        return trace

    @abstractmethod
    def judge_line(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        """The judge line of a stored result, numbered ``index``."""

    @abstractmethod
    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        """The result ``trace`` leads to from the canonical input ``text``; :class:`.results.TraceError`
        where it breaks the rules."""

    @abstractmethod
    def generate(self, rng: random.Random) -> str:
        """A random case as a judge file writes it."""

    @abstractmethod
    def sniff(self, head: bytes) -> bool:
        """Whether the start of a file looks like this game's judge file."""

    def canonical(self, text: str) -> str:
        """The canonical form of one case written as text; :class:`.reading.InputError` unless one case."""
        return only_case(self.parse(io.BytesIO(text.encode()), []), self.unit).text
