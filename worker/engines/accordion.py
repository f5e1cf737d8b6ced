"""Accordian Patience (UVa 127): deal a deck into a row of piles, folding it up to the left.

Rules (``judge-data/RULES.md``): cards are dealt one at a time onto a row of piles.
Whenever some top card can move, the leftmost such card moves: onto the pile three to
its left if it matches that pile's top card (same rank or same suit), else onto the pile
just to its left if it matches that one. An emptied pile is removed and the piles to its
right close up. When no top card can move, the next card is dealt. The answer is the
sizes of the piles left, left to right: ``6 piles remaining: 40 8 1 1 1 1``, or
``1 pile remaining: 52`` (outcome ``win``; any other count is a ``loss``).

>>> sample = ("QD AD 8H 5S 3H 5H TC 4D JH KS 6H 8S JS AC AS 8D 2H QS TS 3S AH 4H TH TD 3C 6S "
...           "8C 7D 4C 4S 7S 9H 7C 5D 2S KD 2D QH JD 6D 9D JC 2C KH 3D QC 6C 9S KC 7H 9C 5C")
>>> ENGINE.solve(Case(1, sample), trace=False).line
'6 piles remaining: 40 8 1 1 1 1'

Input
-----
Cards are two characters, rank ``A23456789TJQK`` then suit ``CDHS``; any whitespace
separates them and 52 make a deck whatever the line breaks. A token starting with ``#``
ends the input. Lower-case cards are refused: the judge's solutions compare characters
exactly and would misplay them. A deck holding a card twice is refused too (no judge
file has one, and the game is played with 52 distinct cards).

Trace (version 1)
-----------------
``{"version": 1, "deals": [d0, d1, ..., d51], "moves": [f, t, c, f, t, c, ...]}``

Play it back from an empty row: for each ``k`` in ``0..51``, deal card ``k`` of the deck
(the ``k``-th card of the case's text) as a new pile at the right end of the row, then
make the next ``deals[k]`` moves of ``moves``. ``moves`` is flat, three integers per
move, in play order: the top card of pile ``f`` goes onto pile ``t`` (``t`` is ``f - 1``
or ``f - 3``), and ``c`` names that card as a number ``0..51``: ``4 * rank + suit`` with
rank in ``A23456789TJQK`` and suit in ``CDHS`` order, so it is ``CARDS[c]`` (``0`` is
``AC``, ``51`` is ``KS``). Pile indices count from 0 at the left and hold just before
the move; a move that empties pile ``f`` removes it, and the piles right of it shift one
place left before the next move. A card that moves on at once from where it landed
makes a move of its own. So ``sum(deals) * 3 == len(moves)``, and the sizes of the piles
after the last move are the result's ``detail``.

>>> trace = ENGINE.solve(Case(1, sample)).trace
>>> trace["deals"][:6], trace["moves"][:6]
([0, 1, 0, 0, 0, 2], [1, 0, 1, 4, 1, 18])

Deal 2 (``AD``, card 1) would make pile 1 and moves onto pile 0 (``QD``); deal 6
(``5H``, card 18) would make pile 4 and moves three to the left, onto ``8H``.

Speed
-----
``solve`` is the hot path of ``dealer solve``: a card is a bit mask (one bit for its
rank, one for its suit) so matching is one ``&``; the row is kept as its top cards
only, with a flat table ``under`` giving, for each card, the card it covers; and the
leftmost card able to move is found by looking only where the last move can have made
one movable, never by scanning the row from the left (see :func:`_play`).
"""

from __future__ import annotations

from functools import lru_cache

import random
from collections.abc import Iterator
from operator import itemgetter
from typing import IO, Any, TypeGuard

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

RANKS = "A23456789TJQK"
SUITS = "CDHS"
DECK_SIZE = 52
#: Every card as the judge writes it; a card's number in traces is its place here.
CARDS = tuple(r + s for r in RANKS for s in SUITS)

