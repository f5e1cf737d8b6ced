"""Chinese Mahjong (UVa 11210): which tiles would complete a hand of thirteen?

Rules (``judge-data/RULES.md``): for each of the 34 kinds of tile **of which the hand
holds fewer than four**, add one; that kind is waited for when the fourteen tiles split
into exactly one eye (a pair) and four melds, a meld being a pong (three identical tiles)
or a chow (three consecutive tiles of one suit, no wrap-around, never honours). Kongs
and special hands (thirteen orphans and the like) do not count; four copies in a hand
may be split (a pong plus one tile in a chow). The answer lists the waited tiles in the
order 1T..9T, 1S..9S, 1W..9W, DONG, NAN, XI, BEI, ZHONG, FA, BAI.

>>> hand = "1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA"
>>> ENGINE.solve(Case(1, hand), trace=False).line
'Case 1: 1S 4S FA'
>>> ENGINE.solve(Case(2, "1S 2S 3S 4S 5S 6S 7S 8S 9S 1T 3T 5T 7T"), trace=False).line
'Case 2: Not ready'

Input
-----
A hand is one line of 13 tiles separated by spaces or tabs; blank lines are skipped and
a line whose first token is ``0`` ends the input. Tiles are case-sensitive, as the
judge reads them. A hand holding five copies of a kind is refused. The canonical text
of a hand is its tiles sorted in the judge order above, so the same hand written in
any order is the same case.

How it is solved
----------------
The three suits and the honours are independent *groups*: no meld crosses from one to
another. A suit group, seen as its nine counts, is *M* when it splits into melds alone,
*E* when it splits into one eye plus melds, and broken (*X*) otherwise; an honour kind
is M with 0 or 3 tiles, E with 2, X with 1 or 4. Fourteen tiles win exactly when one
group is E and all others are M. So thirteen tiles can only wait when every group but
at most one is M or E already, and then they wait for:

* one X group and no E group: the tiles that make the X group E;
* one X group and one E group: the tiles that make the X group M;
* no X group and two E groups: the tiles that make either E group M.

A precomputed table (``mahjong_table.bin``, made by :func:`build_table`) gives, for
every suit group a hand can hold, its class and the tiles that complete it, so a hand is
solved with four table look-ups. A second one (:func:`build_split_table`), read only
for traces, holds a split of every suit group that splits.

Trace (version 1)
-----------------
``{"version": 1, "proofs": ["1S|FA FA|1S 1S 1S|2S 2S 2S|3S 3S 3S|7S 8S 9S", ...]}``

One proof per waited tile, in the order of the answer (none for "Not ready"). A proof
is six groups of tile names separated by ``|``: the waited tile, then the eye (two
tiles), then the four melds (three tiles each: a pong, or a chow in rising order), the
melds in the judge order of their first tiles. Eye and melds together are exactly the
hand's thirteen tiles plus the waited one.

>>> ENGINE.solve(Case(1, hand)).trace["proofs"]  # doctest: +NORMALIZE_WHITESPACE
['1S|FA FA|1S 1S 1S|2S 2S 2S|3S 3S 3S|7S 8S 9S', '4S|FA FA|1S 2S 3S|1S 2S 3S|2S 3S 4S|7S 8S 9S',
 'FA|1S 1S|2S 2S 2S|3S 3S 3S|7S 8S 9S|FA FA FA']
"""

from __future__ import annotations

import dataclasses
import os
import random
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import IO, Any

from worker.engines.base import (
    Case,
    Diagnostic,
    Engine,
    InputError,
    Result,
    TraceError,
    read_pieces,
    show,
    tokens_with_columns,
)

SUITS = "TSW"
HONOURS = ("DONG", "NAN", "XI", "BEI", "ZHONG", "FA", "BAI")
#: Every kind of tile in the judge order; a kind's index here is its number (0..33).
TILES: tuple[str, ...] = tuple(f"{rank}{suit}" for suit in SUITS for rank in range(1, 10)) + HONOURS
HAND_SIZE = 13
MAX_COPIES = 4
TERMINATOR = "0"

_KIND: dict[str, int] = {tile: kind for kind, tile in enumerate(TILES)}
_KIND_BYTES: dict[bytes, int] = {tile.encode(): kind for kind, tile in enumerate(TILES)}
_EXPECTED_TILES = "1T-9T, 1S-9S, 1W-9W, DONG, NAN, XI, BEI, ZHONG, FA or BAI"

