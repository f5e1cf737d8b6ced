"""Reading Chinese Mahjong judge files: a hand is one line of 13 tiles (case-sensitive, no kind five times);
blank lines are skipped, a line whose first token is ``0`` ends the input. A hand's canonical text is its
tiles in the judge order, so the same hand in any order is the same case.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import IO, Any

from worker.engines.mahjong.tiles import HAND_SIZE, KEY_UNIT_BYTES, KIND_BYTES, MAX_COPIES, TILES
from worker.engines.reading import Case, InputError, Piece, Reading, read_pieces, show, tokens_with_columns

TERMINATOR = "0"
UNIT = "hand"
_TERMINATOR = TERMINATOR.encode()  # as the first token of a line, ends the input
_EXPECTED_TILES = "1T-9T, 1S-9S, 1W-9W, DONG, NAN, XI, BEI, ZHONG, FA or BAI"

#: (text, key) of the hands parse() yielded last, oldest first: solving a batch in order, solve() finds
#: its hand's key at the head instead of summing the tiles again (a third of its work). Texts are
#: compared by identity, so any other use only misses and computes the key.
recent: deque[tuple[str, int]] = deque(maxlen=1024)

_SPACE = frozenset(b" \t\r\n\x0b\x0c")


def _pieces(stream: IO[bytes], line: int, column: int) -> Iterator[tuple[int, int, Any]]:
    """:func:`read_pieces`, then the end (on line 0) or the error that stopped it, as a piece: after
    the terminator an error is only worth a warning, which the reader knows only at that line."""
    try:
        yield from read_pieces(stream, line=line, column=column)
        yield 0, 0, b""
    except InputError as error:
        yield error.line or 0, error.column or 0, error


def read_hands(stream: IO[bytes], reading: Reading, start_line: int = 1, index: int = 0,
               start_column: int = 1) -> Iterator[Case]:
    """The hands of a judge file (or of its rest, from ``start_column`` of ``start_line``, after ``index``
    hands) in constant memory. A line in one piece takes the fast path (split, sort, compare tiles four
    apart for a fifth copy); any other goes token by token through :class:`_Line`.

    >>> import io
    >>> list(read_hands(io.BytesIO(b"FA 1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA\\n0\\n"), Reading("0", "hand")))
    [Case(index=1, text='1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA', line=1, column=1)]
    """
    pieces = _pieces(stream, start_line, start_column)
    held_line, held_column, held = next(pieces)  # the last piece read, not handled yet
    if held_line == 0:
        reading.unended(index, empty=not index and start_line == 1)
    kind = KIND_BYTES.__getitem__
    unit = KEY_UNIT_BYTES.__getitem__
    remember, new = recent.append, Case.new
    space = _SPACE
    slow: _Line | None = None  # the held line, once it came in several pieces
    for line, column, piece in pieces:
        if line == held_line:  # the held line goes on in this piece
            if slow is None:
                slow = _Line(held_line, held, held_column)
            if isinstance(piece, InputError):  # the file goes on with what is not text
                if slow.terminator:
                    _ended(slow, index, [(line, column, piece)], reading)
                    return
                if slow.bad is not None:
                    reading.fault(slow.bad, index + 1)
                raise piece
            slow.feed(piece, column)
            continue
        if slow is None:
            tiles = held.split()
            if len(tiles) == 13:  # HAND_SIZE
                try:
                    tiles.sort(key=kind)
                    fine = not (
                        tiles[0] == tiles[4] or tiles[1] == tiles[5] or tiles[2] == tiles[6]
                        or tiles[3] == tiles[7] or tiles[4] == tiles[8] or tiles[5] == tiles[9]
                        or tiles[6] == tiles[10] or tiles[7] == tiles[11] or tiles[8] == tiles[12]
                    )
                except KeyError:
                    fine = False
                if fine:
                    index += 1
                    if held[0] in space:
                        held_column += len(held) - len(held.lstrip())
                    text = b" ".join(tiles).decode()
                    remember((text, sum(map(unit, tiles))))  # cheap now: the tiles' hashes are known
                    yield new(index, text, held_line, held_column)
                    held_line, held_column, held = line, column, piece
                    continue
            if tiles:
                # Not a plain hand: read it again token by token, which raises the right
                # error or finds the terminator.
                slow = _Line(held_line, held, held_column)
        if slow is not None:
            try:
                hand = slow.finish()
            except InputError as error:  # a bad hand keeps its place: the next line is the next hand
                index += 1
                reading.fault(error, index)
                hand = ""
            if hand is None:
                _ended(slow, index, chain(((line, column, piece),), pieces), reading)
                return
            if hand:
                index += 1
                yield new(index, hand, slow.line, slow.column)
            slow = None
        held_line, held_column, held = line, column, piece
    if isinstance(held, InputError):
        raise held
    reading.unended(index)


class _Line:
    """One line read token by token in constant memory, checking each tile, keeping only counts."""

    __slots__ = ("after", "bad", "column", "counts", "line", "terminator", "tiles")

    def __init__(self, line: int, piece: bytes, column: int) -> None:
        self.line = line
        self.column = 0  # of the first token; 0 until there is one
        self.tiles = 0
        self.counts = [0] * len(TILES)
        self.terminator = False
        self.after: tuple[int, bytes] | None = None  # the first token after a terminator, and its column
        #: What is wrong with the line, at its first wrong token: :meth:`finish` raises it (the rest of the
        #: line is not read: a reader going on past a bad hand goes on at the next line).
        self.bad: InputError | None = None
        self.feed(piece, column)

    def feed(self, piece: bytes, column: int) -> None:
        if self.bad is not None:
            return
        for token, at in tokens_with_columns(piece, column):
            if self.terminator:
                if self.after is None:
                    self.after = at, token
                return
            if self.column == 0:
                self.column = at
                if token == _TERMINATOR:
                    self.terminator = True
                    continue
            kind = KIND_BYTES.get(token)
            if kind is None:
                self.bad = InputError(_unknown_tile(token), self.line, at)
                return
            if self.counts[kind] == MAX_COPIES:
                message = f"{MAX_COPIES + 1} copies of {TILES[kind]} in one hand (at most {MAX_COPIES})"
                self.bad = InputError(message, self.line, at)
                return
            self.counts[kind] += 1
            self.tiles += 1

    def finish(self) -> str | None:
        """The canonical hand; ``""`` for a blank line, ``None`` for the terminator line."""
        if self.bad is not None:
            raise self.bad
        if self.terminator:
            return None
        if self.tiles == 0:
            return ""
        if self.tiles != HAND_SIZE:
            plural = "" if self.tiles == 1 else "s"
            raise InputError(f"hand has {self.tiles} tile{plural}, expected {HAND_SIZE}", self.line, self.column)
        return " ".join(TILES[kind] for kind, count in enumerate(self.counts) for _ in range(count))


def _unknown_tile(token: bytes) -> str:
    if token == b"0":
        hint = '; "0" ends the input only as the first token of a line'
    elif token.upper() in KIND_BYTES:
        hint = "; tiles are written in upper case"
    else:
        hint = ""
    return f"unknown tile {show(token)} (tiles are {_EXPECTED_TILES}{hint})"


def _ended(terminator: _Line, index: int, rest: Iterable[Piece], reading: Reading) -> None:
    """The terminator line came after ``index`` hands; ``rest`` is what follows that line."""
    if terminator.after is not None:  # text on the terminator's own line
        column, token = terminator.after
        rest = [(terminator.line, column, token)]
    reading.ended(index, terminator.line, terminator.column, rest)


def counts_of(text: str) -> list[int]:
    """The 34 counts of a hand written as text; ``InputError`` unless it is one valid hand.

    >>> counts_of("1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T")[:9]
    [3, 1, 1, 1, 1, 1, 1, 1, 3]
    """
    line = _Line(1, text.encode(), 1)
    if not line.finish():
        raise InputError(f"expected a hand of {HAND_SIZE} tiles")
    return line.counts