#: A card as a bit mask: one bit for its rank, one for its suit. Two cards match
#: (same rank or same suit) exactly when their masks share a bit, so matching is one
#: ``&``. Masks are distinct and below 2**17, so they index flat tables; 0 is "no card".
_MASK: dict[str, int] = {
    r + s: (1 << ri) | (1 << (13 + si)) for ri, r in enumerate(RANKS) for si, s in enumerate(SUITS)
}
_TABLE_SIZE = max(_MASK.values()) + 1
#: Card number (place in :data:`CARDS`) by mask.
_NUMBER: list[int] = [0] * _TABLE_SIZE
for _number, _card in enumerate(CARDS):
    _NUMBER[_MASK[_card]] = _number
#: Bytes tables for reading a canonical deck in a few C calls (see :func:`_numbers`):
#: rank character -> 4 * rank, suit character -> suit, anything else -> 100 (too big to
#: be a card number, and two of them still fit in a byte).
_RANK_TIMES_4 = bytes(4 * RANKS.index(chr(b)) if chr(b) in RANKS else 100 for b in range(256))
_SUIT_NUMBER = bytes(SUITS.index(chr(b)) if chr(b) in SUITS else 100 for b in range(256))
_ALL_NUMBERS = bytes(range(DECK_SIZE))
_CANONICAL_SIZE = 3 * DECK_SIZE - 1
#: Mask by card number.
_MASK_BY_NUMBER: list[int] = [_MASK[card] for card in CARDS]
_VALID: frozenset[bytes] = frozenset(card.encode() for card in CARDS)
_RANK_BYTES = RANKS.encode()
_SUIT_BYTES = SUITS.encode()
#: Empty piles padded on the left of the row (top 0 matches nothing), so "the pile three
#: to the left" always exists and the hot loop needs no bounds checks.
_PAD = 3
#: Reusable ``under`` tables (one per concurrent game, so threads never share one):
#: allocating 70,000 slots per deck would cost more than playing it.
_SPARE_TABLES: list[list[int]] = []


