"""Deck files read by their layout: one broken line is one fault, and every deck it did not touch is kept.

A judge file is written by a program, so its decks come in a regular layout, which
:func:`learn` finds from the file's first lines (:data:`SAMPLE_LINES` lines with tokens, from at
most its first :data:`SAMPLE_BYTES`):

- ``per-line=K``: each deck starts a line of its own, on lines of K cards, its last line holding
  what is left (52 a line is a deck a line; 20 a line is 20, 20, 12);
- ``flow``: every line holds K cards and the decks run on from one line into the next.

Blank lines and the whitespace around and between tokens are no part of a layout (CR LF, blank
lines between decks or not: the same layout). A file whose lines fit no layout (fewer than two
decks, or more than one line in eight off every layout, the last line of cards of a file read
whole aside: it holds what is left) is read as a stream of cards, as the games' readers always
read.

Within a layout (:class:`LaidOut`) a deck is good when each of its lines holds the cards the
layout says and its cards make a deck, or when its cards, read as the judge reads them (a stream,
whatever the lines), make a deck that ends at the end of a line: a deck laid out otherwise, or a
line broken in two, is no fault in a good judge file. A deck that is not is one fault, named at its first
problem: a bad token, a line that repeats the line before it, a line with the wrong number of
cards ("this line has 20 cards; this file's decks have 26 a line"), a deck short or long, a
card twice or a deck that is not a standard one. A line of a bad deck that repeats the line
before it, where the deck read without it is good (at the deck's first line: where a good deck
starts after it), is a doubled line: the fault is that copy alone, left out, and the deck is read
on with the next line. Else, where the deck could not be read, the reading takes up again at the
next place a deck starts in the layout, or, where a line is missing or doubled, one line before
or after it: the first of those three (in that order) where a good deck starts, followed by a
good deck or the end of the input (a deck read a line off may still make a deck: two in a row
hardly do).
So a line short or long, a stray, missing or bad token, a missing or doubled line is
one fault, and a line split in two none (in ``flow``, none where a deck ends with the line); a line of a ``flow`` layout that holds the end of one deck and the start of the next
is two. With one line a deck, a missing line is no fault (the deck is gone) and a doubled one
neither (the same deck twice is two good decks). The fault keeps its place among the cases: a
missing line costs its deck, and a doubled line no deck at all (the copy, "this line repeats the
line before it", is the fault's place, and the deck is read with the copy's twin), so that the
cases after it are numbered one more than in the file as it was meant.

The last deck is one whose lines reach the end of the input (a terminator or the end of the
file); in ``flow`` its last line holds what is left. A bad one is a fault as any other (a doubled
line of it too, the deck read without the copy), and so is a bad deck after which no good deck
starts but at the end.

What the layout cannot say is read as a stream by the game's own reader, from the start of
the deck being read on (:class:`Stream`): the end of the file (a good last deck, the terminator
and what follows it), and bytes that are not text or a token or a line longer than any judge
file's.

Limits: two mistakes less than a deck apart may cost the deck between them; a mistake whose
wrong deck happens to read as a good one (a card twice spread over the decks a missing line
joins is all that betrays them in accordion; in 10-20-30 the counts of the values) is not
seen as one.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Protocol

from worker.engines.reading import MAX_TOKEN, Case, InputError, Reading, check_text, tokens_with_columns

#: How many lines with tokens, from at most how many of the file's first bytes, the layout is learnt from.
SAMPLE_LINES = 256
SAMPLE_BYTES = 1 << 16
#: A line longer than this is none of a layout's (a deck's line is at most 156 bytes).
LONGEST_LINE = 1024
DECK = 52
#: How many decks after a deck read across the layout must read good too for it to be taken.
FOLLOWING = 4
#: A game's stream reader, started at a line of the file (at a column of it: where a deck starts),
#: after a count of cases.
ReaderFrom = Callable[[IO[bytes], Reading, int, int, int], Iterator[Case]]


@dataclass(frozen=True, slots=True)
class Layout:
    """``per_line`` cards a line; ``flow``: the decks run on across lines (see the module)."""

    per_line: int
    flow: bool = False

    @property
    def lines(self) -> tuple[int, ...]:
        """The cards of each line of a deck (``per-line``); of one line (``flow``)."""
        if self.flow:
            return (self.per_line,)
        full, rest = divmod(DECK, self.per_line)
        return (self.per_line,) * full + ((rest,) if rest else ())

    def __str__(self) -> str:
        """How a fault names the layout.

        >>> str(Layout(26)), str(Layout(20)), str(Layout(20, flow=True))
        ('26 a line', '20 a line, 12 on their last', '20 a line, running on from line to line')
        """
        rest = DECK % self.per_line
        if self.flow:
            return f"{self.per_line} a line, running on from line to line"
        return f"{self.per_line} a line" + (f", {rest} on their last" if rest else "")

    def after(self, at: Position) -> Position:
        """Where the deck after the one starting at ``at`` starts."""
        if not self.flow:
            return at[0] + len(self.lines), 0
        line, token = divmod(at[1] + DECK, self.per_line)
        return at[0] + line, token

    def span(self, at: Position) -> list[int]:
        """The cards each line of the deck starting at ``at`` holds in this layout, from its first line."""
        if not self.flow:
            return list(self.lines)
        return [self.per_line] * ((at[1] + DECK - 1) // self.per_line + 1)


#: A place in the file as the layout reader counts: (line with tokens, from 0; token of that line, from 0).
Position = tuple[int, int]


def learn(head: bytes, final: bool, stops: Callable[[bytes, list[bytes]], bool]) -> Layout | None:
    """The layout of a file that starts with ``head`` (the whole file when ``final``), or ``None``
    for a file read as a stream; ``stops`` says whether a line's tokens end the input.

    >>> deck = " ".join(["AC"] * 52)
    >>> learn(((deck[:77] + "\\n" + deck[78:] + "\\n") * 3 + "#\\n").encode(), True, lambda line, t: t[0] == b"#")
    Layout(per_line=26, flow=False)
    >>> learn(b"AC AC\\nAC\\n" * 60, True, lambda line, t: False) is None
    True
    """
    counts: list[int] = []
    lines = head[:SAMPLE_BYTES].split(b"\n")
    whole = final and len(head) <= SAMPLE_BYTES  # the sample is the whole input
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
    best: tuple[int, Layout] | None = None
    for per_line in sorted({count for count in counts if count <= DECK}, reverse=True):
        for flow in (False, True) if DECK % per_line else (False,):
            layout = Layout(per_line, flow)
            fits = _fits(layout, counts)
            if best is None or fits > best[0]:
                best = fits, layout
    return best[1] if best is not None and len(counts) - best[0] <= len(counts) // 8 else None


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
    """Where the last line with tokens before ``at`` (a line's start) starts in ``data``; ``at`` if
    none does: the line a doubled one repeats is looked for there (see :meth:`LaidOut.read`).

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


class DeckRules(Protocol):
    """What a game's reader tells :class:`LaidOut` of its decks."""

    def stops(self, line: bytes, tokens: list[bytes]) -> bool:
        """Whether a line, with these tokens, ends the input (it holds the terminator)."""

    def deck(self, tokens: list[bytes]) -> str | None:
        """The canonical text of 52 tokens that make a good deck, else ``None``."""

    def token_error(self, tokens: Sequence[bytes], number: int, where: Callable[[int], tuple[int, int]]
                    ) -> InputError | None:
        """The first token of deck ``number`` that is no card (``where`` says where token ``k`` is)."""

    def deck_error(self, tokens: list[bytes], number: int, where: Callable[[int], tuple[int, int]]) -> InputError:
        """What is wrong with deck ``number``, 52 cards that make no deck."""


@dataclass(slots=True)
class _Line:
    start: int  # where it starts in the data
    number: int  # its line in the file
    raw: bytes
    tokens: list[bytes]

    def column(self, token: int) -> int:
        """Where its token ``token`` starts; past its last token (a line shorter than its layout's), where it ends."""
        if not token:
            return 1 + len(self.raw) - len(self.raw.lstrip())
        if token >= len(self.tokens):
            return len(self.raw.rstrip()) + 1
        return tokens_with_columns(self.raw, 1)[token][1]


class More(Exception):
    """The reading needs more of the file than the data holds."""


class Stream(Exception):
    """The reading goes on as a stream, from the start of the deck being read."""


@dataclass(slots=True)
class Step:
    """Where a stretch read by :meth:`LaidOut.read` ended: at ``at`` in the data, ``line`` of the file,
    its token ``token`` (at ``column``), after ``count`` cases; ``how`` is ``"native"`` (a deck starts
    that line, the one before was good: the native core may go on), ``"more"`` (the data ends first)
    or ``"stream"`` (the game's stream reader goes on, from that token)."""

    how: str
    at: int
    line: int
    token: int
    column: int
    count: int


class LaidOut:
    """The decks of a judge file in a known layout, read from a deck's start in a buffer of the file
    (see the module)."""

    def __init__(self, layout: Layout, rules: DeckRules, reading: Reading, stream: ReaderFrom) -> None:
        self.layout, self.rules, self.reading, self.stream = layout, rules, reading, stream
        self._data = b""
        self._final = False
        self._lines: list[_Line] = []
        self._scan = self._scan_line = 0
        self._end: int | None = None  # the index of the line that ends the input, or of the end of the file
        self._before: list[bytes] = []  # the tokens of the line before the first one read, if the data holds it

    def read(self, data: bytes, at: int, final: bool, line: int, token: int, count: int, native: bool
             ) -> Generator[Case, None, Step]:
        """The decks of ``data`` from ``at`` (the start of ``line`` of the file, a deck starting at its
        token ``token``), after ``count`` cases, as far as the layout can take them: see :class:`Step`
        (``native``: whether the native core may go on)."""
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
                case = self._case(here, number)
                if case is not None:
                    count = number
                    yield case
                    here = self.layout.after(here)
                    if native and here[1] == 0:
                        return self._step("native", here, count)
                    continue
                streamed = self._streamed(here, number)
                if streamed is not None:  # a good deck, its lines not as the others': no fault
                    case, here = streamed
                    count = number
                    yield case
                    if native and here[1] == 0:
                        return self._step("native", here, count)
                    continue
                copy = self._copy(here)
                if copy is not None:  # the copy is the fault, after the deck that holds its twin
                    if copy > here[0]:
                        yield self._case(here, number, copy)  # type: ignore[misc]
                        number += 1
                    self.reading.fault(self._repeats(copy), number)
                    count = number
                    here = (here[0] + 1, here[1]) if copy == here[0] else self._after(here, copy)
                    continue
                chosen = self._resume(here)
                if chosen is None:  # no good deck starts after it, not even the last: it is the last
                    chosen = (self._end, 0)
                self.reading.fault(self._fault(here, chosen, number), number)
                count, here = number, chosen
        except More:
            return self._step("more", here, count)
        except Stream:
            return self._step("stream", here, count)

    def _step(self, how: str, here: Position, count: int) -> Step:
        line = self._lines[here[0]] if here[0] < len(self._lines) else None
        if line is None:  # (only ever the end of the data)
            return Step(how, self._scan, self._scan_line, 0, 1, count)
        return Step(how, line.start, line.number, here[1], line.column(here[1]) if here[1] else 1, count)

    def _line(self, k: int) -> _Line | None:
        """Line ``k`` (with tokens, from the deck the reading started at), or ``None`` past the end."""
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
            line = _Line(at, self._scan_line, raw, tokens)
            self._scan, self._scan_line = stop + 1, self._scan_line + 1
            if tokens:
                if self.rules.stops(raw, tokens):
                    self._end = len(self._lines)
                self._lines.append(line)
                return
            if stop == len(data):  # the end of the file
                self._end = len(self._lines)
                self._lines.append(_Line(len(data), line.number, b"", []))
                return

    def _tokens(self, here: Position, lines: list[int], skip: int = -1) -> list[bytes] | None:
        """The tokens of the deck at ``here`` if its lines (but line ``skip``) hold the cards ``lines``
        says, else ``None``."""
        if here[1] and not self.layout.flow:  # (a deck read across the layout ended mid-line)
            return None
        tokens: list[bytes] = []
        for k, cards in enumerate(lines):
            at = here[0] + k + (0 <= skip <= here[0] + k)
            line = self._line(at)
            if line is None or len(line.tokens) != cards or at == self._end:
                return None
            tokens += line.tokens
        return tokens[here[1] : here[1] + DECK]

    def _case(self, here: Position, number: int, skip: int = -1) -> Case | None:
        """The deck at ``here`` (its line ``skip`` left out) when it is good; ``None`` when it is a
        fault. The last deck before the end of the input, and one whose lines reach it, are the
        stream reader's."""
        lines = self.layout.span(here)
        self._line(here[0] + len(lines) + (skip >= 0))
        if self._end is not None and here[0] + len(lines) + (skip >= 0) >= self._end:
            raise Stream
        tokens = self._tokens(here, lines, skip)
        text = None if tokens is None else self.rules.deck(tokens)
        if text is None:
            return None
        return self._made(here, number, text)

    def _ending(self, here: Position, number: int) -> Generator[Case, None, tuple[int, Position] | None]:
        """The last deck, at ``here``, when its lines (or they and a line more) reach the end of the
        input: a good one is the stream reader's (:class:`Stream`, with what ends the input); one
        with a line that repeats the line before it, where the deck is good without it, is read
        without it, the copy being the fault; else it is one fault. The count and where the
        reading goes on after it, or ``None`` for a deck that is not the last."""
        reach = here[0] + len(self.layout.span(here))
        self._line(reach + 1)
        end = self._end
        if end is None or reach + 1 < end:
            return None
        if here[0] >= end:  # the end of the input, found just now
            raise Stream
        if reach < end:
            tokens = self._tokens(here, self.layout.span(here))
            if tokens is not None and self.rules.deck(tokens) is not None:
                return None  # a good deck, not the last
        else:
            tokens = self._last(here)
            if tokens is not None and self.rules.deck(tokens) is not None:
                raise Stream
            rest = [token for k in range(here[0], end) for token in self._lines[k].tokens][here[1] :]
            if len(rest) == DECK and self.rules.deck(rest) is not None:
                raise Stream  # a good last deck laid out otherwise: no fault (see _streamed)
            tokens = self._tokens(here, self.layout.span(here))
            text = None if tokens is None else self.rules.deck(tokens)
            if text is not None:  # a good deck, its lines full, and cards after it: not the last
                yield self._made(here, number, text)
                return number, self.layout.after(here)
        for copy in range(here[0] + (here[1] > 0), end):
            line = self._lines[copy]
            if line.tokens != (self._lines[copy - 1].tokens if copy else self._before):
                continue
            if copy == here[0]:  # the copy of the deck before's last line
                if copy + 1 == end or self._last(here, copy) is not None:
                    self.reading.fault(self._repeats(copy), number)
                    return number, (copy + 1, 0)
                continue
            tokens = self._last(here, copy)
            text = None if tokens is None else self.rules.deck(tokens)
            if text is not None:
                yield self._made(here, number, text)
                self.reading.fault(self._repeats(copy), number + 1)
                return number + 1, (end, 0)
        if reach < end:
            return None
        found = self._starts(self.layout.after(here), here)  # (a good last deck, after a bad one)
        self.reading.fault(self._fault(here, found or (end, 0), number), number)
        return number, found or (end, 0)

    def _last(self, here: Position, skip: int = -1) -> list[bytes] | None:
        """The tokens of the deck at ``here`` if its lines to the end of the input (but line ``skip``)
        are a last deck's in the layout (in ``flow``: its last line holding what is left), else ``None``."""
        rows = [self._lines[k].tokens for k in range(here[0], self._end or 0) if k != skip]
        counts = [len(row) for row in rows]
        if self.layout.flow:
            fits = bool(rows) and set(counts[:-1]) <= {self.layout.per_line} and counts[-1] <= self.layout.per_line
        else:
            fits = counts == list(self.layout.lines)
        tokens = [token for row in rows for token in row][here[1] :]
        return tokens if fits and len(tokens) == DECK else None

    def _streamed(self, here: Position, number: int) -> tuple[Case, Position] | None:
        """The deck at ``here`` read as the judge reads it, a stream of cards whatever the lines, when that
        makes a good deck and the :data:`FOLLOWING` decks after it do too; then where the next deck starts
        (the middle of a line, maybe). A deck read a few cards off may still make a deck (in 10-20-30, by
        the counts of its values): five in a row hardly do."""
        read = self._stream_deck(here)
        at = None if read is None else read[1]
        for _ in range(FOLLOWING):
            at = None if at is None else (self._stream_deck(at) or (None, None))[1]
        return None if read is None or at is None else (self._made(here, number, read[0]), read[1])

    def _stream_deck(self, here: Position) -> tuple[str, Position] | None:
        """The good deck the 52 cards from ``here`` make, and where the next starts; ``None`` if they make
        none, or the input ends first."""
        tokens: list[bytes] = []
        k, need = here[0], DECK + here[1]
        while len(tokens) < need:
            line = self._line(k)
            if line is None or k == self._end:
                return None
            tokens += line.tokens
            k += 1
        text = self.rules.deck(tokens[here[1] : need])
        if text is None:
            return None
        return text, ((k, 0) if len(tokens) == need else (k - 1, len(line.tokens) - len(tokens) + need))

    def _tail(self, here: Position) -> bool:
        """Whether the input ends within a few decks of ``here`` and its rest reads as a good stream."""
        k, cards = here[0], -here[1]
        while True:
            line = self._line(k)
            if line is None or cards > (FOLLOWING + 2) * DECK:
                return False
            if k == self._end:
                break
            cards += len(line.tokens)
            k += 1
        first = self._lines[here[0]]
        column = first.column(here[1]) if here[1] else 1
        try:
            for _ in self.stream(io.BytesIO(self._data[first.start + column - 1 :]),
                                 Reading(self.reading.terminator, self.reading.unit), first.number, 0, column):
                pass
        except InputError:
            return False
        return True

    def _made(self, here: Position, number: int, text: str) -> Case:
        first = self._lines[here[0]]
        return Case(number, text, first.number, first.column(here[1]))

    def _repeats(self, copy: int) -> InputError:
        line = self._lines[copy]
        return InputError("this line repeats the line before it", line.number, line.column(0))

    def _good(self, here: Position) -> bool:
        """Whether a deck starts at ``here``: a good one (the last one too), or the end of the input."""
        if self._line(here[0]) is None:  # past the end of the input
            return False
        if here[0] == self._end:
            return here[1] == 0
        span = self.layout.span(here)
        self._line(here[0] + len(span))
        if self._end is not None and here[0] + len(span) >= self._end:
            last = self._last(here)
            return last is not None and self.rules.deck(last) is not None
        tokens = self._tokens(here, span)
        return tokens is not None and self.rules.deck(tokens) is not None

    def _copy(self, bad: Position) -> int | None:
        """The line of the bad deck at ``bad`` that repeats the line before it, where the deck read
        without it is good (or, at the deck's first line, a good deck starts after it)."""
        lines = self.layout.span(bad)
        for k in range(0 if bad[1] == 0 else 1, len(lines)):
            at = bad[0] + k
            line = self._line(at)
            before = self._lines[at - 1].tokens if at else self._before
            if line is None or at == self._end or line.tokens != before:
                continue
            tokens = self._tokens(bad, lines, at)
            return at if tokens is not None and self.rules.deck(tokens) is not None else None
        return None

    def _after(self, here: Position, copy: int) -> Position:
        """Where the deck after the one at ``here`` starts, its line ``copy`` left out."""
        after = self.layout.after(here)
        return (after[0] + 1, after[1]) if copy <= after[0] else after

    def _resume(self, bad: Position) -> Position | None:
        """Where the reading takes up after a bad deck at ``bad``: the layout's next start, or one
        line before or after it, the first where a good deck starts; the next start if none does,
        but ``None`` where that is the last deck's (whose lines reach the end of the input) and no
        good deck starts after it either (the deck after is bad too where a line missing in a
        ``flow`` layout took a deck's start)."""
        after = self.layout.after(bad)
        found = self._starts(after, bad)
        if found is not None:
            return found
        self._line(after[0] + len(self.layout.span(after)))
        if self._end is not None and after[0] + len(self.layout.span(after)) >= self._end:
            return after if self._starts(self.layout.after(after), after) else None
        return after

    def _starts(self, after: Position, bad: Position) -> Position | None:
        """The layout's start ``after``, or one line before or after it: the first after ``bad`` where
        a good deck starts, if one does."""
        for here in (after, (after[0] - 1, after[1]), (after[0] + 1, after[1])):
            if here > bad and self._good(here) and self._followed(here):
                return here
        return None

    def _followed(self, here: Position) -> bool:
        """Whether the good deck at ``here`` is the last one, or a good deck (or the end) follows it:
        a deck read a line or a few cards off may still make a deck (in 10-20-30, by the counts of its
        values), two in a row hardly."""
        reach = here[0] + len(self.layout.span(here))
        self._line(reach)
        return self._end is not None and reach >= self._end or self._good(self.layout.after(here))

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
                return InputError("this line repeats the line before it", self._lines[k].number,
                                  self._lines[k].column(0))
        for k, (line, cards) in enumerate(zip(lines, self.layout.span(here), strict=False)):
            if len(line.tokens) != cards:
                # (a line of a flow layout may hold the end of the deck before, named at this line too)
                which = f"deck {number} starts on this line, which has" if k == 0 and here[1] else "this line has"
                return InputError(f"{which} {len(line.tokens)} cards; this file's decks have {self.layout}",
                                  line.number, line.column(0))
        if len(tokens) != DECK:
            return self._size_error(tokens, number, after, where)
        return self.rules.deck_error(tokens, number, where)

    def _size_error(self, tokens: list[bytes], number: int, after: Position,
                    where: Callable[[int], tuple[int, int]]) -> InputError:
        nxt = self._lines[after[0]]
        then = "the input ends" if after[0] == self._end else "the next deck starts"
        if len(tokens) < DECK:
            return InputError(f"deck {number} has {len(tokens)} of {DECK} cards: {then} on line {nxt.number}",
                              *where(len(tokens) - 1))
        return InputError(f"deck {number} has {len(tokens)} cards, not {DECK}: {then} on line {nxt.number}",
                          *where(DECK))
