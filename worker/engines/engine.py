"""The :class:`Engine`: one game, from judge file to results. It reads a judge file, solves and
replays one case; ``lines`` and ``traces`` (:mod:`.results`) store a result, ``solve_batch`` and
``solve_chunk`` solve many cases in one call. Engines know nothing of Celery, Flask or SQL."""

from __future__ import annotations

import io
import random
import time
from abc import ABC, abstractmethod
from array import array
from collections.abc import Callable, Iterator
from itertools import accumulate
from types import ModuleType
from typing import IO, Any, ClassVar, NamedTuple, cast

import orjson

from worker.engines import results
from worker.engines.chunks import ChunkSolution, Entry, Fallback, case_hash
from worker.engines.decks import DeckRules
from worker.engines.handover import InputBlocks, ReaderFrom, read_cases
from worker.engines.reading import MAX_BYTES, MAX_CASES, Case, Diagnostic, Faults, Reading, only_case
from worker.engines.results import Result


class JudgeFile(NamedTuple):
    """A game's judge files: what a case is called (``"deck"``), the line that ends a file, the
    game's reader (:data:`.handover.ReaderFrom`) and its decks' :mod:`.layout` (``None``: a case a line)."""

    unit: str
    terminator: str
    reader: Callable[..., Iterator[Case]] | None = None
    rules: DeckRules | None = None