class AccordionEngine(Engine):
    """UVa 127 "Accordian" Patience: the piles left after folding a deck to the left."""

    slug = "accordion"
    title = "Accordian Patience (UVa 127)"
    summary = "Deal 52 cards in a row, moving each onto a matching pile 1 or 3 to its left; count piles left."
    unit = "deck"
    number_name = "piles"
    outcomes = ("win", "loss")
    terminator = "#"
    trace_version = 1
    typical_solve_us = 80

    def parse(self, stream: IO[bytes], warnings: list[Diagnostic] | None = None) -> Iterator[Case]:
        """Yield the decks of a judge file, in constant memory.

        >>> import io
        >>> deck = " ".join(CARDS)
        >>> warnings = []
        >>> [(c.index, c.line) for c in ENGINE.parse(io.BytesIO((deck + "\\n" + deck).encode()), warnings)]
        [(1, 1), (2, 2)]
        >>> [str(w) for w in warnings]
        ['no terminating "#" at end of file']
        >>> list(ENGINE.parse(io.BytesIO(b"AC 1H"), []))
        Traceback (most recent call last):
        ...
        worker.engines.base.InputError: line 1, column 4: "1H" is not a card (rank A23456789TJQK, suit CDHS)
        """
        return _read_decks(stream, warnings if warnings is not None else [])

    def solve(self, case: Case, trace: bool = True) -> Result:
        """Play one deck; with ``trace`` the result also carries every deal and move.

        >>> deck = " ".join(r + s for s in SUITS for r in RANKS)  # AC 2C ... KC AD ...
        >>> r = ENGINE.solve(Case(1, deck), trace=False)
        >>> r.outcome, r.number, r.detail, r.line
        ('win', 1, [52], '1 pile remaining: 52')
        """
        masks = _masks(case.text)
        try:
            under = _SPARE_TABLES.pop()
        except IndexError:
            under = [0] * _TABLE_SIZE
        try:
            if trace:
                sizes, record = _play_traced(masks, under)
            else:
                sizes, record = _play(masks, under), None
        finally:
            _SPARE_TABLES.append(under)
        n = len(sizes)
        if n == 1:
            return Result("win", 1, sizes, f"1 pile remaining: {sizes[0]}", record)
        return Result("loss", n, sizes, f"{n} piles remaining: " + " ".join(map(str, sizes)), record)

    def judge_line(self, index: int, outcome: str, number: int, detail: list[Any]) -> str:
        """The judge line for stored pile sizes (the deck's index does not appear in it).

        >>> ENGINE.judge_line(7, "loss", 3, [50, 1, 1])
        '3 piles remaining: 50 1 1'
        >>> ENGINE.judge_line(7, "win", 1, [52])
        '1 pile remaining: 52'
        """
        if number == 1:
            return f"1 pile remaining: {detail[0]}"
        return f"{number} piles remaining: " + " ".join(map(str, detail))

    def replay(self, text: str, trace: dict[str, Any]) -> Result:
        """Re-play a trace move by move, checking each is the move the rules make.

        >>> deck = " ".join(CARDS)
        >>> ENGINE.replay(deck, ENGINE.solve(Case(1, deck)).trace).line
        '1 pile remaining: 52'
        >>> try:
        ...     ENGINE.replay(deck, {"version": 1, "deals": [0] * 52, "moves": []})
        ... except TraceError as error:
        ...     print(error)
        after deal 2 the trace makes no move, but AD can move from pile 1 to pile 0
        """
        try:
            masks = _masks(text)
        except InputError as error:
            raise TraceError(f"the deck cannot be replayed: {error}") from None
        deals, moves = _trace_lists(trace)
        sizes = _replay_moves([_NUMBER[mask] for mask in masks], deals, moves)
        n = len(sizes)
        outcome = "win" if n == 1 else "loss"
        return Result(outcome, n, sizes, self.judge_line(0, outcome, n, sizes), trace)

    def generate(self, rng: random.Random) -> str:
        """A shuffled deck as judge files write it: two lines of 26 cards.

        >>> text = ENGINE.generate(random.Random(1))
        >>> [len(line.split()) for line in text.split("\\n")], sorted(text.split()) == sorted(CARDS)
        ([26, 26], True)
        """
        cards = list(CARDS)
        rng.shuffle(cards)
        return " ".join(cards[:26]) + "\n" + " ".join(cards[26:])

    def sniff(self, head: bytes) -> bool:
        """Whether a file starts with two-character cards (either case), no card twice a deck.

        >>> ENGINE.sniff(b"QD AD 8H 5S 3H 5H TC 4D J"), ENGINE.sniff(b"1T 2T 3T 9S 9S")
        (True, False)
        """
        tokens = head.split()
        if tokens and not head[-1:].isspace():
            tokens.pop()  # the head may cut its last token short
        cards: list[bytes] = []
        for token in tokens:
            if token[:1] == b"#":
                break
            card = token.upper()
            if card not in _VALID:
                return False
            cards.append(card)
        # Mahjong hands of bamboo tiles 2S..9S read as cards too, but they repeat tiles.
        first_deck = cards[:DECK_SIZE]
        return bool(cards) and len(set(first_deck)) == len(first_deck)


# --------------------------------------------------------------------- reading


#: Where a piece of the file feeds the deck being read: (offset in the deck of the first
#: card it gives, line, column, piece, index of that card among the piece's tokens). The
#: piece is kept without surrounding whitespace, and the column is where it starts.
_Span = tuple[int, int, int, bytes, int]


