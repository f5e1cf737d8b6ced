"""The :class:`Engine`: one game, from judge file to results.

An engine reads a judge file (``parse``, ``read_inputs``), solves a case (``solve``) and replays its
trace (``replay``); what it holds does the rest: ``lines`` and ``traces`` (the stored forms of a
result, :mod:`.results`), ``batches`` and ``chunks`` (many cases in one call). Engines know nothing
of Celery, Flask or SQL.
"""

from __future__ import annotations

import io
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import IO, Any, ClassVar, cast

from worker.engines.batches import Batches
from worker.engines.chunks import Chunks
from worker.engines.handover import InputBlocks, ReaderFrom, read_cases
from worker.engines.layout import DeckRules
from worker.engines.reading import MAX_BYTES, MAX_CASES, Case, Diagnostic, Faults, Reading, only_case
from worker.engines import results
from worker.engines.results import Result


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
    #: Every value ``Result.outcome`` can take, in the order the UI lists them (stored as codes:
    #: ``JudgeLines.code``).
    outcomes: ClassVar[tuple[str, ...]]
    #: The line that ends a judge file (``"0"`` or ``"#"``).
    terminator: ClassVar[str]
    #: About how many bytes a case takes in a judge file: the service sizes chunks by it (``worker.jobs.sizing``).
    case_bytes: ClassVar[int]
    #: The game's own reader (a :data:`.handover.ReaderFrom`, as a staticmethod): what the native core
    #: leaves, or the whole file on the pure-Python core.
    reader: ClassVar[Callable[..., Iterator[Case]] | None] = None
    #: What the layout reader needs of the game's decks (:mod:`.layout`); ``None`` for one case a line.
    rules: ClassVar[DeckRules | None] = None
    #: The game's judge lines and traces: its subclass of :class:`.results.JudgeLines` and :class:`.results.Traces`.
    Lines: ClassVar[type[results.JudgeLines]]
    Traces: ClassVar[type[results.Traces]] = results.Traces

    def __init__(self, core: ModuleType | None = None) -> None:
        #: The game's compiled core (:mod:`.native`), or ``None`` to solve in pure Python: the same
        #: results, lines and traces.
        self.core = core
        self.lines = self.Lines(self)
        self.traces = self.Traces(self)
        self.batches = Batches(self)
        self.chunks = Chunks(self)

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
        no object per case (see :class:`.handover.InputBlocks`).

        >>> from worker.engines import get
        >>> hands = b"FA 1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA\\n" * 3 + b"0\\n"
        >>> blocks = get("mahjong").read_inputs(io.BytesIO(hands), max_cases=2)
        >>> [count for texts, count in blocks], blocks.cases, blocks.bytes_read
        ([2, 1], 3, 119)
        """
        return InputBlocks(stream, Reading(self.terminator, self.unit, warnings, faults), max_cases, max_bytes,
                           self.read, self.core, self.reader, self.rules)

    def read(self, stream: IO[bytes], reading: Reading) -> Iterator[Case]:
        """The cases behind :meth:`parse`, read by the native core and :attr:`reader` in turns."""
        reader = cast(ReaderFrom, self.reader)  # every game has one (a test's toy engine reads for itself)
        return read_cases(stream, reading, reader, self.rules, None if self.core is None else self.core.read)

    def canonical(self, text: str) -> str:
        """The canonical form of one case written as text; :class:`.reading.InputError` unless one case."""
        return only_case(self.parse(io.BytesIO(text.encode()), []), self.unit).text

    @abstractmethod
    def sniff(self, head: bytes) -> bool:
        """Whether the start of a file looks like this game's judge file."""

    @abstractmethod
    def generate(self, rng: random.Random) -> str:
        """A random case as a judge file writes it."""

    @abstractmethod
    def solve(self, case: Case, trace: bool = True) -> Result:
        """Solve one case; with ``trace`` the result carries the moves that led to it."""

    def solve_packed(self, case: Case) -> tuple[Result, bytes]:
        """Solve one case with its trace stored as bytes (what a worker stores): ``traces.unpack``
        of them is ``solve(case).trace``. A game whose core writes the bytes overrides it."""
        result = self.solve(case, True)
        packed = self.traces.pack(result.trace or {})
        result.trace = None
        return result, packed

    @abstractmethod
    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        """The result ``trace`` leads to from the canonical input ``text``; :class:`.results.TraceError`
        where it breaks the rules."""