class Engine(ABC):
    """One game. Subclasses fill in the class attributes and the abstract methods."""

    # Names, and what the web UI says (``worker.jobs.views.GameView`` describes each).
    slug: ClassVar[str]
    title: ClassVar[str]
    summary: ClassVar[str]
    number_name: ClassVar[str]
    number_help: ClassVar[str]
    input_help: ClassVar[str]
    detail_label: ClassVar[str]
    detail_text: ClassVar[str] = "`{}`"
    #: Every ``Result.outcome``, in the order of their stored codes (``JudgeLines.code``).
    outcomes: ClassVar[tuple[str, ...]]
    judge_file: ClassVar[JudgeFile]
    #: About a case's bytes in a judge file: chunks are sized by it (``worker.jobs.sizing``).
    case_bytes: ClassVar[int]
    Lines: ClassVar[type[results.JudgeLines]]
    Traces: ClassVar[type[results.Traces]] = results.Traces
    #: A deck game's 52 cards, which :meth:`generate` shuffles.
    deck: ClassVar[tuple[str, ...]] = ()

    def __init__(self, core: ModuleType | None = None) -> None:
        #: The compiled core (:mod:`.native`), or ``None``: pure Python, the same results and traces.
        self.core = core
        self.lines = self.Lines(self.slug, self.outcomes)
        self.traces = self.Traces(self.slug)
        self.unit, self.terminator = self.judge_file.unit, self.judge_file.terminator

    @property
    def core_name(self) -> str:
        """``"native"`` or ``"python"`` (``dealer games`` shows it)."""
        return "native" if self.core is not None else "python"

    def parse(self, stream: IO[bytes], warnings: list[Diagnostic] | None = None,
              faults: Faults | None = None) -> Iterator[Case]:
        """The cases of a judge file, in constant memory; :class:`.reading.InputError` for what the judge
        would choke on, warnings to ``warnings``; given ``faults``, bad cases noted and skipped."""
        return self.read(stream, Reading(self.terminator, self.unit, warnings, faults))

    def read_inputs(self, stream: IO[bytes], warnings: list[Diagnostic] | None = None,
                    max_cases: int = MAX_CASES, max_bytes: int = MAX_BYTES,
                    faults: Faults | None = None) -> InputBlocks:
        """:meth:`parse` as blocks of canonical texts, no object per case (:class:`.handover.InputBlocks`)."""
        file = self.judge_file
        reading = Reading(file.terminator, file.unit, warnings, faults)
        return InputBlocks(stream, reading, max_cases, max_bytes, self.read, self.core, file.reader, file.rules)

    def read(self, stream: IO[bytes], reading: Reading) -> Iterator[Case]:
        """The cases behind :meth:`parse`, read by the native core and the game's reader in turns."""
        file = self.judge_file
        reader = cast(ReaderFrom, file.reader)  # every game has one (a test's toy engine reads for itself)
        return read_cases(stream, reading, reader, file.rules, None if self.core is None else self.core.read)

    def canonical(self, text: str) -> str:
        """The canonical form of one case; :class:`.reading.InputError` unless the text holds one."""
        return only_case(self.parse(io.BytesIO(text.encode()), []), self.unit).text

    @abstractmethod
    def sniff(self, head: bytes) -> bool:
        """Whether the start of a file looks like this game's judge file."""

    def generate(self, rng: random.Random) -> str:
        """A random case as a judge file writes it: here a shuffled :attr:`deck` on two lines of 26 cards."""
        cards = list(self.deck)
        rng.shuffle(cards)
        return " ".join(cards[:26]) + "\n" + " ".join(cards[26:])

    def solve(self, case: Case, trace: bool = True) -> Result:
        """One case's result; with ``trace``, with the moves that led to it."""
        solved = self._solve_natively(case, trace, True)
        if solved is None:
            return self._solve_in_python(case, trace)
        result, packed = solved
        if trace:
            result.trace = orjson.loads(packed)
        return result

    def solve_packed(self, case: Case) -> tuple[Result, bytes]:
        """One case's result, its trace as stored bytes (``traces.unpack`` gives ``solve(case).trace``)."""
        return self._solve_natively(case, True, False) or self._packed_in_python(case)

    def _solve_natively(self, case: Case, traced: bool, json: bool) -> tuple[Result, bytes] | None:
        """The compiled core's result (no trace) and trace bytes (JSON with ``json``, else as stored);
        ``None`` with no core, or where it leaves the case to Python (a text not canonical)."""
        solved = None if self.core is None else self.core.solve(case.text, case.index, traced, json)
        if solved is None:
            return None
        code, number, detail, line, packed = solved
        return Result(self.outcomes[code - 1], number, orjson.loads(detail), line), packed

    @abstractmethod
    def _solve_in_python(self, case: Case, trace: bool) -> Result:
        """:meth:`solve` in Python: the oracle, and what solves a case the core leaves."""

    def _packed_in_python(self, case: Case) -> tuple[Result, bytes]:
        """:meth:`solve_packed` in Python."""
        result = self._solve_in_python(case, True)
        packed = self.traces.pack(result.trace or {})
        result.trace = None
        return result, packed

    @abstractmethod
    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        """The result ``trace`` leads to from ``text``; :class:`.results.TraceError` where it breaks a rule."""

    def solve_batch(self, texts: list[str], first: int, traced: bool) -> tuple[str, bytes]:
        """Canonical texts numbered from ``first`` solved in one call: their judge lines and with
        ``traced`` their records (``Traces.record``), each ending in a newline. In C, which leaves
        to :meth:`_batch_case` what it does not finish, else case by case in Python."""
        if self.core is not None:
            return self.core.solve_batch(texts, first, traced, self._batch_case)  # type: ignore[no-any-return]
        solved = [self._batch_case(index, text, traced) for index, text in enumerate(texts, first)]
        return ("".join(line + "\n" for line, _ in solved),
                b"".join(record + b"\n" for _, record in solved) if traced else b"")

    def _batch_case(self, index: int, text: str, traced: bool) -> tuple[str, bytes]:
        """One case of :meth:`solve_batch` in Python: its judge line and record (``b""`` untraced)."""
        case = Case(index, text)
        if not traced:
            return self.solve(case, False).line, b""
        result = self.solve(case, True)
        return result.line, self.traces.record(case, result, orjson.dumps(result.trace))

    def solve_chunk(self, inputs: bytes, first: int, traced: bool, deadline: float | None = None,
                    fallback: Fallback | None = None) -> ChunkSolution:
        """A stored chunk (canonical texts joined by ``\\n``) solved in one call, its cases numbered
        from ``first``, none started once ``time.monotonic()`` reaches ``deadline``. In C, which hands
        what it does not finish (a text not canonical, a 10-20-30 game past 65,535 cards) to
        ``fallback`` (:meth:`chunk_case` unless given, which can bound a case's time), else case by
        case in Python."""
        one = self.chunk_case if fallback is None else fallback
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
        offsets = array("I", accumulate(map(len, traces), initial=0))
        return ChunkSolution(count, started, "".join(line + "\n" for line in lines).encode(), b"".join(traces),
                             offsets, bytes(outcomes), numbers, extras, solve_us, array("Q", map(case_hash, texts)))

    def chunk_case(self, index: int, text: str, traced: bool) -> Entry:
        """One case of :meth:`solve_chunk` solved in Python."""
        case = Case(index, text)
        result, packed = self.solve_packed(case) if traced else (self.solve(case, False), b"")
        return (self.lines.code(result.outcome), result.number,
                self.lines.extra(result.outcome, result.number, result.detail), result.line, packed)