def _read_decks(stream: IO[bytes], warnings: list[Diagnostic]) -> Iterator[Case]:
    """The parser behind :meth:`AccordionEngine.parse`.

    A deck is gathered as canonical text ("AC 2D ..."), piece by piece. A piece already
    in that form (cards and single spaces, as judge files are written) is checked with a
    few C-level calls and taken whole; any other piece is split into tokens. The first
    token that is not a card stops the reading: the terminator, or an error.
    """
    pieces = read_pieces(stream)
    segments: list[bytes] = []  # canonical text of the deck so far
    spans: list[_Span] = []
    count = 0  # cards in the deck so far
    index = 0  # decks yielded
    empty = True
    for line, column, piece in pieces:
        empty = False
        stop = -1
        if _all_cards(piece):
            body = piece
            cards = (len(piece) + 1) // 3
        else:
            tokens = piece.split()
            if tokens:  # keep no more of the piece than its tokens (for positions, if asked)
                column += len(piece) - len(piece.lstrip())
                piece = piece.strip()
            cards = len(tokens)
            if not _VALID.issuperset(tokens):
                cards = stop = next(k for k, token in enumerate(tokens) if token not in _VALID)
            body = b" ".join(tokens[:cards])
        k = 0
        while k < cards:
            spans.append((count, line, column, piece, k))
            need = DECK_SIZE - count
            if cards - k < need:
                segments.append(body[3 * k :] if k else body)
                count += cards - k
                break
            segments.append(body[3 * k : 3 * (k + need) - 1] if k or need < cards else body)
            k += need
            text = b" ".join(segments)
            if _numbers(text) is None:  # the cards are valid, so one is there twice
                _check_repeats(text.split(), spans, index + 1)
            index += 1
            _, at_line, at_column, _, first = spans[0]
            if first:  # the deck starts inside a piece, not at its first token
                at_line, at_column = _position(spans, 0)
            yield Case(index, text.decode(), at_line, at_column)
            segments.clear()
            spans.clear()
            count = 0
        if stop >= 0:
            _stop_at(tokens, stop, (line, column, piece), (segments, spans, count), index, pieces, warnings)
            return
    if count:
        _check_repeats(b" ".join(segments).split(), spans, index + 1)
        raise InputError(
            f"deck {index + 1} ends at end of file after {count} of {DECK_SIZE} cards", *_position(spans, 0)
        )
    if index == 0:
        raise InputError("the file is empty" if empty else "the file has no decks")
    warnings.append(Diagnostic('no terminating "#" at end of file'))


def _all_cards(text: bytes) -> bool:
    """Whether ``text`` is canonical: cards separated by single spaces, nothing else.

    >>> _all_cards(b"AC 2D TS"), _all_cards(b"AC  2D"), _all_cards(b"AC 2D\\r"), _all_cards(b"ac")
    (True, False, False, False)
    """
    size = len(text)
    # Card characters at every place but each third, and as many spaces as those places.
    return (
        size % 3 == 2
        and text.count(b" ") == size // 3
        and not text[0::3].translate(None, _RANK_BYTES)
        and not text[1::3].translate(None, _SUIT_BYTES)
    )


def _stop_at(
    tokens: list[bytes],
    stop: int,
    where: tuple[int, int, bytes],
    deck: tuple[list[bytes], list[_Span], int],
    index: int,
    pieces: Iterator[tuple[int, int, bytes]],
    warnings: list[Diagnostic],
) -> None:
    """Deal with the first token that is not a card: the terminator, or an error."""
    line, column, piece = where
    segments, spans, count = deck
    token = tokens[stop]
    _check_repeats(b" ".join(segments).split(), spans, index + 1)
    at = tokens_with_columns(piece, column)[stop][1]
    if token[:1] != b"#":
        hint = "; cards are written in upper case" if token.upper() in _VALID else ""
        raise InputError(f"{show(token)} is not a card (rank {RANKS}, suit {SUITS}{hint})", line, at)
    if count:
        raise InputError(
            f'deck {index + 1} is cut short by "#" after {count} of {DECK_SIZE} cards', *_position(spans, 0)
        )
    if index == 0:
        raise InputError("the file has no decks", line, at)
    _warn_after_end(pieces, where, stop, warnings)


