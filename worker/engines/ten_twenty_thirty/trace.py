"""10-20-30 traces (format: ``docs/traces.md``): the JSON form, the stored form (a win or a loss
packed by :func:`pack`, a draw as JSON) and the replay move by move; version 1 reads too."""

from __future__ import annotations

import struct
from array import array
from collections.abc import Generator
from itertools import accumulate, pairwise
from operator import sub
from typing import Any

from worker.engines.reading import InputError
from worker.engines.results import TraceError
from worker.engines.ten_twenty_thirty.read import residues
from worker.engines.ten_twenty_thirty.rules import DECK_SIZE, PILES, STATE_SEP, Game

_VALUE_CHARS = "T123456789"
_COMBOS = "abc"
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
#: bytes.translate tables: a residue to its character (10, no card, to "|"), a combination to
#: its letter, a count of pick-ups to its base-36 digit.
_CHAR_OF = bytes.maketrans(bytes(range(11)), _VALUE_CHARS.encode() + b"|")
_COMBO_OF = bytes.maketrans(b"\x00\x01\x02", _COMBOS.encode())
_COUNT_OF = bytes.maketrans(bytes(range(36)), _BASE36.encode())
#: A pick-up mark (:func:`.play.play`'s) to its combination's letter ("?": none).
_PICK_OF = bytes(ord((_COMBOS + "?")[mark & 3]) for mark in range(256))
#: A stored pick-up mark to what the deck iterator had left (``mark >> 2``).
_REM_OF = bytes(mark >> 2 for mark in range(256))
_CARD_BYTES = bytes(range(10))
_PILE_BYTES = bytes(range(11))  # the cards of the end piles, and the 10 before each

# --------------------------------------------------------------------- the JSON form


def from_marks(d: list[int], dealt: int, marks: bytearray, piles: list[list[int]], rem: int) -> dict[str, Any]:
    """The trace of a win or a loss from what :func:`.play.play` noted."""
    return _build(bytes(d), dealt, deals_of(marks), marks.translate(_PICK_OF), _ends(piles), rem)


def from_game(game: Game) -> dict[str, Any]:
    """The trace of a game played by :class:`.rules.Game` (for a draw, with ``seen``)."""
    trace = _build(bytes(game.cards), game.dealt, game.when, bytes(game.picks).translate(_COMBO_OF),
                   STATE_SEP + STATE_SEP.join(game.piles), len(game.cards) - game.dealt)
    if game.seen:
        trace["seen"] = game.seen
    return trace


def _build(history: bytes, dealt: int, deals: list[int], letters: bytes | bytearray, ends: bytes,
           rem: int) -> dict[str, Any]:
    """The version 2 trace of a history, each pick-up's deal and letter, the end piles and deck."""
    after = bytearray(dealt + 1)  # pick-ups after each deal, from deal 1
    for deal in deals:
        after[deal] += 1
    cards = history.translate(_CHAR_OF).decode("ascii")
    return {
        "version": 2,
        "cards": cards,
        "after": after[1:].translate(_COUNT_OF).decode("ascii"),
        "picks": letters.decode("ascii"),
        "piles": _pile_texts(ends),
        "deck": cards[len(cards) - rem :] if rem else "",
    }


def deals_of(marks: bytes | bytearray) -> list[int]:
    """The deal each pick-up follows: pick-up j's is 52 + 3*j - (its mark >> 2)."""
    return list(map(sub, range(DECK_SIZE, DECK_SIZE + 3 * len(marks), 3), marks.translate(_REM_OF)))


def _pile_texts(ends: bytes) -> list[str]:
    """Piles of residues, each after a 10 or a ``STATE_SEP``, as the trace writes them."""
    return ends.translate(_CHAR_OF).decode("ascii").split("|")[1:]


# --------------------------------------------------------------------- the stored form

#: The header of :func:`pack`'s bytes: a tag, ``N``, the history's length, the cards left, the piles gone.
_PACKED = struct.Struct("<BIHBB")
#: The first byte of :func:`pack`'s bytes (a JSON trace starts with ``{``).
PACKED_TAG = b"\x01"


def pack(d: list[int], dealt: int, marks: bytearray, gone: list[int], piles: list[list[int]], rem: int) -> bytes:
    """What :func:`.play.play` noted, as bytes: header, history, marks, ``gone`` (u32) and end piles."""
    return b"".join((_PACKED.pack(PACKED_TAG[0], dealt, len(d), rem, len(gone)), bytes(d), marks,
                     array("I", gone).tobytes() if gone else b"", _ends(piles)))


def _ends(piles: list[list[int]]) -> bytes:
    """The piles a game ends with as residues, each after a 10 (which no card is)."""
    for p in piles:
        p[0] = 10  # the pile's code is not needed any more
    return b"".join(map(bytes, piles))


