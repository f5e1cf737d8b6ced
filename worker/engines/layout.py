"""Deck files read as the judge reads them, a stream of cards whatever the lines, and by their layout where
that stream fails, so that one broken line is one fault and every deck it did not touch is kept. The layout
(``per-line=K`` or ``flow``) is learnt from a file's first lines (:func:`learn`); :class:`LaidOut` reads by
it, naming a fault at its first problem and taking up at the next good deck start. The rules, and their
limits, for users: docs/getting-started.md, "Bad lines in a file of decks".
"""

from __future__ import annotations

import io
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import IO, cast

from worker.engines.decks import DECK_SIZE as DECK
from worker.engines.decks import DeckRules
from worker.engines.reading import MAX_TOKEN, Case, InputError, Reading, check_text, tokens_with_columns

#: How many lines with tokens, from at most how many of the file's first bytes, the layout is learnt from.
SAMPLE_LINES = 256
SAMPLE_BYTES = 1 << 16
#: A line longer than this is none of a layout's (a deck's line is at most 156 bytes).
LONGEST_LINE = 1024
#: How many decks after a deck read across the layout must read good too for it to be taken.
FOLLOWING = 4
#: A game's stream reader, from a line and column of the file (a deck's start), after a count of cases.
ReaderFrom = Callable[[IO[bytes], Reading, int, int, int], Iterator[Case]]
#: A place in the file as the layout reader counts: (line with tokens, from 0; token of that line, from 0).
Position = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Layout:
    """``per_line`` cards a line; ``flow``: the decks run on across lines."""

    per_line: int
    flow: bool = False

    def __str__(self) -> str:
        """How a fault names it: ``26 a line``, ``20 a line, 12 on their last``, ``20 a line, running on…``."""
        rest = DECK % self.per_line
        if self.flow:
            return f"{self.per_line} a line, running on from line to line"
        return f"{self.per_line} a line" + (f", {rest} on their last" if rest else "")

    def span(self, at: Position) -> list[int]:
        """The cards of each line of the deck starting at ``at``."""
        if self.flow:
            return [self.per_line] * ((at[1] + DECK - 1) // self.per_line + 1)
        full, rest = divmod(DECK, self.per_line)
        return [self.per_line] * full + ([rest] if rest else [])

    def after(self, at: Position) -> Position:
        """Where the deck after the one starting at ``at`` starts."""
        if self.flow:
            line, token = divmod(at[1] + DECK, self.per_line)
            return at[0] + line, token
        return at[0] + len(self.span(at)), 0


def learn(head: bytes, final: bool, stops: Callable[[bytes, list[bytes]], bool]) -> Layout | None:
    """The layout of a file that starts with ``head`` (all of it when ``final``), or ``None``: fewer than two
    decks, or more than one line in eight off every layout (the file's last line of cards aside)."""
    counts: list[int] = []
    lines = head[:SAMPLE_BYTES].split(b"\n")
    whole = final and len(head) <= SAMPLE_BYTES
    if not whole:
        lines.pop()  # a line that goes on
    for raw in lines:
        tokens = raw.split()
        if not tokens:
            continue
        if stops(raw, tokens):
            whole = True
            break
        if len(counts) == SAMPLE_LINES:
            whole = False
            break
        counts.append(len(tokens))
    if sum(counts) < 2 * DECK:
        return None
    if whole:  # the input's last line of cards holds what is left: no line a layout's is judged by
        counts.pop()
    layouts = [Layout(per_line, flow) for per_line in sorted({count for count in counts if count <= DECK}, reverse=True)
               for flow in ((False, True) if DECK % per_line else (False,))]
    fits, best = max(((_fits(layout, counts), layout) for layout in layouts), key=lambda fit: fit[0], default=(0, None))
    return best if best is not None and len(counts) - fits <= len(counts) // 8 else None


def _fits(layout: Layout, counts: list[int]) -> int:
    """How many of the lines ``counts`` fit ``layout``, a line that does not being taken to end its deck."""
    if layout.flow:
        return counts.count(layout.per_line)
    fits = cards = 0
    for count in counts:
        if count == min(layout.per_line, DECK - cards):
            fits += 1
            cards = (cards + count) % DECK
        else:
            cards = 0
    return fits


def previous(data: bytes, at: int) -> int:
    """Where the last line with tokens before ``at`` (a line's start) starts in ``data``, else ``at``.

    >>> previous(b"AC 2C\\n\\nKS\\n", 9), previous(b"AC 2C\\n\\nKS\\n", 7), previous(b"\\nKS\\n", 1)
    (7, 0, 1)
    """
    end = at
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1
        if data[start:end].split():
            return start
        end = start
    return at


@dataclass(slots=True)
class _Line:
    start: int  # where it starts in the data
    number: int  # its line in the file
    raw: bytes
    tokens: list[bytes]
    before: int = 0  # the tokens of the lines before it, from the one the reading started at

    def column(self, token: int) -> int:
        """Where its token ``token`` starts; past its last, where it ends."""
        if not token:
            return 1 + len(self.raw) - len(self.raw.lstrip())
        if token >= len(self.tokens):
            return len(self.raw.rstrip()) + 1
        return tokens_with_columns(self.raw, 1)[token][1]


class More(Exception):
    """The reading needs more of the file than the data holds."""


class Stream(Exception):
    """The game's stream reader goes on, from the start of the deck being read."""


@dataclass(slots=True)
class Step:
    """Where :meth:`LaidOut.read` stopped: at ``at`` in the data, ``line`` of the file, its token ``token``
    (at ``column``), after ``count`` cases, and why: ``"native"`` (a deck starts the line after a good one),
    ``"more"`` (the data ends first) or ``"stream"``."""

    how: str
    at: int
    line: int
    token: int
    column: int
    count: int


class LaidOut:
    """The decks of a file in a known layout, read from a deck's start in a buffer of the file."""

    def __init__(self, layout: Layout, rules: DeckRules, reading: Reading, stream: ReaderFrom) -> None:
        self.layout, self.rules, self.reading, self.stream = layout, rules, reading, stream
        self._data = b""
        self._final = False
        self._lines: list[_Line] = []
        self._scan = self._scan_line = 0
        self._end: int | None = None  # the index of the line that ends the input, or of the end of the file
        self._before: list[bytes] = []  # the tokens of the line before the first one read

    def read(self, data: bytes, at: int, final: bool, line: int, token: int, count: int, native: bool
             ) -> Generator[Case, None, Step]:
        """The decks of ``data`` from ``at`` (the start of ``line`` of the file, a deck starting at its token
        ``token``), after ``count`` cases, as far as the layout takes them (``native``: the native core may
        go on after a good deck)."""
        self._data, self._final = data, final
        self._lines, self._scan, self._scan_line, self._end = [], at, line, None
        self._before = data[previous(data, at) : at].split()
        here: Position = (0, token)
        try:
            while True:
                if here == (self._end, 0) or self._tail(here):
                    raise Stream
                number = count + 1
                ending = yield from self._ending(here, number)
                if ending is not None:
                    count, here = ending
                    continue
                text = self._deck(self._tokens(here))
                after = self.layout.after(here)
                if text is None and (streamed := self._streamed(here)) is not None:
                    text, after = streamed  # a good deck, read across the layout
                if text is not None:
                    yield self._made(here, number, text)
                    count, here = number, after
                    if native and here[1] == 0:
                        return self._step("native", here, count)
                    continue
                doubled = yield from self._doubled(here, number)
                if doubled is not None:
                    count, here = doubled
                    continue
                count, here = self._skip(here, number)
        except More:
            return self._step("more", here, count)
        except Stream:
            return self._step("stream", here, count)

    def _step(self, how: str, here: Position, count: int) -> Step:
        if here[0] >= len(self._lines):  # (only ever the end of the data)
            return Step(how, self._scan, self._scan_line, 0, 1, count)
        line = self._lines[here[0]]
        return Step(how, line.start, line.number, here[1], line.column(here[1]) if here[1] else 1, count)

    def _reaches_end(self, here: Position, more: int = 0) -> bool:
        """Whether the lines of the deck at ``here``, and ``more`` lines, reach the end of the input."""
        reach = here[0] + len(self.layout.span(here)) + more
        self._line(reach)
        return self._end is not None and reach >= self._end

    def _line(self, k: int) -> _Line | None:
        """Line ``k`` (with tokens, from the one the reading started at), or ``None`` past the end."""
        while k >= len(self._lines):
            if self._end is not None:
                return None
            self._parse()
        return self._lines[k] if self._end is None or k <= self._end else None

    def _parse(self) -> None:
        data = self._data
        while True:
            at = self._scan
            stop = data.find(b"\n", at)
            if stop < 0:
                if not self._final:
                    raise More
                stop = len(data)
            raw = data[at:stop]
            if len(raw) > LONGEST_LINE:
                raise Stream
            try:
                check_text(raw, self._scan_line, 1)
            except InputError:
                raise Stream from None
            tokens = raw.split()
            if len(raw) > MAX_TOKEN and max(map(len, tokens), default=0) > MAX_TOKEN:
                raise Stream
            last = self._lines[-1] if self._lines else None
            line = _Line(at, self._scan_line, raw, tokens, last.before + len(last.tokens) if last else 0)
            self._scan, self._scan_line = stop + 1, self._scan_line + 1
            if tokens:
                if self.rules.stops(raw, tokens):
                    self._end = len(self._lines)
                self._lines.append(line)
                return
            if stop == len(data):  # the end of the file
                self._end = len(self._lines)
                self._lines.append(_Line(len(data), line.number, b"", [], line.before))
                return

    def _tokens(self, here: Position, skip: int = -1) -> list[bytes] | None:
        """The deck at ``here`` if its lines (but line ``skip``) hold the cards the layout says (short of 52, no
        deck, where a deck read across the layout ended mid-line)."""
        tokens: list[bytes] = []
        for k, cards in enumerate(self.layout.span(here)):
            at = here[0] + k + (0 <= skip <= here[0] + k)
            line = self._line(at)
            if line is None or len(line.tokens) != cards or at == self._end:
                return None
            tokens += line.tokens
        return tokens[here[1] : here[1] + DECK]

    def _ending(self, here: Position, number: int) -> Generator[Case, None, tuple[int, Position] | None]:
        """A bad last deck, at ``here``, whose lines (or they and a line more) reach the end of the input:
        read without a line that repeats the one before it where that makes it good (the copy the fault),
        else one fault. The count and where the reading goes on, or ``None`` for a deck not the last."""
        reach = here[0] + len(self.layout.span(here))
        self._line(reach + 1)
        end = self._end
        if end is None or reach + 1 < end:
            return None
        if here[0] >= end:  # the end of the input, found just now
            raise Stream
        if reach >= end:
            if self._deck(self._last(here)) is not None:
                raise Stream
            if self._deck(self._tokens(here)) is not None:
                return None  # a good deck, its lines full, and cards after it: not the last
        doubled = yield from self._doubled(here, number, end)
        if doubled is not None or reach < end:
            return doubled
        return self._skip(here, number, last=True)

    def _last(self, here: Position, skip: int = -1) -> list[bytes] | None:
        """The deck at ``here`` if its lines to the end of the input (but line ``skip``) are a last deck's
        in the layout (in ``flow``: its last line holding what is left)."""
        rows = [self._lines[k].tokens for k in range(here[0], self._end or 0) if k != skip]
        counts = [len(row) for row in rows]
        if self.layout.flow:
            fits = bool(rows) and set(counts[:-1]) <= {self.layout.per_line} and counts[-1] <= self.layout.per_line
        else:
            fits = counts == self.layout.span(here)
        tokens = [token for row in rows for token in row][here[1] :]
        return tokens if fits and len(tokens) == DECK else None

    def _streamed(self, here: Position) -> tuple[str, Position] | None:
        """The good deck the cards from ``here`` make read as a stream, when the :data:`FOLLOWING` decks
        after it are good too, and where the next deck starts (the middle of a line, maybe)."""
        read = at = self._stream_deck(here)
        for _ in range(FOLLOWING):
            at = at and self._stream_deck(at[1])
        return read if at else None

    def _stream_deck(self, here: Position) -> tuple[str, Position] | None:
        """The good deck the 52 cards from ``here`` make and where the next starts, unless the input ends first."""
        tokens: list[bytes] = []
        k, need = here[0], DECK + here[1]
        while len(tokens) < need:
            line = self._line(k)
            if line is None or k == self._end:
                return None
            tokens += line.tokens
            k += 1
        text = self.rules.deck(tokens[here[1] : need])
        left = len(tokens) - need  # the cards of its last line after it
        return None if text is None else (text, (k - 1, len(self._lines[k - 1].tokens) - left) if left else (k, 0))

    def _tail(self, here: Position) -> bool:
        """Whether the input ends a few decks after ``here`` and its rest reads as a good stream."""
        first = self._line(here[0])
        reach = (first.before if first else 0) + here[1] + (FOLLOWING + 2) * DECK
        while self._end is None and self._lines[-1].before <= reach:
            self._parse()
        if first is None or self._end is None or self._lines[self._end].before > reach:
            return False
        column = first.column(here[1]) if here[1] else 1
        try:
            for _ in self.stream(io.BytesIO(self._data[first.start + column - 1 :]),
                                 Reading(self.reading.terminator, self.reading.unit), first.number, 1, column):
                pass
        except InputError:
            return False
        return True

    def _deck(self, tokens: list[bytes] | None) -> str | None:
        return None if tokens is None else self.rules.deck(tokens)

    def _made(self, here: Position, number: int, text: str) -> Case:
        first = self._lines[here[0]]
        return Case.new(number, text, first.number, first.column(here[1]))

    def _repeats(self, copy: int) -> InputError:
        line = self._lines[copy]
        return InputError("this line repeats the line before it", line.number, line.column(0))

    def _good(self, here: Position) -> bool:
        """Whether a good deck (the last one too), or the end of the input, starts at ``here``."""
        if self._line(here[0]) is None:
            return False
        if here[0] == self._end:
            return here[1] == 0
        tokens = self._last(here) if self._reaches_end(here) else self._tokens(here)
        return self._deck(tokens) is not None

    def _doubled(self, here: Position, number: int, end: int | None = None
                 ) -> Generator[Case, None, tuple[int, Position] | None]:
        """A doubled line in the bad deck at ``here``: a line that repeats the one before it where the deck read
        without it is good. The copy is the fault, after the deck (kept) unless it is the deck's first line (the
        twin of the deck before's last, which may have read its first cards). The count and where the reading
        goes on, or ``None``. The first line that repeats the one before it is the copy or none is; but in the
        last deck, read to the input's ``end``, any of its lines may be, and a first line is one where the lines
        after it are a last deck's, or none are left."""
        for copy in range(here[0], end if end is not None else here[0] + len(self.layout.span(here))):
            line = self._line(copy)
            if line is None or copy == self._end or line.tokens != (self._lines[copy - 1].tokens if copy else self._before):
                continue
            tokens = self._tokens(here, copy) if end is None else self._last(here, copy)
            text = self._deck(tokens)
            if copy == here[0] and (text is not None or end is not None and (tokens is not None or copy + 1 == end)):
                self.reading.fault(self._repeats(copy), number)
                return number, (copy + 1, here[1] if copy + 1 != end else 0)
            if text is not None and copy > here[0]:
                if end is None and self._reaches_end(here, 1):  # (its lines run into the end of the input)
                    raise Stream
                yield self._made(here, number, text)
                self.reading.fault(self._repeats(copy), number + 1)
                if end is not None:
                    return number + 1, (end, 0)
                after = self.layout.after(here)
                return number + 1, (after[0] + 1, after[1]) if copy <= after[0] else after
            if end is None:
                return None
        return None

    def _skip(self, bad: Position, number: int, last: bool = False) -> tuple[int, Position]:
        """Deck ``number``, at ``bad``, is a fault: the count and where the reading takes up, the first of
        :meth:`_starts`, else the layout's next start; but the end of the input after the ``last`` deck (a good
        last deck may start after it), and where that start is the last deck's and no good deck starts after
        it (a line missing in ``flow`` took the next deck's start)."""
        after = self.layout.after(bad)
        found = self._starts(after, bad)
        if found is None and not last and (not self._reaches_end(after)
                                           or self._starts(self.layout.after(after), after)):
            found = after
        if found is None:
            found = (cast(int, self._end), 0)
        self.reading.fault(self._fault(bad, found, number), number)
        return number, found

    def _starts(self, after: Position, bad: Position) -> Position | None:
        """The layout's start ``after``, or one line before or after it: the first after ``bad`` where a good
        deck starts, followed by :data:`FOLLOWING` good decks or the end (a deck read a line off may still
        be good, and in ``flow`` a line off is a card off: two such decks in a row are good one time in 50)."""
        for start in (after, (after[0] - 1, after[1]), (after[0] + 1, after[1])):
            here = start
            for k in range(FOLLOWING + 1):
                if here <= bad or not self._good(here):
                    break
                if k == FOLLOWING or self._reaches_end(here):
                    return start
                here = self.layout.after(here)
        return None

    def _fault(self, here: Position, after: Position, number: int) -> InputError:
        """What is wrong with deck ``number``: the tokens from ``here`` to ``after``."""
        lines = [self._lines[k] for k in range(here[0], after[0] + (1 if after[1] else 0))]
        placed = [(k, j) for k, line in enumerate(lines) for j in range(len(line.tokens))]
        placed = placed[here[1] : len(placed) - ((len(lines[-1].tokens) - after[1]) if after[1] else 0)]
        tokens = [lines[k].tokens[j] for k, j in placed]

        def where(t: int) -> tuple[int, int]:
            k, j = placed[t]
            return lines[k].number, lines[k].column(j)

        error = self.rules.token_error(tokens, number, where)
        if error is not None:
            return error
        for k in range(here[0] + 1, here[0] + len(lines)):  # (the deck's lines: not the next deck's first)
            if self._lines[k].raw.strip() == self._lines[k - 1].raw.strip():
                return self._repeats(k)
        for k, (line, cards) in enumerate(zip(lines, self.layout.span(here), strict=False)):
            if len(line.tokens) != cards:  # (a flow line may hold the end of the deck before: named here too)
                which = f"deck {number} starts on this line, which has" if k == 0 and here[1] else "this line has"
                return InputError(f"{which} {len(line.tokens)} cards; this file's decks have {self.layout}",
                                  line.number, line.column(0))
        if len(tokens) == DECK:
            return self.rules.deck_error(tokens, number, where)
        then = "the input ends" if after[0] == self._end else "the next deck starts"
        size = f"{len(tokens)} of {DECK} cards" if len(tokens) < DECK else f"{len(tokens)} cards, not {DECK}"
        return InputError(f"deck {number} has {size}: {then} on line {self._lines[after[0]].number}",
                          *where(min(len(tokens) - 1, DECK)))