# A hand is summed into one integer, its *key*, holding the four groups side by side:
# group g (0..2 the suits, 3 the honours) from bit 21*g up, as the base-5 number whose
# digit r counts the tiles of rank r. Counts never exceed 4 and 5**9 < 2**21, so adding
# the tiles' units never carries from one digit or group into the next.
_GROUP_BITS = 21
_GROUP_MASK = (1 << _GROUP_BITS) - 1
_SUIT_KEYS = 5**9
_HONOUR_KEYS = 5**7
_UNIT: dict[str, int] = {
    tile: 5 ** (kind % 9 if kind < 27 else kind - 27) << (_GROUP_BITS * min(kind // 9, 3))
    for kind, tile in enumerate(TILES)
}
_UNIT_BYTES: dict[bytes, int] = {tile.encode(): unit for tile, unit in _UNIT.items()}

# Codes of a group's class, chosen so that their sum over the four groups tells the
# cases apart: one X and no E sums to 16, one X and one E to 17, two Es and no X to 2;
# any other sum is not ready. _DEAD is a group no tile can mend (a sum with it is >= 32);
# _RARE marks a suit key whose entry is kept outside the one-byte table.
_M, _E, _X, _DEAD, _RARE = 0, 1, 16, 32, 1024

TABLE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mahjong_table.bin")
_TABLE_MAGIC = b"MJ11210\x05"
_RARE_BYTE = 255

#: (text, key) of the hands parse() yielded last, oldest first. Callers usually parse a
#: batch of hands, then solve it in order: solve() then finds its hand's key at the head
#: instead of splitting and summing the text again (a third of its work; parse() has
#: the tiles' hashes at hand, so summing there is cheaper). Texts are compared by
#: identity, so any other use (a hand solved out of order, in another process, by another
#: thread meanwhile) only misses and computes the key; the deque is bounded.
_recent: deque[tuple[str, int]] = deque(maxlen=1024)
_NO_ENTRY: tuple[str | None, int] = (None, 0)


class MahjongEngine(Engine):
    """UVa 11210 Chinese Mahjong: the tiles a hand of thirteen waits for."""

    slug = "mahjong"
    title = "Chinese Mahjong (UVa 11210)"
    summary = "Thirteen tiles in hand: list every tile that completes it into an eye and four melds."
    unit = "hand"
    number_name = "waits"
    outcomes = ("ready", "not-ready")
    terminator = TERMINATOR
    trace_version = 1
    typical_solve_us = 12

    # ----------------------------------------------------------------- reading

    def parse(self, stream: IO[bytes], warnings: list[Diagnostic] | None = None) -> Iterator[Case]:
        """Yield the hands of a judge file, one per line, in constant memory.

        >>> import io
        >>> warnings = []
        >>> list(ENGINE.parse(io.BytesIO(b"FA 1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA\\n"), warnings))
        [Case(index=1, text='1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA', line=1, column=1)]
        >>> [str(w) for w in warnings]
        ['no terminating "0" at end of file']
        >>> list(ENGINE.parse(io.BytesIO(b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 10T FA FA\\n0\\n"), []))
        Traceback (most recent call last):
        ...
        worker.engines.base.InputError: line 1, column 31: unknown tile "10T" (tiles are 1T-9T, 1S-9S, 1W-9W, \
DONG, NAN, XI, BEI, ZHONG, FA or BAI)
        """
        return _read(stream, warnings if warnings is not None else [])

    # ----------------------------------------------------------------- solving

    def solve(self, case: Case, trace: bool = True) -> Result:
        """The waited tiles of a canonical hand (as :meth:`parse` yields it: 13 tiles, at
        most four of a kind; only unknown tiles are checked again here).

        >>> r = ENGINE.solve(Case(3, "1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T"), trace=False)
        >>> r.outcome, r.number, r.detail
        ('ready', 9, ['1T', '2T', '3T', '4T', '5T', '6T', '7T', '8T', '9T'])
        >>> ENGINE.solve(Case(4, "1T 9T 1S 9S 1W 9W DONG NAN XI BEI ZHONG FA BAI")).trace
        {'version': 1, 'proofs': []}
        """
        return (_solve or _load())(case, trace)

    def judge_line(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        """The judge line for a stored result, numbered ``index``.

        >>> ENGINE.judge_line(7, "ready", 2, ["5W", "6W"]), ENGINE.judge_line(8, "not-ready", 0, [])
        ('Case 7: 5W 6W', 'Case 8: Not ready')
        """
        if outcome == "ready":
            return f"Case {index}: " + " ".join(detail)
        return f"Case {index}: Not ready"

    # ----------------------------------------------------------------- checking

    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        """Check every proof of a trace, and that the proofs cover exactly the waited tiles.

        The waited tiles are found again by a plain search, independent of the table.
        The result's line is numbered 1: a trace does not know its case's number (use
        :meth:`judge_line` to renumber it).

        >>> hand = "1W 1W 1W 1W 2W 3W 4W 5W 6W 7W 8W 9W 9W"
        >>> ENGINE.replay(hand, ENGINE.solve(Case(5, hand)).trace).line
        'Case 1: 3W 6W 9W'
        >>> ENGINE.replay(hand, {"version": 1, "proofs": ["9W|9W 9W|1W 1W 1W|1W 2W 3W|4W 5W 6W|7W 8W 9W"]})
        Traceback (most recent call last):
        ...
        worker.engines.base.TraceError: the hand waits for 3W 6W 9W, the trace proves 9W
        """
        try:
            counts = _counts(text)
        except InputError as error:
            raise TraceError(f"the hand cannot be replayed: {error}") from None
        if not isinstance(trace, dict) or trace.get("version") != 1:
            raise TraceError("not a mahjong trace of version 1")
        proofs = trace.get("proofs")
        if not isinstance(proofs, list) or not all(isinstance(p, str) for p in proofs):
            raise TraceError('"proofs" must be a list of strings')
        proved = [_check_proof(counts, proof) for proof in proofs]
        expected = [TILES[kind] for kind in reference_waits(counts)]
        if proved != expected:
            raise TraceError(
                f"the hand waits for {' '.join(expected) or 'nothing'}, "
                f"the trace proves {' '.join(proved) or 'nothing'}"
            )
        outcome = "ready" if proved else "not-ready"
        return Result(outcome, len(proved), proved, self.judge_line(1, outcome, len(proved), proved), trace)

    # ----------------------------------------------------------------- making and spotting files

    def generate(self, rng: random.Random) -> str:
        """A random hand as a judge file writes it: 13 tiles on one line, in random order.

        Two hands in five are drawn from a full set of 136 tiles (rarely ready), three in
        ten are a winning hand less one tile (always ready) and three in ten are drawn
        from one suit (often waiting for many tiles).

        >>> hand = ENGINE.generate(random.Random(7)).split()
        >>> len(hand), all(tile in TILES for tile in hand)
        (13, True)
        """
        roll = rng.random()
        if roll < 0.4:
            tiles = rng.sample(_WALL, HAND_SIZE)
        elif roll < 0.7:
            tiles = _winning_hand(rng)
            del tiles[rng.randrange(len(tiles))]
        else:
            suit = rng.choice(SUITS)
            tiles = rng.sample([tile for tile in _WALL if tile[1:] == suit], HAND_SIZE)
        rng.shuffle(tiles)
        return " ".join(tiles)

    def sniff(self, head: bytes) -> bool:
        """Whether a file starts with lines of 13 mahjong tiles.

        >>> ENGINE.sniff(b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\\n1S 2S 3S 4"), ENGINE.sniff(b"QD AD 8H 5S")
        (True, False)
        >>> ENGINE.sniff(b"1 2 3 4 5 6 7 8 9 10 1 2 3 4"), ENGINE.sniff(b"DONG NAN XI B")
        (False, True)
        """
        lines = head.splitlines()
        if lines and not head.endswith((b"\n", b"\r")):
            tokens = lines.pop().split()  # the head may cut its last line, and token, short
            if not any(line.strip() for line in lines):  # ... when it is the first line
                tokens = tokens[:-1]
                return bool(tokens) and len(tokens) < HAND_SIZE and all(t in _KIND_BYTES for t in tokens)
        hands = 0
        for line in lines:
            tokens = line.split()
            if not tokens:
                continue
            if tokens[0] == b"0":
                break
            if len(tokens) != HAND_SIZE or not all(t in _KIND_BYTES for t in tokens):
                return False
            hands += 1
        return hands > 0


# --------------------------------------------------------------------- the reader


_SPACE = frozenset(b" \t\r\n\x0b\x0c")


def _plain(cls: type, names: tuple[str, ...]) -> bool:
    """Whether the dataclass ``cls`` is just the fields ``names``, with nothing run on
    creation: then filling its slots directly makes the same object as calling it.

    The reader makes a Case per line and the solver a Result per hand; their dataclass
    ``__init__`` (for Case, four ``object.__setattr__`` calls, as it is frozen) would
    cost a quarter of the reader's time and a tenth of the solver's. Checked once at
    import, so that a change to either class brings the constructor calls back instead
    of half-filled objects.
    """
    return tuple(field.name for field in dataclasses.fields(cls)) == names and not hasattr(cls, "__post_init__")


def _case_setters() -> tuple[Callable[[Case, Any], None], ...] | None:
    """Setters of the four slots of :class:`Case`, in field order, when Case is plain."""
    names = ("index", "text", "line", "column")
    if not _plain(Case, names):
        return None  # pragma: no cover
    return tuple(getattr(Case, name).__set__ for name in names)


_CASE_SETTERS = _case_setters()


def _pieces(stream: IO[bytes]) -> Iterator[tuple[int, int, Any]]:
    """:func:`read_pieces`, then one more piece: the end, on line 0, or the error that
    stopped the reading (bytes that are not text), at its place and in place of bytes.

    An error becomes a piece because it may come after the terminator, where it is
    only worth a warning; the reader learns that only when it handles the line before.
    """
    try:
        yield from read_pieces(stream)
    except InputError as error:
        yield error.line or 0, error.column or 0, error
        return
    yield 0, 0, b""


def _read(stream: IO[bytes], warnings: list[Diagnostic]) -> Iterator[Case]:
    """The cases of a file (the body of :meth:`MahjongEngine.parse`).

    A line usually comes as one piece and takes the fast path: split, sort by kind
    (which also rejects unknown tiles), compare tiles four places apart (five copies of
    a kind would be equal there), join. But :func:`read_pieces` may cut a long line into
    several pieces, so a piece is only handled once the next one shows that its line is
    over. Anything unusual (the terminator, an error, a line in pieces) goes token by
    token through :class:`_Line`.
    """
    pieces = _pieces(stream)
    held_line, held_column, held = next(pieces)  # the last piece read, not handled yet
    if held_line == 0:
        raise InputError("the file is empty")
    kind = _KIND_BYTES.__getitem__
    unit = _UNIT_BYTES.__getitem__
    remember = _recent.append
    space = _SPACE
    new = object.__new__
    setters: tuple[Any, ...] = _CASE_SETTERS or (None,) * 4
    set_index, set_text, set_line, set_column = setters
    index = 0
    slow: _Line | None = None  # the held line, once it came in several pieces
    for line, column, piece in pieces:
        if line == held_line:  # the held line goes on in this piece
            if slow is None:
                slow = _Line(held_line)
                slow.feed(held, held_column)
            if isinstance(piece, InputError):  # the file goes on with what is not text
                if slow.terminator:
                    _after_terminator(slow, index, [(line, column, piece)], warnings)
                    return
                raise piece
            slow.feed(piece, column)
            continue
        if slow is None:
            tiles = held.split()
            if len(tiles) == 13:  # HAND_SIZE
                try:
                    tiles.sort(key=kind)
                    plain = not (
                        tiles[0] == tiles[4] or tiles[1] == tiles[5] or tiles[2] == tiles[6]
                        or tiles[3] == tiles[7] or tiles[4] == tiles[8] or tiles[5] == tiles[9]
                        or tiles[6] == tiles[10] or tiles[7] == tiles[11] or tiles[8] == tiles[12]
                    )
                except KeyError:
                    plain = False
                if plain:
                    index += 1
                    if held[0] in space:
                        held_column += len(held) - len(held.lstrip())
                    text = b" ".join(tiles).decode()
                    remember((text, sum(map(unit, tiles))))  # cheap now: the tiles' hashes are known
                    if set_index:  # Case(index, text, held_line, held_column), see _case_setters
                        made = new(Case)
                        set_index(made, index)
                        set_text(made, text)
                        set_line(made, held_line)
                        set_column(made, held_column)
                        yield made
                    else:  # pragma: no cover
                        yield Case(index, text, held_line, held_column)
                    held_line, held_column, held = line, column, piece
                    continue
            if tiles:
                # Not a plain hand: read it again token by token, which raises the right
                # error or finds the terminator.
                slow = _Line(held_line)
                slow.feed(held, held_column)
        if slow is not None:
            hand = slow.finish()
            if hand is None:
                _after_terminator(slow, index, chain(((line, column, piece),), pieces), warnings)
                return
            if hand:
                index += 1
                yield Case(index, hand, slow.line, slow.column)
            slow = None
        held_line, held_column, held = line, column, piece
    if isinstance(held, InputError):
        raise held
    if index == 0:
        raise InputError("the file has no hands")
    warnings.append(Diagnostic(f'no terminating "{TERMINATOR}" at end of file'))


class _Line:
    """One line read token by token: checks each tile as it comes, keeps only counts.

    Used for lines that came in several pieces and to find what is wrong with a line the
    fast path refused; memory stays constant however long the line is.
    """

    __slots__ = ("after", "column", "counts", "line", "terminator", "tiles")

    def __init__(self, line: int) -> None:
        self.line = line
        self.column = 0  # of the first token; 0 until there is one
        self.tiles = 0
        self.counts = [0] * len(TILES)
        self.terminator = False
        self.after: int | None = None  # column of the first token after a terminator

    def feed(self, piece: bytes, column: int) -> None:
        for token, at in tokens_with_columns(piece, column):
            if self.terminator:
                if self.after is None:
                    self.after = at
                return
            if self.column == 0:
                self.column = at
                if token == b"0":
                    self.terminator = True
                    continue
            kind = _KIND_BYTES.get(token)
            if kind is None:
                raise InputError(_unknown_tile(token), self.line, at)
            if self.counts[kind] == MAX_COPIES:
                raise InputError(
                    f"{MAX_COPIES + 1} copies of {TILES[kind]} in one hand (at most {MAX_COPIES})", self.line, at
                )
            self.counts[kind] += 1
            self.tiles += 1

    def finish(self) -> str | None:
        """The canonical hand; ``""`` for a blank line, ``None`` for the terminator line."""
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
    elif token.upper() in _KIND_BYTES:
        hint = "; tiles are written in upper case"
    else:
        hint = ""
    return f"unknown tile {show(token)} (tiles are {_EXPECTED_TILES}{hint})"


def _after_terminator(
    terminator: _Line, index: int, rest: Iterable[tuple[int, int, Any]], warnings: list[Diagnostic]
) -> None:
    """Handle the terminator line: an error when no hand came before it, else warn about
    the first text after it (reading no further than that)."""
    if index == 0:
        raise InputError("the file has no hands", terminator.line, terminator.column)
    message = f'text after the terminating "{TERMINATOR}" is ignored'
    if terminator.after is not None:
        warnings.append(Diagnostic(message, terminator.line, terminator.after))
        return
    for line, column, piece in rest:
        if isinstance(piece, InputError):  # what comes after the end need not even be text
            warnings.append(Diagnostic(message, line, column))
            return
        found = tokens_with_columns(piece, column) if line else []  # line 0: the end
        if found:
            warnings.append(Diagnostic(message, line, found[0][1]))
            return


def _counts(text: str) -> list[int]:
    """The 34 counts of a hand written as text; ``InputError`` unless it is one valid hand.

    >>> _counts("1T 1T 1T 2T 3T 4T 5T 6T 7T 8T 9T 9T 9T")[:9]
    [3, 1, 1, 1, 1, 1, 1, 1, 3]
    """
    line = _Line(1)
    line.feed(text.encode(), 1)
    if not line.finish():
        raise InputError(f"expected a hand of {HAND_SIZE} tiles")
    return line.counts


# --------------------------------------------------------------------- solving


#: Suit keys whose value is not in the one-byte table: key -> value index (see build_table).
_rare: dict[int, int] = {}
#: The solver, made by _load() on first use.
_solve: Callable[[Case, bool], Result] | None = None


def _load() -> Callable[[Case, bool], Result]:
    """Read the table file and build the solver (once per process)."""
    global _solve
    payload = _read_section(0)
    at, values = 0, []
    for size in (2, 2, 8):  # suit values, honour values, rare suit keys
        count = int.from_bytes(payload[at : at + 2], "little")
        at += 2
        values.append(_numbers(payload, at, count, size))
        at += size * count
    suit_values, honour_values, rare = values
    _rare.update((entry >> 16, entry & 0xFFFF) for entry in rare)
    view = memoryview(payload)
    suits, honours = view[at : at + _SUIT_KEYS], view[at + _SUIT_KEYS : at + _SUIT_KEYS + _HONOUR_KEYS]
    # Lists indexed by a value index: the class code, and per group the tiles of the mask.
    codes = [value >> 9 for value in suit_values]
    honour_codes = [value >> 9 for value in honour_values]
    names = []
    for group in range(4):
        of_mask = _names_by_mask(TILES[9 * group : 9 * group + 9])
        names.append([of_mask[value & 511] for value in (honour_values if group == 3 else suit_values)])
    # In the table, byte 255 means "a rare key": its code takes any sum out of the ready
    # cases, so that the solver looks the key up among the rare ones.
    byte_codes = codes[:_RARE_BYTE] + [_RARE]
    _solve = _make_solver(suits, honours, byte_codes, codes, honour_codes, names)
    return _solve


def _numbers(payload: bytes, at: int, count: int, size: int) -> list[int]:
    """``count`` little-endian unsigned integers of ``size`` (2, 4 or 8) bytes from ``payload[at:]``."""
    if sys.byteorder == "little":
        view = memoryview(payload)[at : at + size * count]
        numbers: list[int] = (view.cast("H") if size == 2 else view.cast("I") if size == 4 else view.cast("Q")).tolist()
        return numbers
    return [int.from_bytes(payload[i : i + size], "little") for i in range(at, at + size * count, size)]


def _names_by_mask(names: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The names picked by each mask of ``len(names)`` bits, lowest bit first.

    >>> _names_by_mask(("a", "b", "c"))[5]
    ('a', 'c')
    """
    by_mask: list[tuple[str, ...]] = [()]
    for mask in range(1, 1 << len(names)):
        low = mask & -mask
        by_mask.append((names[low.bit_length() - 1], *by_mask[mask ^ low]))
    return by_mask


def _make_solver(suits: Any, honours: Any, byte_codes: list[int], codes: list[int], honour_codes: list[int],
                 names: list[list[tuple[str, ...]]]) -> Callable[[Case, bool], Result]:
    """The body of :meth:`MahjongEngine.solve`, with the table bound to local names (the
    hot path: keep it lean). Four look-ups, then the case analysis of the module
    docstring on the sum of the four groups' class codes."""
    mask = _GROUP_MASK
    unit = _UNIT.__getitem__
    recent = _recent
    rare = _rare
    new = object.__new__ if _plain(Result, ("outcome", "number", "detail", "line", "trace")) else None
    n_t, n_s, n_w, n_h = names

    def solve(case: Case, trace: bool = True) -> Result:
        text = case.text
        entry = _NO_ENTRY
        if recent:
            try:  # another thread may take the head meanwhile: check what was taken
                entry = recent[0]
                if entry[0] is text:
                    entry = recent.popleft()
            except IndexError:
                entry = _NO_ENTRY
        if entry[0] is text:
            key = entry[1]
        else:
            try:
                key = sum(map(unit, text.split()))
            except KeyError:
                _counts(text)  # raises the precise error
                raise
        t = suits[key & mask]
        s = suits[key >> 21 & mask]
        w = suits[key >> 42 & mask]
        h = honours[key >> 63]
        code = byte_codes[t] + byte_codes[s] + byte_codes[w] + honour_codes[h]
        if code >= _RARE:
            t = rare.get(key & mask, t)
            s = rare.get(key >> 21 & mask, s)
            w = rare.get(key >> 42 & mask, w)
            code = codes[t] + codes[s] + codes[w] + honour_codes[h]
        if code == 2 or code == 16:  # the E or X groups' tiles; M groups hold none
            waits = n_t[t] + n_s[s] + n_w[w] + n_h[h]
        elif code == 17:  # one X and one E: only the X group's tiles
            # An X honour group here is a lone honour beside a pair: it cannot be mended.
            waits = n_t[t] if codes[t] == _X else n_s[s] if codes[s] == _X else n_w[w] if codes[w] == _X else ()
        else:
            waits = ()
        if new is None:  # pragma: no cover
            result = Result("", 0, [], "")
        else:  # Result(...) without its __init__, see _plain; every field is set below
            result = new(Result)
        if waits:
            result.outcome, result.number, result.detail = "ready", len(waits), list(waits)
            result.line = f"Case {case.index}: {' '.join(waits)}"
        else:
            result.outcome, result.number, result.detail = "not-ready", 0, []
            result.line = f"Case {case.index}: Not ready"
        result.trace = {"version": 1, "proofs": _proofs(key, waits) if waits else []} if trace else None
        return result

    return solve


# --------------------------------------------------------------------- traces


#: Per group (0..2 suits, 3 honours) and group key: its split as (eye, melds), filled as
#: proofs ask for them.
_splits: list[dict[int, tuple[str, str]]] = [{}, {}, {}, {}]
#: Suit key -> its split, packed (see build_split_table); read on the first proof.
_split_table: dict[int, int] | None = None
#: The group of each tile and its unit within its group's key.
_GROUP_UNIT: dict[str, tuple[int, int]] = {
    tile: (min(kind // 9, 3), _UNIT[tile] >> _GROUP_BITS * min(kind // 9, 3)) for kind, tile in enumerate(TILES)
}


def _proofs(key: int, waits: tuple[str, ...]) -> list[str]:
    """One proof per waited tile. Only the waited tile's group changes, so the other
    groups' splits are looked up once per hand; splits are cached across hands."""
    keys = [key & _GROUP_MASK, key >> 21 & _GROUP_MASK, key >> 42 & _GROUP_MASK, key >> 63]
    base = [cache.get(keys[group]) for group, cache in enumerate(_splits)]
    proofs = []
    for tile in waits:
        group, unit = _GROUP_UNIT[tile]
        splits = base.copy()
        splits[group] = _splits[group].get(keys[group] + unit) or _split(group, keys[group] + unit)
        if None in splits:  # another group's split is not cached yet
            for other in range(4):
                if splits[other] is None and other != group:
                    splits[other] = base[other] = _split(other, keys[other])
        (e0, m0), (e1, m1), (e2, m2), (e3, m3) = splits  # type: ignore[misc]  # None: the tile does not win
        proofs.append(f"{tile}|{e0 or e1 or e2 or e3}|{'|'.join(filter(None, (m0, m1, m2, m3)))}")
    return proofs


#: Per suit: the text of each meld code (a pong of rank r is r, a chow from r is 9 + r),
#: and of each eye code (rank + 1; 0 is no eye).
_MELD_TEXT = [
    [" ".join([TILES[9 * g + r]] * 3) for r in range(9)] + [" ".join(TILES[9 * g + r : 9 * g + r + 3]) for r in range(7)]
    for g in range(3)
]
_EYE_TEXT = [[""] + [f"{TILES[9 * g + r]} {TILES[9 * g + r]}" for r in range(9)] for g in range(3)]


def _split(group: int, key: int) -> tuple[str, str] | None:
    """A group's split as (its eye or "", its melds joined by "|"); ``None`` when it has
    none. Suits are looked up in the split table, honours are plain pongs and a pair."""
    global _split_table
    result: tuple[str, str] | None = None
    if group == 3:
        counts = [key // 5**j % 5 for j in range(7)]
        if all(c in (0, 2, 3) for c in counts) and counts.count(2) <= 1:
            names = HONOURS
            eye = " ".join(names[j] for j in range(7) if counts[j] == 2 for _ in range(2))
            result = (eye, "|".join(" ".join([names[j]] * 3) for j in range(7) if counts[j] == 3))
    else:
        if _split_table is None:
            _split_table = _unpack_splits(_read_section(1))
        packed = _split_table.get(key)
        if packed is not None:
            texts = _MELD_TEXT[group]
            melds = [texts[packed >> shift & 15] for shift in _SHIFTS[: packed >> 4 & 7]]
            result = (_EYE_TEXT[group][packed & 15], "|".join(melds))
    if result is not None:  # caching splits only bounds the caches: 21,743 keys a suit split
        _splits[group][key] = result
    return result


_SHIFTS = (8, 12, 16, 20)


# --------------------------------------------------------------------- replaying


def _check_proof(counts: list[int], proof: str) -> str:
    """Check one proof against the hand's counts; the waited tile it proves."""
    groups = [group.split(" ") for group in proof.split("|")]
    if [len(g) for g in groups] != [1, 2, 3, 3, 3, 3]:
        raise TraceError(f"proof {proof!r}: expected the waited tile, an eye of 2 tiles and 4 melds of 3")
    for group in groups:
        for tile in group:
            if tile not in _KIND:
                raise TraceError(f"proof {proof!r}: unknown tile {tile!r}")
    (wait,), eye, *melds = [[_KIND[tile] for tile in group] for group in groups]
    if counts[wait] >= MAX_COPIES:
        raise TraceError(f"proof {proof!r}: the hand holds all four {TILES[wait]} already")
    if eye[0] != eye[1]:
        raise TraceError(f"proof {proof!r}: the eye {' '.join(groups[1])} is not a pair")
    for meld, written in zip(melds, groups[2:]):
        pong = meld[0] == meld[1] == meld[2]
        chow = meld[0] < 27 and meld[0] % 9 <= 6 and meld[1] == meld[0] + 1 and meld[2] == meld[0] + 2
        if not (pong or chow):
            raise TraceError(f"proof {proof!r}: {' '.join(written)} is neither a pong nor a chow")
    if [m[0] for m in melds] != sorted(m[0] for m in melds):
        raise TraceError(f"proof {proof!r}: the melds are not in the order of their first tiles")
    used = [0] * len(TILES)
    for kind in chain(eye, *melds):
        used[kind] += 1
    needed = counts.copy()
    needed[wait] += 1
    if used != needed:
        raise TraceError(f"proof {proof!r}: its tiles are not the hand plus {TILES[wait]}")
    return TILES[wait]


def reference_waits(counts: list[int]) -> list[int]:
    """The waited kinds of a hand's 34 counts, by plain search (a second implementation,
    independent of the table: replay uses it).

    >>> reference_waits(_counts("1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA"))
    [9, 12, 32]
    """
    counts = counts.copy()
    waits = []
    for kind in range(len(TILES)):
        if counts[kind] < MAX_COPIES:
            counts[kind] += 1
            if _wins(counts):
                waits.append(kind)
            counts[kind] -= 1
    return waits


def _wins(counts: list[int]) -> bool:
    """Whether 14 tiles split into an eye and melds: try each eye, then take melds from
    the lowest tile up (it is in a pong or in a chow starting at it)."""
    for kind in range(len(TILES)):
        if counts[kind] >= 2:
            counts[kind] -= 2
            found = _melds(counts, 0)
            counts[kind] += 2
            if found:
                return True
    return False


def _melds(counts: list[int], kind: int) -> bool:
    while kind < len(TILES) and counts[kind] == 0:
        kind += 1
    if kind == len(TILES):
        return True
    if counts[kind] >= 3:
        counts[kind] -= 3
        found = _melds(counts, kind)
        counts[kind] += 3
        if found:
            return True
    if kind < 27 and kind % 9 <= 6 and counts[kind + 1] and counts[kind + 2]:
        for k in (kind, kind + 1, kind + 2):
            counts[k] -= 1
        found = _melds(counts, kind)
        for k in (kind, kind + 1, kind + 2):
            counts[k] += 1
        return found
    return False


# --------------------------------------------------------------------- random hands

_WALL: list[str] = [tile for tile in TILES for _ in range(MAX_COPIES)]


def _winning_hand(rng: random.Random) -> list[str]:
    """Fourteen tiles that win: an eye and four random melds, at most four of a kind."""
    while True:
        counts = [0] * len(TILES)
        counts[rng.randrange(len(TILES))] += 2
        for _ in range(4):
            if rng.random() < 0.5:
                start = 9 * rng.randrange(3) + rng.randrange(7)
                for k in (start, start + 1, start + 2):
                    counts[k] += 1
            else:
                counts[rng.randrange(len(TILES))] += 3
        if max(counts) <= MAX_COPIES:
            return [TILES[kind] for kind, count in enumerate(counts) for _ in range(count)]


# --------------------------------------------------------------------- the table


def build_table() -> bytes:
    """The solver's table, uncompressed: section 0 of ``mahjong_table.bin``.

    Layout, little-endian::

        u16 S, S x u16   suit values: class code << 9 | mask of ranks; the most used first
        u16 H, H x u16   honour values, the same way (a mask of honour kinds)
        u16 R, R x u64   rare suit keys: key << 16 | index of its suit value
        5**9 x u8        the suit value of every suit key (the base-5 number of its
                         counts); 255 means "a rare key"
        5**7 x u8        the honour value of every honour key

    Value 0 is the dead group. A suit's mask is the ranks that make it E when it holds
    3n+1 tiles, M when it holds 3n+2; an honour group's mask is its pairs (E) or its lone
    tile (X). The 255 values most keys use fit the byte; the few keys of the others are
    listed apart, so the table is one byte a key.
    """
    import struct
    from collections import Counter

    suit_classes = _suit_classes()
    honour_classes = _honour_classes()
    used = Counter(suit_classes.values())
    suit_values = [(_DEAD, 0)] + sorted(used, key=lambda value: (-used[value], value))
    honour_values = [(_DEAD, 0)] + sorted(set(honour_classes) - {(_DEAD, 0)})
    suit_index = {value: i for i, value in enumerate(suit_values)}
    honour_index = {value: i for i, value in enumerate(honour_values)}
    suit_table = bytearray(_SUIT_KEYS)
    rare = []
    for key, value in sorted(suit_classes.items()):
        index = suit_index[value]
        if index < _RARE_BYTE:
            suit_table[key] = index
        else:
            suit_table[key] = _RARE_BYTE
            rare.append(key << 16 | index)
    out = []
    for code, values in (("H", [c << 9 | m for c, m in suit_values]),
                         ("H", [c << 9 | m for c, m in honour_values]), ("Q", rare)):
        out.append(struct.pack(f"<H{len(values)}{code}", len(values), *values))
    out.append(bytes(suit_table))
    out.append(bytes(honour_index[value] for value in honour_classes))
    return b"".join(out)


def build_split_table() -> bytes:
    """One split of every suit key that splits into melds, with or without an eye:
    section 1 of ``mahjong_table.bin``, uncompressed (only traces read it).

    Layout, little-endian: ``u32 N``, then ``N x u32`` keys, ascending, each written as
    its difference from the one before (which compresses well), then ``N x u32`` splits
    packed as ``eye rank + 1`` (0: no eye) in bits 0-3, the number of melds in
    bits 4-6, and meld ``i`` in bits ``8 + 4i`` up: a pong of rank ``r`` is ``r``, a chow
    starting at rank ``r`` is ``9 + r``. The eye is the lowest rank that leaves melds;
    melds are taken from the lowest tile up, a pong when what is left still splits.
    """
    import struct

    only_melds, with_eye = _suit_sets()
    splits = {}
    for key in only_melds | with_eye:
        size = sum(key >> 3 * r & 7 for r in range(9))
        eye = 0
        if size % 3 == 2:
            eye = next(r for r in range(9) if key >> 3 * r & 7 >= 2 and key - (2 << 3 * r) in only_melds) + 1
            key_left = key - (2 << 3 * (eye - 1))
        else:
            key_left = key
        melds = []
        while key_left:
            r = next(r for r in range(9) if key_left >> 3 * r & 7)
            if key_left >> 3 * r & 7 >= 3 and key_left - (3 << 3 * r) in only_melds:
                melds.append(r)
                key_left -= 3 << 3 * r
            else:
                melds.append(9 + r)
                key_left -= 73 << 3 * r  # one tile each of ranks r, r+1, r+2
        packed = eye | len(melds) << 4 | sum(meld << 8 + 4 * i for i, meld in enumerate(melds))
        splits[sum((key >> 3 * r & 7) * 5**r for r in range(9))] = packed
    keys = sorted(splits)
    steps = [b - a for a, b in zip([0] + keys, keys)]
    return struct.pack(f"<I{len(keys)}I{len(keys)}I", len(keys), *steps, *(splits[k] for k in keys))


def _unpack_splits(payload: bytes) -> dict[int, int]:
    from itertools import accumulate

    count = int.from_bytes(payload[:4], "little")
    numbers = _numbers(payload, 4, 2 * count, 4)
    return dict(zip(accumulate(numbers[:count]), numbers[count:]))


def _suit_sets() -> tuple[set[int], set[int]]:
    """The suit keys (three bits a rank) that split into up to four melds, and into an
    eye plus up to four melds, with at most four tiles of a rank."""
    units = [1 << 3 * r for r in range(9)]
    melds = [3 * u for u in units] + [units[r] + units[r + 1] + units[r + 2] for r in range(7)]

    def fits(key: int) -> bool:
        return all(key >> 3 * r & 7 <= MAX_COPIES for r in range(9))

    only_melds = {0}
    layer = {0}
    for _ in range(4):
        layer = {key + meld for key in layer for meld in melds if fits(key + meld)}
        only_melds |= layer
    with_eye = {key + 2 * u for key in only_melds for u in units if fits(key + 2 * u)}
    return only_melds, with_eye


def _suit_classes() -> dict[int, tuple[int, int]]:
    """(class code, mask) of every suit key of at most 13 tiles that is not dead.

    Works on keys of three bits per rank (cheap to add and test), turned into base-5
    keys at the end.
    """
    units = [1 << 3 * r for r in range(9)]
    only_melds, with_eye = _suit_sets()
    # The ranks that complete a key: into M for keys of 3n+2 tiles, into E for 3n+1.
    completed_by: dict[int, int] = {}
    for key in only_melds | with_eye:
        for r in range(9):
            if key >> 3 * r & 7:
                completed_by[key - units[r]] = completed_by.get(key - units[r], 0) | 1 << r
    classes = {}
    for key in only_melds | with_eye | set(completed_by):
        size = sum(key >> 3 * r & 7 for r in range(9))
        if size > HAND_SIZE:
            continue
        mask = completed_by.get(key, 0)
        if size % 3 == 0:
            value = (_M, 0) if key in only_melds else (_DEAD, 0)
        elif size % 3 == 1 or key not in with_eye:
            value = (_X, mask) if mask else (_DEAD, 0)
        else:
            value = (_E, mask)
        if value != (_DEAD, 0):
            classes[sum((key >> 3 * r & 7) * 5**r for r in range(9))] = value
    return classes


def _honour_classes() -> list[tuple[int, int]]:
    """(class code, mask) of every honour key 0..5**7-1, as a list indexed by key."""
    classes = []
    for key in range(_HONOUR_KEYS):
        counts = [key // 5**j % 5 for j in range(7)]
        broken = [j for j in range(7) if counts[j] in (1, 4)]
        pairs = sum(1 << j for j in range(7) if counts[j] == 2)
        if not broken and pairs.bit_count() <= 2:
            classes.append((pairs.bit_count() * _E, pairs))  # each pair may become a pong
        elif len(broken) == 1 and not pairs and counts[broken[0]] == 1:
            classes.append((_X, 1 << broken[0]))  # the lone tile may become the eye
        else:
            # Two broken kinds, four of a kind, or a lone tile beside a pair (which could
            # only become a second eye): nothing mends it.
            classes.append((_DEAD, 0))
    return classes


def write_table(path: str = TABLE_FILE) -> None:
    """Write ``mahjong_table.bin``: the magic, then each of :func:`build_table` and
    :func:`build_split_table` as its size, its compressed size (u32 little-endian each)
    and itself compressed as raw deflate (no zlib header or checksum: checking 2 MB
    would cost a millisecond at every start).

    Regenerate it with ``python -m worker.engines.mahjong --write-table``.
    """
    import zlib

    out = [_TABLE_MAGIC]
    for section in (build_table(), build_split_table()):
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)
        packed = packer.compress(section) + packer.flush()
        out += [len(section).to_bytes(4, "little"), len(packed).to_bytes(4, "little"), packed]
    with open(path, "wb") as f:
        f.write(b"".join(out))


def _read_section(section: int, path: str = TABLE_FILE) -> bytes:
    """Section 0 (the solver's table) or 1 (the splits) of the table file, uncompressed."""
    import zlib

    with open(path, "rb") as f:
        data = f.read()
    if data[: len(_TABLE_MAGIC)] != _TABLE_MAGIC:
        raise ValueError(f"{path} is not a mahjong table of this version")
    at = len(_TABLE_MAGIC)
    for _ in range(section):
        at += 8 + int.from_bytes(data[at + 4 : at + 8], "little")
    size, packed = int.from_bytes(data[at : at + 4], "little"), int.from_bytes(data[at + 4 : at + 8], "little")
    # Told its size, zlib fills one buffer instead of growing and joining several.
    return zlib.decompress(data[at + 8 : at + 8 + packed], -15, size)


ENGINE = MahjongEngine()

if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:] == ["--write-table"]:
        write_table()
        print(f"wrote {TABLE_FILE}")
    else:
        print("usage: python -m worker.engines.mahjong --write-table", file=sys.stderr)
        sys.exit(2)