def _check_repeats(deck: list[bytes], spans: list[_Span], number: int) -> None:
    """Raise at the second copy of the first card a (possibly partial) deck holds twice."""
    seen: set[bytes] = set()
    for k, card in enumerate(deck):
        if card in seen:
            raise InputError(f"{card.decode()} appears twice in deck {number}", *_position(spans, k))
        seen.add(card)


def _position(spans: list[_Span], k: int) -> tuple[int, int]:
    """Line and column of token ``k`` of the deck being read."""
    for offset, line, column, piece, first in reversed(spans):
        if offset <= k:
            nth = first + k - offset
            if nth == 0:  # pieces kept in spans start with a token
                return line, column
            return line, _columns(piece, column)[nth][1]
    raise AssertionError("token outside the deck")  # pragma: no cover


@lru_cache(maxsize=8)
def _columns(piece: bytes, column: int) -> list[tuple[bytes, int]]:
    # Many decks may start in one long piece: find its token columns once, not once per deck.
    return tokens_with_columns(piece, column)


def _warn_after_end(
    pieces: Iterator[tuple[int, int, bytes]],
    where: tuple[int, int, bytes],
    end: int,
    warnings: list[Diagnostic],
) -> None:
    """Warn about the first text after the terminator (token ``end`` of the piece ``where``
    is); read no further."""

    def warn(line: int | None, column: int | None) -> None:
        warnings.append(Diagnostic('text after the terminating "#" is ignored', line, column))

    line, column, piece = where
    rest = tokens_with_columns(piece, column)[end + 1 :]
    if rest:
        warn(line, rest[0][1])
        return
    try:
        for later_line, later_column, later_piece in pieces:
            found = tokens_with_columns(later_piece, later_column)
            if found:
                warn(later_line, found[0][1])
                return
    except InputError as error:  # what follows the end need not even be text
        warn(error.line, error.column)


# --------------------------------------------------------------------- playing


def _numbers(text: bytes) -> bytes | None:
    """The card numbers of a canonical deck (52 distinct cards, single spaces), else ``None``.

    Two translations and one big-integer addition make each card's number ``4 * rank +
    suit`` (no byte overflows); deleting those numbers from ``0..51`` leaves nothing
    exactly when all 52 are there, that is when the deck holds 52 distinct cards.

    >>> list(_numbers(" ".join(CARDS).encode())[:6])
    [0, 1, 2, 3, 4, 5]
    >>> _numbers(" ".join(["AC"] * 52).encode()) is None
    True
    """
    if len(text) != _CANONICAL_SIZE or text.count(b" ") != DECK_SIZE - 1:
        return None
    ranks = int.from_bytes(text[0::3].translate(_RANK_TIMES_4), "little")
    suits = int.from_bytes(text[1::3].translate(_SUIT_NUMBER), "little")
    numbers = (ranks + suits).to_bytes(DECK_SIZE, "little")
    return None if _ALL_NUMBERS.translate(None, numbers) else numbers


def _masks(text: str) -> tuple[int, ...]:
    """The cards of a deck as masks; ``InputError`` unless it is 52 distinct cards.

    >>> _masks("AC 2C 1C")
    Traceback (most recent call last):
    ...
    worker.engines.base.InputError: "1C" is not a card (rank A23456789TJQK, suit CDHS)
    """
    numbers = _numbers(text.encode())
    if numbers is not None:
        return itemgetter(*numbers)(_MASK_BY_NUMBER)  # type: ignore[no-any-return]
    cards = text.split()  # not canonical: say what is wrong, or read it the slow way
    for card in cards:
        if card not in _MASK:
            raise InputError(f'"{card}" is not a card (rank {RANKS}, suit {SUITS})')
    if len(cards) != DECK_SIZE:
        raise InputError(f"a deck is {DECK_SIZE} cards, not {len(cards)}")
    if len(set(cards)) != DECK_SIZE:
        twice = next(card for k, card in enumerate(cards) if card in cards[:k])
        raise InputError(f"{twice} appears twice in the deck")
    return tuple(_MASK[card] for card in cards)