def expand(packed: bytes) -> dict[str, Any]:
    """The version 2 trace from :func:`pack`'s bytes, checked to be whole."""
    try:
        _, dealt, size, rem, count = _PACKED.unpack_from(packed)
        picks = (size - DECK_SIZE) // 3
        # Where the history, the marks, ``gone`` and the end piles start; the end piles run to the end.
        starts = [*accumulate((_PACKED.size, size, picks, 4 * count)), None]
        history, marks, gone_bytes, ends = (packed[start:stop] for start, stop in pairwise(starts))
        gone = array("I", gone_bytes).tolist()
    except (struct.error, ValueError):
        raise TraceError("a stored 10-20-30 trace is cut short") from None
    # A loss deals every card of the history, a win all but 52: that bounds the rest.
    letters = marks.translate(_PICK_OF)
    deals = deals_of(marks)  # in deal order, as pick-ups come
    if (dealt not in (size, size - DECK_SIZE) or len(history) != size or len(marks) != picks
            or len(gone) != count or count > 2 * PILES or ends[:1] != b"\n" or ends.count(10) != PILES
            or len(ends) - PILES + rem != DECK_SIZE or history.translate(None, _CARD_BYTES)
            or ends.translate(None, _PILE_BYTES)
            or b"?" in letters or (deals and not 0 < deals[0] <= deals[-1] <= dealt) or deals != sorted(deals)
            or any(not 0 < deal <= dealt or pile >= PILES for deal, pile in zip(gone[::2], gone[1::2]))
            or len(set(gone[1::2])) != count // 2):
        raise TraceError("a stored 10-20-30 trace is damaged")
    return _build(history, dealt, deals, letters, ends, rem)


# --------------------------------------------------------------------- the replay

#: What :func:`walk_trace` yields after each deal: (N, piles, deck).
_Step = tuple[int, list[list[int]], list[int]]


def upgrade(trace: Any) -> Any:
    """A version 1 trace as version 2 (its ``deals`` dropped); anything else as it is.

    >>> upgrade({"version": 1, "cards": "T", "deals": "0", "after": "0", "picks": "", "piles": [], "deck": ""})
    {'version': 2, 'cards': 'T', 'after': '0', 'picks': '', 'piles': [], 'deck': ''}
    """
    if not isinstance(trace, dict) or trace.get("version") != 1:
        return trace
    deals, after = trace.get("deals"), trace.get("after")
    if not isinstance(deals, str) or not isinstance(after, str) or len(deals) != len(after):
        raise TraceError('a version 1 trace has a "deals" string as long as its "after"')
    return {"version": 2, **{key: value for key, value in trace.items() if key not in ("version", "deals")}}


def walk_trace(text: str, trace: dict[str, Any]) -> Generator[_Step, None, tuple[int, int, int]]:
    """Play ``trace`` from the deck ``text`` by :class:`.rules.Game`, comparing each deal and pick-up;
    yield ``(N, piles, deck)`` after each deal, return ``(outcome, N, seen)``; :class:`TraceError`
    where the trace leaves the rules."""
    trace = upgrade(trace)
    if not isinstance(trace, dict) or trace.get("version") != 2:
        raise TraceError("not a 10-20-30 trace (version 2, or 1)")
    for key in ("cards", "after", "picks"):
        if not isinstance(trace.get(key), str) or not trace[key].isascii():
            raise TraceError(f'the trace has no "{key}" string')
    cards, after, picks = trace["cards"], trace["after"], trace["picks"]
    try:
        d = residues(text)
    except InputError as error:
        raise TraceError(str(error)) from None
    game = Game(d)
    history, piles, combos = game.cards, game.piles, game.picks
    j = 0  # pick-ups compared
    for dealt, i in enumerate(game.deals(), 1):
        if dealt > len(after):
            raise TraceError(f"the trace stops after deal {dealt - 1}, before the game ends")
        want, found = _VALUE_CHARS[history[dealt - 1]], cards[dealt - 1 : dealt]
        if found != want:
            raise TraceError(f"deal {dealt}: the rules deal {want!r} onto pile {i}, the trace has {found!r}")
        count = _BASE36.find(after[dealt - 1])
        while j < len(combos):
            at = DECK_SIZE + 3 * j
            want = _COMBOS[combos[j]] + history[at : at + 3].translate(_CHAR_OF).decode("ascii")
            found = picks[j : j + 1] + cards[at : at + 3]
            if count <= 0 or found != want:
                raise TraceError(f"deal {dealt}: the rules pick up {want!r} next, the trace does not")
            count -= 1
            j += 1
        if count:
            raise TraceError(f"deal {dealt}: the trace has {after[dealt - 1]!r} pick-ups next, the rules differ")
        yield dealt, [[c or 10 for c in p] for p in piles], [c or 10 for c in history[dealt:]]
    dealt = game.dealt
    if len(after) != dealt or j != len(picks) or len(cards) != len(history):
        raise TraceError(f"the game ends at deal {dealt}, but the trace goes on")
    if cards[:DECK_SIZE] != bytes(d[:DECK_SIZE]).translate(_CHAR_OF).decode("ascii"):
        raise TraceError("the trace's cards do not start with the deck")  # a draw may deal fewer than 52
    ends = _pile_texts(STATE_SEP + STATE_SEP.join(piles))
    if trace.get("piles") != ends or trace.get("deck") != cards[dealt:]:
        raise TraceError(f"the trace's end state is not the one its moves lead to (after deal {dealt})")
    if trace.get("seen", 0) != game.seen:
        raise TraceError(f"the trace says the final state was first seen after deal {trace.get('seen')}, "
                         f"the moves say {game.seen or 'never'}")
    return game.outcome, dealt, game.seen
