"""Layout faults made on purpose: a generated judge file with one mistake of the kind a hand edit or a
broken generator makes, applied at a chosen line, and what a reader that knows the file's layout must
make of it (issue 42). Everything expected comes from the mutation and the clean file's layout, never
from a reader.

The rule, for a file whose cases come in a layout (``dealer generate --layout``):

- ``per-line=K`` (a deck starts its own line, ``k`` lines a deck): a short or long line, a stray,
  missing or bad token, a missing line or a doubled line is exactly one fault, named at a line of the
  deck it touched (in the mutated file; a doubled line's copy counts as one of its deck's lines). With
  ``k = 1`` a missing line is a deck gone and a doubled line a deck repeated: no fault. A line split in
  two is no fault and every case is kept, in any layout: the judge reads cards whatever the lines, so the
  file is still good.
- ``flow`` (lines of K cards run from deck to deck): a mutated line may touch two decks, and give one
  fault for each (at least one).
- a hand a line (mahjong): one fault per broken line (a split hand is two), none for a missing or a
  doubled line.
- ``ragged`` decks have no regular layout: read as a stream, a bad token is one fault and a line broken
  in two none; a line cut short or a token missing shifts every deck after it, the limit of what can be
  recovered (no expectation is made of those).

Every case the mutation did not touch is kept, in order. A touched case is never required; one whose
tokens are all still there in order (only inserted ones among them: a line split or doubled, a stray
token, a long line; or the other deck of a flow line) may be kept too, and so may a deck that lost cards
but whose cards, read on from its start, are still its text (in 10-20-30 the card after a lost one may
have its value): either is kept as it was, in its place, once.

>>> hand = b"1S 1S 2S 2S 2S 3S 3S 3S 7S 8S 9S FA FA\\n"
>>> shape = Shape.of(hand * 3 + b"0\\n", "mahjong", "")
>>> mutant = mutate(shape, "bad-token", 2)
>>> mutant.data.splitlines()[1]
b'1S 1S 2S 2S 2S 3S X 3S 7S 8S 9S FA FA'
>>> mutant.expected.faults, mutant.expected.lines, mutant.expected.kept, mutant.expected.may_keep
((1, 1), (2,), (1, 3), ())
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from worker.generating.layout import Layout, parse_layout
from worker.generating.makers import maker

#: The mutations, each at one line of a case.
KINDS = ("short-line", "long-line", "split-line", "stray-token", "missing-token", "bad-token", "missing-line",
         "doubled-line")
#: What a ragged deck file (read as a stream) is expected to survive.
STREAM_KINDS = ("bad-token", "split-line")
#: Tokens a short line loses, a long line gains (fewer where the line is shorter).
CUT = 6
#: The token no game reads.
BAD = b"X"
_TOKEN = re.compile(rb"\S+")


@dataclass(frozen=True)
class Line:
    """A line of the file: its text, its end (``\\n``, ``\\r\\n`` or nothing), the file's index of its first
    token and how many it holds."""

    text: bytes
    end: bytes
    first: int
    count: int


@dataclass(frozen=True)
class Shape:
    """A clean file as its cases lie in it: its lines, each case's canonical text (as the generator writes it:
    a hand's tiles in the judge's order) and the lines it spans (from 1), and
    how its layout is read (``per-line``, ``flow``, ``stream`` or ``hand``)."""

    lines: tuple[Line, ...]
    texts: tuple[str, ...]
    spans: tuple[tuple[int, ...], ...]
    reading: str
    size: int

    @classmethod
    def of(cls, data: bytes, game: str, layout: str) -> Shape:
        """The shape of ``data``, a clean file of ``game`` written in ``layout`` (``dealer generate``'s words):
        its cases are its tokens, ``size`` at a time (the terminator, if any, is what remains)."""
        made = maker(game)
        lines = _lines(data)
        tokens = [token for line in lines for token in _TOKEN.findall(line.text)]
        where = [number for number, line in enumerate(lines, 1) for _ in range(line.count)]
        count = len(tokens) // made.tokens
        texts = tuple(made.canonicals([b" ".join(tokens[k * made.tokens:(k + 1) * made.tokens]).decode()
                                       for k in range(count)]))
        spans = tuple(tuple(sorted(set(where[k * made.tokens:(k + 1) * made.tokens]))) for k in range(count))
        return cls(tuple(lines), texts, spans, _reading(made.wraps, parse_layout(made, layout) if layout else Layout()),
                   made.tokens)

    def case_lines(self) -> list[int]:
        """The lines that hold a token of some case (where a mutation may be made)."""
        return sorted({line for span in self.spans for line in span})

    @property
    def per_deck(self) -> int:
        """Lines a case spans (in a per-line layout, or for hands: 1)."""
        return max(len(span) for span in self.spans)


def _lines(data: bytes) -> list[Line]:
    lines, first = [], 0
    for raw in data.splitlines(keepends=True):
        text = raw.rstrip(b"\r\n")
        count = len(_TOKEN.findall(text))
        lines.append(Line(text, raw[len(text):], first, count))
        first += count
    return lines


def _reading(wraps: bool, layout: Layout) -> str:
    if not wraps:
        return "hand"
    if layout.ragged:
        return "stream"
    if layout.flow and 52 % layout.per_line:
        return "flow"
    return "per-line"  # flow with a divisor of 52 is the same layout: each deck starts a line


@dataclass(frozen=True)
class Expected:
    """What a reader that knows the layout makes of a mutated file: between ``faults[0]`` and ``faults[1]``
    faults, each named at one of ``lines``; the clean file's cases ``kept`` (places from 1, in order) kept,
    and of the rest at most those of ``may_keep`` (in their places, each once)."""

    faults: tuple[int, int]
    lines: tuple[int, ...]
    kept: tuple[int, ...]
    may_keep: tuple[int, ...]


@dataclass(frozen=True)
class Mutant:
    data: bytes
    expected: Expected


def places(shape: Shape, kind: str) -> list[int]:
    """The lines where mutation ``kind`` can be made: any line holding a case's tokens (two at least, for a
    line cut short or split); none for what a stream cannot recover from."""
    if shape.reading == "stream" and kind not in STREAM_KINDS:
        return []
    least = 2 if kind in ("short-line", "split-line") else 1
    return [line for line in shape.case_lines() if shape.lines[line - 1].count >= least]


def mutate(shape: Shape, kind: str, line: int) -> Mutant:
    """The file of ``shape`` with mutation ``kind`` at its line ``line`` (from 1, a line holding some case's
    tokens), and what a reader must make of it."""
    if line not in shape.case_lines():
        raise ValueError(f"line {line} holds no case's token")
    if shape.reading == "stream" and kind not in STREAM_KINDS:
        raise ValueError(f"a ragged file is read as a stream: a {kind} shifts every deck after it")
    data, removed, added = _edited(list(shape.lines), kind, line)
    return Mutant(data, _expect(shape, kind, line, removed, added, _TOKEN.findall(data)))


def edit_line(raw: bytes, kind: str) -> bytes:
    """One line (with its end) after mutation ``kind``: what a file too big to hold is mutated with, a line
    at a time.

    >>> edit_line(b"1 2 3 4 5 6 7 8\\n", "short-line")
    b'1 2\\n'
    """
    text = raw.rstrip(b"\r\n")
    return b"".join(_edit(Line(text, raw[len(text):], 0, len(_TOKEN.findall(text))), kind)[0])


def edit(data: bytes, kind: str, line: int) -> bytes:
    """Any file with mutation ``kind`` at its line ``line`` (one with a token; two for a line cut short or
    split), expecting nothing: what a fuzzer makes of files already mutated."""
    return _edited(_lines(data), kind, line)[0]


def _edited(lines: list[Line], kind: str, line: int) -> tuple[bytes, set[int], int]:
    edited, removed, added = _edit(lines[line - 1], kind)
    texts = [each.text + each.end for each in lines]
    texts[line - 1:line] = edited
    return b"".join(texts), removed, added


def _edit(at: Line, kind: str) -> tuple[list[bytes], set[int], int]:
    """Line ``at`` after mutation ``kind``: its new lines (with their ends), the file's token indexes taken
    out or replaced, and how many lines it now is more than one."""
    found = list(_TOKEN.finditer(at.text))
    text, n, middle = at.text, len(found), len(found) // 2
    inner = at.end or b"\n"  # a line that gains a line after it ends, even the file's last
    if kind in ("short-line", "split-line") and n < 2:
        raise ValueError(f"a line of {n} token cannot be {kind.split('-')[0]}")
    if kind == "short-line":
        cut = min(CUT, n - 1)
        return [text[:found[n - cut - 1].end()] + at.end], set(range(at.first + n - cut, at.first + n)), 0
    if kind == "long-line":
        return [text + b" " + b" ".join(match.group() for match in found[:CUT]) + at.end], set(), 0
    if kind == "split-line":
        return [text[:found[middle - 1].end()] + inner, text[found[middle].start():] + at.end], set(), 1
    if kind == "stray-token":
        return [text[:found[middle].start()] + found[0].group() + b" " + text[found[middle].start():] + at.end], set(), 0
    if kind == "missing-token":
        rest = text[found[middle + 1].start():] if middle + 1 < n else b""
        return [text[:found[middle].start()] + rest + at.end], {at.first + middle}, 0
    if kind == "bad-token":
        return [text[:found[middle].start()] + BAD + text[found[middle].end():] + at.end], {at.first + middle}, 0
    if kind == "missing-line":
        return [], set(range(at.first, at.first + n)), -1
    if kind == "doubled-line":
        return [text + inner, text + at.end], set(), 1
    raise ValueError(f"{kind!r} is no mutation ({', '.join(KINDS)})")


def _expect(shape: Shape, kind: str, line: int, removed: set[int], added: int, tokens: list[bytes]) -> Expected:
    places = range(1, len(shape.texts) + 1)
    damaged = {place for place in places
               if removed & set(range((place - 1) * shape.size, place * shape.size))}
    if shape.reading == "stream":  # a stream reader sees tokens, not lines
        touched = damaged
    else:
        touched = {place for place in places if line in shape.spans[place - 1]}
    one_line = shape.reading == "hand" or shape.per_deck == 1
    if one_line and kind in ("missing-line", "doubled-line"):  # a case gone, or a good case repeated
        (place,) = touched
        kept = [p for p in places if p != place] if kind == "missing-line" else sorted([*places, place])
        return Expected((0, 0), (), tuple(kept), ())

    def moved(number: int) -> list[int]:
        if number < line:
            return [number]
        if number > line:
            return [number + added]
        return [line + k for k in range(added + 1)]  # the line itself: none, one, or it and its copy

    lines = tuple(sorted({new for place in touched for old in shape.spans[place - 1] for new in moved(old)}))
    if shape.reading == "hand":
        faults = (2, 2) if kind == "split-line" else (1, 1)
    elif kind == "split-line":  # a good judge file still: every case kept
        faults, touched = (0, 0), set()
    elif shape.reading == "stream":
        faults = (1, 1)
    elif shape.reading == "flow":
        faults = (1, len(touched))
    else:
        faults = (1, 1)
    if not faults[1]:
        lines = ()
    kept = tuple(place for place in places if place not in touched)
    may_keep = () if shape.reading == "hand" else tuple(sorted(touched - damaged | _read_back(shape, damaged, removed,
                                                                                            tokens)))
    return Expected(faults, lines, kept, may_keep)


def _read_back(shape: Shape, damaged: set[int], removed: set[int], tokens: list[bytes]) -> set[int]:
    """The damaged decks whose cards, read in the mutated file's ``tokens`` from where the deck starts (before
    every token taken out), are still its text: a card lost where the next card has its value (10-20-30) gives
    the deck back whole, and a judge reads it as it was."""
    return {place for place in damaged
            if (start := (place - 1) * shape.size) < min(removed)
            and b" ".join(tokens[start:start + shape.size]).decode() == shape.texts[place - 1]}


def check(expected: Expected, texts: tuple[str, ...], fault_lines: list[int], fault_count: int,
          read: list[str]) -> None:
    """Fail, saying how, unless a reading with faults at ``fault_lines`` (``fault_count`` in all) that kept
    the cases ``read`` is what ``expected`` says of a mutation of the file whose cases are ``texts``."""
    least, most = expected.faults
    if not least <= fault_count <= most:
        raise AssertionError(f"{fault_count} faults, expected {least} to {most}: {fault_lines}")
    if not all(found in expected.lines for found in fault_lines):
        raise AssertionError(f"faults at lines {fault_lines}, expected within {list(expected.lines)}")
    required = [texts[place - 1] for place in expected.kept]
    if not _fits(read, [(place, True) for place in expected.kept] + [(place, False) for place in expected.may_keep],
                 texts):
        raise AssertionError(_difference(read, required, texts))


def _fits(read: list[str], allowed: list[tuple[int, bool]], texts: tuple[str, ...]) -> bool:
    """Whether ``read`` is the cases ``allowed`` (place, whether required) in the order of their places, each
    at most once, every required one there."""
    rest = iter(sorted(allowed))
    for text in read:
        for place, required in rest:
            if texts[place - 1] == text:
                break
            if required:
                return False
        else:
            return False
    return not any(required for _, required in rest)


def _difference(read: list[str], required: list[str], texts: tuple[str, ...]) -> str:
    place = {text: number for number, text in enumerate(texts, 1)}
    return (f"kept {len(read)} cases, expected {len(required)}: kept the clean file's cases "
            f"{[place.get(text, '(no case of it)') for text in read]}, expected {[place[t] for t in required]}")