def _play(masks: tuple[int, ...], under: list[int]) -> list[int]:
    """The pile sizes a deck leaves: the hot path, with no trace.

    ``tops`` is the row's top cards (after :data:`_PAD` empty piles); ``under[card]`` is
    the card that ``card`` covers (0 for none), which the table only needs to hold for
    the cards of this deck: each entry is written before it is read.

    The leftmost card that can move is found without scanning the row: before a deal no
    card can move, so the dealt card is the only candidate. A card that moves is the
    leftmost that could, so every pile left of the one it leaves (``source``) was
    settled. It lands on pile ``j`` and at once hops on while it can (it is now the
    leftmost card able to move). Of the piles between ``j`` and ``source``, only ``j + 1``
    and ``j + 3`` can have become movable (they see the new card 1 and 3 to their left);
    after them come the piles from ``source`` on, which are checked one by one.
    """
    tops = [0, 0, 0]  # _PAD empty piles
    n = _PAD  # len(tops)
    for card in masks:
        t = tops[n - 3]
        if card & t:
            j = n - 3
        else:
            t = tops[n - 1]
            if not card & t:
                tops.append(card)
                under[card] = 0
                n += 1
                continue
            j = n - 1
        source = n  # the dealt card never made a pile
        while True:
            # ``card`` leaves pile ``source`` for pile ``j``, whose top is ``t``, and hops on.
            while True:
                u = tops[j - 3]
                if card & u:
                    j -= 3
                    t = u
                else:
                    u = tops[j - 1]
                    if not card & u:
                        break
                    j -= 1
                    t = u
            under[card] = t
            tops[j] = card
            # The next card to move, if any: pile j + 1 (onto j), j + 3 (onto j), or one
            # from ``source`` on.
            i = j + 1
            if i < source and tops[i] & card:
                t = card
                card = tops[i]
            elif j + 3 < source and tops[j + 3] & card:
                i = j + 3
                t = card
                card = tops[i]
            else:
                i = source
                while i < n:
                    card = tops[i]
                    t = tops[i - 3]
                    if card & t:
                        j = i - 3
                        break
                    t = tops[i - 1]
                    if card & t:
                        j = i - 1
                        break
                    i += 1
                else:
                    break
            below = under[card]
            if below:
                tops[i] = below
            else:
                del tops[i]
                n -= 1
            source = i
    return _sizes(tops, under)


def _play_traced(masks: tuple[int, ...], under: list[int]) -> tuple[list[int], dict[str, Any]]:
    """:func:`_play` that also records every move (see the trace format above)."""
    number = _NUMBER
    tops = [0, 0, 0]
    n = _PAD
    deals = [0] * DECK_SIZE
    moves: list[int] = []
    for k, card in enumerate(masks):
        t = tops[n - 3]
        if card & t:
            j = n - 3
        else:
            t = tops[n - 1]
            if not card & t:
                tops.append(card)
                under[card] = 0
                n += 1
                continue
            j = n - 1
        made = len(moves)
        source = n
        while True:
            moves += (source - _PAD, j - _PAD, number[card])
            while True:
                u = tops[j - 3]
                if card & u:
                    moves += (j - _PAD, j - _PAD - 3, number[card])
                    j -= 3
                    t = u
                else:
                    u = tops[j - 1]
                    if not card & u:
                        break
                    moves += (j - _PAD, j - _PAD - 1, number[card])
                    j -= 1
                    t = u
            under[card] = t
            tops[j] = card
            i = j + 1
            if i < source and tops[i] & card:
                t = card
                card = tops[i]
            elif j + 3 < source and tops[j + 3] & card:
                i = j + 3
                t = card
                card = tops[i]
            else:
                i = source
                while i < n:
                    card = tops[i]
                    t = tops[i - 3]
                    if card & t:
                        j = i - 3
                        break
                    t = tops[i - 1]
                    if card & t:
                        j = i - 1
                        break
                    i += 1
                else:
                    break
            below = under[card]
            if below:
                tops[i] = below
            else:
                del tops[i]
                n -= 1
            source = i
        deals[k] = (len(moves) - made) // 3
    return _sizes(tops, under), {"version": 1, "deals": deals, "moves": moves}


def _sizes(tops: list[int], under: list[int]) -> list[int]:
    """The size of each pile, counted down from its top card."""
    sizes = []
    for card in tops[_PAD:]:
        size = 1
        card = under[card]
        while card:
            size += 1
            card = under[card]
        sizes.append(size)
    return sizes


# --------------------------------------------------------------------- replaying


def _trace_lists(trace: Any) -> tuple[list[int], list[int]]:
    """The ``deals`` and ``moves`` of a trace, after checking their shape."""
    if not isinstance(trace, dict) or trace.get("version") != 1:
        raise TraceError("not an accordion trace of version 1")
    deals, moves = trace.get("deals"), trace.get("moves")
    if not _int_list(deals) or len(deals) != DECK_SIZE or min(deals) < 0:
        raise TraceError(f'"deals" must list {DECK_SIZE} move counts')
    if not _int_list(moves) or len(moves) % 3:
        raise TraceError('"moves" must be a flat list of integers, three per move')
    if sum(deals) * 3 != len(moves):
        raise TraceError(f'"deals" counts {sum(deals)} moves but "moves" holds {len(moves) // 3}')
    return deals, moves


def _int_list(value: Any) -> TypeGuard[list[int]]:
    return isinstance(value, list) and all(type(v) is int for v in value)


def _replay_moves(deck: list[int], deals: list[int], moves: list[int]) -> list[int]:
    """Deal the deck (card numbers) and make the traced moves, checking each; the sizes left.

    A plain second implementation of the rules (piles as lists, the leftmost movable
    card searched from the left each time), so replaying also checks the fast solver.
    """
    piles: list[list[int]] = []
    m = 0
    for k, count in enumerate(deals):
        piles.append([deck[k]])
        for _ in range(count):
            step = f"move {m // 3 + 1} (after deal {k + 1})"
            expected = _leftmost_move(piles)
            if expected is None:
                raise TraceError(f"{step}: no card can move")
            source, target = expected
            card = piles[source][-1]
            if moves[m : m + 3] != [source, target, card]:
                raise TraceError(
                    f"{step}: the rules move {CARDS[card]} from pile {source} to pile {target}, "
                    f"the trace says {moves[m : m + 3]}"
                )
            piles[target].append(piles[source].pop())
            if not piles[source]:
                del piles[source]
            m += 3
        expected = _leftmost_move(piles)
        if expected is not None:
            source, target = expected
            raise TraceError(
                f"after deal {k + 1} the trace makes no move, but {CARDS[piles[source][-1]]} "
                f"can move from pile {source} to pile {target}"
            )
    return [len(pile) for pile in piles]


def _matches(a: int, b: int) -> bool:
    """Same rank or same suit, for card numbers."""
    return a // 4 == b // 4 or a % 4 == b % 4


def _leftmost_move(piles: list[list[int]]) -> tuple[int, int] | None:
    """The move the rules make now, as (from pile, to pile), or ``None`` when no card can move."""
    for i, pile in enumerate(piles):
        for distance in (3, 1):
            if i >= distance and _matches(pile[-1], piles[i - distance][-1]):
                return i, i - distance
    return None


ENGINE = AccordionEngine()
